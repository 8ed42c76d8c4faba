// Package runner executes a plan: for each system it starts the server when cmpbench
// provisions it, launches the adapter's plugin, captures the system, runs every phase
// and stops everything again, whatever happens.
package runner

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/provision"
	"github.com/cmpbench/cmpbench/core/redact"
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
	res.Status = runStatus(res, ctx.Err() != nil)
	return res
}

// runStatus is how a run ended: complete only when every phase ended ok, every
// system started, every validation passed and everything was kept.
func runStatus(res *core.RunResult, interrupted bool) core.RunStatus {
	failed := res.SinkError != ""
	for _, p := range res.Phases {
		failed = failed || p.End.Status != core.StatusOK
	}
	for _, s := range res.Systems {
		failed = failed || s.Error != ""
	}
	for _, v := range res.Validations {
		failed = failed || !v.OK()
	}
	switch {
	case res.SinkError != "":
		return core.RunFailed
	case interrupted:
		return core.RunInterrupted
	case failed:
		return core.RunFailed
	}
	return core.RunComplete
}

type systemRunner struct {
	cfg    Config
	steps  []plan.Step
	res    *core.RunResult
	sys    *config.System
	coord  coordinator // the other shards of the run, or nobody
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
	r.coord = alone{}
	if r.cfg.Meeting != nil {
		r.coord = shards{r: r}
	}
	err := r.start(ctx, name)
	defer r.stop()
	if err != nil {
		if ctx.Err() != nil {
			r.skipFrom(0, core.StatusSkipped, "run interrupted while this system started")
			return
		}
		r.info.Error = red.String(err.Error())
		r.runSteps(ctx, "the system did not start: "+r.info.Error)
		return
	}
	r.runSteps(ctx, "")
}

// cannotGoOn says why no more steps of the system can run — the run was
// interrupted, the server cmpbench started has exited — and how they end; "" when
// they can.
func (r *systemRunner) cannotGoOn(ctx context.Context) (core.PhaseStatus, string) {
	if ctx.Err() != nil {
		return core.StatusSkipped, "run interrupted before this phase"
	}
	if r.srv != nil {
		if e := r.srv.Lost(); e != nil {
			return core.StatusFailed, fmt.Sprintf("server exited: %v; the end of its log:\n%s", e, e.LogTail(logTail))
		}
	}
	return "", ""
}

// plugin makes sure the system's plugin runs: after a plugin crashed in a phase,
// the next phase gets a new process.
func (r *systemRunner) plugin(ctx context.Context) error {
	if r.drv != nil && !r.drv.Exited() {
		return nil
	}
	if err := r.launch(ctx, 10*time.Second); err != nil {
		return fmt.Errorf("relaunch plugin: %w", err)
	}
	return nil
}

// addPhase records a phase that did not run, or failed before it started.
func (r *systemRunner) addPhase(st plan.Step, end core.PhaseEnd) *core.PhaseRun {
	p := newPhase(st)
	return r.endPhase(p, end)
}

// newPhase is a step's phase, before it runs.
func newPhase(st plan.Step) *core.PhaseRun {
	return &core.PhaseRun{System: st.System, Index: st.Index, Repetition: st.Repetition, Spec: st.Spec, Shape: plan.Shape(st.Spec), Method: st.Method, Uses: st.Uses}
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
