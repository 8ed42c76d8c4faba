package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/core/plan"
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
	// What the system runs, and the archive keeps: the workload as its
	// adapter can express it (a trace's deletes skipped where it has none).
	st.Spec = r.drv.Info().Fit(st.Spec)
	spec, refused := r.runnable(st)
	if refused != "" {
		return r.addPhase(st, core.PhaseEnd{Status: core.StatusFailed, Error: refused, Started: time.Now(), Ended: time.Now()})
	}
	pid := r.drv.Pid()
	p := newPhase(st)
	p.End.Started = time.Now()
	r.sinkFailed(r.cfg.Sink.PhaseStarted(p))
	r.cfg.Observer.PhaseStarted(st, pid)
	p.ServerStats = append(p.ServerStats, r.sampleStats(ctx, "before")...)

	w := r.watch(ctx, p, spec, pid)
	pctx, nodes := r.watchNodes(ctx)
	end, err := r.drv.RunPhase(pctx, spec, func(rep core.IntervalReport) {
		w.interval(rep)
		r.sinkFailed(r.cfg.Sink.Interval(p, &rep))
		r.cfg.Observer.Interval(st, rep)
	})
	w.stop()
	if err != nil {
		end.Status = core.StatusFailed
		end.Error = err.Error()
		if r.drv.Exited() {
			r.drv.Kill() // all of it: a plugin of several processes (Multi) may have lost one
			r.drv = nil
		}
	}
	nodes.judge(&end)
	if r.drv != nil {
		p.ServerStats = append(p.ServerStats, r.sampleStats(ctx, "after")...)
	}
	r.noteRestart(p.ServerStats, &end)
	if err != nil && len(end.Totals) == 0 && w.covered > 0 && w.covered < end.Elapsed {
		// The plugin died: what it measured reaches as far as its last interval, and
		// rates divide by that, not by the time until the host noticed.
		end.Notes = append(end.Notes, fmt.Sprintf("the plugin stopped after %s; its intervals cover %s, which rates are computed over", end.Elapsed.Round(time.Millisecond), w.covered.Round(time.Millisecond)))
		end.CutTo(w.covered)
	}
	core.JudgeStalls(&end, p.Spec.Kind)
	w.load(&end)
	r.totals(p, &end)
	if p.Spec.Kind != core.PhaseLoad {
		core.JudgeErrors(&end, p.Totals)
	}
	return r.endPhase(p, end)
}

// runnable checks that the plugin's engine can run st (its pub/sub, side probe
// and send lag are the host's to check; the op kinds the plugin refuses itself):
// the spec to run, without a probe the plugin lacks, or why the phase fails.
func (r *systemRunner) runnable(st plan.Step) (core.PhaseSpec, string) {
	info := r.drv.Info()
	if _, ok := st.Spec.Workload.(core.PubSubSpec); ok && !slices.Contains(info.Capabilities, engine.CapPubSub) {
		return st.Spec, fmt.Sprintf("plugin %s was built with an engine that cannot run pub/sub workloads: rebuild it", info.Name)
	}
	spec := st.Spec
	if spec.Probe != nil && !slices.Contains(info.Capabilities, engine.CapProbe) {
		r.cfg.Observer.Warn(fmt.Sprintf("%s: plugin %s was built without the side probe; %s runs without it", st.System, info.Name, spec.Name))
		spec.Probe = nil
	}
	if !slices.Contains(info.Capabilities, engine.CapStalls) {
		r.cfg.Observer.Warn(fmt.Sprintf("%s: plugin %s was built with an engine that does not watch its own clock; in %s, a stop or starvation of its process would go unseen: rebuild it", st.System, info.Name, spec.Name))
	}
	if spec.OpenLoop() && !slices.Contains(info.Capabilities, engine.CapLag) {
		r.cfg.Observer.Warn(fmt.Sprintf("%s: plugin %s was built with an engine that does not record send lag; %s cannot be checked for client lag", st.System, info.Name, spec.Name))
	}
	return spec, ""
}

// noteRestart fails a phase during which the server restarted, saying when.
func (r *systemRunner) noteRestart(samples []core.StatsSample, end *core.PhaseEnd) {
	when, why := r.checkRestart(samples)
	if why == "" {
		return
	}
	r.restarted = why
	if end.Status == core.StatusOK {
		end.Status = core.StatusFailed
	}
	msg := fmt.Sprintf("the server restarted %s (%s): its counts and latencies mix two server processes, and data written before may be lost", when, why)
	end.Error = strings.Join(nonEmpty(end.Error, msg), "; ")
}

// totals keeps the phase's totals: the engine merged its intervals as it went; a
// plugin that died (or one from before engine.lag) did not say, and what arrived
// is merged here.
func (r *systemRunner) totals(p *core.PhaseRun, end *core.PhaseEnd) {
	p.Totals = end.Totals
	if len(p.Totals) == 0 && p.Intervals > 0 {
		var err error
		if p.Totals, err = r.cfg.Sink.PhaseTotals(p); err != nil && end.Status == core.StatusOK {
			end.Status, end.Error = core.StatusFailed, "merging the phase's intervals: "+err.Error()
		}
	}
	end.Totals = nil
	p.ClientLagged = core.ClientLagged(p.Totals)
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
