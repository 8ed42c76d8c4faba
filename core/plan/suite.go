// Package plan reads suites (ordered phases, as YAML) and expands a suite and a list
// of systems into the phases a run executes.
package plan

import (
	"cmp"
	"fmt"
	"maps"
	"math"
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
	// Checks are what runs after each phase (same index as Phases).
	Checks []Checks
	// Ladders say which phases are the steps of a fixed-rate ladder (same index as
	// Phases; the zero Ladder for the others).
	Ladders []Ladder
	// Sweeps say which phases are the steps of a concurrency sweep, and KneeOf
	// which phases run at a sweep's knee (the sweep's name); both same index as
	// Phases.
	Sweeps []Sweep
	KneeOf []string
}

// Sweep is what a step of a concurrency sweep knows of its sweep: a phase written
// with `sweep:` becomes one closed-loop measured phase per connection count, named
// "<name>@<connections>c". Its knee (core.Knee) is where later phases that say
// `connections: knee` run.
type Sweep struct {
	Name     string  // the phase as written; "" for a phase that is not a step
	Gain     float64 // core.Knee's gain: 0.10 unless the suite says
	P99Bound time.Duration
}

// connectionsDoc is a phase's connections: a number, or `knee` (the knee of the
// last sweep before the phase) or `knee:<sweep>`.
type connectionsDoc struct {
	n     int
	knee  bool
	sweep string // "" for the last sweep before
}

func (c *connectionsDoc) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if v, ok := strings.CutPrefix(n.Value, "knee"); ok && (v == "" || strings.HasPrefix(v, ":")) {
			c.knee, c.sweep = true, strings.TrimPrefix(v, ":")
			return nil
		}
	}
	if err := n.Decode(&c.n); err != nil || n.Tag == "!!float" {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: connections %q is not a number, nor knee (the knee of the last sweep before), nor knee:<sweep>", n.Line, n.Value)}}
	}
	return nil
}

type sweepDoc struct {
	Connections []int            `yaml:"connections"`
	Step        config.Duration  `yaml:"step"`
	Gain        *float64         `yaml:"gain"`      // default core.DefaultKneeGain
	P99Bound    *config.Duration `yaml:"p99_bound"` // nil: none
}

// Ladder is what a step of a fixed-rate ladder knows of its ladder: a phase
// written with `ladder:` becomes one measured phase per rate, named
// "<name>@<rate>", each with its own seed.
type Ladder struct {
	Name string // the phase as written; "" for a phase that is not a step
	// StopAfterNS ends the ladder of a system once that many of its steps were not
	// sustained; its later steps are skipped. 0 runs every step.
	StopAfterNS int
	// Repeat runs each step that many times (at least --repeat); Combine is how the
	// report combines them: core.LadderPooled (the default) or core.LadderMean.
	Repeat  int
	Combine string
}

// DefaultStopAfterNS: a ladder stops at its first step not sustained, as the
// published ladders do (a dash after a system's sweep stopped).
const DefaultStopAfterNS = 1

