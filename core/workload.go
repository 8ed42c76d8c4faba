package core

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// WorkloadSpec describes the operations of a phase as data, so that it can cross the
// plugin boundary; the op generators live in workloads/.
type WorkloadSpec struct {
	Memtier *MemtierSpec
	YCSB    *YCSBSpec
	PubSub  *PubSubSpec
}

// Describe is a short human description for plans and reports.
func (w WorkloadSpec) Describe() string {
	switch {
	case w.Memtier != nil:
		return w.Memtier.Describe()
	case w.YCSB != nil:
		return w.YCSB.Describe()
	case w.PubSub != nil:
		return w.PubSub.Describe()
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
	if y := w.YCSB; y != nil {
		var ks []OpKind
		for _, p := range []struct {
			share float64
			kind  OpKind
		}{{y.Read, OpRead}, {y.Update, OpUpdate}, {y.Insert, OpInsert}, {y.Scan, OpScan}} {
			if p.share > 0 {
				ks = append(ks, p.kind)
			}
		}
		return ks
	}
	if w.PubSub != nil {
		return []OpKind{OpPublish, OpDeliver}
	}
	return nil
}

// Validate reports every problem with the workload.
func (w WorkloadSpec) Validate(connections int) []error {
	n := 0
	for _, given := range []bool{w.Memtier != nil, w.YCSB != nil, w.PubSub != nil} {
		if given {
			n++
		}
	}
	switch {
	case n > 1:
		return []error{fmt.Errorf("workload: %d given (memtier, ycsb, pubsub); a phase has one workload", n)}
	case w.Memtier != nil:
		return w.Memtier.Validate(connections)
	case w.YCSB != nil:
		return w.YCSB.Validate()
	case w.PubSub != nil:
		return w.PubSub.Validate()
	}
	return []error{fmt.Errorf("workload: none given (want memtier, ycsb or pubsub)")}
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
	// PatternZipf draws keys from a Zipf distribution over the range, the lowest
	// key the most frequent, as memtier's Z (exponent MemtierSpec.ZipfExp).
	PatternZipf KeyPattern = 'Z'
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
		case PatternUniform, PatternGaussian, PatternSequential, PatternPartitioned, PatternZipf:
			return p, nil
		}
	}
	return 0, fmt.Errorf("key pattern %q is not one of R (uniform), G (gaussian), S (sequential), P (partitioned), Z (zipf)", s)
}

