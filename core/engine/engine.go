// Package engine is the worker engine: it drives connections in closed or open loop,
// records every operation into per-worker histograms without locks or allocations,
// and hands one merged report per interval to the caller, in order.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// Config is one phase to run.
type Config struct {
	Spec core.PhaseSpec
	// Connect opens the connection of one worker. It is called again after a failure.
	Connect func(ctx context.Context) (core.Conn, error)
	// NewSource returns the operation stream of worker i (0-based).
	NewSource func(worker int) (core.OpSource, error)
	// NewProbeSource returns the side probe's stream; needed when Spec.Probe is set.
	NewProbeSource func() (core.OpSource, error)
	// Emit receives each interval in index order, from a single goroutine. It may keep
	// the report.
	Emit func(core.IntervalReport)
	// UnreachableAfter ends the phase as failed once a worker has seen nothing but
	// connection errors for this long. Zero means DefaultUnreachableAfter.
	UnreachableAfter time.Duration
}

// CapProbe says an engine runs the side probe (PhaseSpec.Probe). Plugins advertise
// the engine's capabilities next to their adapter's, so that a host can tell what a
// plugin built with an older engine lacks.
const CapProbe = "engine.probe"

// Capabilities are what this engine can do.
var Capabilities = []string{CapProbe}

// Defaults.
const (
	DefaultUnreachableAfter = 2 * time.Second
	// reconnectBackoff spaces attempts on a broken connection, so that a dead server
	// costs a bounded number of errors per second instead of a spinning CPU.
	reconnectBackoff = 10 * time.Millisecond
	// maxSleep bounds one pacing sleep so that stops and interval ends are noticed.
	maxSleep = 50 * time.Millisecond
)

type phaseRun struct {
	cfg      Config
	kinds    []core.OpKind
	open     bool
	base     time.Time
	baseMono int64 // CLOCK_MONOTONIC at base, for absolute timers
	interval int64
	deadline int64
	unreach  int64

	stop     atomic.Bool
	abortMu  sync.Mutex
	abortErr string

	mu   sync.Mutex
	aggs map[int64]*intervalAgg

	workers []*worker // the load workers, then the probe if any
	probe   *worker
	// loadDone stops the probe once every load worker has finished.
	loadDone atomic.Bool
}

// intervalAgg collects one interval from every worker.
type intervalAgg struct {
	ops   [core.NumOpKinds]core.OpInterval
	probe []core.ProbeRecord
}

func (e *phaseRun) now() int64 { return int64(time.Since(e.base)) }

// abort stops the phase as failed; the first reason wins.
func (e *phaseRun) abort(reason string) {
	e.abortMu.Lock()
	if e.abortErr == "" {
		e.abortErr = reason
	}
	e.abortMu.Unlock()
	e.stop.Store(true)
}

