// Package runner executes a plan: for each system it starts the server when cmpbench
// provisions it, launches the adapter's plugin, captures the system, runs every phase
// and stops everything again, whatever happens.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/provision"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/core/sampler"
)

// Driver is a running adapter plugin (plugins/host.Driver).
type Driver interface {
	Info() core.Info
	Pid() int
	Exited() bool
	Open(ctx context.Context, sys core.SystemConfig) error
	Capture(ctx context.Context) (core.Capture, error)
	Stats(ctx context.Context) (map[string]string, error)
	Count(ctx context.Context) (int64, error)
	Flush(ctx context.Context) error
	Validate(ctx context.Context, load core.PhaseSpec, expected int64) (core.Validation, error)
	RunPhase(ctx context.Context, spec core.PhaseSpec, onInterval func(core.IntervalReport)) (core.PhaseEnd, error)
	Close(ctx context.Context) error
	Kill()
}

// Launcher starts the plugin of an adapter.
type Launcher func(ctx context.Context, adapter string) (Driver, core.PluginRef, error)

// Sink receives what a run produces as it happens, to keep it: the archive writer.
// An error stops the run: nothing more could be kept.
type Sink interface {
	SystemStarted(core.SystemRun) error
	PhaseStarted(*core.PhaseRun) error
	Interval(*core.PhaseRun, *core.IntervalReport) error
	PhaseEnded(*core.PhaseRun) error
	// PhaseTotals merges the intervals the sink kept of the running phase: for a
	// plugin that crashed, or one built before the engine sent its totals.
	PhaseTotals(*core.PhaseRun) ([]core.OpInterval, error)
	Validation(core.Validation) error
	// AmendValidation replaces the last validation (a finding added after it).
	AmendValidation(core.Validation) error
	SystemEnded(core.SystemRun) error
}

// Observer is told what happens, for progress display and tests. Calls come from
// one goroutine.
type Observer interface {
	SystemStarted(sys core.SystemRun, serverPid int)
	PhaseStarted(step plan.Step, pluginPid int)
	Interval(step plan.Step, r core.IntervalReport)
	PhaseEnded(step plan.Step, p *core.PhaseRun)
	Note(msg string) // what happened, worth a line
	Warn(msg string) // what went wrong without failing the run
}

// Prompter is an Observer that shows what the user must do now (restart a server
// by hand) apart from its notes, which it may not show: a quiet display. An
// Observer that is not one is told it as a Note.
type Prompter interface {
	Prompt(msg string)
}

// prompt tells the observer what the user must do now.
func prompt(o Observer, msg string) {
	if p, ok := o.(Prompter); ok {
		p.Prompt(msg)
		return
	}
	o.Note(msg)
}

// Config is one run.
type Config struct {
	RunID    string
	Plan     *plan.Plan
	Systems  *config.Systems
	Launch   Launcher
	Redactor *redact.Redactor
	// WorkDir holds the data directories of provisioned servers.
	WorkDir  string
	Sink     Sink // nil keeps nothing but the RunResult
	Observer Observer
	// StatsInterval is how often server stats are sampled during a phase (default
	// DefaultStatsInterval); they are always sampled just before and after it.
	StatsInterval time.Duration
	// Meeting is where the shards of a sharded plan (Plan.Shard) meet before and
	// after every step; StartAt is when the first phase starts on all of them.
	Meeting Meeting
	StartAt time.Time
}

// DefaultStatsInterval is how often server stats are sampled during a phase.
const DefaultStatsInterval = 5 * time.Second

