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
// units below. A sharded run asks the same units through the same loop: what
// needs every shard, a unit learns from the whole step (after's whole), and what
// needs the whole data set it does where the coordinator's checks says.
type unit interface {
	// before may change the step about to run (a knee's connections) or say
	// that it does not run.
	before(ctx context.Context, st *plan.Step) outcome
	// after learns how the step ended here (p) and everywhere it ran (whole:
	// on all shards together), and may say that no later step runs.
	after(ctx context.Context, st plan.Step, p *core.PhaseRun, whole stepResult) outcome
}

// notRunner is a unit that wants to know of a step that did not run.
type notRunner interface {
	notRun(st plan.Step)
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
func (r *systemRunner) after(ctx context.Context, units []unit, st plan.Step, p *core.PhaseRun, whole stepResult) outcome {
	for _, u := range units {
		if o := u.after(ctx, st, p, whole); o.act == halt {
			return o
		}
	}
	return outcome{}
}

// runSteps runs the system's steps in order, through the one loop every run
// has: each unit asked before and after every step, and the coordinator (the
// other shards of a sharded run, or nobody) asked to agree on each step and to
// say how the whole of it ended. failed says why no step can run here (the
// system did not start): a shard still meets the others at every step, so that
// they skip it too. After a halt, every later step is skipped the same way.
func (r *systemRunner) runSteps(ctx context.Context, failed string) {
	units := r.units()
	var standing outcome
	if failed != "" {
		standing = outcome{act: fail, why: failed}
	}
	for i, st := range r.steps {
		if ctx.Err() != nil {
			r.skipFrom(i, core.StatusSkipped, "run interrupted before this phase")
			return
		}
		if status, why := r.cannotGoOn(ctx); why != "" && standing.act == proceed {
			standing = outcome{act: fail, why: why}
			if status == core.StatusSkipped {
				standing.act = skip
			}
		}
		o := standing
		if o.act == proceed {
			o = r.before(ctx, units, &st)
		}
		o, stop := r.coord.agree(ctx, i, &st, o)
		if stop {
			return
		}
		if o.act != proceed {
			r.settle(st, o)
			r.notRun(units, st, o)
			if o.act == halt {
				standing = outcome{act: skip, why: o.rest}
			}
			continue
		}
		p := r.measure(ctx, st)
		whole, err := r.coord.ended(ctx, st, p)
		if err != nil {
			r.skipFrom(i+1, core.StatusFailed, err.Error())
			return
		}
		if o := r.after(ctx, units, st, p, whole); o.act == halt {
			standing = outcome{act: skip, why: o.rest}
		}
	}
}

// notRun tells the units that want to know of a step that did not run; a
// ladder's step it omitted is not one (the ladder did what it is for).
func (r *systemRunner) notRun(units []unit, st plan.Step, o outcome) {
	if o.act == omit {
		return
	}
	for _, u := range units {
		if n, ok := u.(notRunner); ok {
			n.notRun(st)
		}
	}
}

// coordinator is where a system's steps meet the rest of the run: nobody (alone),
// or the other shards of a sharded run (shards.go). The step loop is the same.
type coordinator interface {
	// agree is asked before step i runs, with this process's outcome for it,
	// and returns the outcome every process shares (a shard's problem with a
	// step keeps it from running on every shard), setting the step's start;
	// stop is true when no later step can run (the shards lost each other),
	// and the rest have been recorded.
	agree(ctx context.Context, i int, st *plan.Step, o outcome) (_ outcome, stop bool)
	// ended learns how the whole step ended from how it ended here.
	ended(ctx context.Context, st plan.Step, p *core.PhaseRun) (stepResult, error)
	// checks says whether this process does what needs the whole data set:
	// emptying the system before a load, counting and validating it after.
	checks() bool
}

// alone is the coordinator of a run of one process: the whole step is this one.
type alone struct{}

func (alone) agree(_ context.Context, _ int, _ *plan.Step, o outcome) (outcome, bool) {
	return o, false
}

func (alone) ended(_ context.Context, st plan.Step, p *core.PhaseRun) (stepResult, error) {
	achieved, _ := core.Sustained(p)
	return stepResult{status: p.End.Status, ok: issuedOK(p), achieved: achieved, rate: st.Spec.Rate}, nil
}

func (alone) checks() bool { return true }

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
