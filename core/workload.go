package core

import (
	"fmt"
	"strconv"
	"strings"
)

// WorkloadSpec describes the operations of a phase as data, so that it can cross the
// plugin boundary; the op generators live in workloads/.
type WorkloadSpec struct {
	Memtier *MemtierSpec
}

// Describe is a short human description for plans and reports.
func (w WorkloadSpec) Describe() string {
	if w.Memtier != nil {
		return w.Memtier.Describe()
	}
	return "none"
}

// OpKinds lists the op kinds the workload issues.
func (w WorkloadSpec) OpKinds() []OpKind {
	if m := w.Memtier; m != nil {
		var ks []OpKind
		if m.GetRatio > 0 {
			ks = append(ks, OpGet)
		}
		if m.SetRatio > 0 {
			ks = append(ks, OpSet)
		}
		return ks
	}
	return nil
}

// Validate reports every problem with the workload.
func (w WorkloadSpec) Validate(connections int) []error {
	if w.Memtier == nil {
		return []error{fmt.Errorf("workload: none given (want memtier)")}
	}
	return w.Memtier.Validate(connections)
}

// KeyPattern is memtier's key pattern letter.
type KeyPattern byte

// Key patterns. S and P both cover the key range exactly once per pass across all
// connections: S interleaves (connection k takes keys k, k+C, k+2C, ...), P gives each
// connection a contiguous share. Neither has memtier's S:S bug, where every connection
// walks the same keys.
const (
	PatternUniform     KeyPattern = 'R'
	PatternGaussian    KeyPattern = 'G'
	PatternSequential  KeyPattern = 'S'
	PatternPartitioned KeyPattern = 'P'
)

// MarshalText writes the pattern as its letter.
func (p KeyPattern) MarshalText() ([]byte, error) { return []byte{byte(p)}, nil }

// UnmarshalText reads a pattern letter.
func (p *KeyPattern) UnmarshalText(b []byte) error {
	v, err := ParseKeyPattern(string(b))
	*p = v
	return err
}

// ParseKeyPattern reads one pattern letter.
func ParseKeyPattern(s string) (KeyPattern, error) {
	if len(s) == 1 {
		switch p := KeyPattern(s[0]); p {
		case PatternUniform, PatternGaussian, PatternSequential, PatternPartitioned:
			return p, nil
		}
	}
	return 0, fmt.Errorf("key pattern %q is not one of R (uniform), G (gaussian), S (sequential), P (partitioned)", s)
}

// MemtierSpec is a memtier_benchmark-style mix of SET and GET.
type MemtierSpec struct {
	SetRatio, GetRatio     int // --ratio set:get
	SetPattern, GetPattern KeyPattern
	KeyMin, KeyMax         int64 // inclusive
	KeyPrefix              string
	// GaussMedian and GaussStddev shape pattern G; zero means memtier's defaults
	// (the middle of the range, and a sixth of it).
	GaussMedian, GaussStddev float64
	ValueMin, ValueMax       int // bytes, inclusive; equal for a fixed size
	// MissFraction of GETs go to keys just past KeyMax, which were never written.
	MissFraction float64
}

// Keys is the number of keys in the range.
func (m MemtierSpec) Keys() int64 { return m.KeyMax - m.KeyMin + 1 }

// Describe is e.g. "memtier 1:10 R:R kv_[1..10000] 256B".
func (m MemtierSpec) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "memtier %d:%d %c:%c %s[%d..%d] ", m.SetRatio, m.GetRatio, m.SetPattern, m.GetPattern, m.KeyPrefix, m.KeyMin, m.KeyMax)
	if m.ValueMin == m.ValueMax {
		b.WriteString(strconv.Itoa(m.ValueMin) + "B")
	} else {
		fmt.Fprintf(&b, "%d-%dB", m.ValueMin, m.ValueMax)
	}
	if m.MissFraction > 0 {
		fmt.Fprintf(&b, " miss=%g", m.MissFraction)
	}
	return b.String()
}

// Validate reports every problem with the mix.
func (m MemtierSpec) Validate(connections int) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf("memtier: "+format, a...)) }
	if m.SetRatio < 0 || m.GetRatio < 0 || m.SetRatio+m.GetRatio == 0 {
		add("ratio %d:%d needs non-negative parts and at least one non-zero", m.SetRatio, m.GetRatio)
	}
	for _, p := range []KeyPattern{m.SetPattern, m.GetPattern} {
		if _, err := ParseKeyPattern(string(p)); err != nil {
			add("%v", err)
		}
	}
	if m.KeyMin < 0 || m.KeyMax < m.KeyMin {
		add("key range [%d, %d] is empty or negative", m.KeyMin, m.KeyMax)
	}
	if m.ValueMin < 1 || m.ValueMax < m.ValueMin {
		add("value size %d-%d must be at least 1 byte and min <= max", m.ValueMin, m.ValueMax)
	}
	if m.ValueMax > 64<<20 {
		add("value size %d is above the 64 MiB limit", m.ValueMax)
	}
	if m.MissFraction < 0 || m.MissFraction >= 1 {
		add("miss_fraction %g must be in [0, 1)", m.MissFraction)
	}
	if m.GaussStddev < 0 {
		add("gaussian stddev must not be negative")
	}
	if connections > 0 && m.KeyMax >= m.KeyMin {
		for _, p := range []KeyPattern{m.SetPattern, m.GetPattern} {
			if (p == PatternPartitioned || p == PatternSequential) && m.Keys() < int64(connections) {
				add("pattern %c splits %d keys across %d connections: some would get none", p, m.Keys(), connections)
				break
			}
		}
	}
	return errs
}
