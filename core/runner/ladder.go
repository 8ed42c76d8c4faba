package runner

import (
	"context"
	"fmt"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// ladderUnit is the method of fixed-rate ladders (unit): a ladder's steps run
// in order until StopAfterNS of them were not sustained; its later steps are
// omitted — the system has shown where it stops keeping up.
type ladderUnit struct {
	r     *systemRunner
	stops ladderStops
}

func (u *ladderUnit) before(_ context.Context, st *plan.Step) outcome {
	why := u.stops.stopped(*st)
	if why == "" {
		return outcome{}
	}
	// Not a skipped phase: the ladder did what it is for, and the report shows a
	// dash where the system did not go.
	if u.stops.note(*st) {
		u.r.cfg.Observer.Note(fmt.Sprintf("%s: %s; its steps from %s on are not run", u.r.info.Name, why, st.Spec.Name))
	}
	return outcome{act: omit, why: why}
}

// after decides on the whole step: on a sharded run, what the shards held
// together.
func (u *ladderUnit) after(_ context.Context, st plan.Step, _ *core.PhaseRun, whole stepResult) outcome {
	u.stops.endedAs(st, whole.status, whole.achieved, whole.sustained(), whole.rate)
	return outcome{}
}

// ladderStops follows a system's fixed-rate ladders: once StopAfterNS of a
// ladder's steps were not sustained (or did not end ok), its later steps are not
// run — the system has shown where it stops keeping up.
type ladderStops map[string]*ladderState

type ladderState struct {
	notSustained map[int]bool // step indexes
	stopAfter    int          // the index of the step that stopped the ladder
	why          string
	noted        bool
}

// note reports, once per ladder, that it is the first step not run.
func (l ladderStops) note(st plan.Step) bool {
	s := l[st.Ladder.Name]
	first := !s.noted
	s.noted = true
	return first
}

func (l ladderStops) stopped(st plan.Step) string {
	if s := l[st.Ladder.Name]; st.Ladder.Name != "" && s != nil && s.why != "" && st.Index > s.stopAfter {
		return s.why
	}
	return ""
}

// endedAs notes how a ladder step ended: its status, the rate it achieved against
// its target, and whether that was sustained.
func (l ladderStops) endedAs(st plan.Step, status core.PhaseStatus, achieved float64, ok bool, target float64) {
	if st.Ladder.Name == "" || st.Ladder.StopAfterNS <= 0 || status == core.StatusInterrupted {
		return
	}
	s := l[st.Ladder.Name]
	if s == nil {
		s = &ladderState{notSustained: map[int]bool{}}
		l[st.Ladder.Name] = s
	}
	if ok || s.why != "" {
		return
	}
	s.notSustained[st.Index] = true
	if len(s.notSustained) >= st.Ladder.StopAfterNS {
		s.stopAfter = st.Index
		held := fmt.Sprintf("held %.0f ops/s", achieved)
		if status != core.StatusOK {
			held = "ended " + string(status)
		}
		s.why = fmt.Sprintf("the ladder %q stopped: %d of its steps not sustained, the last %s (%s of %.0f ops/s)", st.Ladder.Name, len(s.notSustained), st.Spec.Name, held, target)
	}
}