// Run executes the plan. It always returns a result holding every phase that ran
// (without their intervals, which went to the sink), and leaves no server or plugin
// process running.
func Run(ctx context.Context, cfg Config) *core.RunResult {
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	if cfg.Sink == nil {
		cfg.Sink = nopSink{}
	}
	if cfg.StatsInterval <= 0 {
		cfg.StatsInterval = DefaultStatsInterval
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	res := &core.RunResult{RunID: cfg.RunID, Started: time.Now()}
	sinkFailed := func(err error) {
		if err != nil && res.SinkError == "" {
			res.SinkError = err.Error()
			cfg.Observer.Warn("keeping the results failed, so the run stops: " + err.Error())
			stop(fmt.Errorf("keeping the results failed: %w", err))
		}
	}
	for _, name := range cfg.Plan.Systems {
		var steps []plan.Step
		for _, st := range cfg.Plan.Steps {
			if st.System == name {
				steps = append(steps, st)
			}
		}
		r := &systemRunner{cfg: cfg, steps: steps, res: res, sinkFailed: sinkFailed}
		r.run(ctx, name)
	}
	res.Ended = time.Now()
	res.Status = core.RunComplete
	for _, p := range res.Phases {
		if p.End.Status != core.StatusOK {
			res.Status = core.RunFailed
		}
	}
	for _, s := range res.Systems {
		if s.Error != "" {
			res.Status = core.RunFailed
		}
	}
	for _, v := range res.Validations {
		if !v.OK() {
			res.Status = core.RunFailed
		}
	}
	switch {
	case res.SinkError != "":
		res.Status = core.RunFailed
	case ctx.Err() != nil:
		res.Status = core.RunInterrupted
	}
	return res
}

type systemRunner struct {
	cfg    Config
	steps  []plan.Step
	res    *core.RunResult
	sys    *config.System
	target core.SystemConfig
	srv    *provision.Server
	drv    Driver
	info   *core.SystemRun

	statsWarned atomic.Bool // samples may be taken by two goroutines at once
	sinkFailed  func(error)

	// owned is set once the system holds only data this run wrote (a load into an
	// empty system); loaded is how many records the last load wrote; durable once
	// the system kept them across a clean restart (the load's restart check).
	owned   bool
	loaded  int64
	durable bool
	// lastStats is the system's last stats sample, to notice a restart between
	// phases; restarted says how the server restarted during the last phase.
	lastStats *core.StatsSample
	restarted string
}

// concurrency is the most operations the steps keep in flight at once: the largest
// phase's connections, plus one for its side probe.
func concurrency(steps []plan.Step) int {
	n := 0
	for _, st := range steps {
		c := st.Spec.Connections
		if st.Spec.Probe != nil && st.Spec.Probe.Rate > 0 {
			c++
		}
		n = max(n, c)
	}
	return n
}

// cleanupTimeout bounds closing plugins and stopping servers after an interrupt.
const cleanupTimeout = 30 * time.Second

func (r *systemRunner) run(ctx context.Context, name string) {
	red := r.cfg.Redactor
	r.res.Systems = append(r.res.Systems, core.SystemRun{Name: name})
	r.info = &r.res.Systems[len(r.res.Systems)-1]
	if ctx.Err() != nil {
		r.skipFrom(0, core.StatusSkipped, "run interrupted before this system started")
		r.sinkFailed(r.cfg.Sink.SystemEnded(*r.info))
		return
	}
	err := r.start(ctx, name)
	defer r.stop()
	if err != nil {
		if ctx.Err() != nil {
			r.skipFrom(0, core.StatusSkipped, "run interrupted while this system started")
			return
		}
		r.info.Error = red.String(err.Error())
		if r.cfg.Meeting != nil {
			r.runSharded(ctx, "the system did not start: "+r.info.Error)
			return
		}
		r.skipFrom(0, core.StatusFailed, "the system did not start: "+r.info.Error)
		return
	}
	if r.cfg.Meeting != nil {
		r.runSharded(ctx, "")
		return
	}
	// broken says why the data the next phases need is not there (a load that
	// failed, a server that lost it): they are skipped until the next load.
	var broken string
	ladders := ladderStops{}
	sweeps := sweepPoints{}
	for i, st := range r.steps {
		if ctx.Err() != nil {
			r.skipFrom(i, core.StatusSkipped, "run interrupted before this phase")
			return
		}
		if r.srv != nil {
			if exited, werr := r.srv.Exited(); exited {
				r.skipFrom(i, core.StatusFailed, fmt.Sprintf("server exited (%v); the end of its log:\n%s", werr, r.srv.LogTail(logTail)))
				return
			}
		}
		if broken != "" && st.Spec.Kind != core.PhaseLoad {
			r.addPhase(st, core.PhaseEnd{Status: core.StatusSkipped, Error: broken})
			continue
		}
		if why := ladders.stopped(st); why != "" {
			// Not a skipped phase: the ladder did what it is for, and the report
			// shows a dash where the system did not go.
			if ladders.note(st) {
				r.cfg.Observer.Note(fmt.Sprintf("%s: %s; its steps from %s on are not run", r.info.Name, why, st.Spec.Name))
			}
			continue
		}
		broken = ""
		if r.drv == nil || r.drv.Exited() {
			// The previous phase's plugin crashed: a new process for the next phase.
			if err := r.launch(ctx, 10*time.Second); err != nil {
				r.addPhase(st, core.PhaseEnd{Status: core.StatusFailed, Error: "relaunch plugin: " + err.Error(), Started: time.Now(), Ended: time.Now()})
				continue
			}
		}
		switch {
		case st.Spec.Kind == core.PhaseLoad:
			if err := r.ensureEmpty(ctx); err != nil {
				r.addPhase(st, core.PhaseEnd{Status: core.StatusFailed, Error: err.Error(), Started: time.Now(), Ended: time.Now()})
				r.skipFrom(i+1, core.StatusSkipped, "the load was refused")
				return
			}
			r.owned = true
		case st.Spec.Writes() && !r.owned:
			if err := r.ensureOwned(ctx, st.Spec.Name); err != nil {
				r.addPhase(st, core.PhaseEnd{Status: core.StatusFailed, Error: err.Error(), Started: time.Now(), Ended: time.Now()})
				continue
			}
		}
		if st.KneeOf != "" {
			conns, why := sweeps.knee(st.KneeOf)
			if why == "" {
				st.Spec.Connections = conns
				if errs := st.Spec.Validate(); len(errs) > 0 {
					why = fmt.Sprintf("at the knee of %q (%d connections): %v", st.KneeOf, conns, errors.Join(errs...))
				}
			}
			if why != "" {
				r.addPhase(st, core.PhaseEnd{Status: core.StatusFailed, Error: why, Started: time.Now(), Ended: time.Now()})
				continue
			}
			r.cfg.Observer.Note(fmt.Sprintf("%s: %s runs at the knee of %s: %d connections", r.info.Name, st.Spec.Name, st.KneeOf, conns))
		}
		p := r.measure(ctx, st)
		ladders.ended(st, p)
		sweeps.ended(st, p)
		if st.Spec.Kind == core.PhaseLoad {
			r.loaded = 0
			for _, t := range p.Totals {
				r.loaded += t.OK
			}
		}
		switch {
		case st.Spec.Kind == core.PhaseLoad && p.End.Status != core.StatusOK && p.End.Status != core.StatusInterrupted:
			broken = fmt.Sprintf("the load %q failed, so the data this phase needs is not all there", st.Spec.Name)
			if st.Checks.Validate {
				r.addValidation(core.Validation{System: r.info.Name, Point: "after load", Expected: r.loaded, Counted: -1,
					Problems: []string{"not validated: the load failed: " + p.End.Error}})
			}
		case r.restarted != "":
			broken = r.afterRestart(ctx, st.Spec.Name)
		case st.Checks.Validate && p.End.Status == core.StatusOK:
			if problem := r.checkLoad(ctx, st, p, r.loaded); problem != "" {
				r.skipFrom(i+1, core.StatusSkipped, "validation failed: "+problem)
				return
			}
		}
	}
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

func (l ladderStops) ended(st plan.Step, p *core.PhaseRun) {
	achieved, ok := core.Sustained(p)
	l.endedAs(st, p.End.Status, achieved, ok, st.Spec.Rate)
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

// openTimeout bounds one attempt to open a system.
const openTimeout = 5 * time.Second

// minCPUPhase is the shortest phase whose client CPU use is measured.
const minCPUPhase = 100 * time.Millisecond

// logTail is how much of a server's log an error quotes: its last lines, whole.
const logTail = 2 << 10

// ensureOwned refuses a phase that writes to a system holding data this run did not
// write, unless the system is disposable: a benchmark never overwrites data that is
// not its own.
func (r *systemRunner) ensureOwned(ctx context.Context, phase string) error {
	if r.sys.Disposable {
		r.owned = true
		return nil
	}
	n, err := r.drv.Count(ctx)
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
	n, err := r.drv.Count(ctx)
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
	n, err := r.drv.Count(ctx)
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
	if err := r.drv.Flush(ctx); err != nil {
		return fmt.Errorf("empty %s before the load: %w", r.info.Name, err)
	}
	if n, err := r.drv.Count(ctx); err != nil || n != 0 {
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
	v, err := r.drv.Validate(vctx, st.Spec, expected)
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

func (r *systemRunner) start(ctx context.Context, name string) error {
	sys, err := r.cfg.Systems.Get(name)
	if err != nil {
		return err
	}
	r.sys = sys
	r.info.Adapter, r.info.Provisioned = sys.Adapter, sys.Provisioned()
	endpoint := sys.Endpoint
	ready := 10 * time.Second
	if p := sys.Provision; p != nil {
		base := r.cfg.WorkDir
		if base == "" {
			base = os.TempDir()
		}
		r.srv, err = provision.Start(sys.ProvisionSpec(r.readyTimeout(), r.stopTimeout(), DataGiB(plan.EstimateSteps(r.steps).Bytes)), base)
		if err != nil {
			return fmt.Errorf("provision: %w", err)
		}
		endpoint = r.srv.Endpoint()
		if eps := r.srv.Endpoints(); len(eps) > 1 {
			r.info.Nodes = eps
		}
		r.info.Launch = r.cfg.Redactor.Strings(r.srv.Launch)
		r.info.Binary, r.info.BinarySHA256 = r.srv.Binary, r.srv.BinarySHA256
		ready = r.readyTimeout()
	}
	r.info.Endpoint = endpoint
	r.target = sys.SystemConfig(endpoint)
	r.target.Concurrency = concurrency(r.steps)
	if err := r.launch(ctx, ready); err != nil {
		return err
	}
	pid := 0
	if r.srv != nil {
		pid = r.srv.Pid()
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cp, err := r.drv.Capture(cctx)
	if err != nil {
		r.info.CaptureError = r.cfg.Redactor.String(err.Error())
		r.cfg.Observer.Warn(fmt.Sprintf("%s: capture: %s", name, r.info.CaptureError))
	}
	r.info.Capture = redactCapture(cp, r.cfg.Redactor)
	r.sinkFailed(r.cfg.Sink.SystemStarted(*r.info))
	r.cfg.Observer.SystemStarted(*r.info, pid)
	return nil
}

// launch starts the plugin and opens the system.
func (r *systemRunner) launch(ctx context.Context, ready time.Duration) error {
	drv, ref, err := r.cfg.Launch(ctx, r.sys.Adapter)
	if err != nil {
		return err
	}
	r.drv = drv
	r.info.Plugin = ref
	return r.open(ctx, ready)
}

// DataGiB is the room {data_gib} gives for bytes of data: four times as much, in
// whole GiB, at least 1. The margin covers what an estimate of the data as sent
// leaves out: a storage engine's per-record overhead and free space (Aerospike
// stops writes at 70% of its device, and defragments blocks half empty), and
// the records closed-loop inserts add.
func DataGiB(bytes int64) int64 {
	const gib = 1 << 30
	return max(1, (4*bytes+gib-1)/gib)
}

// readyTimeout is how long a provisioned server may take to accept connections.
func (r *systemRunner) readyTimeout() time.Duration {
	d := config.DefaultReadyTimeout
	if p := r.sys.Provision; p != nil {
		if p.ReadyTimeout > 0 {
			d = time.Duration(p.ReadyTimeout)
		}
		d += perMillion(p.ReadyPerMillion, r.loaded)
	}
	return d
}

// stopTimeout is how long a graceful stop of the server may take.
func (r *systemRunner) stopTimeout() time.Duration {
	d := config.DefaultStopTimeout
	if p := r.sys.Provision; p != nil {
		if p.StopTimeout > 0 {
			d = time.Duration(p.StopTimeout)
		}
		d += perMillion(p.StopPerMillion, r.loaded)
	}
	return d
}

// perMillion is d for every million records.
func perMillion(d config.Duration, records int64) time.Duration {
	return time.Duration(float64(d) * float64(records) / 1e6)
}

// open opens the system in the plugin, retrying until ready: a server just started
// may not accept connections yet.
func (r *systemRunner) open(ctx context.Context, ready time.Duration) error {
	drv := r.drv
	start := time.Now()
	deadline := start.Add(ready)
	for {
		octx, cancel := context.WithTimeout(ctx, openTimeout)
		err := drv.Open(octx, r.target)
		if err != nil && errors.Is(octx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("the plugin did not open it within %s (%w)", openTimeout, err)
		}
		cancel()
		if err == nil {
			return nil
		}
		if r.srv != nil {
			if exited, werr := r.srv.Exited(); exited {
				return fmt.Errorf("server exited during start-up (%v)%s", werr, r.cfg.Redactor.String(r.srv.Why()))
			}
		}
		if ctx.Err() != nil || time.Now().After(deadline) || drv.Exited() || errors.Is(err, core.ErrRefused) {
			hint := ""
			if strings.Contains(err.Error(), "connection refused") {
				hint = ": nothing accepts connections there; is the server running, and on this port?"
			}
			if errors.Is(err, core.ErrRefused) {
				return fmt.Errorf("cannot open %s at %s: %w%s", r.info.Name, r.target.Endpoint, err, hint)
			}
			if r.srv != nil && ctx.Err() == nil && !drv.Exited() {
				// The server cmpbench started runs but never became ready: what
				// it logged is the likeliest reason.
				hint = fmt.Sprintf("; the server cmpbench started did not become ready within its ready timeout (%s, provision.ready_timeout)%s",
					ready, r.cfg.Redactor.String(r.srv.Why()))
			}
			return fmt.Errorf("cannot open %s at %s (tried for %s): %w%s", r.info.Name, r.target.Endpoint, time.Since(start).Round(100*time.Millisecond), err, hint)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// measure runs one step on the plugin (its RunPhase) and keeps what it measured:
// intervals to the sink as they arrive, the server's and the client's samples
// around it, and how it ended.
func (r *systemRunner) measure(ctx context.Context, st plan.Step) *core.PhaseRun {
	// Whether the adapter executes the workload's op kinds the plugin says itself,
	// refusing the phase (sdk RunPhase, core.Info.CanRun); the engine's features
	// are the host's to check.
	info := r.drv.Info()
	if _, ok := st.Spec.Workload.(core.PubSubSpec); ok && !slices.Contains(info.Capabilities, engine.CapPubSub) {
		return r.addPhase(st, core.PhaseEnd{Status: core.StatusFailed, Error: fmt.Sprintf("plugin %s was built with an engine that cannot run pub/sub workloads: rebuild it", info.Name), Started: time.Now(), Ended: time.Now()})
	}
	spec := st.Spec
	if spec.Probe != nil && !slices.Contains(info.Capabilities, engine.CapProbe) {
		r.cfg.Observer.Warn(fmt.Sprintf("%s: plugin %s was built without the side probe; %s runs without it", st.System, info.Name, spec.Name))
		spec.Probe = nil
	}
	if spec.OpenLoop() && !slices.Contains(info.Capabilities, engine.CapLag) {
		r.cfg.Observer.Warn(fmt.Sprintf("%s: plugin %s was built with an engine that does not record send lag; %s cannot be checked for client lag", st.System, info.Name, spec.Name))
	}
	pid := r.drv.Pid()
	p := &core.PhaseRun{System: st.System, Index: st.Index, Repetition: st.Repetition, Spec: st.Spec, Shape: plan.Shape(st.Spec), Ladder: st.Ladder.Name, LadderCombine: st.Ladder.Combine,
		Sweep: st.Sweep.Name, SweepGain: st.Sweep.Gain, SweepP99Bound: st.Sweep.P99Bound, KneeOf: st.KneeOf}
	p.End.Started = time.Now()
	r.sinkFailed(r.cfg.Sink.PhaseStarted(p))
	r.cfg.Observer.PhaseStarted(st, pid)
	p.ServerStats = append(p.ServerStats, r.sampleStats(ctx, "before")...)

	var mu sync.Mutex // the samplers append while the phase runs
	statsLoop := sampler.Start(r.cfg.StatsInterval, func(time.Time) {
		s := r.sampleStats(ctx, "during")
		mu.Lock()
		p.ServerStats = append(p.ServerStats, s...)
		mu.Unlock()
	})
	type watched struct {
		name string
		pid  int
	}
	watch := []watched{{"cmpbench", os.Getpid()}, {"plugin", pid}}
	pids := []int{pid}
	if m, ok := r.drv.(interface{ Pids() []int }); ok && len(m.Pids()) > 1 {
		// Several plugin processes (--processes): each is watched, and the cores
		// they may use together are what bounds them.
		pids = m.Pids()
		watch = watch[:1]
		for i, p := range pids {
			watch = append(watch, watched{fmt.Sprintf("plugin %d", i), p})
		}
	}
	var procs []*sampler.Process
	for _, w := range watch {
		if sp, err := sampler.NewProcess(w.name, w.pid); err == nil {
			procs = append(procs, sp)
		}
	}
	interval := spec.Interval
	if interval <= 0 {
		interval = core.DefaultInterval
	}
	// Half an interval out of step with the plugin's intervals, so that sampling
	// never adds to the work every process does at an interval's end.
	clientLoop := sampler.StartAfter(interval/2, interval, func(at time.Time) {
		for _, sp := range procs {
			if s, err := sp.Sample(at); err == nil {
				mu.Lock()
				p.ClientStats = append(p.ClientStats, s)
				mu.Unlock()
			}
		}
	})

	hostCPU0 := sampler.SelfCPU()
	// The machine is read now and again when the first interval arrives, by when
	// every connection is open: a phase of thousands of connections spends
	// seconds opening them, and its load is the load from its first interval on.
	machine0, _ := sampler.ReadHost() // nil when unreadable: the phase then has no host load
	var machineOpen *sampler.Host
	var covered time.Duration // how far the intervals received reach
	// Once the first interval arrives every connection is open: a stats sample then
	// tells how many the server really had, even in a phase shorter than the stats
	// interval.
	// A phase shorter than two intervals may send its first at its end: it is also
	// sampled half-way. A sample that ends after the phase is dropped: the
	// connections may be closed.
	var opened sync.WaitGroup
	var ended atomic.Bool
	duringSample := func() {
		s := r.sampleStats(ctx, "during")
		mu.Lock()
		if !ended.Load() {
			p.ServerStats = append(p.ServerStats, s...)
		}
		mu.Unlock()
	}
	phaseDone := make(chan struct{})
	if spec.Duration > 0 && spec.Duration < 2*interval {
		opened.Go(func() {
			select {
			case <-time.After(spec.Duration / 2):
				duringSample()
			case <-phaseDone:
			}
		})
	}
	end, err := r.drv.RunPhase(ctx, spec, func(rep core.IntervalReport) {
		p.Intervals++
		if p.Intervals == 1 {
			opened.Go(duringSample)
			if machine0 != nil {
				opened.Go(func() {
					if m, err := sampler.ReadHost(); err == nil {
						mu.Lock()
						machineOpen = m
						mu.Unlock()
					}
				})
			}
		}
		covered = max(covered, rep.End)
		r.sinkFailed(r.cfg.Sink.Interval(p, &rep))
		r.cfg.Observer.Interval(st, rep)
	})
	close(phaseDone)
	mu.Lock()
	ended.Store(true)
	mu.Unlock()
	p.HostCPU = sampler.SelfCPU() - hostCPU0
	var machine1 *sampler.Host
	if machine0 != nil {
		// Read before the samplers stop: the machine's idle time after the phase
		// would count against its load.
		machine1, _ = sampler.ReadHost()
	}
	clientLoop.Stop()
	statsLoop.Stop()
	opened.Wait()
	// The kernel counts idle time in ticks: a window under a second says little. (A
	// first interval read after the end gives a negative window.)
	if machineOpen != nil && machine1 != nil && machine1.At().Sub(machineOpen.At()) >= time.Second {
		machine0 = machineOpen
	}
	slices.SortStableFunc(p.ServerStats, func(a, b core.StatsSample) int { return a.At.Compare(b.At) })
	if err != nil {
		end.Status = core.StatusFailed
		end.Error = err.Error()
		if r.drv.Exited() {
			r.drv.Kill() // all of it: a plugin of several processes (Multi) may have lost one
			r.drv = nil
		}
	}
	if r.drv != nil {
		p.ServerStats = append(p.ServerStats, r.sampleStats(ctx, "after")...)
	}
	if when, why := r.checkRestart(p.ServerStats); why != "" {
		r.restarted = why
		if end.Status == core.StatusOK {
			end.Status = core.StatusFailed
		}
		msg := fmt.Sprintf("the server restarted %s (%s): its counts and latencies mix two server processes, and data written before may be lost", when, why)
		end.Error = strings.Join(nonEmpty(end.Error, msg), "; ")
	}
	if err != nil && len(end.Totals) == 0 && covered > 0 && covered < end.Elapsed {
		// The plugin died: what it measured reaches as far as its last interval, and
		// rates divide by that, not by the time until the host noticed.
		end.Notes = append(end.Notes, fmt.Sprintf("the plugin stopped after %s; its intervals cover %s, which rates are computed over", end.Elapsed.Round(time.Millisecond), covered.Round(time.Millisecond)))
		end.Elapsed = covered
	}
	switch secs := end.Elapsed.Seconds(); {
	case end.Elapsed >= minCPUPhase:
		p.ClientCores = (end.CPUUser + end.CPUSystem).Seconds() / secs
		p.CoresAllowed = sampler.CoresAllowed(pids...)
		p.ClientBound = p.CoresAllowed > 0 && p.ClientCores > core.ClientBoundFraction*float64(p.CoresAllowed)
		// The kernel counts idle time in ticks (10 ms a CPU): under a second, that
		// alone could tip the saturation mark.
		if machine1 != nil && end.Elapsed >= time.Second {
			hl := machine0.HostLoad(machine1, append([]int{os.Getpid()}, pids...), sampler.CPUsAllowed(pids...))
			p.Host = &hl
		}
	case secs > 0:
		// CPU time is counted in clock ticks: over a few milliseconds it says nothing.
		p.CoresAllowed = sampler.CoresAllowed(pids...)
		end.Notes = append(end.Notes, fmt.Sprintf("too short (%s) to measure the client's CPU use", end.Elapsed.Round(time.Millisecond)))
	}
	// The engine merged the phase's intervals as it went; a plugin that died (or
	// one from before engine.lag) did not say, and what arrived is merged here.
	p.Totals = end.Totals
	if len(p.Totals) == 0 && p.Intervals > 0 {
		if p.Totals, err = r.cfg.Sink.PhaseTotals(p); err != nil && end.Status == core.StatusOK {
			end.Status, end.Error = core.StatusFailed, "merging the phase's intervals: "+err.Error()
		}
	}
	end.Totals = nil
	p.ClientLagged = core.ClientLagged(p.Totals)
	return r.endPhase(p, end)
}

// checkRestart looks for a server restart between the system's last stats sample
// and the first of samples, and between consecutive samples; it returns when and
// what it found, or "".
func (r *systemRunner) checkRestart(samples []core.StatsSample) (when, why string) {
	prev := r.lastStats
	for i := range samples {
		if prev != nil && why == "" {
			if why = core.Restarted(*prev, samples[i]); why != "" {
				when = "during the phase"
				if i == 0 {
					when = "before the phase"
				}
			}
		}
		prev = &samples[i]
	}
	r.lastStats = prev
	return when, why
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sampleStats reads the server's counters; a failure is a warning, never the
// phase's end.
func (r *systemRunner) sampleStats(ctx context.Context, point string) []core.StatsSample {
	if r.drv == nil || r.drv.Exited() {
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	at := time.Now()
	st, err := r.drv.Stats(sctx)
	if err != nil {
		if !r.statsWarned.Swap(true) {
			r.cfg.Observer.Warn(fmt.Sprintf("%s: server stats: %s", r.info.Name, r.cfg.Redactor.String(err.Error())))
		}
		return nil
	}
	for k, v := range st {
		st[k] = r.cfg.Redactor.String(v)
	}
	return []core.StatsSample{{At: at, Point: point, Stats: st}}
}

// addPhase records a phase that did not run, or failed before it started.
func (r *systemRunner) addPhase(st plan.Step, end core.PhaseEnd) *core.PhaseRun {
	p := &core.PhaseRun{System: st.System, Index: st.Index, Repetition: st.Repetition, Spec: st.Spec, Shape: plan.Shape(st.Spec), Ladder: st.Ladder.Name, LadderCombine: st.Ladder.Combine,
		Sweep: st.Sweep.Name, SweepGain: st.Sweep.Gain, SweepP99Bound: st.Sweep.P99Bound, KneeOf: st.KneeOf}
	return r.endPhase(p, end)
}

// endPhase records how a phase ended; every phase's error text passes here, and is
// redacted here.
func (r *systemRunner) endPhase(p *core.PhaseRun, end core.PhaseEnd) *core.PhaseRun {
	end.Error, end.ErrorSamples = r.cfg.Redactor.String(end.Error), r.cfg.Redactor.Strings(end.ErrorSamples)
	p.End = end
	r.sinkFailed(r.cfg.Sink.PhaseEnded(p))
	r.res.Phases = append(r.res.Phases, *p)
	ph := &r.res.Phases[len(r.res.Phases)-1]
	r.cfg.Observer.PhaseEnded(r.step(p), ph)
	return ph
}

// step is the plan step of a phase.
func (r *systemRunner) step(p *core.PhaseRun) plan.Step {
	for _, st := range r.steps {
		if st.Index == p.Index && st.Repetition == p.Repetition {
			return st
		}
	}
	return plan.Step{System: p.System, Index: p.Index, Repetition: p.Repetition, Spec: p.Spec}
}

func (r *systemRunner) skipFrom(i int, status core.PhaseStatus, why string) {
	for _, st := range r.steps[i:] {
		r.addPhase(st, core.PhaseEnd{Status: status, Error: why})
	}
}

// stop closes the plugin and stops the server, even after an interrupt.
func (r *systemRunner) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if r.drv != nil {
		if err := r.drv.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
			r.cfg.Observer.Warn(fmt.Sprintf("%s: closing plugin: %s", r.info.Name, r.cfg.Redactor.String(err.Error())))
		}
		r.drv.Kill()
	}
	if r.srv != nil {
		r.srv.SetStopTimeout(r.stopTimeout())
		if err := r.srv.Stop(); err != nil {
			r.cfg.Observer.Warn(err.Error())
		}
		r.info.ServerLog = r.cfg.Redactor.String(r.srv.LogTail(64 << 10))
	}
	r.sinkFailed(r.cfg.Sink.SystemEnded(*r.info))
}

func redactCapture(c core.Capture, red *redact.Redactor) core.Capture {
	out := c
	out.Sections = make(map[string]string, len(c.Sections))
	for k, v := range c.Sections {
		out.Sections[k] = red.String(v)
	}
	out.Refused = red.Strings(c.Refused)
	return out
}

type nopObserver struct{}

func (nopObserver) SystemStarted(core.SystemRun, int)       {}
func (nopObserver) PhaseStarted(plan.Step, int)             {}
func (nopObserver) Interval(plan.Step, core.IntervalReport) {}
func (nopObserver) PhaseEnded(plan.Step, *core.PhaseRun)    {}
func (nopObserver) Note(string)                             {}
func (nopObserver) Warn(string)                             {}

type nopSink struct{}

func (nopSink) SystemStarted(core.SystemRun) error                    { return nil }
func (nopSink) PhaseStarted(*core.PhaseRun) error                     { return nil }
func (nopSink) Interval(*core.PhaseRun, *core.IntervalReport) error   { return nil }
func (nopSink) PhaseEnded(*core.PhaseRun) error                       { return nil }
func (nopSink) PhaseTotals(*core.PhaseRun) ([]core.OpInterval, error) { return nil, nil }
func (nopSink) Validation(core.Validation) error                      { return nil }
func (nopSink) AmendValidation(core.Validation) error                 { return nil }
func (nopSink) SystemEnded(core.SystemRun) error                      { return nil }
