package trace

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// streams are a phase's: one reader of the trace per process, shared by its
// connections, each taking the next request of the process's share when it
// needs one.
type streams struct {
	sh     *shared
	prefix string
	values []byte // what writes write: printable, from the seed, shared read-only
	// numbers are what writes of up to maxNumber bytes write: decimal digits
	// (1 to 9), so that a trace's incr and decr of a counter it set work, as
	// they did where it was recorded (Redis and memcached increment numbers
	// only).
	numbers []byte
}

// maxNumber is the longest value written as a number: 18 digits fit an int64.
const maxNumber = 18

// newStreams opens the trace for a phase. A process replays the requests
// whose key hashes to one of its connections of the whole phase (the
// connections ConnBase to ConnBase+Connections-1 of AllConnections): a sharded
// run splits the trace by key hash, every key on one shard, and the shards
// together replay all of it.
func newStreams(p core.PhaseSpec) (core.Streams, error) {
	s, ok := p.Workload.(Spec)
	if !ok {
		return nil, fmt.Errorf("trace: phase %q has a %T workload", p.Name, p.Workload)
	}
	if errs := s.Validate(0); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	st, err := os.Stat(s.File)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if st.Size() != s.Facts.Size {
		return nil, fmt.Errorf("trace %s is %d bytes, not the %d of the trace the run was planned with (SHA-256 %s): it changed", s.File, st.Size(), s.Facts.Size, s.Facts.SHA256)
	}
	sh, err := newShared(s, p)
	if err != nil {
		return nil, err
	}
	n := max(s.Facts.MaxValue, warmSize) + valueSlack
	return &streams{sh: sh, prefix: s.KeyPrefix, values: values(p.Seed, n, 'a', 26), numbers: values(p.Seed, maxNumber+valueSlack, '1', 9)}, nil
}

// Source is connection conn's stream. The connections of a process share
// the process's reader, so conn does not choose the requests.
func (s *streams) Source(int) core.OpSource {
	src := &source{sh: s.sh, values: s.values, numbers: s.numbers, prefix: len(s.prefix)}
	src.key = append(make([]byte, 0, len(s.prefix)+64), s.prefix...)
	return src
}

// ProbeSource: a trace has no side probe (its requests are the trace's).
func (s *streams) ProbeSource(core.OpKind) core.OpSource { return nil }

// valueSlack lets values start at varying offsets of the value buffer.
const valueSlack = 4096

// warmSize is what the warm-up writes for a read that recorded no size
// (MONITOR's GET).
const warmSize = 64

// values is n bytes from seed, each one of the n characters from first.
func values(seed uint64, n int, first, chars byte) []byte {
	b := make([]byte, n)
	z := core.Mix64(seed ^ 0x7472616365) // "trace"
	for i := range b {
		if i%8 == 0 {
			z = core.Mix64(z + core.SplitMixGamma)
		}
		b[i] = first + byte((z>>(8*(i%8)))%uint64(chars))
	}
	return b
}

// source is one connection's stream: the request it took from the shared
// reader, until Next hands it out. It implements core.Scheduled.
type source struct {
	sh      *shared
	values  []byte
	numbers []byte
	key     []byte // prefix + the trace's key
	prefix  int

	has, ended bool
	at         int64
	kind       core.OpKind
	size       int
	ttl        time.Duration
	delta      int64
	off        int
}

// Due implements core.Scheduled: the time of the request Next fills next.
func (s *source) Due() (int64, bool) {
	if !s.has && !s.ended {
		s.has = s.sh.take(s)
		s.ended = !s.has
	}
	return s.at, s.has
}

// Next implements core.OpSource. After the stream's end (which the engine
// asks Due for first) it fills the last request again.
func (s *source) Next(op *core.Op) {
	s.Due()
	s.has = false
	op.Kind, op.Key = s.kind, s.key
	op.Value, op.TTL, op.Delta = nil, 0, 0
	switch s.kind {
	case core.OpSet:
		if s.size <= maxNumber {
			op.Value = s.numbers[s.off : s.off+s.size]
		} else {
			op.Value = s.values[s.off : s.off+s.size]
		}
		op.TTL = s.ttl
		s.off = (s.off + 4093) % valueSlack
	case core.OpIncr:
		op.Delta = s.delta
	}
}

// shared is a process's reader of a trace: its connections take requests from
// it under its lock, one at a time, in the trace's order.
type shared struct {
	mu     sync.Mutex
	l      *lines
	p      *parser
	r      request
	format string
	replay string
	first  int64
	speed  float64
	// skip are the op kinds the adapter lacks (Spec.Skip); dropTTL says it
	// keeps no TTL.
	skip    [core.NumOpKinds]bool
	dropTTL bool
	// unmapped are the operations the trace's facts say are skipped although
	// this build replays them: facts archived by an older build, whose phase
	// a rerun replays as it was (nil when the facts agree).
	unmapped map[string]bool
	// The window of the phase's connections whose keys this process replays.
	lo, hi, all uint64
	seen        *keySet // the warm-up's keys seen so far
	ended       bool
}