// MemtierSpec is a memtier_benchmark-style mix of SET and GET.
type MemtierSpec struct {
	SetRatio   int        `json:"set_ratio"` // --ratio set:get
	GetRatio   int        `json:"get_ratio"`
	SetPattern KeyPattern `json:"set_pattern"`
	GetPattern KeyPattern `json:"get_pattern"`
	KeyMin     int64      `json:"key_min"` // inclusive
	KeyMax     int64      `json:"key_max"`
	KeyPrefix  string     `json:"key_prefix"`
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
func (m *MemtierSpec) UnmarshalJSON(b []byte) error {
	type plain MemtierSpec
	return unmarshalRenamed(b, (*plain)(m))
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
	if m.ZipfExp < 0 || m.ZipfExp >= 5 {
		add("key_zipf_exp %g must be in (0, 5), as memtier's", m.ZipfExp)
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

// YCSB request distributions and insert orders.
const (
	DistUniform = "uniform"
	DistZipfian = "zipfian" // scrambled, as YCSB's
	DistLatest  = "latest"

	InsertHashed  = "hashed" // key user<FNV-1a 64 of the record number>, as YCSB
	InsertOrdered = "ordered"
)

// ProportionTolerance is how far from 1 the YCSB proportions may add up: floating-point
// rounding of decimal shares (0.7+0.1+0.2), nothing a suite could mean.
const ProportionTolerance = 1e-9

// YCSBMix is a named mix of YCSB's core workloads.
type YCSBMix struct {
	Name                       string
	Read, Update, Insert, Scan float64
	Distribution               string
}

// YCSB's core workloads A-D, as YCSB defines them.
var (
	YCSBA = YCSBMix{Name: "A", Read: 0.5, Update: 0.5, Distribution: DistZipfian}   // update heavy
	YCSBB = YCSBMix{Name: "B", Read: 0.95, Update: 0.05, Distribution: DistZipfian} // read mostly
	YCSBC = YCSBMix{Name: "C", Read: 1, Distribution: DistZipfian}                  // read only
	YCSBD = YCSBMix{Name: "D", Read: 0.95, Insert: 0.05, Distribution: DistLatest}  // read latest
)

// YCSBMixes are the core workloads by name.
var YCSBMixes = map[string]YCSBMix{"A": YCSBA, "B": YCSBB, "C": YCSBC, "D": YCSBD}

// Apply sets the mix's proportions and distribution on spec.
func (m YCSBMix) Apply(spec *YCSBSpec) {
	spec.Read, spec.Update, spec.Insert, spec.Scan = m.Read, m.Update, m.Insert, m.Scan
	spec.Distribution = m.Distribution
}

// YCSBSpec is YCSB's core workload over multi-field records. Records are numbered;
// record n's key is KeyPrefix followed by n, hashed or not. The initial records are
// 0 .. RecordCount-1; a load phase inserts exactly those, with field values that are
// a function of the phase seed, the record and the field, so that they can be checked
// later without storing them.
type YCSBSpec struct {
	RecordCount int64 `json:"record_count"`
	FieldCount  int   `json:"field_count"`
	FieldLength int   `json:"field_length"`
	// Proportions of READ, UPDATE, INSERT and SCAN; they add up to 1 (within
	// ProportionTolerance).
	Read   float64 `json:"read_proportion"`
	Update float64 `json:"update_proportion"`
	Insert float64 `json:"insert_proportion"`
	Scan   float64 `json:"scan_proportion"`
	// WriteAllFields makes an UPDATE write every field (YCSB writeallfields=true);
	// otherwise it writes one field chosen uniformly, as YCSB's default.
	WriteAllFields bool   `json:"write_all_fields"`
	Distribution   string `json:"request_distribution"` // of the records READ, UPDATE and SCAN choose
	InsertOrder    string `json:"insert_order"`
	KeyPrefix      string `json:"key_prefix"`
	// InsertStart is the first record number a run phase inserts; phases get
	// disjoint ranges so that their inserts never collide.
	InsertStart   int64 `json:"insert_start"`
	MaxScanLength int   `json:"max_scan_length"`
}

// Describe is e.g. "ycsb read 0.95 update 0.05 (1 field) uniform, 10x128B, 100000
// records".
func (y YCSBSpec) Describe() string {
	var parts []string
	for _, p := range []struct {
		name  string
		share float64
	}{{"read", y.Read}, {"update", y.Update}, {"insert", y.Insert}, {"scan", y.Scan}} {
		if p.share > 0 {
			parts = append(parts, fmt.Sprintf("%s %g", p.name, p.share))
		}
		if p.name == "update" && p.share > 0 {
			parts = append(parts, map[bool]string{true: "(all fields)", false: "(1 field)"}[y.WriteAllFields])
		}
	}
	return fmt.Sprintf("ycsb %s %s, %dx%dB, %d records", strings.Join(parts, " "), y.Distribution, y.FieldCount, y.FieldLength, y.RecordCount)
}

// Validate reports every problem with the workload.
func (y YCSBSpec) Validate() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf("ycsb: "+format, a...)) }
	if y.RecordCount < 1 {
		add("record_count must be at least 1, got %d", y.RecordCount)
	}
	if y.FieldCount < 1 || y.FieldCount > 1000 {
		add("field_count must be in [1, 1000], got %d", y.FieldCount)
	}
	if y.FieldLength < 1 || y.FieldLength > 1<<20 {
		add("field_length must be in [1, 1 MiB], got %d", y.FieldLength)
	}
	sum := 0.0
	for _, p := range []float64{y.Read, y.Update, y.Insert, y.Scan} {
		if p < 0 || p > 1 {
			add("proportions must be in [0, 1]")
		}
		sum += p
	}
	if math.Abs(sum-1) > ProportionTolerance {
		add("read, update, insert and scan proportions add up to %.10g, not 1", sum)
	}
	switch y.Distribution {
	case DistUniform, DistZipfian, DistLatest:
	default:
		add("request_distribution %q is not uniform, zipfian or latest", y.Distribution)
	}
	switch y.InsertOrder {
	case InsertHashed, InsertOrdered:
	default:
		add("insert_order %q is not hashed or ordered", y.InsertOrder)
	}
	if y.Scan > 0 && y.MaxScanLength < 1 {
		add("scans need max_scan_length >= 1")
	}
	if y.InsertStart < 0 {
		add("insert_start must not be negative")
	}
	return errs
}

// unmarshalRenamed decodes b into v, a pointer to a struct with JSON names,
// accepting for each field its Go name as well (case-insensitively, as
// encoding/json matches names): what a struct archived before it had JSON names
// was written with.
func unmarshalRenamed(b []byte, v any) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if _, ok := raw[name]; ok {
			continue
		}
		for k, val := range raw {
			if strings.EqualFold(k, f.Name) {
				raw[name] = val
				delete(raw, k)
				break
			}
		}
	}
	renamed, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(renamed, v)
}
