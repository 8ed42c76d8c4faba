// Package sweep is the method of concurrency sweeps: a phase written with
// `sweep:` becomes one closed-loop measured phase per connection count, named
// "<name>@<connections>c". Its knee (Knee) is where later phases that say
// `connections: knee` run.
package sweep

import (
	"errors"
	"fmt"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
)

// Name is the method's key in a suite's phase and its kind in archives.
const Name = "sweep"

func init() { core.RegisterMethod(Method{}) }

// maxSteps bounds a sweep's connection counts.
const maxSteps = 100

// Params are what every step of a sweep carries: its knee rule (Knee's gain
// and p99 bound, in ns; 0 for none).
type Params struct {
	Gain       float64 `json:"gain"`
	P99BoundNs int64   `json:"p99_bound_ns,omitempty"`
}

// Method is the sweep method (core.Method).
type Method struct{}

func (Method) Name() string        { return Name }
func (Method) Doc() core.MethodDoc { return &doc{} }

// ConnectionsWord: later phases run at a sweep's knee (core.ConnectionsSource).
func (Method) ConnectionsWord() (word, meaning string) {
	return "knee", "the knee of the last sweep before"
}

// Unsplit: a knee is decided on one process's results (core.Unsplit).
func (Method) Unsplit() string {
	return "concurrency sweeps and knees are decided on one process's results; run them unsharded"
}

// Unit finds each sweep's knee and runs the phases written at it there
// (core.UnitMethod).
func (Method) Unit(system string, note func(string)) core.MethodUnit {
	return &unit{system: system, note: note, sweeps: map[string]*state{}}
}

type doc struct {
	Connections []int            `yaml:"connections"`
	Step        config.Duration  `yaml:"step"`
	Gain        *float64         `yaml:"gain"`      // default DefaultKneeGain
	P99Bound    *config.Duration `yaml:"p99_bound"` // nil: none
}

// Steps expands a phase written with `sweep:` into its steps: one closed-loop
// measured phase per connection count, named "<name>@<connections>c".
func (w *doc) Steps(p core.WrittenPhase) (core.MethodSteps, []error) {
	var errs []error
	if p.Rate {
		errs = append(errs, fmt.Errorf("a sweep's steps are closed loop: leave rate out"))
	}
	if p.Kind != "" && p.Kind != core.PhaseMeasured {
		errs = append(errs, fmt.Errorf("a sweep's steps are measured phases: leave kind out"))
	}
	if w.Gain != nil && (*w.Gain <= 0 || *w.Gain >= 10) {
		errs = append(errs, fmt.Errorf("sweep: gain is a fraction above 0 (0.10 is 10%%), got %g", *w.Gain))
	}
	if w.P99Bound != nil && *w.P99Bound <= 0 {
		errs = append(errs, fmt.Errorf("sweep: p99_bound must be a positive duration, got %s (leave it out for no bound)", time.Duration(*w.P99Bound)))
	}
	d := p.Duration
	if w.Step > 0 {
		d = time.Duration(w.Step)
	}
	if d <= 0 {
		errs = append(errs, fmt.Errorf("sweep: step (how long each connection count runs) is required"))
	}
	if len(w.Connections) == 0 || len(w.Connections) > maxSteps {
		errs = append(errs, fmt.Errorf("sweep: connections lists 1 to %d connection counts", maxSteps))
	}
	for i, c := range w.Connections {
		if c < 1 || i > 0 && c <= w.Connections[i-1] {
			errs = append(errs, fmt.Errorf("sweep: connections must be positive and rising, got %v", w.Connections))
			break
		}
	}
	if len(errs) > 0 {
		return core.MethodSteps{}, errs
	}
	params := Params{Gain: DefaultKneeGain}
	if w.Gain != nil {
		params.Gain = *w.Gain
	}
	if w.P99Bound != nil {
		params.P99BoundNs = int64(*w.P99Bound)
	}
	out := core.MethodSteps{Params: params}
	for _, c := range w.Connections {
		out.Steps = append(out.Steps, core.Variant{Name: fmt.Sprintf("%s@%dc", p.Name, c), Connections: c, Duration: d})
	}
	return out, nil
}

