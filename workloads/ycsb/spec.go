package ycsb

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/cmpbench/cmpbench/core"
)

// Kind is the workload's name in suites (`ycsb:`) and archives.
const Kind = "ycsb"

func init() {
	core.RegisterWorkload(core.WorkloadKind{
		Name:   Kind,
		Doc:    func() core.WorkloadDoc { return &doc{} },
		Decode: core.DecodeJSON[Spec],
		Streams: func(p core.PhaseSpec) (core.Streams, error) {
			spec := p.Workload.(Spec)
			return streams{NewPhase(spec, p.Seed, p.AllConnections(), p.Kind == core.PhaseLoad), spec, p.Seed, p.AllConnections()}, nil
		},
	})
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

// Mix is a named mix of YCSB's core workloads.
type Mix struct {
	Name                       string
	Read, Update, Insert, Scan float64
	Distribution               string
}

// YCSB's core workloads A-D, as YCSB defines them.
var (
	WorkloadA = Mix{Name: "A", Read: 0.5, Update: 0.5, Distribution: DistZipfian}   // update heavy
	WorkloadB = Mix{Name: "B", Read: 0.95, Update: 0.05, Distribution: DistZipfian} // read mostly
	WorkloadC = Mix{Name: "C", Read: 1, Distribution: DistZipfian}                  // read only
	WorkloadD = Mix{Name: "D", Read: 0.95, Insert: 0.05, Distribution: DistLatest}  // read latest
)

// Mixes are the core workloads by name.
var Mixes = map[string]Mix{"A": WorkloadA, "B": WorkloadB, "C": WorkloadC, "D": WorkloadD}

// Apply sets the mix's proportions and distribution on spec.
func (m Mix) Apply(spec *Spec) {
	spec.Read, spec.Update, spec.Insert, spec.Scan = m.Read, m.Update, m.Insert, m.Scan
	spec.Distribution = m.Distribution
}

// Spec is YCSB's core workload over multi-field records. Records are numbered;
// record n's key is KeyPrefix followed by n, hashed or not. The initial records are
// 0 .. RecordCount-1; a load phase inserts exactly those, with field values that are
// a function of the phase seed, the record and the field, so that they can be checked
// later without storing them.
type Spec struct {
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
func (y Spec) Describe() string {
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
func (y Spec) Validate(int) []error {
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

// Kind implements core.Workload.
func (y Spec) Kind() string { return Kind }

// OpKinds implements core.Workload.
func (y Spec) OpKinds() []core.OpKind {
	var ks []core.OpKind
	for _, p := range []struct {
		share float64
		kind  core.OpKind
	}{{y.Read, core.OpRead}, {y.Update, core.OpUpdate}, {y.Insert, core.OpInsert}, {y.Scan, core.OpScan}} {
		if p.share > 0 {
			ks = append(ks, p.kind)
		}
	}
	return ks
}

// ProbeOps implements core.Probed: the probe READs, or UPDATEs.
func (y Spec) ProbeOps() (read, write core.OpKind) { return core.OpRead, core.OpUpdate }

// Scale implements core.Scalable: the record count scales, keeping at least a
// record per connection, and with it a load's op count (it inserts every record).
func (y Spec) Scale(p core.PhaseSpec, f float64) (core.PhaseSpec, error) {
	if core.ScaleOverflows(y.RecordCount, f) {
		return p, fmt.Errorf("its record count would overflow")
	}
	yy := y
	yy.RecordCount = core.Scaled(y.RecordCount, f, int64(p.Connections))
	p.Ops = core.ScaledOps(p, f, true, yy.RecordCount)
	p.Workload = yy
	return p, nil
}

// ShiftInserts implements core.Inserter.
func (y Spec) ShiftInserts(from, offset int64) core.Workload {
	if y.Insert == 0 {
		return y
	}
	if y.InsertStart == 0 {
		y.InsertStart = from
	}
	y.InsertStart += offset
	return y
}

// Footprint implements core.Footprint: a load inserts the initial records, a
// run phase with inserts ops*Insert records of its own range; reads and updates
// add nothing (updates overwrite).
func (y Spec) Footprint(k core.PhaseKind, ops int64, known bool) core.KeysWritten {
	switch {
	case k == core.PhaseLoad:
		return core.KeysWritten{Space: "ycsb " + y.InsertOrder + " " + y.KeyPrefix, First: 0, Last: y.RecordCount - 1,
			KeyBytes: y.keyBytes(y.RecordCount - 1), ValueBytes: float64(y.FieldCount * y.FieldLength)}
	case y.Insert == 0:
		return core.NothingWritten
	case !known:
		w := core.NothingWritten
		w.Unknown = true
		return w
	}
	n := int64(math.Round(float64(ops) * y.Insert))
	return core.KeysWritten{First: y.InsertStart, Last: y.InsertStart + n - 1,
		KeyBytes: y.keyBytes(y.InsertStart + n - 1), ValueBytes: float64(y.FieldCount * y.FieldLength)}
}

// hashedKeyDigits is the most digits the number of a hashed key has (the
// absolute value of an int64); nine keys in ten have that many.
const hashedKeyDigits = 19

// keyBytes is a record's key as sent, at most (that of record last, the longest
// of those written), with every field's name: what a record adds besides its
// values.
func (y Spec) keyBytes(last int64) float64 {
	key := len(y.KeyPrefix) + hashedKeyDigits
	if y.InsertOrder != InsertHashed {
		key = len(Key(nil, &y, last))
	}
	for i := range y.FieldCount {
		key += len(FieldName(i))
	}
	return float64(key)
}

// CheckSamples implements core.SampleChecker (VerifySamples).
func (y Spec) CheckSamples(ctx context.Context, r core.RecordReader, seed uint64) ([]core.SampleCheck, []string) {
	return VerifySamples(ctx, r, y, seed)
}

// streams are a phase's: every connection's from one Phase.
type streams struct {
	phase *Phase
	spec  Spec
	seed  uint64
	conns int
}

func (s streams) Source(conn int) core.OpSource { return s.phase.Source(conn) }

// ProbeSource READs (or UPDATEs) initial records, uniformly, as one more
// connection.
func (s streams) ProbeSource(op core.OpKind) core.OpSource {
	y := s.spec
	y.Read, y.Update, y.Insert, y.Scan, y.Distribution = 1, 0, 0, 0, DistUniform
	if op == core.OpUpdate {
		y.Read, y.Update = 0, 1
	}
	return NewPhase(y, s.seed, s.conns+1, false).Source(s.conns)
}

// Defaults, as YCSB's except the field length (the published comparisons used
// 128 B; YCSB's default is 100).
const (
	DefaultFieldCount    = 10
	DefaultFieldLength   = 128
	DefaultKeyPrefix     = "user"
	DefaultMaxScanLength = 1000
)

// doc is YCSB's core workload as a suite writes it; names follow YCSB's
// properties.
type doc struct {
	Workload            string   `yaml:"workload"` // A, B, C or D: YCSB's mixes
	RecordCount         int64    `yaml:"record_count"`
	FieldCount          int      `yaml:"field_count"`
	FieldLength         int      `yaml:"field_length"`
	Read                *float64 `yaml:"read_proportion"`
	Update              *float64 `yaml:"update_proportion"`
	Insert              *float64 `yaml:"insert_proportion"`
	Scan                *float64 `yaml:"scan_proportion"`
	WriteAllFields      bool     `yaml:"write_all_fields"` // false: an UPDATE writes one field, as YCSB
	RequestDistribution string   `yaml:"request_distribution"`
	InsertOrder         string   `yaml:"insert_order"`
	KeyPrefix           *string  `yaml:"key_prefix"`
	InsertStart         int64    `yaml:"insert_start"`
	MaxScanLength       int      `yaml:"max_scan_length"`
}

// Resolve implements core.WorkloadDoc. A load inserts every initial record once,
// whatever mix the defaults name.
func (d *doc) Resolve(p *core.PhaseSpec) []error {
	load := p.Kind == core.PhaseLoad
	y, errs := d.spec(load)
	p.Workload = y
	if load {
		if p.Ops != 0 && p.Ops != y.RecordCount {
			errs = append(errs, fmt.Errorf("a ycsb load inserts record_count records; leave ops out"))
		}
		p.Ops = y.RecordCount
	}
	return errs
}

func (d *doc) spec(load bool) (Spec, []error) {
	var errs []error
	y := Spec{
		RecordCount: d.RecordCount, FieldCount: d.FieldCount, FieldLength: d.FieldLength, WriteAllFields: d.WriteAllFields,
		Distribution: d.RequestDistribution, InsertOrder: d.InsertOrder,
		KeyPrefix: DefaultKeyPrefix, InsertStart: d.InsertStart, MaxScanLength: d.MaxScanLength,
	}
	if y.InsertOrder == "" {
		y.InsertOrder = InsertHashed
	}
	if d.KeyPrefix != nil {
		y.KeyPrefix = *d.KeyPrefix
	}
	if y.FieldCount == 0 {
		y.FieldCount = DefaultFieldCount
	}
	if y.FieldLength == 0 {
		y.FieldLength = DefaultFieldLength
	}
	if y.MaxScanLength == 0 {
		y.MaxScanLength = DefaultMaxScanLength
	}
	if d.RecordCount == 0 {
		errs = append(errs, fmt.Errorf("ycsb: record_count is required"))
	}
	if load {
		y.Insert, y.Distribution = 1, DistUniform
		return y, errs
	}
	if d.Workload != "" {
		mix, ok := Mixes[strings.ToUpper(d.Workload)]
		if !ok {
			errs = append(errs, fmt.Errorf("ycsb: workload %q is not A, B, C or D", d.Workload))
		}
		dist := y.Distribution
		mix.Apply(&y)
		if dist != "" {
			y.Distribution = dist
		}
	}
	for _, p := range []struct {
		v   *float64
		dst *float64
	}{{d.Read, &y.Read}, {d.Update, &y.Update}, {d.Insert, &y.Insert}, {d.Scan, &y.Scan}} {
		if p.v != nil {
			*p.dst = *p.v
		}
	}
	if y.Distribution == "" {
		// YCSB CoreWorkload's requestdistribution default; the named workloads
		// carry their own (zipfian for A, B and C, latest for D).
		y.Distribution = DistUniform
	}
	return y, errs
}
