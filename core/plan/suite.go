// Package plan reads suites (ordered phases, as YAML) and expands a suite and a list
// of systems into the phases a run executes.
package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
)

// DefaultConnections is a phase's connections when the suite gives none:
// memtier_benchmark's --clients default.
const DefaultConnections = 50

// Suite is a named, ordered list of phases.
type Suite struct {
	Name        string
	Description string
	// Source is "built-in" or the file it was read from; Text is the YAML as read.
	Source string
	Text   []byte
	Phases []core.PhaseSpec
	// Around is what the run does around each phase besides running it (same
	// index as Phases): its checks, the method it is a step of, the phase whose
	// result it uses.
	Around []Around
}

// Around is what the run does around a phase of the suite besides running it.
type Around struct {
	Checks Checks
	// Method is the method the phase is a step of; Repeat how many times, at
	// least, each of its steps runs.
	Method core.MethodStep
	Repeat int
	// Uses names the phase whose result gives this one its connections.
	Uses core.MethodRef
}

// Checks follow a load phase (core.Checks).
type Checks = core.Checks

// Entries are the suite's phases as a list reads them: a phase's name, or for
// the steps of a method that sums them up (core.Summarized) one entry, the
// phase as written and its summary ("get (ladder: 1000, 2000 ops/s)").
func (s *Suite) Entries() []string {
	var out []string
	for i := 0; i < len(s.Phases); i++ {
		m := s.Around[i].Method
		method, _ := core.LookupMethod(m.Kind)
		sum, ok := method.(core.Summarized)
		if !ok {
			out = append(out, s.Phases[i].Name)
			continue
		}
		j := i
		for j < len(s.Phases) && s.Around[j].Method.Ref() == m.Ref() {
			j++
		}
		out = append(out, fmt.Sprintf("%s (%s)", m.Of, sum.Summary(s.Phases[i:j])))
		i = j - 1
	}
	return out
}

// connectionsDoc is a phase's connections: a number, or the word of a method
// that is a source of connections (core.ConnectionsSource: `knee`, the knee of the
// last sweep before the phase, or `knee:<sweep>`).
type connectionsDoc struct {
	n    int
	from core.Method // nil for a number
	of   string      // "" for the last phase of that method before
}

func (c *connectionsDoc) UnmarshalYAML(n *yaml.Node) error {
	var nor []string
	for _, m := range core.Methods() {
		src, ok := m.(core.ConnectionsSource)
		if !ok {
			continue
		}
		word, meaning := src.ConnectionsWord()
		if n.Kind == yaml.ScalarNode {
			if v, ok := strings.CutPrefix(n.Value, word); ok && (v == "" || strings.HasPrefix(v, ":")) {
				c.from, c.of = m, strings.TrimPrefix(v, ":")
				return nil
			}
		}
		nor = append(nor, fmt.Sprintf(", nor %s (%s), nor %s:<%s>", word, meaning, word, m.Name()))
	}
	if err := n.Decode(&c.n); err != nil || n.Tag == "!!float" {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: connections %q is not a number%s", n.Line, n.Value, strings.Join(nor, ""))}}
	}
	return nil
}

type suiteFile struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Defaults    yaml.Node   `yaml:"defaults"`
	Phases      []yaml.Node `yaml:"phases"`
}

// phaseDoc is one phase as written; defaults are decoded first, then the phase.
type phaseDoc struct {
	Name        string          `yaml:"name"`
	Kind        string          `yaml:"kind"`
	Connections *connectionsDoc `yaml:"connections"`
	Rate        *float64        `yaml:"rate"`
	Poisson     bool            `yaml:"poisson"`
	Pipeline    *int            `yaml:"pipeline"`
	Duration    config.Duration `yaml:"duration"`
	Ops         int64           `yaml:"ops"`
	Interval    config.Duration `yaml:"interval"`
	Probe       *probeDoc       `yaml:"probe"`
	Validate    bool            `yaml:"validate"`
	Restart     bool            `yaml:"restart"`
	// work holds the phase's workload sections by kind (core.RegisterWorkload):
	// keys of the phase (and the defaults) that name a registered kind.
	work map[string]core.WorkloadDoc
	// method is the phase's method section, when it has one (core.RegisterMethod):
	// a key of the phase that names a registered method; methodOf names it.
	method   core.MethodDoc
	methodOf core.Method
}

