// Package keys chooses key indices for workloads: uniform, gaussian, sequential,
// partitioned and zipf. Every chooser belongs to one worker and is not safe for concurrent use.
package keys

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/cmpbench/cmpbench/core"
)

// Pattern is memtier's key pattern letter.
type Pattern byte

// Key patterns. S and P both cover the key range exactly once per pass across all
// connections: S interleaves (connection k takes keys k, k+C, k+2C, ...), P gives each
// connection a contiguous share. Neither has memtier's S:S bug, where every connection
// walks the same keys.
const (
	PatternUniform     Pattern = 'R'
	PatternGaussian    Pattern = 'G'
	PatternSequential  Pattern = 'S'
	PatternPartitioned Pattern = 'P'
	// PatternZipf draws keys from a Zipf distribution over the range, the lowest
	// key the most frequent, as memtier's Z.
	PatternZipf Pattern = 'Z'
)

// MarshalText writes the pattern as its letter.
func (p Pattern) MarshalText() ([]byte, error) { return []byte{byte(p)}, nil }

// UnmarshalText reads a pattern letter.
func (p *Pattern) UnmarshalText(b []byte) error {
	v, err := ParsePattern(string(b))
	*p = v
	return err
}

// ParsePattern reads one pattern letter.
func ParsePattern(s string) (Pattern, error) {
	if len(s) == 1 {
		switch p := Pattern(s[0]); p {
		case PatternUniform, PatternGaussian, PatternSequential, PatternPartitioned, PatternZipf:
			return p, nil
		}
	}
	return 0, fmt.Errorf("key pattern %q is not one of R (uniform), G (gaussian), S (sequential), P (partitioned), Z (zipf)", s)
}

// Chooser yields key indices.
type Chooser interface {
	Next() int64
}

// NewRand returns the random source of one worker, derived from the phase seed.
func NewRand(seed uint64, worker int, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^(stream*core.SplitMixGamma), uint64(worker)+1))
}

// New returns the chooser for a pattern over [min, max].
func New(p Pattern, rng *rand.Rand, min, max int64, median, stddev, zipfExp float64, worker, workers int) Chooser {
	switch p {
	case PatternZipf:
		return NewZipf(rng, min, max, zipfExp)
	case PatternGaussian:
		return NewGaussian(rng, min, max, median, stddev)
	case PatternSequential:
		return NewSequential(min, max, worker, workers)
	case PatternPartitioned:
		return NewPartitioned(min, max, worker, workers)
	default:
		return &Uniform{rng: rng, min: min, n: max - min + 1}
	}
}

// Uniform draws every key of the range with equal probability.
type Uniform struct {
	rng *rand.Rand
	min int64
	n   int64
}

// NewUniform returns a uniform chooser over [min, max].
func NewUniform(rng *rand.Rand, min, max int64) *Uniform {
	return &Uniform{rng: rng, min: min, n: max - min + 1}
}

// Next implements Chooser.
func (u *Uniform) Next() int64 { return u.min + u.rng.Int64N(u.n) }

// Gaussian draws keys from a normal distribution, redrawing values outside the range
// as memtier does.
type Gaussian struct {
	rng              *rand.Rand
	min, max         int64
	median, stddev   float64
	fallbackMidpoint int64
}

// NewGaussian returns a gaussian chooser; zero median and stddev take memtier's
// defaults (the middle of the range, and a sixth of its width).
func NewGaussian(rng *rand.Rand, min, max int64, median, stddev float64) *Gaussian {
	if median == 0 {
		median = float64(min) + float64(max-min)/2
	}
	if stddev == 0 {
		stddev = float64(max-min) / 6
	}
	return &Gaussian{rng: rng, min: min, max: max, median: median, stddev: stddev, fallbackMidpoint: (min + max) / 2}
}

// Next implements Chooser.
func (g *Gaussian) Next() int64 {
	// A median far outside the range could make redrawing loop for long: bound it.
	for range 64 {
		v := int64(math.Round(g.median + g.rng.NormFloat64()*g.stddev))
		if v >= g.min && v <= g.max {
			return v
		}
	}
	return g.fallbackMidpoint
}

