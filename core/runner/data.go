package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// dataUnit guards the system's data around every step (unit): a load goes only
// into an empty system (or one cmpbench may empty), a phase that writes only into
// one that holds this run's data; a load that failed, or a restart during a phase
// that lost the data, skips the phases that read it, up to the next load. What a
// load wrote is checked by the units after it: validationUnit (validation.go) and
// restartUnit (restart.go).
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

// after learns how many records a load wrote (on every shard: whole), and
// whether the data the next phases need is still there.
func (u *dataUnit) after(ctx context.Context, st plan.Step, _ *core.PhaseRun, whole stepResult) core.Verdict {
	r := u.r
	if st.Spec.Kind == core.PhaseLoad {
		r.loaded = whole.OK
	}
	switch {
	case st.Spec.Kind == core.PhaseLoad && loadFailed(whole):
		u.broken = fmt.Sprintf("the load %q failed%s, so the data this phase needs is not all there", st.Spec.Name, whole.where)
	case r.restarted != "":
		u.broken = r.afterRestart(ctx, st.Spec.Name)
	}
	return core.Verdict{}
}

// loadFailed says whether a step ended failed (an interrupted one was stopped,
// not failed).
func loadFailed(whole stepResult) bool {
	return whole.Status != core.StatusOK && whole.Status != core.StatusInterrupted
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