func init() {
	var keys []string
	t := reflect.TypeFor[phaseDoc]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	core.ReserveWorkloadNames("a suite's phase", keys...)
}

// decodeSections decodes the workload and method sections of a phase (or the
// defaults) mapping n into d.work and d.method, on top of what is there
// already (the defaults'). Merge keys (<<: *base) and aliases count, as they
// do for the phase's own keys.
func (d *phaseDoc) decodeSections(file string, n *yaml.Node) []error {
	var sections map[string]yaml.Node
	if n.Decode(&sections) != nil {
		return nil // not a mapping: DecodeStrict says so
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(sections)) {
		v := sections[name]
		if _, workload := core.LookupWorkload(name); (workload || isMethod(name)) && (v.Kind == yaml.ScalarNode && v.Tag != "!!null" || v.Kind == yaml.SequenceNode) {
			got := strconv.Quote(v.Value)
			if v.Kind == yaml.SequenceNode {
				got = "a list"
			}
			errs = append(errs, fmt.Errorf("%s:%d: %s: a mapping of its settings, not %s", file, v.Line, name, got))
			continue
		}
		if m, ok := core.LookupMethod(name); ok {
			if d.methodOf != nil && d.methodOf.Name() != name {
				errs = append(errs, fmt.Errorf("%s:%d: %s and %s given: a phase is the steps of one method at most", file, v.Line, d.methodOf.Name(), name))
				continue
			}
			if d.method == nil {
				d.method, d.methodOf = m.Doc(), m
			}
			errs = append(errs, config.DecodeStrict(file, &v, d.method)...)
			continue
		}
		kind, ok := core.LookupWorkload(name)
		if !ok {
			continue
		}
		if d.work == nil {
			d.work = map[string]core.WorkloadDoc{}
		}
		doc := d.work[name]
		if doc == nil {
			doc = kind.Doc()
			d.work[name] = doc
		}
		errs = append(errs, config.DecodeStrict(file, &v, doc)...)
	}
	return errs
}

func isMethod(name string) bool {
	_, ok := core.LookupMethod(name)
	return ok
}

// sectionKeys are the keys of a phase that name a workload's or a method's
// section.
func sectionKeys() []string {
	return append(core.WorkloadKinds(), core.MethodNames()...)
}

// probeDoc configures the side probe of measured phases; rate 0 turns it off.
type probeDoc struct {
	Rate *float64 `yaml:"rate"`
	Op   string   `yaml:"op"`
	// Stall is the response time above which the report counts a probe request
	// as a stall (default 1 s).
	Stall *config.Duration `yaml:"stall"`
}

// suiteName is what a suite may be called: its name is part of the run id, and so
// of the archive's and the work directory's names.
var suiteName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ParseSuite reads a suite; every problem is reported at once with file:line.
func ParseSuite(file string, data []byte) (*Suite, error) {
	doc, err := config.Parse(file, data)
	if err != nil {
		return nil, err
	}
	var f suiteFile
	errs := config.DecodeStrict(file, doc, &f)
	errs = append(errs, checkSuiteHead(file, doc, &f)...)
	p := &suiteParse{file: file, s: &Suite{Name: f.Name, Description: f.Description, Source: file, Text: data}, seen: map[string]int{}, written: map[string][]string{}}
	if f.Defaults.Kind != 0 {
		p.defaults = &f.Defaults
		errs = append(errs, checkKeys(file, p.defaults)...)
	}
	p.errs = errs
	for _, pn := range f.Phases {
		p.phase(pn)
	}
	if len(p.errs) > 0 {
		return nil, config.Errors(p.errs)
	}
	return p.s, nil
}

