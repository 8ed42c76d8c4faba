package engine

import (
	"context"
	"errors"

	"github.com/cmpbench/cmpbench/core"
)

// worker drives one connection from its own goroutine through Conn.Do: for
// connections the engine cannot drive raw (TLS, clusters, plugins without a codec),
// and for the side probe; a pipelined one has lanes instead (lanes.go).
type worker struct {
	e   *execution
	out *outbox
	stream
	el    errLog
	pacer pacer
	watch connWatch // whether its connection counts as open

	// The side probe keeps a record of every request instead of histograms, and
	// never fails or aborts a phase: it observes.
	isProbe bool
}

func (w *worker) lastEnd() int64 { return w.stream.lastEnd }

func (w *worker) counts() (int64, int64, *errLog) { return w.done, w.errors, &w.el }

func (w *worker) run(ctx context.Context) {
	e := w.e
	if d := e.cfg.Spec.Depth(); d > 1 && !w.isProbe {
		w.runLanes(ctx, d)
		return
	}
	defer w.close()
	var prevEnd int64
	redial, _ := w.conn.(core.Redialer)
	for !e.stop.Load() {
		if w.isProbe && e.loadDone.Load() {
			return
		}
		intended, ok := e.due(&w.stream, e.open || w.isProbe)
		if !ok {
			return
		}
		if e.open || w.isProbe {
			if !w.waitUntil(intended) {
				return
			}
			w.advance()
		}
		w.src.Next(&w.op)
		w.op.RespBytes = 0
		ready := max(intended, prevEnd)
		var err error
		if w.conn == nil {
			// A reconnect counts as send lag, or as a connection error when it fails.
			w.conn, err = e.cfg.Connect(ctx)
			if err != nil {
				w.conn = nil
				err = &core.OpError{Class: core.ErrClassConnection, Err: err}
			} else {
				w.watch.opened(&e.conns)
			}
			redial, _ = w.conn.(core.Redialer)
		} else if redial != nil {
			// So does a connection reopening itself after a failure.
			if rerr := redial.Redial(ctx); rerr != nil {
				err = &core.OpError{Class: core.ErrClassConnection, Err: rerr}
			} else {
				w.watch.opened(&e.conns)
			}
		}
		start := e.now()
		if w.op.Kind == core.OpPublish {
			core.StampPublish(w.op.Value, intended, ready, start)
		}
		if err == nil {
			err = w.conn.Do(ctx, &w.op)
		}
		end := e.now()
		prevEnd = end
		if !e.open && !w.isProbe {
			intended, ready = start, start
		}
		if w.isProbe {
			w.watch.outcome(&e.conns, w.recordProbe(err, intended, start, end))
			continue
		}
		class := e.finish(&w.stream, &w.op, w.out, &w.el, err, intended, ready, start, end)
		w.watch.outcome(&e.conns, class)
		if class == int(core.ErrClassConnection) {
			// Wait before the next attempt on a broken connection instead of spinning;
			// the wait is the server's doing, not send lag.
			w.sleep(int64(reconnectBackoff))
			prevEnd = e.now()
		}
	}
}

// recordProbe records one side-probe request, and returns its error class (the
// failure under a write in doubt), or -1 when it succeeded.
func (w *worker) recordProbe(err error, intended, start, end int64) int {
	w.done++
	w.stream.lastEnd = end
	x := sample{intended: intended, start: start, end: end, kind: w.op.Kind}
	class := -1
	switch {
	case err == nil:
	case isSuccess(err):
		x.outcome = core.OutcomeMiss
	default:
		x.outcome, x.class = core.OutcomeError, core.ClassOf(err)
		class = int(x.class)
		if x.class == core.ErrClassConnection {
			w.sleep(int64(reconnectBackoff))
		} else if x.class == core.ErrClassInDoubt {
			class = int(core.ClassOf(errors.Unwrap(err)))
		}
	}
	w.out.add(x)
	return class
}

func (w *worker) close() {
	w.out.close()
	if w.conn != nil {
		_ = w.conn.Close()
	}
	w.pacer.close()
}

// waitUntil waits for the intended send time t. It returns false when the phase stops.
func (w *worker) waitUntil(t int64) bool {
	e := w.e
	for {
		d := t - e.now()
		if d <= 0 {
			return true
		}
		if e.stop.Load() {
			return false
		}
		// No spinning for the last microseconds: a goroutine yielding in a loop keeps
		// its P from polling the network, which delayed other workers' wake-ups by
		// milliseconds on a 2-core machine.
		w.sleep(min(d, int64(maxSleep)))
	}
}

func (w *worker) sleep(d int64) {
	w.pacer.sleepUntil(w.e.baseMono + w.e.now() + d)
	w.out.advance(w.e.now())
}
