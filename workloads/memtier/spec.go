package memtier

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/keys"
)

// Kind is the workload's name in suites (`memtier:`) and archives.
const Kind = "memtier"

func init() {
	core.RegisterWorkload(core.WorkloadKind{
		Name:   Kind,
		Doc:    func() core.WorkloadDoc { return &doc{} },
		Decode: core.DecodeJSON[Spec],
		Streams: func(p core.PhaseSpec) (core.Streams, error) {
			return streams{spec: p.Workload.(Spec), seed: p.Seed, conns: p.AllConnections()}, nil
		},
	})
}

// Spec is a memtier_benchmark-style mix of SET and GET.
type Spec struct {
	SetRatio   int          `json:"set_ratio"` // --ratio set:get
	GetRatio   int          `json:"get_ratio"`
	SetPattern keys.Pattern `json:"set_pattern"`
	GetPattern keys.Pattern `json:"get_pattern"`
	KeyMin     int64        `json:"key_min"` // inclusive
	KeyMax     int64        `json:"key_max"`
	KeyPrefix  string       `json:"key_prefix"`
	// GaussMedian and GaussStddev shape pattern G; zero means memtier's defaults
	// (the middle of the range, and a sixth of it).
	GaussMedian float64 `json:"gauss_median"`
	GaussStddev float64 `json:"gauss_stddev"`
	// ZipfExp is pattern Z's exponent, in (0, 5) as memtier's --key-zipf-exp; zero
	// means memtier's default, 1.
	ZipfExp  float64 `json:"zipf_exp"`
	ValueMin int     `json:"value_min"` // bytes, inclusive; equal for a fixed size
	ValueMax int     `json:"value_max"`
	// MissFraction of GETs go to keys just past KeyMax, which were never written.
	MissFraction float64 `json:"miss_fraction"`
}

// UnmarshalJSON reads the spec as archived, also from archives written before
// its fields had JSON names (their keys are the Go field names).
func (m *Spec) UnmarshalJSON(b []byte) error {
	type plain Spec
	return core.UnmarshalRenamed(b, (*plain)(m))
}

// Keys is the number of keys in the range.
func (m Spec) Keys() int64 { return m.KeyMax - m.KeyMin + 1 }

