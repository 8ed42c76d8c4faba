package plan

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// Step is one phase of one system (core.Step).
type Step = core.Step

// insertStride separates the record numbers that the phases (and repetitions) of a
// run insert, so that no two ever insert the same record: phase i inserts from
// (i+1)*insertStride, repetition r from there plus r*repetitionStride.
const (
	insertStride     = 1_000_000_000_000
	repetitionStride = 10_000_000_000
)

// Plan is what a run executes: every phase of the suite for each system in turn.
type Plan struct {
	Suite   *Suite
	Systems []string
	Scale   float64
	Seed    uint64
	Repeat  int
	// Phases are the suite's phases after scaling, with their seeds.
	Phases []core.PhaseSpec
	Steps  []Step
	// Shard is the part of the plan this process runs (ForShard); zero when it
	// runs all of it.
	Shard Shard
}

// Build expands suite x systems. scale shrinks (or grows) durations, op counts and key
// ranges; every phase gets a seed derived from seed and its position, the same for
// every system so that all systems see the same operation streams. Each measured
// phase runs repeat times in a row, with the same seed: repetitions measure the
// system's variation, not the workload's.
func Build(suite *Suite, systems []string, scale float64, seed uint64, repeat int) (*Plan, error) {
	if scale <= 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("--scale must be a positive number, got %g", scale)
	}
	if repeat < 1 || repeat > 100 {
		return nil, fmt.Errorf("--repeat must be between 1 and 100, got %d", repeat)
	}
	if len(systems) == 0 {
		return nil, errors.New("no systems given (--systems a,b)")
	}
	seen := map[string]bool{}
	for _, s := range systems {
		if seen[s] {
			return nil, fmt.Errorf("system %q is listed twice", s)
		}
		seen[s] = true
	}
	p := &Plan{Suite: suite, Systems: systems, Scale: scale, Seed: seed, Repeat: repeat}
	var errs []error
	for i, ph := range suite.Phases {
		ph, err := scalePhase(ph, scale)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ph.Seed = phaseSeed(seed, i)
		for _, err := range ph.Validate() {
			errs = append(errs, fmt.Errorf("phase %q after --scale %g: %w", ph.Name, scale, err))
		}
		p.Phases = append(p.Phases, ph)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, sys := range systems {
		for i, ph := range p.Phases {
			var around Around
			if i < len(suite.Around) {
				around = suite.Around[i]
			}
			reps := 1
			if ph.Kind == core.PhaseMeasured {
				reps = max(repeat, around.Repeat)
			}
			for r := range reps {
				spec := ph
				if w, ok := ph.Workload.(core.Inserter); ok && ph.Kind != core.PhaseLoad {
					spec.Workload = w.ShiftInserts(int64(i+1)*insertStride, int64(r)*repetitionStride)
				}
				p.Steps = append(p.Steps, Step{System: sys, Index: i, Repetition: r, Spec: spec, Checks: around.Checks, Method: around.Method, Uses: around.Uses})
			}
		}
	}
	return p, nil
}

// scalePhase applies --scale. Durations keep at least a second, op counts at least
// one op, the workload's sizes what its kind keeps (core.Scalable: a key per
// connection; a load still writes its whole scaled range exactly once); a load's
// duration, the bound on how long it may take, is not scaled: a smaller load
// needs less time, not a tighter bound. A scale that would take durations, op
// counts or the workload's sizes past what they hold is an error.
func scalePhase(p core.PhaseSpec, scale float64) (core.PhaseSpec, error) {
	if scale == 1 {
		return p, nil
	}
	tooLarge := func(why error) (core.PhaseSpec, error) {
		return p, fmt.Errorf("phase %q: --scale %g is too large for it (%v)", p.Name, scale, why)
	}
	if core.ScaleOverflows(int64(p.Duration), scale) || core.ScaleOverflows(p.Ops, scale) {
		return tooLarge(errors.New("its durations or op counts would overflow"))
	}
	if p.Kind != core.PhaseLoad || p.Ops == 0 {
		p.Duration = max(time.Second, time.Duration(float64(p.Duration)*scale))
	}
	if w, ok := p.Workload.(core.Scalable); ok {
		scaled, err := w.Scale(p, scale)
		if err != nil {
			return tooLarge(err)
		}
		return scaled, nil
	}
	if p.Ops > 0 {
		p.Ops = core.Scaled(p.Ops, scale, 1)
	}
	return p, nil
}

// phaseSeed derives a phase's seed (splitmix64 of the run seed and phase index).
func phaseSeed(seed uint64, i int) uint64 {
	return core.Mix64(seed + uint64(i+1)*core.SplitMixGamma)
}

// StepShape describes how a step drives load, as Shape does; a step whose
// connections come from another phase's result says whose ("closed loop, the
// knee of reads").
func StepShape(st Step) string {
	if st.Uses.Kind == "" {
		return Shape(st.Spec)
	}
	what := st.Uses.Kind
	if m, ok := core.LookupMethod(st.Uses.Kind); ok {
		if src, ok := m.(core.ConnectionsSource); ok {
			what, _ = src.ConnectionsWord()
		}
	}
	return "closed loop, the " + what + " of " + st.Uses.Of
}

// Shape describes how a phase drives load, e.g. "closed loop, 8 conns" or
// "5000 ops/s, 4 conns".
func Shape(p core.PhaseSpec) string {
	var b strings.Builder
	if p.OpenLoop() {
		fmt.Fprintf(&b, "%s ops/s", formatRate(p.Rate))
		if p.Poisson {
			b.WriteString(" poisson")
		}
	} else {
		b.WriteString("closed loop")
	}
	fmt.Fprintf(&b, ", %d conns", p.Connections)
	if d := p.Depth(); d > 1 {
		fmt.Fprintf(&b, ", pipeline %d", d)
	}
	return b.String()
}

// Bound describes what ends a phase, e.g. "10000 ops or 60s".
func Bound(p core.PhaseSpec) string {
	if p.Ops > 0 {
		return fmt.Sprintf("%d ops or %s", p.Ops, p.Duration)
	}
	return p.Duration.String()
}

func formatRate(r float64) string {
	if r == math.Trunc(r) {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%g", r)
}