// checkSuiteHead checks the suite's name (part of the run's id, which names its
// directories) and that it has phases.
func checkSuiteHead(file string, doc *yaml.Node, f *suiteFile) []error {
	var errs []error
	switch {
	case f.Name == "":
		errs = append(errs, fmt.Errorf("%s: suite has no name", file))
	case !suiteName.MatchString(f.Name):
		// The name is part of the run's id, which names its directories.
		errs = append(errs, fmt.Errorf("%s:%d: suite name %q must be letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit): it names the run's archive", file, config.LineOf(doc, "name"), f.Name))
	}
	if len(f.Phases) == 0 {
		errs = append(errs, fmt.Errorf("%s: suite has no phases", file))
	}
	return errs
}

// suiteParse is a suite being read phase by phase: the suite so far, what later
// phases need of earlier ones, and the problems found.
type suiteParse struct {
	file     string
	defaults *yaml.Node // nil when the suite has none
	s        *Suite
	seen     map[string]int // the line of each phase name
	// written are the phases written with each method so far, for a later
	// phase's connections (core.ConnectionsSource).
	written map[string][]string
	errs    []error
}

// phaseAt is a phase as decoded, with where it is for messages.
type phaseAt struct {
	phaseDoc
	at string // "file:line: phase \"name\""
	// decoded is false when the phase did not decode: it holds zero values where
	// its mistakes are, and checking them would only repeat those mistakes as
	// other errors ("rate: fast" would also be "got 0").
	decoded bool
}

// phase reads one phase as written (pn) into the suite: a method's steps, or
// the phase itself.
func (p *suiteParse) phase(pn yaml.Node) {
	pd := p.decode(&pn)
	p.checkName(pn.Line, pd)
	uses := p.uses(pd)
	if pd.method != nil {
		p.addMethod(pd)
		return
	}
	p.addPhase(pd, uses)
}

// decode decodes a phase on top of the suite's defaults.
func (p *suiteParse) decode(pn *yaml.Node) phaseAt {
	var pd phaseDoc
	if p.defaults != nil {
		_ = p.defaults.Decode(&pd) // its errors are reported once, in ParseSuite
		_ = pd.decodeSections(p.file, p.defaults)
	}
	decodeErrs := config.DecodeStrict(p.file, pn, &pd, sectionKeys()...)
	decodeErrs = append(decodeErrs, pd.decodeSections(p.file, pn)...)
	p.errs = append(p.errs, decodeErrs...)
	return phaseAt{phaseDoc: pd, at: fmt.Sprintf("%s:%d: phase %q", p.file, pn.Line, pd.Name), decoded: len(decodeErrs) == 0}
}

// checkName checks that the phase at line has a name not used before.
func (p *suiteParse) checkName(line int, pd phaseAt) {
	if pd.Name == "" {
		p.errs = append(p.errs, fmt.Errorf("%s:%d: phase has no name", p.file, line))
	} else if prev, dup := p.seen[pd.Name]; dup {
		p.errs = append(p.errs, fmt.Errorf("%s: name already used at line %d", pd.at, prev))
	}
	p.seen[pd.Name] = line
}

// report records a phase's problems, each after where the phase is, unless
// the phase did not decode.
func (p *suiteParse) report(pd phaseAt, errs []error) {
	if !pd.decoded {
		return
	}
	for _, e := range errs {
		p.errs = append(p.errs, fmt.Errorf("%s: %v", pd.at, e))
	}
}

// add appends one phase to the suite, with what the run does around it.
func (s *Suite) add(spec core.PhaseSpec, around Around) {
	s.Phases = append(s.Phases, spec)
	s.Around = append(s.Around, around)
}

// uses is the phase whose result gives pd its connections (connections: knee,
// the knee of the last sweep before, or knee:<sweep>), or none.
func (p *suiteParse) uses(pd phaseAt) core.MethodRef {
	c := pd.Connections
	if c == nil || c.from == nil {
		return core.MethodRef{}
	}
	word, _ := c.from.(core.ConnectionsSource).ConnectionsWord()
	name := c.from.Name()
	before := p.written[name]
	switch {
	case pd.methodOf != nil:
		p.errs = append(p.errs, fmt.Errorf("%s: connections: %s is for phases after a %s, not a %s", pd.at, word, name, pd.methodOf.Name()))
	case c.of == "" && len(before) == 0:
		p.errs = append(p.errs, fmt.Errorf("%s: connections: %s, but no %s comes before this phase", pd.at, word, name))
	case c.of == "":
		return core.MethodRef{Kind: name, Of: before[len(before)-1]}
	case !slices.Contains(before, c.of):
		p.errs = append(p.errs, fmt.Errorf("%s: connections: %s:%s, but no %s of that name comes before this phase", pd.at, word, c.of, name))
	default:
		return core.MethodRef{Kind: name, Of: c.of}
	}
	return core.MethodRef{}
}