func newShared(s Spec, p core.PhaseSpec) (*shared, error) {
	l, err := openLines(s.File, false)
	if err != nil {
		return nil, err
	}
	parser, err := newParser(s.Format)
	if err != nil {
		l.close()
		return nil, err
	}
	sh := &shared{l: l, p: parser, format: s.Format, replay: s.Replay, first: s.Facts.FirstNs, speed: s.Speed,
		lo: uint64(p.ConnBase), hi: uint64(p.ConnBase + p.Connections), all: uint64(p.AllConnections()), dropTTL: s.DropTTL}
	for _, name := range s.Skip {
		if k, err := core.ParseOpKind(name); err == nil {
			sh.skip[k] = true
		}
	}
	for _, o := range s.Facts.Ops {
		if _, _, ok := mapOp(s.Format, []byte(o.Op)); ok && o.As == "" {
			if sh.unmapped == nil {
				sh.unmapped = map[string]bool{}
			}
			sh.unmapped[o.Op] = true
		}
	}
	if s.Replay == ReplayWarm {
		sh.seen = newKeySet(min(s.Facts.Requests, 1<<20))
	}
	// A phase cut at its time bound leaves the file open: it is closed once
	// the phase's sources are gone (the reader closes it itself at its end).
	runtime.AddCleanup(sh, func(l *lines) { l.close() }, l)
	return sh, nil
}

// take fills dst with the next request of this process's share, and says
// false after the last. The reader is closed at the end.
func (sh *shared) take(dst *source) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for !sh.ended {
		line, err := sh.l.next()
		if err != nil {
			// The trace was read whole before the run (ReadFacts): an error
			// here is a file changed since, which ends the replay short, and
			// the counts against the trace's facts say so.
			sh.end()
			return false
		}
		if sh.p.parse(line, &sh.r) != nil {
			continue
		}
		if sh.pick(dst) {
			return true
		}
	}
	return false
}

func (sh *shared) end() {
	sh.ended = true
	sh.l.close()
}

// pick says whether the parsed request is one this process sends, and fills
// dst with it when it is.
func (sh *shared) pick(dst *source) bool {
	r := &sh.r
	kind, sign, ok := mapOp(sh.format, r.op)
	if !ok || sh.skip[kind] && sh.seen == nil || sh.unmapped != nil && sh.unmapped[string(r.op)] {
		return false // skipped: counted by its name in the facts, or as a kind the adapter lacks
	}
	h := fnv1a(r.key)
	if g := h % sh.all; g < sh.lo || g >= sh.hi {
		return false
	}
	size := r.size
	if sh.seen != nil {
		first := sh.seen.add(core.Mix64(h))
		if !first || kind != core.OpGet {
			return false
		}
		kind = core.OpSet
		if size == 0 {
			size = warmSize
		}
	}
	dst.kind, dst.size, dst.delta, dst.ttl = kind, size, sign*r.delta, 0
	if kind == core.OpSet && !sh.dropTTL && sh.seen == nil {
		dst.ttl = r.ttl
	}
	dst.key = append(dst.key[:dst.prefix], r.key...)
	dst.at = 0
	if sh.replay == ReplayRecorded {
		dst.at = int64(float64(max(0, r.at-sh.first)) / sh.speed)
	}
	return true
}

// fnv1a is the 64-bit FNV-1a hash of b.
func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// keySet is a set of 64-bit key hashes (open addressing): 16 bytes per key
// at most, what the warm-up holds of each distinct key it met.
type keySet struct {
	slots []uint64
	n     int
}

func newKeySet(hint int64) *keySet {
	n := 1024
	for int64(n) < 2*hint {
		n *= 2
	}
	return &keySet{slots: make([]uint64, n)}
}

// add puts h in the set and says whether it was new.
func (k *keySet) add(h uint64) bool {
	if h == 0 {
		h = 1 // 0 marks an empty slot
	}
	if 2*(k.n+1) > len(k.slots) {
		k.grow()
	}
	mask := uint64(len(k.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch k.slots[i] {
		case h:
			return false
		case 0:
			k.slots[i] = h
			k.n++
			return true
		}
	}
}

func (k *keySet) grow() {
	old := k.slots
	k.slots, k.n = make([]uint64, 2*len(old)), 0
	for _, h := range old {
		if h != 0 {
			k.add(h)
		}
	}
}

var _ core.Scheduled = (*source)(nil)