// unit gathers what each of a system's sweeps measured, step by step, and runs
// the phases written at a sweep's knee with the knee's connections.
type unit struct {
	system string
	note   func(string)
	sweeps map[string]*state // by the sweep's name
}

type state struct {
	params Params
	index  []int // the steps' suite indexes, in order
	points map[int]*Point
	reps   map[int]int
}

func (u *unit) Before(st *core.Step) core.Verdict {
	if st.Uses.Kind != Name {
		return core.Verdict{}
	}
	conns, why := u.knee(st.Uses.Of)
	if why == "" {
		st.Spec.Connections = conns
		if errs := st.Spec.Validate(); len(errs) > 0 {
			why = fmt.Sprintf("at the knee of %q (%d connections): %v", st.Uses.Of, conns, errors.Join(errs...))
		}
	}
	if why != "" {
		return core.Verdict{Act: core.Fail, Why: why}
	}
	u.note(fmt.Sprintf("%s: %s runs at the knee of %s: %d connections", u.system, st.Spec.Name, st.Uses.Of, conns))
	return core.Verdict{}
}

func (u *unit) After(st core.Step, p *core.PhaseRun, _ core.WholeStep) core.Verdict {
	if st.Method.Kind != Name {
		return core.Verdict{}
	}
	w := u.sweeps[st.Method.Of]
	if w == nil {
		w = &state{points: map[int]*Point{}, reps: map[int]int{}}
		_ = st.Method.DecodeParams(&w.params)
		u.sweeps[st.Method.Of] = w
	}
	pt := w.points[st.Index]
	if pt == nil {
		pt = &Point{Connections: st.Spec.Connections, OK: true}
		w.points[st.Index] = pt
		w.index = append(w.index, st.Index)
	}
	// Repetitions: the mean throughput, the worst p99; a repetition not ok spoils the step.
	achieved, _ := core.Sustained(p)
	n := float64(w.reps[st.Index])
	pt.Throughput = (pt.Throughput*n + achieved) / (n + 1)
	w.reps[st.Index]++
	for _, t := range p.Totals {
		pt.P99 = max(pt.P99, t.Response.P99)
	}
	pt.OK = pt.OK && p.End.Status == core.StatusOK
	return core.Verdict{}
}

// knee is the connections at the knee of a sweep, or why there is none.
func (u *unit) knee(name string) (int, string) {
	w := u.sweeps[name]
	if w == nil {
		return 0, fmt.Sprintf("no knee: the sweep %q did not run", name)
	}
	points := make([]Point, len(w.index))
	for i, idx := range w.index {
		points[i] = *w.points[idx]
	}
	k := Knee(points, w.params.Gain, w.params.P99BoundNs)
	if k < 0 {
		return 0, fmt.Sprintf("no knee: the first step of the sweep %q did not end ok", name)
	}
	return points[k].Connections, ""
}

// Point is one step of a concurrency sweep as measured: its connections, the
// rate it achieved and its p99 (ns). OK is false for a step that did not end ok.
type Point struct {
	Connections int
	Throughput  float64
	P99         int64
	OK          bool
}

// DefaultKneeGain is the least throughput gain from one step of a concurrency
// sweep to the next that makes the next step worth its connections.
const DefaultKneeGain = 0.10

// Knee is the index of a sweep's knee: the first step after which throughput grows
// by less than gain (a fraction: 0.10 is 10%), or the next step's p99 exceeds p99Bound
// (ns; 0 for no bound), or the next step did not end ok. A sweep that keeps growing
// has its knee at its last step. -1 when the first step did not end ok.
func Knee(points []Point, gain float64, p99Bound int64) int {
	if len(points) == 0 || !points[0].OK {
		return -1
	}
	for i := 0; i+1 < len(points); i++ {
		next := points[i+1]
		if !next.OK || next.Throughput < points[i].Throughput*(1+gain)*(1-1e-9) || p99Bound > 0 && next.P99 > p99Bound {
			return i
		}
	}
	return len(points) - 1
}
