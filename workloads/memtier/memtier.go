// Package memtier generates memtier_benchmark-style operation streams: a SET:GET
// ratio, key patterns per op, a key range with a prefix, random values of fixed or
// ranged size, and a fraction of reads that miss.
package memtier

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/keys"
)

// valueSlack lets values start at varying offsets of the random buffer, so that
// consecutive values differ.
const valueSlack = 4096

// Source is one worker's operation stream. It never allocates after New.
type Source struct {
	rng          *rand.Rand
	set, get     keys.Chooser
	cycle, pos   int // ratio cycle length and position in it
	sets         int
	prefixLen    int
	keyBuf       []byte
	values       []byte
	valueMin     int
	valueSpan    int // ValueMax - ValueMin + 1
	missFraction float64
	missBase     int64 // first never-written key
	missRange    int64
}

// New returns the stream of worker (0-based) among workers, derived from seed.
func New(spec Spec, seed uint64, worker, workers int) *Source {
	rng := keys.NewRand(seed, worker, 1)
	s := &Source{
		rng:          rng,
		set:          keys.New(spec.SetPattern, rng, spec.KeyMin, spec.KeyMax, spec.GaussMedian, spec.GaussStddev, spec.ZipfExp, worker, workers),
		get:          keys.New(spec.GetPattern, rng, spec.KeyMin, spec.KeyMax, spec.GaussMedian, spec.GaussStddev, spec.ZipfExp, worker, workers),
		cycle:        spec.SetRatio + spec.GetRatio,
		sets:         spec.SetRatio,
		prefixLen:    len(spec.KeyPrefix),
		keyBuf:       make([]byte, len(spec.KeyPrefix), len(spec.KeyPrefix)+20),
		valueMin:     spec.ValueMin,
		valueSpan:    spec.ValueMax - spec.ValueMin + 1,
		missFraction: spec.MissFraction,
		missBase:     spec.KeyMax + 1,
	}
	copy(s.keyBuf, spec.KeyPrefix)
	// Workers start at different points of the ratio cycle so their SETs do not line up.
	s.pos = rng.IntN(s.cycle)
	if f := spec.MissFraction; f > 0 {
		// Misses are uniform over a range next to the key range, sized so that for
		// pattern R the reads are exactly uniform over a range widened by 1/(1-f).
		s.missRange = max(1, int64(math.Round(float64(spec.Keys())*f/(1-f))))
	}
	s.values = make([]byte, spec.ValueMax+valueSlack)
	for i := 0; i < len(s.values); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(s.values); j++ {
			s.values[i+j] = byte(v >> (8 * j))
		}
	}
	return s
}

// Next fills op with the next operation.
func (s *Source) Next(op *core.Op) {
	isSet := s.pos < s.sets
	s.pos++
	if s.pos == s.cycle {
		s.pos = 0
	}
	var idx int64
	if isSet {
		op.Kind = core.OpSet
		idx = s.set.Next()
		size := s.valueMin
		if s.valueSpan > 1 {
			size += s.rng.IntN(s.valueSpan)
		}
		off := s.rng.IntN(valueSlack)
		op.Value = s.values[off : off+size]
	} else {
		op.Kind = core.OpGet
		op.Value = nil
		if s.missRange > 0 && s.rng.Float64() < s.missFraction {
			idx = s.missBase + s.rng.Int64N(s.missRange)
		} else {
			idx = s.get.Next()
		}
	}
	s.keyBuf = strconv.AppendInt(s.keyBuf[:s.prefixLen], idx, 10)
	op.Key = s.keyBuf
}
