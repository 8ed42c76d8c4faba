package core

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Workload is what a phase's operations are, as data: a suite's workload section
// resolved, which crosses the plugin boundary and is archived as JSON. Each kind
// is one package under workloads/ that registers itself (RegisterWorkload): a
// new workload is that package and its registration, nothing else.
type Workload interface {
	// Kind is the name the kind registered: its key in suites and archives.
	Kind() string
	// Describe is a short human description for plans and reports.
	Describe() string
	// OpKinds lists the op kinds the workload issues.
	OpKinds() []OpKind
	// Validate reports every problem with the workload in a phase of that many
	// connections (all of the phase's, across shards).
	Validate(connections int) []error
}

// What a workload may also be; the planner, estimator and validation use these
// where the kind implements them, and do without otherwise.
type (
	// Probed workloads have a side probe (ProbeSpec) by default in measured
	// phases: it reads (or writes, when a suite says so) with these op kinds.
	Probed interface {
		ProbeOps() (read, write OpKind)
	}
	// Scalable workloads have sizes that --scale changes (key ranges, record
	// counts). Scale returns the phase with its workload scaled by f and, where the
	// kind ties them to its sizes (a load writes its range once), its Ops; the
	// planner has scaled the duration and leaves Ops to Scale.
	Scalable interface {
		Scale(p PhaseSpec, f float64) (PhaseSpec, error)
	}
	// Inserter workloads insert new records in measured phases; the planner
	// gives every phase, repetition and shard a range of its own. ShiftInserts
	// returns the workload with its inserts starting at from when the suite left
	// that unset (from 0: keep it), then moved on by offset.
	Inserter interface {
		ShiftInserts(from, offset int64) Workload
	}
	// Footprint workloads say what a phase of kind k with ops operations writes
	// to the server (ops exact when known), for the estimates before a run.
	Footprint interface {
		Footprint(k PhaseKind, ops int64, known bool) KeysWritten
	}
	// SampleChecker workloads can check records a load of theirs wrote, read
	// back after it (load validation).
	SampleChecker interface {
		CheckSamples(ctx context.Context, r RecordReader, seed uint64) ([]SampleCheck, []string)
	}
	// Pinned workloads read input of their own (a trace file): Pin names it
	// and its content (a SHA-256), and `rerun` refuses to run a phase whose pin
	// is not the archived phase's.
	Pinned interface {
		Pin() string
	}
	// Finite workloads send a known number of each op kind when they run to
	// their end (a trace: its requests replayed as each); verify checks that a
	// phase sent no more, and exactly that many when it ended before its time
	// bound.
	Finite interface {
		Sends() map[OpKind]int64
	}
	// Fitting workloads can do without what an adapter lacks (a trace's
	// deletes on an adapter without DELETE: skipped and counted; its TTLs on one
	// that keeps none). Fit returns phase p, whose workload it is, as it runs on
	// the adapter info describes (its workload, and what the phase ties to it: a
	// trace's rate): the runner archives and runs that, per system (Info.Fit).
	Fitting interface {
		Fit(p PhaseSpec, info Info) PhaseSpec
	}
	// Unsplittable workloads cannot be split over shards or plugin processes
	// (run --shard, --processes); Unsplittable says why. Others are split by
	// connection: every connection's stream is its own (Streams.Source).
	Unsplittable interface {
		Unsplittable() string
	}
)

// ProbeError says why a phase of workload w cannot have a side probe (w is not
// Probed), or returns nil.
func ProbeError(w Workload) error {
	if _, ok := w.(Probed); ok || w == nil {
		return nil
	}
	why := ""
	if _, ok := w.(PubSubSpec); ok {
		why = ": its subscribers time every message"
	}
	return fmt.Errorf("the %s workload has no side probe%s", w.Kind(), why)
}

// NothingWritten is a Footprint's answer for a phase that adds no data.
var NothingWritten = KeysWritten{First: 1, Last: 0}

// Scaled is n scaled by --scale's f, rounded, at least least: what a count
// (keys, records, ops) becomes at another scale.
func Scaled(n int64, f float64, least int64) int64 {
	return max(least, int64(math.Round(float64(n)*f)))
}