// Run runs one phase to its end and reports how it ended. Every interval, including
// the last partial one, has been emitted when Run returns.
func Run(ctx context.Context, cfg Config) core.PhaseEnd {
	spec := cfg.Spec
	if errs := spec.Validate(); len(errs) > 0 {
		return core.PhaseEnd{Status: core.StatusFailed, Error: errors.Join(errs...).Error(), Started: time.Now(), Ended: time.Now()}
	}
	e := &phaseRun{
		cfg:      cfg,
		kinds:    sortedKinds(spec.Workload.OpKinds()),
		open:     spec.OpenLoop(),
		interval: int64(spec.Interval),
		deadline: int64(spec.Duration),
		unreach:  int64(cfg.UnreachableAfter),
		aggs:     map[int64]*intervalAgg{},
	}
	if e.interval == 0 {
		e.interval = int64(core.DefaultInterval)
	}
	if e.unreach == 0 {
		e.unreach = int64(DefaultUnreachableAfter)
	}

	n := spec.Connections
	e.workers = make([]*worker, n)
	for i := range n {
		src, err := cfg.NewSource(i)
		if err != nil {
			return core.PhaseEnd{Status: core.StatusFailed, Error: fmt.Sprintf("workload for connection %d: %v", i, err), Started: time.Now(), Ended: time.Now()}
		}
		w := &worker{e: e, src: src, quota: -1}
		if spec.Ops > 0 {
			_, w.quota = core.Split(spec.Ops, n, i)
		}
		if e.open {
			// Worker i sends at offsets i/R, (i+n)/R, ...: the workers interleave evenly
			// and never fire together.
			gap := 1e9 / spec.Rate
			w.period = gap * float64(n)
			w.next = gap * float64(i)
			if spec.Poisson {
				w.rng = rand.New(rand.NewPCG(spec.Seed, uint64(i)+0x5eed))
				w.next = w.rng.ExpFloat64() * w.period
			}
		}
		e.workers[i] = w
	}
	if pr := spec.Probe; pr != nil {
		if cfg.NewProbeSource == nil {
			return core.PhaseEnd{Status: core.StatusFailed, Error: "a probe is asked for but the engine has no probe source", Started: time.Now(), Ended: time.Now()}
		}
		src, err := cfg.NewProbeSource()
		if err != nil {
			return core.PhaseEnd{Status: core.StatusFailed, Error: fmt.Sprintf("probe workload: %v", err), Started: time.Now(), Ended: time.Now()}
		}
		// Half a gap in, so that the probe never fires with connection 0.
		gap := 1e9 / pr.Rate
		e.probe = &worker{e: e, src: src, quota: -1, isProbe: true, period: gap, next: gap / 2}
		e.workers = append(e.workers, e.probe)
	}

	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	started := time.Now()
	e.baseMono = monotonicNow()
	e.base = time.Now()

	stopWatch := context.AfterFunc(ctx, func() { e.stop.Store(true) })
	defer stopWatch()

	var load, all sync.WaitGroup
	for _, w := range e.workers {
		all.Add(1)
		if !w.isProbe {
			load.Add(1)
		}
		go func() {
			defer all.Done()
			w.run(ctx)
			if !w.isProbe {
				load.Done()
			}
		}()
	}
	go func() { load.Wait(); e.loadDone.Store(true) }()
	done := make(chan struct{})
	go func() { all.Wait(); close(done) }()
	elapsed := e.emitLoop(done)

	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	end := core.PhaseEnd{
		Status:    core.StatusOK,
		Started:   started,
		Ended:     started.Add(time.Duration(elapsed)),
		Elapsed:   time.Duration(elapsed),
		CPUUser:   time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime)),
		CPUSystem: time.Duration(syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime)),
	}
	var issued, errs int64
	for _, w := range e.workers {
		if !w.isProbe {
			issued += w.done
			errs += w.errors
		}
	}
	end.ErrorSamples = e.errorSamples()
	switch {
	case e.abortErr != "":
		end.Status, end.Error = core.StatusFailed, e.abortErr
	case ctx.Err() != nil:
		end.Status, end.Error = core.StatusInterrupted, "stopped: "+context.Cause(ctx).Error()
	case spec.Kind == core.PhaseLoad && errs > 0:
		end.Status, end.Error = core.StatusFailed, fmt.Sprintf("load: %d of %d writes failed", errs, issued)
	case spec.Kind == core.PhaseLoad && issued < spec.Ops:
		end.Status, end.Error = core.StatusFailed, fmt.Sprintf("load incomplete: %d of %d writes done within %s", issued, spec.Ops, spec.Duration)
	}
	return end
}

// errorSamples collects the workers' first errors, distinct, by class.
func (e *phaseRun) errorSamples() []string {
	var out []string
	for class := range core.NumErrorClasses {
		for _, w := range e.workers {
			msg := w.firstErr[class]
			if msg == "" || w.isProbe {
				continue
			}
			if prefix := core.ErrorClass(class).String() + ": "; !strings.HasPrefix(msg, prefix) {
				msg = prefix + msg // an OpError says its class already
			}
			if !slices.Contains(out, msg) && len(out) < core.MaxErrorSamples {
				out = append(out, msg)
			}
		}
	}
	return out
}

