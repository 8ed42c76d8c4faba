package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/sampler"
)

// minCPUPhase is the shortest phase whose client CPU use is measured.
const minCPUPhase = 100 * time.Millisecond

// measure runs one step on the plugin (its RunPhase) and keeps what it measured:
// intervals to the sink as they arrive, the server's and the client's samples
// around it, and how it ended.
func (r *systemRunner) measure(ctx context.Context, st plan.Step) *core.PhaseRun {
	if err := r.plugin(ctx); err != nil {
		return r.addPhase(st, core.PhaseEnd{Status: core.StatusFailed, Error: err.Error(), Started: time.Now(), Ended: time.Now()})
	}
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