// ScaleOverflows reports whether a count (keys, records, ops, nanoseconds) of n
// scaled by --scale's f would come near what an int64 holds: f is too large.
func ScaleOverflows(n int64, f float64) bool {
	return float64(n)*f > math.MaxInt64/2
}

// ScaledOps is phase p's op count at --scale's f for a Scalable workload whose
// keys (or records) become scaled many: a load that writes each of them once
// (loadWritesAll) writes each of the scaled ones once; another op count scales
// as it is, at least one op, and none stays none.
func ScaledOps(p PhaseSpec, f float64, loadWritesAll bool, scaled int64) int64 {
	switch {
	case p.Kind == PhaseLoad && loadWritesAll:
		return scaled
	case p.Ops > 0:
		return Scaled(p.Ops, f, 1)
	}
	return p.Ops
}

// KeysWritten is what a phase adds to the server's data: keys First..Last of a key
// space, each written once however often a phase writes it (at most Max of them
// when Bounded), each KeyBytes+ValueBytes; Space "" for keys no other phase
// writes (inserts). None written: First > Last. Unknown: it inserts a number of
// records nobody can tell beforehand.
type KeysWritten struct {
	Space                string
	First, Last          int64
	Max                  int64
	Bounded              bool
	KeyBytes, ValueBytes float64
	Unknown              bool
}

// WorkloadKind is what a kind of workload registers.
type WorkloadKind struct {
	// Name is the kind's key in suites and archives: lower case, [a-z0-9_].
	Name string
	// Doc returns an empty suite section of the kind. The planner decodes the
	// section into it strictly (its yaml tags are the suite's keys; a suite's
	// defaults first, then the phase) and calls Resolve.
	Doc func() WorkloadDoc
	// Decode reads a spec from its JSON (the archive's and the plugin boundary's
	// form); DecodeWorkload checks for fields the spec does not have.
	Decode func(data []byte) (Workload, error)
	// Streams makes a phase's operation streams.
	Streams func(p PhaseSpec) (Streams, error)
}

// WorkloadDoc is a workload section of a suite, as written.
type WorkloadDoc interface {
	// Resolve sets p.Workload from the section, with its defaults; it may set what
	// the kind ties to the phase (a load's op count) and reports every problem.
	Resolve(p *PhaseSpec) []error
}

// Streams are a phase's operation streams. The streams of a phase share what
// they must (YCSB's acknowledged inserts), so take every connection's from one.
type Streams interface {
	// Source is the stream of connection conn of the whole phase (a shard's
	// connection i is ConnBase+i).
	Source(conn int) OpSource
	// ProbeSource is the side probe's stream: op on keys of the loaded range,
	// from a random stream of its own; nil when the kind has no probe.
	ProbeSource(op OpKind) OpSource
}

var workloadKinds = struct {
	sync.RWMutex
	m map[string]WorkloadKind
}{m: map[string]WorkloadKind{}}

var kindName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// reservedKinds are names no kind may take: the keys beside a workload's in a
// suite's phase and in an archived phase (ReserveWorkloadNames).
var reservedKinds = struct {
	sync.Mutex
	m map[string]string // name -> what reserved it
}{m: map[string]string{}}

// ReserveWorkloadNames keeps names from being kinds: a package whose format puts
// a workload's section beside keys of its own (a suite's phase, an archived
// phase) reserves those keys in its init. It panics if a registered kind has one.
func ReserveWorkloadNames(by string, names ...string) {
	reservedKinds.Lock()
	defer reservedKinds.Unlock()
	for _, n := range names {
		if _, ok := LookupWorkload(n); ok {
			panic(fmt.Sprintf("core.ReserveWorkloadNames: workload kind %q is also a key of %s", n, by))
		}
		if _, ok := LookupMethod(n); ok {
			panic(fmt.Sprintf("core.ReserveWorkloadNames: method %q is also a key of %s", n, by))
		}
		reservedKinds.m[n] = by
	}
}