// emitLoop emits intervals as soon as every worker has moved past them, and the rest
// once all workers are done. It returns the phase's elapsed time.
func (e *phaseRun) emitLoop(done <-chan struct{}) int64 {
	tick := time.NewTicker(min(time.Duration(e.interval)/10, 100*time.Millisecond))
	defer tick.Stop()
	var next int64
	for {
		select {
		case <-tick.C:
			low := int64(math.MaxInt64)
			for _, w := range e.workers {
				low = min(low, w.watermark.Load())
			}
			for ; next < low && low != math.MaxInt64; next++ {
				e.emit(next, (next+1)*e.interval)
			}
		case <-done:
			// The phase ends with its last load operation; probe requests that
			// complete after it are not kept.
			var last int64
			for _, w := range e.workers {
				if !w.isProbe {
					last = max(last, w.lastEnd)
				}
			}
			for ; next*e.interval < last; next++ {
				e.emit(next, min((next+1)*e.interval, last))
			}
			return last
		}
	}
}

func (e *phaseRun) emit(idx, end int64) {
	e.mu.Lock()
	agg := e.aggs[idx]
	delete(e.aggs, idx)
	e.mu.Unlock()
	rep := core.IntervalReport{
		Index: int(idx),
		Start: time.Duration(idx * e.interval),
		End:   time.Duration(end),
		Ops:   make([]core.OpInterval, len(e.kinds)),
	}
	if agg != nil {
		rep.Probe = agg.probe
	}
	for i, k := range e.kinds {
		if agg != nil {
			rep.Ops[i] = agg.ops[k]
		}
		rep.Ops[i].Op = k
		if !e.open {
			rep.Ops[i].Response = rep.Ops[i].Service
		}
	}
	if e.cfg.Emit != nil {
		e.cfg.Emit(rep)
	}
}

// merge adds a worker's records for interval idx to the interval's aggregate and
// resets them, keeping their histograms and buffers for reuse.
func (e *phaseRun) merge(idx int64, w *worker) {
	e.mu.Lock()
	defer e.mu.Unlock()
	agg := e.aggs[idx]
	get := func() *intervalAgg {
		if agg == nil {
			agg = &intervalAgg{}
			e.aggs[idx] = agg
		}
		return agg
	}
	if len(w.probeRecs) > 0 {
		a := get()
		a.probe = append(a.probe, w.probeRecs...)
		w.probeRecs = w.probeRecs[:0]
	}
	for k := range w.recs {
		r := &w.recs[k]
		if r.OK == 0 && r.ErrorTotal() == 0 {
			continue
		}
		get().ops[k].Merge(r)
		resp, svc := r.Response, r.Service
		if resp != nil {
			resp.Reset()
		}
		if svc != nil {
			svc.Reset()
		}
		*r = core.OpInterval{Op: core.OpKind(k), Response: resp, Service: svc}
	}
}

