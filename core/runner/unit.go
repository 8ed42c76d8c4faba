package runner

import (
	"context"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// A unit is one thing the runner does around every step of a system besides
// running its phase: a method of measuring (core.Method: a ladder stops where
// the system no longer keeps up, a sweep finds the knee that later phases run
// at) or a check of the system's data (empty before a load, validated after it,
// kept across a restart). A plain phase — fixed rate or closed loop, a soak,
// pub/sub — needs none: it is the phase. The runner asks every unit, in order,
// before and after each step; a unit acts on its own steps and lets the others
// pass.
//
// A new method is a package of its own under methods/ whose core.Method is a
// core.UnitMethod: its unit is asked here with the others, on every run. A
// sharded run asks the same units through the same loop: what needs every
// shard, a unit learns from the whole step (after's whole), and what needs the
// whole data set it does where the coordinator's checks says.
type unit interface {
	// before may change the step about to run (a knee's connections) or say
	// that it does not run.
	before(ctx context.Context, st *plan.Step) core.Verdict
	// after learns how the step ended here (p) and everywhere it ran (whole:
	// on all shards together), and may say that no later step runs.
	after(ctx context.Context, st plan.Step, p *core.PhaseRun, whole stepResult) core.Verdict
}

// notRunner is a unit that wants to know of a step that did not run.
type notRunner interface {
	notRun(st plan.Step)
}

// units are the units of a system's run, in the order they are asked: the
// data's guard, a load's validation and its restart check, then each
// registered method's (by name).
func (r *systemRunner) units() []unit {
	units := []unit{&dataUnit{r: r}, validationUnit{r}, restartUnit{r}}
	for _, m := range core.Methods() {
		if um, ok := m.(core.UnitMethod); ok {
			units = append(units, methodUnit{um.Unit(r.info.Name, r.cfg.Observer.Note)})
		}
	}
	return units
}

// methodUnit is a method's unit (core.MethodUnit) among the runner's.
type methodUnit struct{ u core.MethodUnit }

func (m methodUnit) before(_ context.Context, st *plan.Step) core.Verdict {
	return m.u.Before(st)
}

func (m methodUnit) after(_ context.Context, st plan.Step, p *core.PhaseRun, whole stepResult) core.Verdict {
	return m.u.After(st, p, whole.WholeStep)
}

// before asks every unit about st in turn; the first that does not let it
// through decides.
func (r *systemRunner) before(ctx context.Context, units []unit, st *plan.Step) core.Verdict {
	for _, u := range units {
		if o := u.before(ctx, st); o.Act != core.Proceed {
			return o
		}
	}
	return core.Verdict{}
}

// after tells every unit how st ended; the first that halts the run decides.
func (r *systemRunner) after(ctx context.Context, units []unit, st plan.Step, p *core.PhaseRun, whole stepResult) core.Verdict {
	for _, u := range units {
		if o := u.after(ctx, st, p, whole); o.Act == core.Halt {
			return o
		}
	}
	return core.Verdict{}
}

// runSteps runs the system's steps in order, through the one loop every run
// has: each unit asked before and after every step, and the coordinator (the
// other shards of a sharded run, or nobody) asked to agree on each step and to
// say how the whole of it ended. failed says why no step can run here (the
// system did not start): a shard still meets the others at every step, so that
// they skip it too. After a halt, every later step is skipped the same way.
func (r *systemRunner) runSteps(ctx context.Context, failed string) {
	units := r.units()
	var standing core.Verdict
	if failed != "" {
		standing = core.Verdict{Act: core.Fail, Why: failed}
	}
	for i, st := range r.steps {
		if ctx.Err() != nil {
			r.skipFrom(i, core.StatusSkipped, "run interrupted before this phase")
			return
		}
		if status, why := r.cannotGoOn(ctx); why != "" && standing.Act == core.Proceed {
			standing = core.Verdict{Act: core.Fail, Why: why}
			if status == core.StatusSkipped {
				standing.Act = core.Skip
			}
		}
		o := standing
		if o.Act == core.Proceed {
			o = r.before(ctx, units, &st)
		}
		o, stop := r.coord.agree(ctx, i, &st, o)
		if stop {
			return
		}
		if o.Act != core.Proceed {
			r.settle(st, o)
			r.notRun(units, st, o)
			if o.Act == core.Halt {
				standing = core.Verdict{Act: core.Skip, Why: o.Rest}
			}
			continue
		}
		p := r.measure(ctx, st)
		whole, err := r.coord.ended(ctx, st, p)
		if err != nil {
			r.skipFrom(i+1, core.StatusFailed, err.Error())
			return
		}
		if o := r.after(ctx, units, st, p, whole); o.Act == core.Halt {
			standing = core.Verdict{Act: core.Skip, Why: o.Rest}
		}
	}
}

// notRun tells the units that want to know of a step that did not run; a
// ladder's step it omitted is not one (the ladder did what it is for).
func (r *systemRunner) notRun(units []unit, st plan.Step, o core.Verdict) {
	if o.Act == core.Omit {
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
	agree(ctx context.Context, i int, st *plan.Step, o core.Verdict) (_ core.Verdict, stop bool)
	// ended learns how the whole step ended from how it ended here.
	ended(ctx context.Context, st plan.Step, p *core.PhaseRun) (stepResult, error)
	// checks says whether this process does what needs the whole data set:
	// emptying the system before a load, counting and validating it after.
	checks() bool
}

// alone is the coordinator of a run of one process: the whole step is this one.
type alone struct{}

func (alone) agree(_ context.Context, _ int, _ *plan.Step, o core.Verdict) (core.Verdict, bool) {
	return o, false
}

func (alone) ended(_ context.Context, st plan.Step, p *core.PhaseRun) (stepResult, error) {
	achieved, _ := core.Sustained(p)
	return stepResult{WholeStep: core.WholeStep{Status: p.End.Status, OK: issuedOK(p), Achieved: achieved, Rate: st.Spec.Rate}}, nil
}

func (alone) checks() bool { return true }

// settle records a step that a unit kept from running.
func (r *systemRunner) settle(st plan.Step, o core.Verdict) {
	now := time.Now()
	switch o.Act {
	case core.Skip:
		r.addPhase(st, core.PhaseEnd{Status: core.StatusSkipped, Error: o.Why})
	case core.Fail, core.Halt:
		r.addPhase(st, core.PhaseEnd{Status: core.StatusFailed, Error: o.Why, Started: now, Ended: now})
	}
}
