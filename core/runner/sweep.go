package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// sweepUnit is the method of concurrency sweeps (unit): it gathers what each
// sweep's steps measured, and runs the phases written at a sweep's knee with the
// knee's connections.
type sweepUnit struct {
	r      *systemRunner
	points sweepPoints
}

func (u *sweepUnit) before(_ context.Context, st *plan.Step) outcome {
	if st.KneeOf == "" {
		return outcome{}
	}
	conns, why := u.points.knee(st.KneeOf)
	if why == "" {
		st.Spec.Connections = conns
		if errs := st.Spec.Validate(); len(errs) > 0 {
			why = fmt.Sprintf("at the knee of %q (%d connections): %v", st.KneeOf, conns, errors.Join(errs...))
		}
	}
	if why != "" {
		return outcome{act: fail, why: why}
	}
	u.r.cfg.Observer.Note(fmt.Sprintf("%s: %s runs at the knee of %s: %d connections", u.r.info.Name, st.Spec.Name, st.KneeOf, conns))
	return outcome{}
}

func (u *sweepUnit) after(_ context.Context, st plan.Step, p *core.PhaseRun, _ stepResult) outcome {
	u.points.ended(st, p)
	return outcome{}
}

// sweepPoints gathers what a system's concurrency sweeps measured, step by step,
// for the phases that run at a sweep's knee.
type sweepPoints map[string]*sweepState

type sweepState struct {
	sweep  plan.Sweep
	index  []int // the steps' suite indexes, in order
	points map[int]*core.SweepPoint
	reps   map[int]int
}

func (s sweepPoints) ended(st plan.Step, p *core.PhaseRun) {
	if st.Sweep.Name == "" {
		return
	}
	w := s[st.Sweep.Name]
	if w == nil {
		w = &sweepState{sweep: st.Sweep, points: map[int]*core.SweepPoint{}, reps: map[int]int{}}
		s[st.Sweep.Name] = w
	}
	pt := w.points[st.Index]
	if pt == nil {
		pt = &core.SweepPoint{Connections: st.Spec.Connections, OK: true}
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
}

// knee is the connections at the knee of a sweep, or why there is none.
func (s sweepPoints) knee(name string) (int, string) {
	w := s[name]
	if w == nil {
		return 0, fmt.Sprintf("no knee: the sweep %q did not run", name)
	}
	points := make([]core.SweepPoint, len(w.index))
	for i, idx := range w.index {
		points[i] = *w.points[idx]
	}
	k := core.Knee(points, w.sweep.Gain, int64(w.sweep.P99Bound))
	if k < 0 {
		return 0, fmt.Sprintf("no knee: the first step of the sweep %q did not end ok", name)
	}
	return points[k].Connections, ""
}