// addMethod adds the steps of a phase written with a method.
func (p *suiteParse) addMethod(pd phaseAt) {
	steps, around, errs := pd.methodSteps(p.file)
	p.report(pd, errs)
	for _, spec := range steps {
		p.s.add(spec, around)
	}
	name := pd.methodOf.Name()
	p.written[name] = append(p.written[name], pd.Name)
}

// addPhase adds a phase that is no method's steps, with connections from the
// result of uses when it names one.
func (p *suiteParse) addPhase(pd phaseAt, uses core.MethodRef) {
	spec, errs := pd.spec()
	if (pd.Validate || pd.Restart) && spec.Kind != core.PhaseLoad {
		errs = append(errs, fmt.Errorf("validate and restart follow load phases only"))
	}
	p.report(pd, errs)
	p.s.add(spec, Around{Checks: Checks{Validate: pd.Validate || pd.Restart, Restart: pd.Restart}, Uses: uses})
}

// methodSteps expands a phase written with a method into its steps, measured
// phases, and what each carries of the method.
func (d phaseDoc) methodSteps(file string) ([]core.PhaseSpec, Around, []error) {
	ms, errs := d.method.Steps(core.WrittenPhase{
		File: file, Name: d.Name, Kind: core.PhaseKind(d.Kind), Rate: d.Rate != nil,
		Duration: time.Duration(d.Duration), Checks: d.Validate || d.Restart,
	})
	if len(errs) > 0 {
		return nil, Around{}, errs
	}
	around := Around{Method: core.MethodStep{Kind: d.methodOf.Name(), Of: d.Name}, Repeat: ms.Repeat}
	if ms.Params != nil {
		params, err := json.Marshal(ms.Params)
		if err != nil {
			return nil, Around{}, []error{fmt.Errorf("%s: %w", d.methodOf.Name(), err)}
		}
		around.Method.Params = params
	}
	steps, errs := d.measuredSteps(ms.Steps)
	return steps, around, errs
}

// measuredSteps turns a method's variants into its steps, measured phases: each
// is the phase as written, with its name and what the variant varies, and each
// of its problems is named by the step.
func (d phaseDoc) measuredSteps(variants []core.Variant) ([]core.PhaseSpec, []error) {
	var steps []core.PhaseSpec
	var errs []error
	for _, v := range variants {
		step := d
		step.method, step.methodOf, step.Kind = nil, nil, string(core.PhaseMeasured)
		step.Name = v.Name
		if v.Rate > 0 {
			step.Rate = &v.Rate
		}
		if v.Connections > 0 {
			step.Connections = &connectionsDoc{n: v.Connections}
		}
		if v.Duration > 0 {
			step.Duration = config.Duration(v.Duration)
		}
		spec, serrs := step.spec()
		for _, e := range serrs {
			errs = append(errs, fmt.Errorf("step %s: %v", step.Name, e))
		}
		steps = append(steps, spec)
	}
	return steps, errs
}

func checkKeys(file string, n *yaml.Node) []error {
	var pd phaseDoc
	errs := config.DecodeStrict(file, n, &pd, sectionKeys()...)
	return append(errs, pd.decodeSections(file, n)...)
}

