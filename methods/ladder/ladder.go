// Package ladder is the method of fixed-rate ladders: a phase written with
// `ladder:` becomes one measured phase per rate, named "<name>@<rate>", each
// with its own seed; a system's ladder stops where it no longer keeps up (its
// later steps are not run: the report shows a dash).
package ladder

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
)

// Name is the method's key in a suite's phase and its kind in archives.
const Name = "ladder"

func init() { core.RegisterMethod(Method{}) }

// How the report combines the repetitions of a step (`combine:`): Pooled merges
// their histograms, which is exact; Mean averages each repetition's own
// percentiles, as the published ladders did.
const (
	Pooled = "pooled"
	Mean   = "mean"
)

// DefaultStopAfterNS: a ladder stops at its first step not sustained, as the
// published ladders do (a dash after a system's sweep stopped).
const DefaultStopAfterNS = 1

// maxSteps bounds a ladder: more steps are a mistake in from, to or factor.
const maxSteps = 100

// Params are what every step of a ladder carries.
type Params struct {
	// StopAfterNS ends the ladder of a system once that many of its steps were not
	// sustained; its later steps are skipped. 0 runs every step.
	StopAfterNS int `json:"stop_after_ns"`
	// Combine is how the report combines a step's repetitions: Pooled or Mean.
	Combine string `json:"combine"`
}

// Method is the ladder method (core.Method).
type Method struct{}

func (Method) Name() string        { return Name }
func (Method) Doc() core.MethodDoc { return &doc{} }

// Sure: a ladder's first StopAfterNS steps always run (core.Stopping).
func (Method) Sure(params json.RawMessage) int {
	var p Params
	if json.Unmarshal(params, &p) != nil {
		return 0
	}
	return p.StopAfterNS
}

// Stops says when a ladder leaves its later steps out (core.Stopping).
func (Method) Stops() string {
	return "a ladder stops at a step not sustained, and its later steps do not run"
}

// Summary lists a ladder's rates (core.Summarized).
func (Method) Summary(steps []core.PhaseSpec) string {
	rates := ""
	for i, s := range steps {
		if i > 0 {
			rates += ", "
		}
		rates += strconv.FormatFloat(s.Rate, 'f', -1, 64)
	}
	return "ladder: " + rates + " ops/s"
}

// Unit stops a system's ladders (core.UnitMethod).
func (Method) Unit(system string, note func(string)) core.MethodUnit {
	return &unit{system: system, note: note, stops: map[string]*state{}}
}

// doc is a fixed-rate ladder as written: rates as a list, or from a rate to
// another by a factor; each step lasts step (default the phase's duration).
type doc struct {
	Rates       yaml.Node       `yaml:"rates"`
	Step        config.Duration `yaml:"step"`
	Repeat      int             `yaml:"repeat"`
	StopAfterNS *int            `yaml:"stop_after_ns"`
	Combine     string          `yaml:"combine"` // default Pooled
}

type rateRange struct {
	From   float64 `yaml:"from"`
	To     float64 `yaml:"to"`
	Factor float64 `yaml:"factor"`
}

