package runner

import (
	"context"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// A unit is one thing the runner does around every step of a system besides
// running its phase: a method of measuring (a ladder stops where the system no
// longer keeps up, a sweep finds the knee that later phases run at) or a check
// of the system's data (empty before a load, validated after it, kept across a
// restart). A plain phase — fixed rate or closed loop, a soak, pub/sub — needs
// none: it is the phase. The runner asks every unit, in order, before and after
// each step; a unit acts on its own steps and lets the others pass.
//
// A new method is a type implementing unit, in a file of its own, and a line in
// units below.
type unit interface {
	// before may change the step about to run (a knee's connections) or say
	// that it does not run.
	before(ctx context.Context, st *plan.Step) outcome
	// after learns how the step ended, and may say that no later step runs.
	after(ctx context.Context, st plan.Step, p *core.PhaseRun) outcome
}

// units are the units of a system's run, in the order they are asked.
func (r *systemRunner) units() []unit {
	return []unit{&dataUnit{r: r}, &ladderUnit{r: r, stops: ladderStops{}}, &sweepUnit{r: r, points: sweepPoints{}}}
}

// outcome is what a unit says of a step: go on (the zero value), or what to do
// instead and why; after a halt, rest says why every later step is skipped.
type outcome struct {
	act       action
	why, rest string
}

// action is what becomes of a step a unit does not let through.
type action int

const (
	proceed action = iota
	// omit: the step does not run and leaves no phase; the method did what it is
	// for (a ladder that stopped: the report shows a dash).
	omit
	// skip: the step is recorded as skipped (the data it needs is not there).
	skip
	// fail: the step is recorded as failed, and the run goes on.
	fail
	// halt: before a step, it is recorded as failed; after one, it stands. Every
	// later step is skipped with the reason.
	halt
)

// before asks every unit about st in turn; the first that does not let it
// through decides.
func (r *systemRunner) before(ctx context.Context, units []unit, st *plan.Step) outcome {
	for _, u := range units {
		if o := u.before(ctx, st); o.act != proceed {
			return o
		}
	}
	return outcome{}
}

// after tells every unit how st ended; the first that halts the run decides.
func (r *systemRunner) after(ctx context.Context, units []unit, st plan.Step, p *core.PhaseRun) outcome {
	for _, u := range units {
		if o := u.after(ctx, st, p); o.act == halt {
			return o
		}
	}
	return outcome{}
}

// settle records a step that a unit kept from running.
func (r *systemRunner) settle(st plan.Step, o outcome) {
	now := time.Now()
	switch o.act {
	case skip:
		r.addPhase(st, core.PhaseEnd{Status: core.StatusSkipped, Error: o.why})
	case fail, halt:
		r.addPhase(st, core.PhaseEnd{Status: core.StatusFailed, Error: o.why, Started: now, Ended: now})
	}
}
