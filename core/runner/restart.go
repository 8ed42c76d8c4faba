package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// restartUnit is a load's restart check (restart: true; unit): after the load
// was validated, the server is stopped cleanly and started again on the same
// data (or, when cmpbench does not run it and restart_wait is set, the person
// running the benchmark is asked to), and the data is validated again. A server
// that came back empty keeps no data across a restart: a finding about it, not
// a failure, and the data is loaded again for the phases after it; one that
// came back with other data halts the system's run. A system shown to keep its
// data is durable: a restart during a later phase is then survived when the
// data is still all there (dataUnit).
type restartUnit struct{ r *systemRunner }

func (restartUnit) before(context.Context, *plan.Step) core.Verdict { return core.Verdict{} }

func (u restartUnit) after(ctx context.Context, st plan.Step, p *core.PhaseRun, whole stepResult) core.Verdict {
	r := u.r
	if !st.Checks.Restart || whole.Status != core.StatusOK || !r.coord.checks() {
		return core.Verdict{}
	}
	if problem := r.restartCheck(ctx, st, p, r.lastValidation()); problem != "" {
		return core.Verdict{Act: core.Halt, Rest: "validation failed: " + problem}
	}
	return core.Verdict{}
}

// restartCheck restarts the server on the data of a load validated as after,
// and validates it again. It returns the first problem, or "".
func (r *systemRunner) restartCheck(ctx context.Context, st plan.Step, load *core.PhaseRun, after core.Validation) string {
	expected := r.loaded
	restarted, why := r.restartServer(ctx)
	if why != "" || !restarted {
		return why
	}
	again := r.validate(ctx, st, expected, "after restart")
	if again.Counted == 0 && expected > 0 {
		// No persistence: a finding about the system, not a failure of the run. The
		// data is loaded again so that the phases after it have something to read.
		r.amendValidation(func(v *core.Validation) {
			v.Problems = nil
			v.Note = "not restart-durable: the server came back empty (it keeps no data across a restart); loaded again"
		})
		st.Repetition = load.Repetition + 1
		reload := r.measure(ctx, st)
		if reload.End.Status != core.StatusOK {
			return "reload after a restart that lost the data: " + reload.End.Error
		}
		if v := r.validate(ctx, st, expected, "after reload"); !v.OK() {
			return v.Problems[0]
		}
		return ""
	}
	if again.Counted != after.Counted {
		r.amendValidation(func(v *core.Validation) {
			v.Problems = append(v.Problems, fmt.Sprintf("the server held %d keys before the restart and %d after", after.Counted, again.Counted))
		})
	}
	for i, s := range again.Samples {
		if i < len(after.Samples) && s.SHA256 != after.Samples[i].SHA256 {
			r.amendValidation(func(v *core.Validation) {
				v.Problems = append(v.Problems, fmt.Sprintf("record %s changed across the restart (sha256 %s before, %s after)", s.Key, after.Samples[i].SHA256, s.SHA256))
			})
		}
	}
	if v := r.lastValidation(); !v.OK() {
		return v.Problems[0]
	}
	r.durable = true
	return ""
}

// restartServer restarts the server (cmpbench's own), or waits for the person
// running the benchmark to (restart_wait), and opens it again. restarted is
// false, and why empty, when the check cannot be made (recorded as skipped).
func (r *systemRunner) restartServer(ctx context.Context) (restarted bool, why string) {
	switch {
	case r.srv == nil && r.sys.RestartWait <= 0:
		r.addValidation(core.Validation{System: r.info.Name, Point: "after restart", Expected: r.loaded, Counted: -1,
			Note: "not started by cmpbench: the restart check was skipped (restart_wait on the system makes cmpbench wait for you to restart it)"})
		return false, ""
	case r.srv == nil:
		if why := r.awaitRestart(ctx, time.Duration(r.sys.RestartWait)); why != "" {
			return false, why
		}
	default:
		r.cfg.Observer.Note(fmt.Sprintf("%s: stopping the server cleanly and starting it again on the same data", r.info.Name))
		r.srv.SetStopTimeout(r.stopTimeout())
		if err := r.srv.Restart(); err != nil {
			return false, "restart: " + err.Error()
		}
	}
	r.lastStats = nil // this restart is the check's own
	ready := r.readyTimeout()
	if r.srv == nil {
		ready = time.Duration(r.sys.RestartWait) // a cold start may take long: as long as the restart may
	}
	if err := r.open(ctx, ready); err != nil {
		return false, "reopen after restart: " + err.Error()
	}
	return true, ""
}

// awaitRestart waits, up to wait, until every node of a system cmpbench does not
// start has restarted (its uptime went down, or its instance changed), as the
// person running the benchmark was asked to do. It returns why not, or "".
func (r *systemRunner) awaitRestart(ctx context.Context, wait time.Duration) string {
	sample := func() (core.StatsSample, error) {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		at := time.Now()
		st, err := r.drv.Stats(sctx)
		return core.StatsSample{At: at, Stats: st}, err
	}
	before, err := sample()
	if err != nil {
		return "restart check: server stats: " + r.cfg.Redactor.String(err.Error())
	}
	nodes := core.RestartKeys(before.Stats)
	if len(nodes) == 0 {
		return fmt.Sprintf("restart check: the %s adapter reports neither uptime nor instance, so cmpbench cannot tell when %s has restarted", r.info.Adapter, r.info.Name)
	}
	prompt(r.cfg.Observer, fmt.Sprintf("%s: restart check: restart the server now (every node: %d); cmpbench waits up to %s, notices the restart from the server's uptime, waits until it is ready and validates the data again", r.info.Name, len(nodes), wait))
	// A node has restarted once a sample shows it against the first sample or the
	// one before it.
	all := core.NotRestarted(before, before)
	done := map[string]bool{}
	prev := before
	deadline := time.Now().Add(wait)
	for {
		select {
		case <-ctx.Done():
			return "restart check: " + context.Cause(ctx).Error()
		case <-time.After(time.Second):
		}
		if now, err := sample(); err == nil {
			sinceFirst, sincePrev := core.NotRestarted(before, now), core.NotRestarted(prev, now)
			var pending []string
			for _, n := range all {
				if !slices.Contains(sinceFirst, n) || !slices.Contains(sincePrev, n) {
					done[n] = true
				}
				if !done[n] {
					pending = append(pending, n)
				}
			}
			prev = now
			if len(pending) == 0 {
				r.cfg.Observer.Note(fmt.Sprintf("%s: restart check: the server restarted", r.info.Name))
				return ""
			}
			if time.Now().After(deadline) {
				return fmt.Sprintf("restart check: %s did not restart within %s (restart_wait): not restarted: %s", r.info.Name, wait, strings.Join(pending, ", "))
			}
		} else if time.Now().After(deadline) {
			return fmt.Sprintf("restart check: %s did not come back within %s (restart_wait): %s", r.info.Name, wait, r.cfg.Redactor.String(err.Error()))
		}
	}
}