// Steps expands a phase written with `ladder:` into its steps: one measured
// phase per rate, named "<name>@<rate>", lasting the ladder's step.
func (l *doc) Steps(w core.WrittenPhase) (core.MethodSteps, []error) {
	var errs []error
	if w.Rate {
		errs = append(errs, fmt.Errorf("a ladder's rates are its steps': leave rate out"))
	}
	if w.Kind != "" && w.Kind != core.PhaseMeasured {
		errs = append(errs, fmt.Errorf("a ladder's steps are measured phases: leave kind out"))
	}
	if w.Checks {
		errs = append(errs, fmt.Errorf("validate and restart follow load phases only"))
	}
	if l.StopAfterNS != nil && *l.StopAfterNS < 0 || l.Repeat < 0 || l.Repeat > 100 {
		errs = append(errs, fmt.Errorf("ladder: stop_after_ns must be 0 or more, repeat between 1 and 100"))
	}
	if l.Combine != "" && l.Combine != Pooled && l.Combine != Mean {
		errs = append(errs, fmt.Errorf("ladder: combine %q is not %s or %s", l.Combine, Pooled, Mean))
	}
	d := w.Duration
	if l.Step > 0 {
		d = time.Duration(l.Step)
	}
	if d <= 0 {
		errs = append(errs, fmt.Errorf("ladder: step (how long each rate is held) is required"))
	}
	rates, rerrs := l.rates(w.File)
	errs = append(errs, rerrs...)
	if len(errs) > 0 {
		return core.MethodSteps{}, errs
	}
	stop := DefaultStopAfterNS
	if l.StopAfterNS != nil {
		stop = *l.StopAfterNS
	}
	out := core.MethodSteps{Repeat: l.Repeat, Params: Params{StopAfterNS: stop, Combine: cmp.Or(l.Combine, Pooled)}}
	for _, r := range rates {
		out.Steps = append(out.Steps, core.Variant{Name: w.Name + "@" + strconv.FormatFloat(r, 'f', -1, 64), Rate: r, Duration: d})
	}
	return out, nil
}

// rates are the ladder's target rates, lowest first.
func (l *doc) rates(file string) ([]float64, []error) {
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
		for v := r.From; v <= r.To*(1+1e-9) && len(out) <= maxSteps; v *= r.Factor {
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
	case len(out) > maxSteps:
		return nil, []error{fmt.Errorf("ladder.rates: %d steps, more than %d", len(out), maxSteps)}
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

// unit follows a system's ladders (core.MethodUnit): once StopAfterNS of a
// ladder's steps were not sustained (or did not end ok), its later steps are
// omitted — the system has shown where it stops keeping up.
type unit struct {
	system string
	note   func(string)
	stops  map[string]*state // by the ladder's name
}

type state struct {
	notSustained map[int]bool // step indexes
	stopAfter    int          // the index of the step that stopped the ladder
	why          string
	noted        bool
}

func (u *unit) Before(st *core.Step) core.Verdict {
	if st.Method.Kind != Name {
		return core.Verdict{}
	}
	s := u.stops[st.Method.Of]
	if s == nil || s.why == "" || st.Index <= s.stopAfter {
		return core.Verdict{}
	}
	// Not a skipped phase: the ladder did what it is for, and the report shows a
	// dash where the system did not go.
	if !s.noted {
		s.noted = true
		u.note(fmt.Sprintf("%s: %s; its steps from %s on are not run", u.system, s.why, st.Spec.Name))
	}
	return core.Verdict{Act: core.Omit, Why: s.why}
}

// After decides on the whole step: on a sharded run, what the shards held
// together.
func (u *unit) After(st core.Step, _ *core.PhaseRun, whole core.WholeStep) core.Verdict {
	var p Params
	if st.Method.Kind != Name || st.Method.DecodeParams(&p) != nil || p.StopAfterNS <= 0 || whole.Status == core.StatusInterrupted {
		return core.Verdict{}
	}
	s := u.stops[st.Method.Of]
	if s == nil {
		s = &state{notSustained: map[int]bool{}}
		u.stops[st.Method.Of] = s
	}
	if whole.Sustained() || s.why != "" {
		return core.Verdict{}
	}
	s.notSustained[st.Index] = true
	if len(s.notSustained) >= p.StopAfterNS {
		s.stopAfter = st.Index
		held := fmt.Sprintf("held %.0f ops/s", whole.Achieved)
		if whole.Status != core.StatusOK {
			held = "ended " + string(whole.Status)
		}
		s.why = fmt.Sprintf("the ladder %q stopped: %d of its steps not sustained, the last %s (%s of %.0f ops/s)", st.Method.Of, len(s.notSustained), st.Spec.Name, held, whole.Rate)
	}
	return core.Verdict{}
}