// RegisterWorkload makes a kind of workload known; call it from the kind's
// package init. It panics on a bad or repeated name or a missing function, as
// database/sql's Register does.
func RegisterWorkload(k WorkloadKind) {
	if !kindName.MatchString(k.Name) || k.Doc == nil || k.Decode == nil || k.Streams == nil {
		panic(fmt.Sprintf("core.RegisterWorkload: kind %q needs a lower-case name and Doc, Decode and Streams", k.Name))
	}
	reservedKinds.Lock()
	by, reserved := reservedKinds.m[k.Name]
	reservedKinds.Unlock()
	if reserved {
		panic(fmt.Sprintf("core.RegisterWorkload: kind %q is a key of %s", k.Name, by))
	}
	if _, ok := LookupMethod(k.Name); ok {
		panic(fmt.Sprintf("core.RegisterWorkload: kind %q is also a method", k.Name))
	}
	workloadKinds.Lock()
	defer workloadKinds.Unlock()
	if _, dup := workloadKinds.m[k.Name]; dup {
		panic("core.RegisterWorkload: kind " + k.Name + " registered twice")
	}
	workloadKinds.m[k.Name] = k
}

// LookupWorkload returns the registered kind of that name.
func LookupWorkload(name string) (WorkloadKind, bool) {
	workloadKinds.RLock()
	defer workloadKinds.RUnlock()
	k, ok := workloadKinds.m[name]
	return k, ok
}

// WorkloadKinds lists the registered kinds' names, sorted.
func WorkloadKinds() []string {
	workloadKinds.RLock()
	defer workloadKinds.RUnlock()
	names := make([]string, 0, len(workloadKinds.m))
	for n := range workloadKinds.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// DecodeWorkload reads a spec of the named kind from its JSON. Strict, as at
// the plugin boundary, a field the spec does not have is an error: one side's
// cmpbench knows a setting the other would silently drop. Archives are read
// leniently, as the rest of a manifest is.
func DecodeWorkload(kind string, data []byte, strict bool) (Workload, error) {
	k, ok := LookupWorkload(kind)
	if !ok {
		return nil, fmt.Errorf("workload kind %q is not known here (known: %s)", kind, strings.Join(WorkloadKinds(), ", "))
	}
	w, err := k.Decode(data)
	if err == nil && strict {
		err = unknownField(data, reflect.TypeOf(w))
	}
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", kind, err)
	}
	return w, nil
}

// DecodeJSON is a Decode for kinds whose spec is a struct T.
func DecodeJSON[T Workload](data []byte) (Workload, error) {
	var t T
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	return t, nil
}

// unknownField reports the first top-level key of a JSON object that struct
// type t has no field for, matching names as encoding/json does.
func unknownField(data []byte, t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var raw map[string]json.RawMessage
	if t == nil || t.Kind() != reflect.Struct || json.Unmarshal(data, &raw) != nil {
		return nil
	}
	var known []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-":
		case name == "":
			known = append(known, f.Name)
		default:
			known = append(known, name)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.ContainsFunc(known, func(n string) bool { return strings.EqualFold(n, k) }) {
			return fmt.Errorf("unknown field %q", k)
		}
	}
	return nil
}

// NewStreams makes the operation streams of a phase, by its workload's kind.
func NewStreams(p PhaseSpec) (Streams, error) {
	if p.Workload == nil {
		return nil, fmt.Errorf("phase %q has no workload", p.Name)
	}
	k, ok := LookupWorkload(p.Workload.Kind())
	if !ok {
		return nil, fmt.Errorf("phase %q: workload kind %q is not registered in this binary", p.Name, p.Workload.Kind())
	}
	return k.Streams(p)
}

// DescribeWorkload is w.Describe(), "none" for no workload.
func DescribeWorkload(w Workload) string {
	if w == nil {
		return "none"
	}
	return w.Describe()
}

// UnmarshalRenamed decodes b into v, a pointer to a struct with JSON names,
// accepting for each field its Go name as well (case-insensitively, as
// encoding/json matches names): what a struct archived before it had JSON names
// was written with.
func UnmarshalRenamed(b []byte, v any) error {
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
