package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// dataUnit looks after the system's data around every step (unit): a load goes
// only into an empty system (or one cmpbench may empty), a phase that writes only
// into one that holds this run's data; after a load, its keys are counted and,
// when asked, checked across a restart; a load that failed, or a restart that
// lost the data, skips the phases that read it, up to the next load.
type dataUnit struct {
	r *systemRunner
	// broken says why the data the next phases need is not there.
	broken string
}

func (u *dataUnit) before(ctx context.Context, st *plan.Step) core.Verdict {
	r := u.r
	if st.Spec.Kind != core.PhaseLoad && u.broken != "" {
		return core.Verdict{Act: core.Skip, Why: u.broken}
	}
	// A plugin that crashed in the last phase is replaced before anything is
	// asked of it: a shard that cannot tells the others.
	if err := r.plugin(ctx); err != nil {
		return core.Verdict{Act: core.Fail, Why: err.Error()}
	}
	if st.Spec.Kind != core.PhaseLoad && (!st.Spec.Writes() || r.owned) {
		return core.Verdict{}
	}
	u.broken = ""
	if !r.coord.checks() {
		// Another shard checks the whole data set; the others would see its
		// checks, or its load.
		r.owned = true
		return core.Verdict{}
	}
	if st.Spec.Kind == core.PhaseLoad {
		if err := r.ensureEmpty(ctx); err != nil {
			return core.Verdict{Act: core.Halt, Why: err.Error(), Rest: "the load was refused"}
		}
		r.owned = true
		return core.Verdict{}
	}
	if err := r.ensureOwned(ctx, st.Spec.Name); err != nil {
		return core.Verdict{Act: core.Fail, Why: err.Error()}
	}
	return core.Verdict{}
}

// after learns what a load wrote (on every shard: whole) and checks it where
// the coordinator says the whole data set is checked.
func (u *dataUnit) after(ctx context.Context, st plan.Step, p *core.PhaseRun, whole stepResult) core.Verdict {
	r := u.r
	if st.Spec.Kind == core.PhaseLoad {
		r.loaded = whole.OK
	}
	switch {
	case st.Spec.Kind == core.PhaseLoad && whole.Status != core.StatusOK && whole.Status != core.StatusInterrupted:
		u.broken = fmt.Sprintf("the load %q failed%s, so the data this phase needs is not all there", st.Spec.Name, whole.where)
		if st.Checks.Validate && r.coord.checks() {
			why := "not validated: the load failed: " + p.End.Error
			if whole.where != "" {
				why = "not validated: the load failed" + whole.where
			}
			r.addValidation(core.Validation{System: r.info.Name, Point: "after load", Expected: r.loaded, Counted: -1, Problems: []string{why}})
		}
	case r.restarted != "":
		u.broken = r.afterRestart(ctx, st.Spec.Name)
	case st.Checks.Validate && whole.Status == core.StatusOK && r.coord.checks():
		if problem := r.checkLoad(ctx, st, p, r.loaded); problem != "" {
			return core.Verdict{Act: core.Halt, Rest: "validation failed: " + problem}
		}
	}
	return core.Verdict{}
}

// notRun: a load that did not run leaves the phases after it without their data.
func (u *dataUnit) notRun(st plan.Step) {
	if st.Spec.Kind == core.PhaseLoad {
		u.broken = fmt.Sprintf("the load %q did not run, so the data this phase needs is not there", st.Spec.Name)
	}
}