// Checks follow a load phase: Validate compares the server's record count with the
// successful inserts and checks sample records; Restart then stops a provisioned
// system cleanly, starts it on the same data and validates again.
type Checks struct {
	Validate, Restart bool
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
	Duration    config.Duration `yaml:"duration"`
	Ops         int64           `yaml:"ops"`
	Interval    config.Duration `yaml:"interval"`
	Probe       *probeDoc       `yaml:"probe"`
	Validate    bool            `yaml:"validate"`
	Restart     bool            `yaml:"restart"`
	Ladder      *ladderDoc      `yaml:"ladder"`
	Sweep       *sweepDoc       `yaml:"sweep"`
	// work holds the phase's workload sections by kind (core.RegisterWorkload):
	// keys of the phase (and the defaults) that name a registered kind.
	work map[string]core.WorkloadDoc
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

// decodeWorkloads decodes the workload sections of a phase (or the defaults)
// mapping n into d.work, on top of what is there already (the defaults').
// Merge keys (<<: *base) and aliases count, as they do for the phase's own keys.
func (d *phaseDoc) decodeWorkloads(file string, n *yaml.Node) []error {
	var sections map[string]yaml.Node
	if n.Decode(&sections) != nil {
		return nil // not a mapping: DecodeStrict says so
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(sections)) {
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
		v := sections[name]
		errs = append(errs, config.DecodeStrict(file, &v, doc)...)
	}
	return errs
}

// ladderDoc is a fixed-rate ladder as written: rates as a list, or from a rate to
// another by a factor; each step lasts step (default the phase's duration).
type ladderDoc struct {
	Rates       yaml.Node       `yaml:"rates"`
	Step        config.Duration `yaml:"step"`
	Repeat      int             `yaml:"repeat"`
	StopAfterNS *int            `yaml:"stop_after_ns"`
	Combine     string          `yaml:"combine"` // default core.LadderPooled
}

type rateRange struct {
	From   float64 `yaml:"from"`
	To     float64 `yaml:"to"`
	Factor float64 `yaml:"factor"`
}

// maxLadderSteps bounds a ladder: more steps are a mistake in from, to or factor.
const maxLadderSteps = 100

// rates are the ladder's target rates, lowest first.
func (l *ladderDoc) rates(file string) ([]float64, []error) {
	n := &l.Rates
	var out []float64
	switch n.Kind {
	case yaml.SequenceNode:
		if errs := config.DecodeStrict(file, n, &out); len(errs) > 0 {
			return nil, errs
		}
	case yaml.MappingNode:
		var r rateRange
		if errs := config.DecodeStrict(file, n, &r); len(errs) > 0 {
			return nil, errs
		}
		if !(r.From > 0 && r.To >= r.From && r.To <= core.MaxRate && r.Factor > 1) {
			return nil, []error{fmt.Errorf("ladder.rates: from must be positive, to at least from and at most %g, and factor above 1 (got from %g, to %g, factor %g)", core.MaxRate, r.From, r.To, r.Factor)}
		}
		for v := r.From; v <= r.To*(1+1e-9) && len(out) <= maxLadderSteps; v *= r.Factor {
			out = append(out, math.Round(v))
		}
		if last := out[len(out)-1]; last < r.To {
			out = append(out, r.To) // the top of the range is always a step
		}
	default:
		return nil, []error{fmt.Errorf("ladder.rates: a list of rates, or {from, to, factor}")}
	}
	switch {
	case len(out) == 0:
		return nil, []error{fmt.Errorf("ladder.rates: no rates")}
	case len(out) > maxLadderSteps:
		return nil, []error{fmt.Errorf("ladder.rates: %d steps, more than %d", len(out), maxLadderSteps)}
	}
	for i, r := range out {
		if r > core.MaxRate || math.IsNaN(r) {
			// Before a step is named after it ("<name>@<rate>").
			return nil, []error{fmt.Errorf("ladder.rates: %g is beyond %g requests/s", r, core.MaxRate)}
		}
		if r <= 0 || i > 0 && r <= out[i-1] {
			return nil, []error{fmt.Errorf("ladder.rates: rates must be positive and rising, got %v", out)}
		}
	}
	return out, nil
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
	p := &suiteParse{file: file, s: &Suite{Name: f.Name, Description: f.Description, Source: file, Text: data}, seen: map[string]int{}}
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
	sweeps   []string       // the sweeps so far, for connections: knee
	errs     []error
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

// phase reads one phase as written (pn) into the suite: a sweep's or a ladder's
// steps, or the phase itself.
func (p *suiteParse) phase(pn yaml.Node) {
	pd := p.decode(&pn)
	p.checkName(pn.Line, pd)
	if pd.Sweep != nil {
		p.addSweep(pd)
		return
	}
	kneeOf := p.kneeOf(pd)
	if pd.Ladder != nil {
		p.addLadder(pd)
		return
	}
	p.addPhase(pd, kneeOf)
}

// decode decodes a phase on top of the suite's defaults.
func (p *suiteParse) decode(pn *yaml.Node) phaseAt {
	var pd phaseDoc
	if p.defaults != nil {
		_ = p.defaults.Decode(&pd) // its errors are reported once, in ParseSuite
		_ = pd.decodeWorkloads(p.file, p.defaults)
	}
	decodeErrs := config.DecodeStrict(p.file, pn, &pd, core.WorkloadKinds()...)
	decodeErrs = append(decodeErrs, pd.decodeWorkloads(p.file, pn)...)
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

// add appends one phase to the suite, with what runs after it, the ladder or
// sweep it is a step of, and the sweep at whose knee it runs.
func (s *Suite) add(spec core.PhaseSpec, checks Checks, ladder Ladder, sweep Sweep, kneeOf string) {
	s.Phases = append(s.Phases, spec)
	s.Checks = append(s.Checks, checks)
	s.Ladders = append(s.Ladders, ladder)
	s.Sweeps = append(s.Sweeps, sweep)
	s.KneeOf = append(s.KneeOf, kneeOf)
}

// addSweep adds the steps of a phase written with `sweep:`.
func (p *suiteParse) addSweep(pd phaseAt) {
	steps, errs := pd.sweep()
	p.report(pd, errs)
	gain := core.DefaultKneeGain
	if pd.Sweep.Gain != nil {
		gain = *pd.Sweep.Gain
	}
	var bound time.Duration
	if b := pd.Sweep.P99Bound; b != nil {
		bound = time.Duration(*b)
	}
	for _, spec := range steps {
		p.s.add(spec, Checks{}, Ladder{}, Sweep{Name: pd.Name, Gain: gain, P99Bound: bound}, "")
	}
	p.sweeps = append(p.sweeps, pd.Name)
}

// kneeOf is the sweep at whose knee a phase written with `connections: knee`
// runs, or "".
func (p *suiteParse) kneeOf(pd phaseAt) string {
	c := pd.Connections
	if c == nil || !c.knee {
		return ""
	}
	switch {
	case pd.Ladder != nil:
		p.errs = append(p.errs, fmt.Errorf("%s: connections: knee is for phases after a sweep, not a ladder", pd.at))
	case c.sweep == "" && len(p.sweeps) == 0:
		p.errs = append(p.errs, fmt.Errorf("%s: connections: knee, but no sweep comes before this phase", pd.at))
	case c.sweep == "":
		return p.sweeps[len(p.sweeps)-1]
	case !slices.Contains(p.sweeps, c.sweep):
		p.errs = append(p.errs, fmt.Errorf("%s: connections: knee:%s, but no sweep of that name comes before this phase", pd.at, c.sweep))
	default:
		return c.sweep
	}
	return ""
}

// addLadder adds the steps of a phase written with `ladder:`.
func (p *suiteParse) addLadder(pd phaseAt) {
	steps, errs := pd.ladder(p.file)
	p.report(pd, errs)
	stop := DefaultStopAfterNS
	if pd.Ladder.StopAfterNS != nil {
		stop = *pd.Ladder.StopAfterNS
	}
	ladder := Ladder{Name: pd.Name, StopAfterNS: stop, Repeat: pd.Ladder.Repeat, Combine: cmp.Or(pd.Ladder.Combine, core.LadderPooled)}
	for _, spec := range steps {
		p.s.add(spec, Checks{}, ladder, Sweep{}, "")
	}
}

// addPhase adds a phase that is neither a sweep nor a ladder, running at the
// knee of sweep kneeOf when not "".
func (p *suiteParse) addPhase(pd phaseAt, kneeOf string) {
	spec, errs := pd.spec()
	if (pd.Validate || pd.Restart) && spec.Kind != core.PhaseLoad {
		errs = append(errs, fmt.Errorf("validate and restart follow load phases only"))
	}
	p.report(pd, errs)
	p.s.add(spec, Checks{Validate: pd.Validate || pd.Restart, Restart: pd.Restart}, Ladder{}, Sweep{}, kneeOf)
}

// sweep expands a phase written with `sweep:` into its steps: one closed-loop
// measured phase per connection count, named "<name>@<connections>c".
func (d phaseDoc) sweep() ([]core.PhaseSpec, []error) {
	w := d.Sweep
	var errs []error
	if d.Rate != nil {
		errs = append(errs, fmt.Errorf("a sweep's steps are closed loop: leave rate out"))
	}
	if d.Kind != "" && core.PhaseKind(d.Kind) != core.PhaseMeasured {
		errs = append(errs, fmt.Errorf("a sweep's steps are measured phases: leave kind out"))
	}
	if w.Gain != nil && (*w.Gain <= 0 || *w.Gain >= 10) {
		errs = append(errs, fmt.Errorf("sweep: gain is a fraction above 0 (0.10 is 10%%), got %g", *w.Gain))
	}
	if w.P99Bound != nil && *w.P99Bound <= 0 {
		errs = append(errs, fmt.Errorf("sweep: p99_bound must be a positive duration, got %s (leave it out for no bound)", time.Duration(*w.P99Bound)))
	}
	if w.Step > 0 {
		d.Duration = w.Step
	}
	if d.Duration <= 0 {
		errs = append(errs, fmt.Errorf("sweep: step (how long each connection count runs) is required"))
	}
	if len(w.Connections) == 0 || len(w.Connections) > maxLadderSteps {
		errs = append(errs, fmt.Errorf("sweep: connections lists 1 to %d connection counts", maxLadderSteps))
	}
	for i, c := range w.Connections {
		if c < 1 || i > 0 && c <= w.Connections[i-1] {
			errs = append(errs, fmt.Errorf("sweep: connections must be positive and rising, got %v", w.Connections))
			break
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return d.measuredSteps(len(w.Connections), func(step *phaseDoc, i int) {
		step.Name = fmt.Sprintf("%s@%dc", d.Name, w.Connections[i])
		step.Connections = &connectionsDoc{n: w.Connections[i]}
	})
}

// ladder expands a phase written with `ladder:` into its steps: one measured phase
// per rate, named "<name>@<rate>", lasting the ladder's step.
func (d phaseDoc) ladder(file string) ([]core.PhaseSpec, []error) {
	l := d.Ladder
	var errs []error
	if d.Rate != nil {
		errs = append(errs, fmt.Errorf("a ladder's rates are its steps': leave rate out"))
	}
	if d.Kind != "" && core.PhaseKind(d.Kind) != core.PhaseMeasured {
		errs = append(errs, fmt.Errorf("a ladder's steps are measured phases: leave kind out"))
	}
	if d.Validate || d.Restart {
		errs = append(errs, fmt.Errorf("validate and restart follow load phases only"))
	}
	if l.StopAfterNS != nil && *l.StopAfterNS < 0 || l.Repeat < 0 || l.Repeat > 100 {
		errs = append(errs, fmt.Errorf("ladder: stop_after_ns must be 0 or more, repeat between 1 and 100"))
	}
	if l.Combine != "" && l.Combine != core.LadderPooled && l.Combine != core.LadderMean {
		errs = append(errs, fmt.Errorf("ladder: combine %q is not %s or %s", l.Combine, core.LadderPooled, core.LadderMean))
	}
	if l.Step > 0 {
		d.Duration = l.Step
	}
	if d.Duration <= 0 {
		errs = append(errs, fmt.Errorf("ladder: step (how long each rate is held) is required"))
	}
	rates, rerrs := l.rates(file)
	errs = append(errs, rerrs...)
	if len(errs) > 0 {
		return nil, errs
	}
	return d.measuredSteps(len(rates), func(step *phaseDoc, i int) {
		step.Name = d.Name + "@" + strconv.FormatFloat(rates[i], 'f', -1, 64)
		step.Rate = &rates[i]
	})
}

// measuredSteps turns a sweep or a ladder into its n steps, measured phases: step
// i is the phase as written, with its name and what the steps vary set by set,
// and each of its problems is named by the step.
func (d phaseDoc) measuredSteps(n int, set func(step *phaseDoc, i int)) ([]core.PhaseSpec, []error) {
	var steps []core.PhaseSpec
	var errs []error
	for i := range n {
		step := d
		step.Sweep, step.Ladder, step.Kind = nil, nil, string(core.PhaseMeasured)
		set(&step, i)
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
	errs := config.DecodeStrict(file, n, &pd, core.WorkloadKinds()...)
	return append(errs, pd.decodeWorkloads(file, n)...)
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
		if d.Connections.knee {
			p.Connections = 1 // the runner puts the knee's connections in
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
