package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/sampler"
)

// phaseWatch samples what happens around a phase while it runs: the server's
// stats every StatsInterval, the client processes' CPU and memory every
// interval, and the machine's load from the phase's first interval on.
type phaseWatch struct {
	r    *systemRunner
	ctx  context.Context
	p    *core.PhaseRun
	spec core.PhaseSpec
	pids []int // the plugin processes

	mu                    sync.Mutex // the samplers append while the phase runs
	statsLoop, clientLoop *sampler.Every
	hostCPU0              time.Duration
	// The machine is read at the start and again when the first interval arrives,
	// by when every connection is open (machineOpen), and at the end (machine1).
	machine0, machineOpen, machine1 *sampler.Host
	covered                         time.Duration // how far the intervals received reach
	opened                          sync.WaitGroup
	ended                           atomic.Bool
	phaseDone                       chan struct{}
}

// watch starts sampling around the phase p, run by the plugin process pid.
func (r *systemRunner) watch(ctx context.Context, p *core.PhaseRun, spec core.PhaseSpec, pid int) *phaseWatch {
	w := &phaseWatch{r: r, ctx: ctx, p: p, spec: spec, pids: []int{pid}, phaseDone: make(chan struct{})}
	w.statsLoop = sampler.Start(r.cfg.StatsInterval, func(time.Time) {
		s := r.sampleStats(ctx, "during")
		w.mu.Lock()
		p.ServerStats = append(p.ServerStats, s...)
		w.mu.Unlock()
	})
	procs := w.processes(pid)
	interval := spec.Interval
	if interval <= 0 {
		interval = core.DefaultInterval
	}
	// Half an interval out of step with the plugin's intervals, so that sampling
	// never adds to the work every process does at an interval's end.
	told, _ := r.cfg.Observer.(ClientObserver)
	w.clientLoop = sampler.StartAfter(interval/2, interval, func(at time.Time) {
		for _, sp := range procs {
			if s, err := sp.Sample(at); err == nil {
				w.mu.Lock()
				p.ClientStats = append(p.ClientStats, s)
				w.mu.Unlock()
				if told != nil {
					told.ClientSampled(p.System, s)
				}
			}
		}
	})
	w.hostCPU0 = sampler.SelfCPU()
	// A phase of thousands of connections spends seconds opening them, and its
	// load is the load from its first interval on.
	w.machine0, _ = sampler.ReadHost() // nil when unreadable: the phase then has no host load
	// A phase shorter than two intervals may send its first at its end: it is also
	// sampled half-way.
	if spec.Duration > 0 && spec.Duration < 2*interval {
		w.opened.Go(func() {
			select {
			case <-time.After(spec.Duration / 2):
				w.duringSample()
			case <-w.phaseDone:
			}
		})
	}
	return w
}

// processes are the client processes sampled: cmpbench and its plugin, or each
// of several plugin processes (--processes), whose cores together bound them.
func (w *phaseWatch) processes(pid int) []*sampler.Process {
	type watched struct {
		name string
		pid  int
	}
	watch := []watched{{"cmpbench", os.Getpid()}, {"plugin", pid}}
	if m, ok := w.r.drv.(interface{ Pids() []int }); ok && len(m.Pids()) > 1 {
		w.pids = m.Pids()
		watch = watch[:1]
		for i, p := range w.pids {
			watch = append(watch, watched{fmt.Sprintf("plugin %d", i), p})
		}
	}
	var procs []*sampler.Process
	for _, x := range watch {
		if sp, err := sampler.NewProcess(x.name, x.pid); err == nil {
			procs = append(procs, sp)
		}
	}
	return procs
}

// duringSample samples the server's stats once more; a sample that ends after
// the phase is dropped: the connections may be closed.
func (w *phaseWatch) duringSample() {
	s := w.r.sampleStats(w.ctx, "during")
	w.mu.Lock()
	if !w.ended.Load() {
		w.p.ServerStats = append(w.p.ServerStats, s...)
	}
	w.mu.Unlock()
}

// interval notes an interval the plugin sent. Once the first arrives every
// connection is open: a stats sample then tells how many the server really had,
// even in a phase shorter than the stats interval, and the machine's load counts
// from there.
func (w *phaseWatch) interval(rep core.IntervalReport) {
	w.p.Intervals++
	if w.p.Intervals == 1 {
		w.opened.Go(w.duringSample)
		if w.machine0 != nil {
			w.opened.Go(func() {
				if m, err := sampler.ReadHost(); err == nil {
					w.mu.Lock()
					w.machineOpen = m
					w.mu.Unlock()
				}
			})
		}
	}
	w.covered = max(w.covered, rep.End)
}

// stop ends the sampling once the phase has ended.
func (w *phaseWatch) stop() {
	close(w.phaseDone)
	w.mu.Lock()
	w.ended.Store(true)
	w.mu.Unlock()
	w.p.HostCPU = sampler.SelfCPU() - w.hostCPU0
	if w.machine0 != nil {
		// Read before the samplers stop: the machine's idle time after the phase
		// would count against its load.
		w.machine1, _ = sampler.ReadHost()
	}
	w.clientLoop.Stop()
	w.statsLoop.Stop()
	w.opened.Wait()
	// The kernel counts idle time in ticks: a window under a second says little. (A
	// first interval read after the end gives a negative window.)
	if w.machineOpen != nil && w.machine1 != nil && w.machine1.At().Sub(w.machineOpen.At()) >= time.Second {
		w.machine0 = w.machineOpen
	}
	slices.SortStableFunc(w.p.ServerStats, func(a, b core.StatsSample) int { return a.At.Compare(b.At) })
}

// load records the client's CPU and the machine's load over the phase.
func (w *phaseWatch) load(end *core.PhaseEnd) {
	p := w.p
	switch secs := end.Elapsed.Seconds(); {
	case end.Elapsed >= minCPUPhase:
		p.ClientCores = (end.CPUUser + end.CPUSystem).Seconds() / secs
		p.CoresAllowed = sampler.CoresAllowed(w.pids...)
		p.ClientBound = p.CoresAllowed > 0 && p.ClientCores > core.ClientBoundFraction*float64(p.CoresAllowed)
		// The kernel counts idle time in ticks (10 ms a CPU): under a second, that
		// alone could tip the saturation mark.
		if w.machine1 != nil && end.Elapsed >= time.Second {
			hl := w.machine0.HostLoad(w.machine1, append([]int{os.Getpid()}, w.pids...), sampler.CPUsAllowed(w.pids...))
			p.Host = &hl
		}
	case secs > 0:
		// CPU time is counted in clock ticks: over a few milliseconds it says nothing.
		p.CoresAllowed = sampler.CoresAllowed(w.pids...)
		end.Notes = append(end.Notes, fmt.Sprintf("too short (%s) to measure the client's CPU use", end.Elapsed.Round(time.Millisecond)))
	}
}