// ensureOwned refuses a phase that writes to a system holding data this run did not
// write, unless the system is disposable: a benchmark never overwrites data that is
// not its own.
func (r *systemRunner) ensureOwned(ctx context.Context, phase string) error {
	if r.sys.Disposable {
		r.owned = true
		return nil
	}
	n, err := r.count(ctx)
	if errors.Is(err, core.ErrUnsupported) {
		r.cfg.Observer.Warn(fmt.Sprintf("%s: the adapter cannot count keys, so cmpbench cannot check that %s writes only to an empty system", r.info.Name, phase))
		r.owned = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("count keys before a phase that writes: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("refusing to write: %s holds %d keys this run did not write, which %s could overwrite; mark it disposable: true to allow that", r.info.Name, n, phase)
	}
	r.owned = true
	return nil
}

// afterRestart decides, after a phase during which the server restarted, whether
// the data loaded before is still there; it returns why the next phases cannot
// run, or "".
func (r *systemRunner) afterRestart(ctx context.Context, phase string) string {
	why := r.restarted
	r.restarted = ""
	if r.loaded == 0 {
		return ""
	}
	if !r.durable {
		// Keys the phase itself wrote again after the restart would make a count
		// look whole: only a system shown to keep its data is given the benefit.
		return fmt.Sprintf("the server restarted during %q (%s), and the data loaded before may be lost: this run did not show that %s keeps its data across a restart (restart: true on the load does)", phase, why, r.info.Name)
	}
	n, err := r.count(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("the server restarted during %q (%s) and cmpbench cannot count what it still holds (%v)", phase, why, err)
	case n < r.loaded:
		return fmt.Sprintf("the server restarted during %q (%s) and holds %d keys of the %d loaded", phase, why, n, r.loaded)
	}
	r.cfg.Observer.Note(fmt.Sprintf("%s: the server restarted during %s and still holds %d keys (%d loaded); the run goes on", r.info.Name, phase, n, r.loaded))
	return ""
}

// ensureEmpty refuses to load into a system that holds data, unless the system is
// marked disposable: then it is emptied first, and said so.
func (r *systemRunner) ensureEmpty(ctx context.Context) error {
	n, err := r.count(ctx)
	if errors.Is(err, core.ErrUnsupported) {
		r.cfg.Observer.Warn(fmt.Sprintf("%s: the adapter cannot count keys, so cmpbench cannot check the system is empty before the load", r.info.Name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("count keys before the load: %w", err)
	}
	if n == 0 {
		return nil
	}
	if !r.sys.Disposable {
		return fmt.Errorf("refusing to load: %s already holds %d keys; mark it disposable: true to let cmpbench empty it first", r.info.Name, n)
	}
	r.cfg.Observer.Note(fmt.Sprintf("%s: emptying %d keys before the load (disposable: true)", r.info.Name, n))
	if err := r.waitFor(ctx, "empty the system (Flush)", func() error { return r.drv.Flush(ctx) }); err != nil {
		return fmt.Errorf("empty %s before the load: %w", r.info.Name, err)
	}
	if n, err := r.count(ctx); err != nil || n != 0 {
		return fmt.Errorf("%s still holds %d keys after emptying it (%v)", r.info.Name, n, err)
	}
	return nil
}

// checkLoad validates a load that wrote expected records and, when asked and
// cmpbench runs the server, restarts it on the same data and validates again. It returns the first problem, or "".
func (r *systemRunner) checkLoad(ctx context.Context, st plan.Step, load *core.PhaseRun, expected int64) string {
	after := r.validate(ctx, st, expected, "after load")
	if !after.OK() {
		return after.Problems[0]
	}
	if !st.Checks.Restart {
		return ""
	}
	switch {
	case r.srv == nil && r.sys.RestartWait <= 0:
		r.addValidation(core.Validation{System: r.info.Name, Point: "after restart", Expected: expected, Counted: -1,
			Note: "not started by cmpbench: the restart check was skipped (restart_wait on the system makes cmpbench wait for you to restart it)"})
		return ""
	case r.srv == nil:
		if why := r.awaitRestart(ctx, time.Duration(r.sys.RestartWait)); why != "" {
			return why
		}
	default:
		r.cfg.Observer.Note(fmt.Sprintf("%s: stopping the server cleanly and starting it again on the same data", r.info.Name))
		r.srv.SetStopTimeout(r.stopTimeout())
		if err := r.srv.Restart(); err != nil {
			return "restart: " + err.Error()
		}
	}
	r.lastStats = nil // this restart is the check's own
	ready := r.readyTimeout()
	if r.srv == nil {
		ready = time.Duration(r.sys.RestartWait) // a cold start may take long: as long as the restart may
	}
	if err := r.open(ctx, ready); err != nil {
		return "reopen after restart: " + err.Error()
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

// validate asks the plugin to check a load and records the result.
func (r *systemRunner) validate(ctx context.Context, st plan.Step, expected int64, point string) core.Validation {
	vctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var v core.Validation
	err := r.waitFor(vctx, "check the load (Validate: counting keys, reading samples)", func() (err error) {
		v, err = r.drv.Validate(vctx, st.Spec, expected)
		return err
	})
	if err != nil {
		v = core.Validation{Expected: expected, Counted: -1, Problems: []string{"validate: " + r.cfg.Redactor.String(err.Error())}}
	}
	v.System, v.Point = r.info.Name, point
	r.addValidation(v)
	status := "ok"
	if !v.OK() {
		status = v.Problems[0]
	}
	r.cfg.Observer.Note(fmt.Sprintf("%s: validation %s: %d keys counted, %d expected, %d sample records checked: %s", r.info.Name, point, v.Counted, expected, len(v.Samples), status))
	return v
}

func (r *systemRunner) addValidation(v core.Validation) {
	r.res.Validations = append(r.res.Validations, v)
	r.sinkFailed(r.cfg.Sink.Validation(v))
}

func (r *systemRunner) lastValidation() core.Validation {
	return r.res.Validations[len(r.res.Validations)-1]
}

// amendValidation changes the last validation; the sink gets the amended one as a
// correction of the last.
func (r *systemRunner) amendValidation(f func(*core.Validation)) {
	v := &r.res.Validations[len(r.res.Validations)-1]
	f(v)
	r.sinkFailed(r.cfg.Sink.AmendValidation(*v))
}

// longCallNotice is how long a control call that may take long (a count scans the
// store) runs before the runner says it waits for it; then it says so every
// longCallEvery. Variables for tests.
var longCallNotice, longCallEvery = 5 * time.Second, time.Minute

// count asks the plugin how many keys the system holds, saying while it waits.
func (r *systemRunner) count(ctx context.Context) (n int64, err error) {
	err = r.waitFor(ctx, "count the keys (Count)", func() error {
		n, err = r.drv.Count(ctx)
		return err
	})
	return n, err
}

// waitFor runs call, a control call of the plugin that may take long, saying
// after longCallNotice and every longCallEvery that cmpbench waits for it and
// when it gives up: a count of a large store takes minutes, and an adapter stuck
// in one must not look like a hung run.
func (r *systemRunner) waitFor(ctx context.Context, what string, call func() error) error {
	plugin, start := r.drv.Info().Name, time.Now()
	giveUp := start.Add(core.LongCallBound)
	if d, ok := ctx.Deadline(); ok {
		giveUp = d
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTimer(longCallNotice)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.cfg.Observer.Warn(fmt.Sprintf("%s: waiting for plugin %s to %s (for %s; cmpbench gives up in %s)",
					r.info.Name, plugin, what, time.Since(start).Round(time.Second), time.Until(giveUp).Round(time.Second)))
				t.Reset(longCallEvery)
			}
		}
	})
	err := call()
	close(done)
	wg.Wait()
	return err
}
