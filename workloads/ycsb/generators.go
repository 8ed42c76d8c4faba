package ycsb

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// FNVHash64 is YCSB's record-number hash (Utils.fnvhash64): FNV-1a over the eight
// bytes of the number, least significant first, made non-negative as Java's Math.abs.
func FNVHash64(v int64) int64 {
	const offset, prime = 0xCBF29CE484222325, 1099511628211
	h := uint64(offset)
	for range 8 {
		h ^= uint64(v & 0xff)
		h *= prime
		v >>= 8
	}
	r := int64(h)
	if r < 0 && r != math.MinInt64 {
		r = -r // Math.abs; Long.MIN_VALUE stays negative, as in Java
	}
	return r
}

// zipfianConstant and the precomputed zeta of scrambledItems items at that constant
// are YCSB's (ScrambledZipfianGenerator.ZETAN is the zeta of 10^10 items).
const (
	zipfianConstant = 0.99
	scrambledItems  = 10_000_000_000
	scrambledZetan  = 26.46902820178302
)

// zipfian is YCSB's ZipfianGenerator (Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases", SIGMOD 1994): item base is the most popular,
// base+1 the next, and so on.
type zipfian struct {
	items, base                     int64
	theta, zeta2theta, alpha, zetan float64
	eta                             float64
	countForZeta                    int64
}

func newZipfian(min, max int64, zetan float64) *zipfian {
	z := &zipfian{items: max - min + 1, base: min, theta: zipfianConstant}
	z.zeta2theta = zetaStatic(0, 2, z.theta, 0)
	z.alpha = 1 / (1 - z.theta)
	if zetan == 0 {
		zetan = cachedZeta(z.items, z.theta)
	}
	z.zetan = zetan
	z.countForZeta = z.items
	z.eta = (1 - math.Pow(2/float64(z.items), 1-z.theta)) / (1 - z.zeta2theta/z.zetan)
	return z
}

func zetaStatic(st, n int64, theta, initial float64) float64 {
	sum := initial
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// zetas caches zeta(n): computing it is O(n), and every worker of a phase needs it.
var zetas sync.Map // int64 -> float64

func cachedZeta(n int64, theta float64) float64 {
	if v, ok := zetas.Load(n); ok {
		return v.(float64)
	}
	v := zetaStatic(0, n, theta, 0)
	zetas.Store(n, v)
	return v
}

// next draws an item among the first itemCount; the item count may grow, as it does
// for the latest distribution, and zeta then grows incrementally.
func (z *zipfian) next(rng *rand.Rand, itemCount int64) int64 {
	if itemCount > z.countForZeta {
		z.zetan = zetaStatic(z.countForZeta, itemCount, z.theta, z.zetan)
		z.countForZeta = itemCount
		z.eta = (1 - math.Pow(2/float64(z.items), 1-z.theta)) / (1 - z.zeta2theta/z.zetan)
	}
	u := rng.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return z.base + 1
	}
	return z.base + int64(float64(itemCount)*math.Pow(z.eta*u-z.eta+1, z.alpha))
}

// The record number of a READ, UPDATE or SCAN comes from a keys.Chooser, as
// every workload's keys do: keys.Uniform, or YCSB's own generators below, which
// draw from the worker's random source as keys' choosers do.

// scrambledZipfian is YCSB's ScrambledZipfianGenerator: zipfian popularity with the
// popular records spread over the key space by hashing.
type scrambledZipfian struct {
	rng *rand.Rand
	z   *zipfian
	n   int64
}

func newScrambledZipfian(rng *rand.Rand, n int64) *scrambledZipfian {
	return &scrambledZipfian{rng: rng, z: newZipfian(0, scrambledItems, scrambledZetan), n: n}
}

func (s *scrambledZipfian) Next() int64 {
	return FNVHash64(s.z.next(s.rng, s.z.items)) % s.n
}

// latest is YCSB's SkewedLatestGenerator: zipfian popularity by recency over the
// initial records and the phase's acknowledged inserts (of every worker), the most
// recent first. Each worker has its own; they share the insert counter.
type latest struct {
	rng      *rand.Rand
	z        *zipfian
	initial  int64
	inserted func(i int64) int64 // record number of the phase's i-th insert
	inserts  *insertCounter
}

func (l *latest) Next() int64 {
	acked := l.inserts.acked.Load()
	total := l.initial + acked
	r := l.z.next(l.rng, total) // 0 = most recent
	if r >= total {
		r = total - 1
	}
	if r < acked {
		return l.inserted(acked - 1 - r)
	}
	return l.initial - 1 - (r - acked)
}

// insertCounter is YCSB's AcknowledgedCounterGenerator for the inserts of a phase,
// shared by all its workers without a lock: claim hands out insert numbers 0, 1,
// 2, ...; acknowledge marks one finished; acked is how many inserts, from the
// first, have all finished, which is what the latest distribution may read.
type insertCounter struct {
	next, acked atomic.Int64
	// window[i&mask] holds i+1 once insert i is acknowledged, for the inserts
	// since the first unfinished one; nil when nothing reads acked.
	window []atomic.Int64
	mask   int64
}

// ackWindow is how many inserts may be in flight or finished behind the first
// unfinished one, as YCSB's WINDOW_SIZE: at 100,000 inserts/s, ten seconds.
const ackWindow = 1 << 20

func newInsertCounter(window int) *insertCounter {
	c := &insertCounter{}
	if window > 0 {
		c.window, c.mask = make([]atomic.Int64, window), int64(window-1)
	}
	return c
}

func (c *insertCounter) claim() int64 { return c.next.Add(1) - 1 }

func (c *insertCounter) acknowledge(i int64) {
	if c.window == nil {
		return
	}
	// Where YCSB fails the thread, an insert so far ahead that the window would
	// wrap stops the wait for the oldest ones instead.
	w := int64(len(c.window))
	for {
		a := c.acked.Load()
		if i-a < w || c.acked.CompareAndSwap(a, i-w+1) {
			break
		}
	}
	// A slot keeps its latest insert: one given up on may finish after the
	// insert that took its slot.
	slot := &c.window[i&c.mask]
	for {
		old := slot.Load()
		if old >= i+1 || slot.CompareAndSwap(old, i+1) {
			break
		}
	}
	// Move the finished prefix forward. Whoever finds the next insert finished
	// moves it: an insert acknowledged just behind another's check is seen by
	// the check of that other, so none is left behind.
	for {
		a := c.acked.Load()
		if c.window[a&c.mask].Load() != a+1 {
			return
		}
		c.acked.CompareAndSwap(a, a+1)
	}
}