func sortedKinds(ks []core.OpKind) []core.OpKind {
	out := make([]core.OpKind, 0, len(ks))
	for k := core.OpKind(0); k < core.NumOpKinds; k++ {
		for _, x := range ks {
			if x == k {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

type worker struct {
	e    *phaseRun
	src  core.OpSource
	conn core.Conn
	op   core.Op
	recs [core.NumOpKinds]core.OpInterval

	quota        int64 // operations this worker may issue; -1 = no count bound
	done, errors int64
	firstErr     [core.NumErrorClasses]string // the first error of each class
	lastEnd      int64

	// open loop: intended time of the next send, ns from the phase start
	next, period float64
	rng          *rand.Rand
	pacer        pacer

	// The side probe keeps a record of every request instead of histograms.
	isProbe   bool
	probeRecs []core.ProbeRecord

	ci, boundary int64        // current interval and its end
	watermark    atomic.Int64 // every interval below this one has been merged

	connErrSince int64 // start of an unbroken run of connection errors, or -1
}

func (w *worker) run(ctx context.Context) {
	e := w.e
	w.boundary = e.interval
	w.connErrSince = -1
	defer w.finish()
	for !e.stop.Load() {
		if w.quota >= 0 && w.done >= w.quota || w.isProbe && e.loadDone.Load() {
			return
		}
		var intended int64
		if e.open || w.isProbe {
			intended = int64(w.next)
			// The time bound holds even when the schedule is behind: sends still owed
			// at the deadline are never made, and the achieved rate shows it.
			if intended >= e.deadline || e.now() >= e.deadline {
				return
			}
			if !w.waitUntil(intended) {
				return
			}
			if w.rng != nil {
				w.next += w.rng.ExpFloat64() * w.period
			} else {
				w.next += w.period
			}
		} else if e.now() >= e.deadline {
			return
		}
		w.src.Next(&w.op)
		w.op.RespBytes = 0
		start := e.now()
		var err error
		if w.conn == nil {
			w.conn, err = e.cfg.Connect(ctx)
			if err != nil {
				w.conn = nil
				err = &core.OpError{Class: core.ErrClassConnection, Err: err}
			}
		}
		if err == nil {
			err = w.conn.Do(ctx, &w.op)
		}
		end := e.now()
		if !e.open && !w.isProbe {
			intended = start
		}
		w.record(err, intended, start, end)
		if end >= w.boundary {
			w.flush(end)
		}
	}
}

func (w *worker) record(err error, intended, start, end int64) {
	w.done++
	w.lastEnd = end
	if w.isProbe {
		w.recordProbe(err, intended, start, end)
		return
	}
	r := &w.recs[w.op.Kind]
	if isSuccess(err) {
		r.OK++
		switch {
		case !w.op.Kind.IsRead():
			r.Bytes += int64(w.op.WriteBytes())
		case err == nil:
			r.Hits++
			r.Bytes += int64(w.op.RespBytes)
		default:
			r.Misses++
		}
		if r.Service == nil {
			r.Service = core.NewHistogram()
			if w.e.open {
				r.Response = core.NewHistogram()
			}
		}
		_ = r.Service.RecordValue(clampLatency(end - start))
		if w.e.open {
			_ = r.Response.RecordValue(clampLatency(end - intended))
		}
		w.connErrSince = -1
		return
	}
	w.errors++
	class := core.ClassOf(err)
	r.Errors[class]++
	if w.firstErr[class] == "" {
		w.firstErr[class] = err.Error()
	}
	if class != core.ErrClassConnection {
		w.connErrSince = -1
		return
	}
	if w.connErrSince < 0 {
		w.connErrSince = start
	} else if end-w.connErrSince >= w.e.unreach {
		w.e.abort(fmt.Sprintf("target unreachable for %s: %v", time.Duration(end-w.connErrSince).Round(time.Millisecond), err))
		return
	}
	// Wait before the next attempt on a broken connection instead of spinning.
	w.sleep(int64(reconnectBackoff))
}

func isSuccess(err error) bool {
	return err == nil || err == core.ErrMiss || errors.Is(err, core.ErrMiss)
}

// recordProbe keeps one probe request. The probe never fails or aborts a phase: it
// observes.
func (w *worker) recordProbe(err error, intended, start, end int64) {
	rec := core.ProbeRecord{Intended: time.Duration(intended), Start: time.Duration(start), End: time.Duration(end), Op: w.op.Kind}
	switch {
	case err == nil:
		rec.Outcome = core.OutcomeOK
	case isSuccess(err):
		rec.Outcome = core.OutcomeMiss
	default:
		rec.Outcome, rec.Class = core.OutcomeError, core.ClassOf(err)
		if rec.Class == core.ErrClassConnection {
			w.sleep(int64(reconnectBackoff))
		}
	}
	w.probeRecs = append(w.probeRecs, rec)
}

func clampLatency(v int64) int64 {
	return max(core.HistMin, min(v, core.HistMax))
}

// flush hands the current interval to the aggregate and moves to the interval of now.
func (w *worker) flush(now int64) {
	w.e.merge(w.ci, w)
	w.ci = now / w.e.interval
	w.boundary = (w.ci + 1) * w.e.interval
	w.watermark.Store(w.ci)
}

func (w *worker) finish() {
	w.e.merge(w.ci, w)
	w.watermark.Store(math.MaxInt64)
	if w.conn != nil {
		_ = w.conn.Close()
	}
	w.pacer.close()
}

// waitUntil waits for the intended send time t. It returns false when the phase stops.
func (w *worker) waitUntil(t int64) bool {
	e := w.e
	for {
		now := e.now()
		d := t - now
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

// sleep pauses for d ns and keeps interval bookkeeping moving while idle.
func (w *worker) sleep(d int64) {
	e := w.e
	w.pacer.sleepUntil(e.baseMono + e.now() + d)
	if now := e.now(); now >= w.boundary {
		w.flush(now)
	}
}
