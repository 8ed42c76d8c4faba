package core

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Method is a way of measuring over several steps: a phase written with the
// method's key (`ladder:`, `sweep:`) becomes the method's steps, each a measured
// phase, and the method's unit (UnitMethod) runs around them in every system's
// run — a ladder stops where the system no longer keeps up, a sweep finds the
// knee later phases run at. Each method is one package under methods/ that
// registers itself (RegisterMethod): a new method is that package and its
// registration, nothing else. What a method may also do — be the source of a
// later phase's connections, leave steps out, refuse to be split — it says by
// implementing the interfaces below; the planner, the runner and the report ask.
type Method interface {
	// Name is the method's key in a suite's phase and its kind in archives.
	Name() string
	// Doc is a new, empty section for a suite's phase to decode into.
	Doc() MethodDoc
}

// MethodDoc is a method's section of a suite's phase as written.
type MethodDoc interface {
	// Steps expands the phase as written into the method's steps, or says every
	// problem with the section (each error names the key, not the phase: the
	// planner adds where the phase is).
	Steps(written WrittenPhase) (MethodSteps, []error)
}

// WrittenPhase is what a method's section sees of the phase it is written in.
type WrittenPhase struct {
	File     string // the suite's file, for config.DecodeStrict's messages
	Name     string
	Kind     PhaseKind     // "" when the phase leaves kind out
	Rate     bool          // the phase gives a rate
	Duration time.Duration // 0 when the phase gives none
	Checks   bool          // the phase asks for validate or restart
}

// MethodSteps are the steps a method's section expands into: each one is the
// phase as written, a measured phase, varied as its Variant says.
type MethodSteps struct {
	Steps []Variant
	// Repeat runs each step at least that many times (the run's --repeat when more).
	Repeat int
	// Params are what every step carries of the method, archived as JSON with the
	// step's phase and read back by the method's unit and report section.
	Params any
}

// Variant is how one step of a method differs from the phase as written.
type Variant struct {
	Name        string        // the step's phase name: "<phase>@<what varies>"
	Rate        float64       // 0: as written (a closed loop when it gives none)
	Connections int           // 0: as written
	Duration    time.Duration // 0: as written
}

// MethodRef names a phase written with a method: its kind and the phase's name
// as written. The zero value is none.
type MethodRef struct {
	Kind string `json:"kind"`
	Of   string `json:"of"`
}

