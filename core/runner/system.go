package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/provision"
	"github.com/cmpbench/cmpbench/core/redact"
)

// openTimeout bounds one attempt to open a system.
const openTimeout = 5 * time.Second

// logTail is how much of a server's log an error quotes: its last lines, whole.
const logTail = 2 << 10

func (r *systemRunner) start(ctx context.Context, name string) error {
	sys, err := r.cfg.Systems.Get(name)
	if err != nil {
		return err
	}
	r.sys = sys
	r.info.Adapter, r.info.Provisioned = sys.Adapter, sys.Provisioned()
	nodes := sys.Endpoints()
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
		nodes = r.srv.Endpoints()
		if len(nodes) > 1 {
			r.info.Nodes = nodes
		}
		r.info.Launch = r.cfg.Redactor.Strings(r.srv.Launch)
		r.info.Binary, r.info.BinarySHA256 = r.srv.Binary, r.srv.BinarySHA256
		ready = r.readyTimeout()
	}
	r.target = sys.SystemConfig(nodes...)
	r.info.Endpoint = r.target.Endpoint
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
	if err := r.startedServerRuns(); err != nil {
		return err
	}
	r.sinkFailed(r.cfg.Sink.SystemStarted(*r.info))
	r.cfg.Observer.SystemStarted(*r.info, pid)
	return nil
}

// startedServerRuns checks, once the system has opened, that the server
// cmpbench started still runs: one that daemonized answers while the process
// cmpbench started is gone, and is refused before any phase runs on it.
func (r *systemRunner) startedServerRuns() error {
	if r.srv == nil {
		return nil
	}
	switch e := r.srv.Lost(); {
	case e == nil:
		return nil
	case e.Daemonized():
		return fmt.Errorf("%s%s", e.AtStartup(), r.cfg.Redactor.String(e.Why()))
	default:
		return fmt.Errorf("%v during start-up, once its system had opened%s", e, r.cfg.Redactor.String(e.Why()))
	}
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
	if p := r.sys.Provision; p != nil {
		return r.scaled(config.DefaultReadyTimeout, p.ReadyTimeout, p.ReadyPerMillion)
	}
	return config.DefaultReadyTimeout
}

// stopTimeout is how long a graceful stop of the server may take.
func (r *systemRunner) stopTimeout() time.Duration {
	if p := r.sys.Provision; p != nil {
		return r.scaled(config.DefaultStopTimeout, p.StopTimeout, p.StopPerMillion)
	}
	return config.DefaultStopTimeout
}

// scaled is a provisioned server's timeout: the one configured (or def), and
// perM more for every million records loaded.
func (r *systemRunner) scaled(def time.Duration, set, perM config.Duration) time.Duration {
	d := def
	if set > 0 {
		d = time.Duration(set)
	}
	return d + perMillion(perM, r.loaded)
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
			if e := r.srv.Lost(); e != nil {
				return fmt.Errorf("%s%s", e.AtStartup(), r.cfg.Redactor.String(e.Why()))
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

// nodeWatch fails a phase during which a node of the server cmpbench started
// ended, and stops it as soon as that happens: what it would measure past that
// is not of the system cmpbench started (a cluster short of a node, or nothing).
type nodeWatch struct {
	r       *systemRunner
	started time.Time
	stop    context.CancelCauseFunc // nil when cmpbench started no server
	done    chan struct{}
	lost    *provision.Exit // the node that ended during the phase
	at      time.Duration   // how far into the phase
}

// errNodeLost is why a phase was stopped when a node ended.
var errNodeLost = errors.New("a server cmpbench started has exited")

// watchNodes starts watching the server's nodes for a phase: the context to run
// the phase in ends when one of them does.
func (r *systemRunner) watchNodes(ctx context.Context) (context.Context, *nodeWatch) {
	w := &nodeWatch{r: r, started: time.Now(), done: make(chan struct{})}
	if r.srv == nil {
		close(w.done)
		return ctx, w
	}
	pctx, stop := context.WithCancelCause(ctx)
	w.stop = stop
	go func() {
		defer close(w.done)
		if e := r.srv.WaitLost(pctx); e != nil {
			w.lost, w.at = e, time.Since(w.started)
			stop(errNodeLost)
		}
	}()
	return pctx, w
}

// judge fails the phase's end when a node ended during it (or was found ended
// as it ended), naming the node, how it ended and the end of its log; what the
// phase measured until then stays as measured.
func (w *nodeWatch) judge(end *core.PhaseEnd) {
	if w.stop == nil {
		return
	}
	w.stop(nil)
	<-w.done
	lost, when := w.lost, fmt.Sprintf("%s into the phase, which was stopped then", w.at.Round(time.Millisecond))
	if lost == nil {
		if lost = w.r.srv.Lost(); lost == nil {
			return
		}
		when = "by the phase's end"
	}
	msg := fmt.Sprintf("server exited during the phase (%s): %v; the end of its log:\n%s", when, lost, lost.LogTail(logTail))
	if strings.Contains(end.Error, errNodeLost.Error()) {
		end.Error = "" // the engine's "stopped: ..." says no more than msg
	}
	end.Status, end.Error = core.StatusFailed, strings.Join(nonEmpty(msg, end.Error), "; ")
}

func redactCapture(c core.Capture, red *redact.Redactor) core.Capture {
	out := c
	out.Sections = make(map[string]string, len(c.Sections))
	for k, v := range c.Sections {
		out.Sections[k] = red.String(v)
	}
	out.Refused = red.Strings(c.Refused)
	if c.Facts != nil {
		f := c.Facts.Map(red.String)
		out.Facts = &f
	}
	return out
}