// Sequential interleaves the range across workers: worker k of n walks keys
// min+k, min+k+n, ... and starts over at the end. Together the workers cover every key
// exactly once per pass.
type Sequential struct {
	first, next, max, step int64
}

// NewSequential returns worker's interleaved walk over [min, max].
func NewSequential(min, max int64, worker, workers int) *Sequential {
	first := min + int64(worker)
	return &Sequential{first: first, next: first, max: max, step: int64(workers)}
}

// Next implements Chooser.
func (s *Sequential) Next() int64 {
	v := s.next
	s.next += s.step
	if s.next > s.max {
		s.next = s.first
	}
	return v
}

// Partitioned gives each worker a contiguous share of the range (core.Split), walked
// in order and started over at its end. Together the workers cover every key exactly
// once per pass; a load of exactly Keys() ops writes each key once.
type Partitioned struct {
	first, next, last int64
}

// NewPartitioned returns worker's share of [min, max].
func NewPartitioned(min, max int64, worker, workers int) *Partitioned {
	start, count := core.Split(max-min+1, workers, worker)
	first := min + start
	return &Partitioned{first: first, next: first, last: first + count - 1}
}

// Next implements Chooser.
func (p *Partitioned) Next() int64 {
	v := p.next
	p.next++
	if p.next > p.last {
		p.next = p.first
	}
	return v
}

// Zipf draws key k of [min, max] with probability proportional to 1/k^exp (keys
// numbered from 1 when min is 0), the lowest key the most frequent: memtier's
// pattern Z, by the same method, rejection-inversion (Hörmann and Derflinger,
// "Rejection-inversion to generate variates from monotone discrete
// distributions", ACM TOMACS 6(3), 1996), which needs no table of the range.
type Zipf struct {
	rng                *rand.Rand
	min, max           float64
	exp                float64
	oneMinusExp, inv   float64
	hMin, hMax, accept float64
}

// NewZipf returns a zipf chooser; exp 0 takes memtier's default, 1.
func NewZipf(rng *rand.Rand, lo, hi int64, exp float64) *Zipf {
	if exp == 0 {
		exp = 1
	}
	z := &Zipf{rng: rng, min: float64(max(lo, 1)), exp: exp}
	z.max = max(float64(hi), z.min)
	if math.Abs(exp-1) < 1e-4 {
		z.exp = 1
		z.hMin = math.Log(z.min+0.5) - 1/z.min
		z.hMax = math.Log(z.max + 0.5)
		z.accept = z.min + 1 - math.Exp(math.Log(z.min+1.5)-1/(z.min+1))
		return z
	}
	z.oneMinusExp = 1 - exp
	z.inv = 1 / z.oneMinusExp
	z.hMin = math.Pow(z.min+0.5, z.oneMinusExp) - z.oneMinusExp*math.Pow(z.min, -exp)
	z.hMax = math.Pow(z.max+0.5, z.oneMinusExp)
	t := math.Pow(z.min+1.5, z.oneMinusExp) - z.oneMinusExp*math.Pow(z.min+1, -exp)
	z.accept = z.min + 1 - math.Pow(t, z.inv)
	return z
}

// Next implements Chooser.
func (z *Zipf) Next() int64 {
	for {
		u := z.hMin + z.rng.Float64()*(z.hMax-z.hMin)
		var x float64
		if z.exp == 1 {
			x = math.Exp(u)
		} else {
			x = math.Pow(u, z.inv)
		}
		x = math.Min(math.Max(x, z.min-0.5+1e-9), z.max+0.5-1e-9)
		k := math.Floor(x + 0.5)
		if k-x <= z.accept {
			return int64(k)
		}
		if z.exp == 1 {
			if u > math.Log(k+0.5)-1/k {
				return int64(k)
			}
		} else if z.inv*(u-math.Pow(k+0.5, z.oneMinusExp)) > -math.Pow(k, -z.exp) {
			return int64(k)
		}
	}
}