// MethodStep is what a step of a method knows of it: the method and the phase it
// was written as, and its parameters as JSON (MethodSteps.Params).
type MethodStep struct {
	Kind   string          `json:"kind"`
	Of     string          `json:"of"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Ref names the method and the phase as written.
func (s MethodStep) Ref() MethodRef { return MethodRef{Kind: s.Kind, Of: s.Of} }

// DecodeParams reads a step's parameters into v; a method's unit and report
// section do, each for its own kind.
func (s MethodStep) DecodeParams(v any) error {
	if len(s.Params) == 0 {
		return nil
	}
	if err := json.Unmarshal(s.Params, v); err != nil {
		return fmt.Errorf("the parameters of %s %q: %w", s.Kind, s.Of, err)
	}
	return nil
}

// What a method may also be.
type (
	// UnitMethod methods act around their steps in every system's run: Unit is
	// called once per system run (and per shard), for a fresh unit.
	UnitMethod interface {
		Unit(system string, note func(string)) MethodUnit
	}
	// ConnectionsSource methods give later phases their connections: a phase
	// whose connections is Word (the last such method's result before it) or
	// Word:<name> runs with what that phase measured (a sweep's knee). Meaning
	// says what Word means, for messages ("the knee of the last sweep before").
	ConnectionsSource interface {
		ConnectionsWord() (word, meaning string)
	}
	// Stopping methods may leave a system's later steps out (a ladder stops where
	// the system no longer keeps up): Sure is how many of a phase's first steps
	// always run, given its parameters; 0 when every step runs. Stops says when,
	// for the estimate's notes ("a ladder stops at a step not sustained, ...").
	Stopping interface {
		Sure(params json.RawMessage) int
		Stops() string
	}
	// Unsplit methods are decided on one process's results: their steps, and the
	// phases that use their result, cannot run sharded; Unsplit says why.
	Unsplit interface {
		Unsplit() string
	}
	// Summarized methods read as one entry in a list of a suite's phases: the
	// phase's name and Summary of its steps ("ladder: 1000, 2000 ops/s").
	Summarized interface {
		Summary(steps []PhaseSpec) string
	}
)

// MethodUnit is a method's part in one system's run: before each step it may
// change it (a knee's connections) or keep it from running; after each, it
// learns how the step ended here (p) and everywhere it ran (whole: every shard
// together). It sees every step, and acts on those of its method.
//
// On a sharded run every shard asks its own unit, and a step Before omits is
// omitted on that shard without meeting the others: Before must decide from
// the plan and from what After learned of whole steps (whole), never from
// this shard's own phases (p), or the shards would part ways.
type MethodUnit interface {
	Before(st *Step) Verdict
	After(st Step, p *PhaseRun, whole WholeStep) Verdict
}

// Verdict is what a unit says of a step: go on (the zero value), or what to do
// instead and why; after a Halt, Rest says why every later step is skipped.
type Verdict struct {
	Act       StepAct
	Why, Rest string
}

// StepAct is what becomes of a step a unit does not let through.
type StepAct int

const (
	Proceed StepAct = iota
	// Omit: the step does not run and leaves no phase; the method did what it is
	// for (a ladder that stopped: the report shows a dash).
	Omit
	// Skip: the step is recorded as skipped (the data it needs is not there).
	Skip
	// Fail: the step is recorded as failed, and the run goes on.
	Fail
	// Halt: before a step, it is recorded as failed; after one, it stands. Every
	// later step is skipped with the reason.
	Halt
)

// WholeStep is how a step ended everywhere it ran: its status (the first not ok
// of any shard), its successful issued ops, the rate they achieved together and
// its target rate (0: a closed loop).
type WholeStep struct {
	Status   PhaseStatus
	OK       int64
	Achieved float64
	Rate     float64
}

// Sustained says whether the step ended ok and, at a fixed rate, held at least
// SustainedFraction of its target.
func (w WholeStep) Sustained() bool {
	return w.Status == StatusOK && (w.Rate <= 0 || w.Achieved >= SustainedFraction*w.Rate)
}

var methods = struct {
	sync.RWMutex
	m map[string]Method
}{m: map[string]Method{}}

// RegisterMethod makes a method known; call it from the method's package init.
// It panics on a bad or repeated name, or one a workload kind has, as
// RegisterWorkload does.
func RegisterMethod(m Method) {
	name := m.Name()
	if !kindName.MatchString(name) || m.Doc() == nil {
		panic(fmt.Sprintf("core.RegisterMethod: method %q needs a lower-case name and a Doc", name))
	}
	if _, ok := LookupWorkload(name); ok {
		panic(fmt.Sprintf("core.RegisterMethod: method %q is also a workload kind", name))
	}
	reservedKinds.Lock()
	by, reserved := reservedKinds.m[name]
	reservedKinds.Unlock()
	if reserved {
		panic(fmt.Sprintf("core.RegisterMethod: method %q is a key of %s", name, by))
	}
	methods.Lock()
	defer methods.Unlock()
	if _, dup := methods.m[name]; dup {
		panic("core.RegisterMethod: method " + name + " registered twice")
	}
	methods.m[name] = m
}

// LookupMethod returns the registered method of that name.
func LookupMethod(name string) (Method, bool) {
	methods.RLock()
	defer methods.RUnlock()
	m, ok := methods.m[name]
	return m, ok
}

// Methods lists the registered methods, by name.
func Methods() []Method {
	methods.RLock()
	defer methods.RUnlock()
	out := make([]Method, 0, len(methods.m))
	for _, m := range methods.m {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Method) int {
		if a.Name() < b.Name() {
			return -1
		}
		if a.Name() > b.Name() {
			return 1
		}
		return 0
	})
	return out
}

// MethodNames lists the registered methods' names, sorted.
func MethodNames() []string {
	var names []string
	for _, m := range Methods() {
		names = append(names, m.Name())
	}
	return names
}