// Describe is e.g. "memtier 1:10 R:R kv_[1..10000] 256B".
func (m Spec) Describe() string {
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
func (m Spec) Validate(connections int) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf("memtier: "+format, a...)) }
	if m.SetRatio < 0 || m.GetRatio < 0 || m.SetRatio+m.GetRatio == 0 {
		add("ratio %d:%d needs non-negative parts and at least one non-zero", m.SetRatio, m.GetRatio)
	}
	for _, p := range []keys.Pattern{m.SetPattern, m.GetPattern} {
		if _, err := keys.ParsePattern(string(p)); err != nil {
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
	if m.ZipfExp < 0 || m.ZipfExp >= 5 {
		add("key_zipf_exp %g must be in (0, 5), as memtier's", m.ZipfExp)
	}
	if connections > 0 && m.KeyMax >= m.KeyMin {
		for _, p := range []keys.Pattern{m.SetPattern, m.GetPattern} {
			if (p == keys.PatternPartitioned || p == keys.PatternSequential) && m.Keys() < int64(connections) {
				add("pattern %c splits %d keys across %d connections: some would get none", p, m.Keys(), connections)
				break
			}
		}
	}
	return errs
}

// Kind implements core.Workload.
func (m Spec) Kind() string { return Kind }

// OpKinds implements core.Workload.
func (m Spec) OpKinds() []core.OpKind {
	var ks []core.OpKind
	if m.GetRatio > 0 {
		ks = append(ks, core.OpGet)
	}
	if m.SetRatio > 0 {
		ks = append(ks, core.OpSet)
	}
	return ks
}

// ProbeOps implements core.Probed: the probe GETs, or SETs.
func (m Spec) ProbeOps() (read, write core.OpKind) { return core.OpGet, core.OpSet }

// Scale implements core.Scalable: the key range scales, keeping at least a key per
// connection, and with it a load's op count (it writes its range once); other op
// counts scale as they are.
func (m Spec) Scale(p core.PhaseSpec, f float64) (core.PhaseSpec, error) {
	if core.ScaleOverflows(m.KeyMax, f) {
		return p, fmt.Errorf("its key range would overflow")
	}
	mm := m
	mm.KeyMax = mm.KeyMin + core.Scaled(m.Keys(), f, int64(p.Connections)) - 1
	if mm.GaussMedian != 0 {
		mm.GaussMedian = float64(mm.KeyMin) + (m.GaussMedian-float64(m.KeyMin))*f
	}
	mm.GaussStddev *= f
	p.Ops = core.ScaledOps(p, f, p.Ops == m.Keys(), mm.Keys())
	p.Workload = mm
	return p, nil
}

// Footprint implements core.Footprint: SETs write keys of the range, at most
// the SET share of ops of them, values of the average size.
func (m Spec) Footprint(_ core.PhaseKind, ops int64, known bool) core.KeysWritten {
	if m.SetRatio == 0 {
		return core.NothingWritten
	}
	w := core.KeysWritten{
		Space: "memtier " + m.KeyPrefix, First: m.KeyMin, Last: m.KeyMax,
		KeyBytes:   float64(len(m.KeyPrefix) + len(strconv.FormatInt(m.KeyMax, 10))),
		ValueBytes: float64(m.ValueMin+m.ValueMax) / 2, // sizes are uniform in [min, max]
	}
	if known {
		w.Max, w.Bounded = int64(math.Round(float64(ops)*float64(m.SetRatio)/float64(m.SetRatio+m.GetRatio))), true
	}
	return w
}

// streams are a phase's: connection i's is New(spec, seed, i, conns).
type streams struct {
	spec  Spec
	seed  uint64
	conns int
}

func (s streams) Source(conn int) core.OpSource { return New(s.spec, s.seed, conn, s.conns) }

// ProbeSource GETs (or SETs) keys of the range uniformly, never a miss, as one
// more connection.
func (s streams) ProbeSource(op core.OpKind) core.OpSource {
	m := s.spec
	m.SetRatio, m.GetRatio = 0, 1
	if op == core.OpSet {
		m.SetRatio, m.GetRatio = 1, 0
	}
	m.SetPattern, m.GetPattern, m.MissFraction = keys.PatternUniform, keys.PatternUniform, 0
	return New(m, s.seed, s.conns, s.conns+1)
}

// Defaults for what a suite leaves out: memtier_benchmark's.
const (
	DefaultRatio      = "1:10"
	DefaultKeyPattern = "R:R"
	DefaultKeyMin     = 1
	DefaultKeyPrefix  = "kv_"
	DefaultValueSize  = "32"
)

// doc is the workload as a suite writes it, in memtier_benchmark's terms.
type doc struct {
	Ratio        string  `yaml:"ratio"`       // set:get, e.g. "1:10"
	KeyPattern   string  `yaml:"key_pattern"` // set:get patterns, e.g. "R:R", or one letter for both
	KeyMin       *int64  `yaml:"key_min"`
	KeyMax       *int64  `yaml:"key_max"`
	KeyPrefix    *string `yaml:"key_prefix"`
	KeyMedian    float64 `yaml:"key_median"`
	KeyStddev    float64 `yaml:"key_stddev"`
	KeyZipfExp   float64 `yaml:"key_zipf_exp"` // pattern Z's exponent (memtier --key-zipf-exp)
	ValueSize    string  `yaml:"value_size"`   // "256" or "1024-4096"
	MissFraction float64 `yaml:"miss_fraction"`
}

// Resolve implements core.WorkloadDoc. A load only writes, each key of the range
// once unless the suite gives its op count.
func (d *doc) Resolve(p *core.PhaseSpec) []error {
	m, errs := d.spec()
	p.Workload = m
	if p.Kind == core.PhaseLoad {
		if m.GetRatio != 0 {
			errs = append(errs, fmt.Errorf("a load phase only writes: ratio must be N:0"))
		}
		if p.Ops == 0 {
			p.Ops = m.Keys() // write each key of the range once (with pattern P or S)
		}
	}
	return errs
}

func (d *doc) spec() (Spec, []error) {
	var errs []error
	m := Spec{KeyMin: DefaultKeyMin, GaussMedian: d.KeyMedian, GaussStddev: d.KeyStddev, ZipfExp: d.KeyZipfExp, MissFraction: d.MissFraction}
	ratio := cmp.Or(d.Ratio, DefaultRatio)
	sets, gets, ok := pair(ratio, ":")
	if !ok {
		errs = append(errs, fmt.Errorf("ratio %q is not set:get such as 1:10", ratio))
	} else {
		m.SetRatio, m.GetRatio = sets, gets
	}
	pat := cmp.Or(d.KeyPattern, DefaultKeyPattern)
	sp, gp, found := strings.Cut(pat, ":")
	if !found {
		gp = sp
	}
	if p, err := keys.ParsePattern(sp); err != nil {
		errs = append(errs, err)
	} else {
		m.SetPattern = p
	}
	if p, err := keys.ParsePattern(gp); err != nil {
		errs = append(errs, err)
	} else {
		m.GetPattern = p
	}
	if d.KeyMin != nil {
		m.KeyMin = *d.KeyMin
	}
	switch {
	case d.KeyMax == nil:
		errs = append(errs, fmt.Errorf("memtier: key_max is required"))
	case *d.KeyMax < m.KeyMin:
		errs = append(errs, fmt.Errorf("memtier: key_max %d is below key_min %d: the key range is empty", *d.KeyMax, m.KeyMin))
	default:
		m.KeyMax = *d.KeyMax
	}
	m.KeyPrefix = DefaultKeyPrefix
	if d.KeyPrefix != nil {
		m.KeyPrefix = *d.KeyPrefix
	}
	vs := cmp.Or(d.ValueSize, DefaultValueSize)
	if lo, hi, ok := pair(vs, "-"); ok {
		m.ValueMin, m.ValueMax = lo, hi
	} else if n, err := strconv.Atoi(vs); err == nil {
		m.ValueMin, m.ValueMax = n, n
	} else {
		errs = append(errs, fmt.Errorf("value_size %q is not a size in bytes (256) or a range (1024-4096)", vs))
	}
	return m, errs
}

func pair(s, sep string) (int, int, bool) {
	a, b, ok := strings.Cut(s, sep)
	if !ok {
		return 0, 0, false
	}
	x, err1 := strconv.Atoi(strings.TrimSpace(a))
	y, err2 := strconv.Atoi(strings.TrimSpace(b))
	return x, y, err1 == nil && err2 == nil
}