// spec turns a phase as written into a phase specification and checks it.
func (d phaseDoc) spec() (core.PhaseSpec, []error) {
	var errs []error
	p := core.PhaseSpec{
		Name: d.Name, Kind: core.PhaseKind(d.Kind), Connections: DefaultConnections, Poisson: d.Poisson,
		Duration: time.Duration(d.Duration), Ops: d.Ops, Interval: time.Duration(d.Interval),
	}
	if p.Kind == "" {
		p.Kind = core.PhaseMeasured
	}
	if d.Connections != nil {
		p.Connections = d.Connections.n // Validate refuses fewer than one
		if d.Connections.from != nil {
			p.Connections = 1 // the method's unit puts its result's connections in
		}
	}
	if d.Rate != nil {
		if *d.Rate == 0 {
			errs = append(errs, fmt.Errorf("rate must be a positive number of requests/s, got %g (leave rate out for a closed loop)", *d.Rate))
		}
		p.Rate = *d.Rate
	}
	if p.Interval == 0 {
		p.Interval = core.DefaultInterval
	}
	if d.Poisson && p.Rate <= 0 {
		errs = append(errs, fmt.Errorf("poisson needs a rate"))
	}
	if d.Pipeline != nil {
		if *d.Pipeline == 0 {
			errs = append(errs, fmt.Errorf("pipeline must be from 1 to %d requests in flight per connection, got 0 (leave it out for one at a time)", core.MaxPipeline))
		}
		p.Pipeline = *d.Pipeline
	}
	switch len(d.work) {
	case 0:
		return p, append(errs, fmt.Errorf("no workload (one of %s)", strings.Join(core.WorkloadKinds(), ", ")))
	case 1:
	default:
		kinds := slices.Sorted(maps.Keys(d.work))
		return p, append(errs, fmt.Errorf("%s given: a phase has one workload", strings.Join(kinds, " and ")))
	}
	var resolveErrs []error
	for _, doc := range d.work {
		resolveErrs = append(resolveErrs, doc.Resolve(&p)...)
	}
	errs = append(errs, resolveErrs...)
	// Measured phases get the kind's default probe; a kind without one (pub/sub:
	// its subscribers time every message) takes none.
	if w, ok := p.Workload.(core.Probed); ok {
		read, write := w.ProbeOps()
		probe, perr := d.Probe.spec(p.Kind, read, write)
		if perr != nil {
			errs = append(errs, perr)
		}
		p.Probe = probe
	} else if d.Probe != nil && (d.Probe.Rate == nil || *d.Probe.Rate != 0) {
		errs = append(errs, core.ProbeError(p.Workload))
	}
	verrs := p.Validate()
	if len(resolveErrs) > 0 && p.Workload != nil {
		// The workload as resolved is not what was written (a ratio that did
		// not parse is 0:0): its own checks would repeat the mistake.
		wrong := map[string]bool{}
		for _, e := range p.Workload.Validate(p.AllConnections()) {
			wrong[e.Error()] = true
		}
		verrs = slices.DeleteFunc(verrs, func(e error) bool { return wrong[e.Error()] })
	}
	return p, append(errs, verrs...)
}

// spec gives measured phases the default probe (200 reads/s: GET, or READ for ycsb)
// unless the suite says otherwise; other phases get one only when asked. The probe
// reads or writes: read and write are the workload's op kinds for each.
func (d *probeDoc) spec(kind core.PhaseKind, read, write core.OpKind) (*core.ProbeSpec, error) {
	p := &core.ProbeSpec{Rate: core.DefaultProbeRate, Op: read, Stall: core.DefaultStallThreshold}
	if d == nil {
		if kind == core.PhaseMeasured {
			return p, nil
		}
		return nil, nil
	}
	if d.Rate != nil {
		p.Rate = *d.Rate
	}
	if d.Op != "" {
		op, err := core.ParseOpKind(strings.ToUpper(d.Op))
		if err != nil || op != read && op != write {
			return nil, fmt.Errorf("probe: op %q is not %s or %s", d.Op, read, write)
		}
		p.Op = op
	}
	if d.Stall != nil {
		if *d.Stall == 0 {
			return nil, fmt.Errorf("probe: stall must be a positive duration (the response time above which a probe request is a stall), got 0")
		}
		p.Stall = time.Duration(*d.Stall)
	}
	if p.Rate == 0 {
		return nil, nil
	}
	return p, nil
}
