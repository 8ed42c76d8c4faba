// Package engine is the worker engine: it drives connections in closed or open loop,
// records every operation without locks or allocations, and hands one merged,
// encoded report per interval to the caller, in order. Histograms and the
// per-interval work live on a collector goroutine, never on a sender's path.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// Config is one phase to run.
type Config struct {
	Spec core.PhaseSpec
	// Connect opens the connection of one worker. It is called again after a failure.
	Connect func(ctx context.Context) (core.Conn, error)
	// NewSource returns the operation stream of connection i (0-based).
	NewSource func(worker int) (core.OpSource, error)
	// NewProbeSource returns the side probe's stream; needed when Spec.Probe is set.
	NewProbeSource func() (core.OpSource, error)
	// Subscribe opens one subscription; needed for a pub/sub workload.
	Subscribe func(ctx context.Context, channels [][]byte) (core.Subscription, error)
	// Emit receives each interval in index order, from a single goroutine. It may keep
	// the report.
	Emit func(core.IntervalReport)
	// UnreachableAfter ends the phase as failed once a connection has seen nothing
	// but connection errors for this long. Zero means DefaultUnreachableAfter.
	UnreachableAfter time.Duration
	// Executor chooses how connections are driven: ExecAuto (event loops when every
	// connection is a core.RawConn, else goroutines), ExecLoops or ExecGoroutines.
	Executor string
}

// Executors.
const (
	ExecAuto       = ""
	ExecLoops      = "loops"      // event loops (one per core at full load) over raw sockets
	ExecGoroutines = "goroutines" // one goroutine per connection, calling Conn.Do
)

// Engine capabilities, advertised by plugins next to their adapter's, so that a
// host can tell what a plugin built with an older engine lacks.
const (
	CapProbe = "engine.probe" // runs the side probe (PhaseSpec.Probe)
	CapLag   = "engine.lag"   // records send lag and encodes intervals as core.Latency
	// CapPubSub: runs pub/sub workloads (core.PubSubSpec) and reports their counts.
	CapPubSub = "engine.pubsub"
	// CapStalls: says when the plugin process was not running (core.PhaseEnd.Stalls).
	CapStalls = "engine.stalls"
	// CapPipeline: keeps several requests in flight per connection
	// (core.PhaseSpec.Pipeline) on connections that allow it.
	CapPipeline = "engine.pipeline"
	// CapConns: reports the connections it holds open at each interval's end,
	// and those opened and lost in it (core.IntervalReport.Conns).
	CapConns = "engine.conns"
)

// Capabilities are what this engine can do.
var Capabilities = []string{CapProbe, CapLag, CapPubSub, CapStalls, CapPipeline, CapConns}

// Defaults.
const (
	DefaultUnreachableAfter = 2 * time.Second
	// reconnectBackoff spaces attempts on a broken connection, so that a dead server
	// costs a bounded number of errors per second instead of a spinning CPU.
	reconnectBackoff = 10 * time.Millisecond
	// maxSleep bounds one wait so that stops are noticed.
	maxSleep = 50 * time.Millisecond
	// connectTimeout bounds opening the connections before the phase clock starts.
	connectTimeout = 30 * time.Second
	// connectParallel is how many connections are opened at once.
	connectParallel = 64
	// fdReserve is the file descriptors a plugin needs besides its connections.
	fdReserve = 64
)

// execution is one phase as the engine runs it: its clock, schedule and workers.
type execution struct {
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
	// loadDone stops the probe once every load connection has finished.
	loadDone atomic.Bool
	// ranDry: a scheduled source (core.Scheduled) ran out, so the phase ends
	// with its streams, not at its time bound.
	ranDry atomic.Bool
	// conns counts the connections opened and lost (conns.go).
	conns connCount

	notes []string
}

func (e *execution) now() int64 { return int64(time.Since(e.base)) }

// abort stops the phase as failed; the first reason wins.
func (e *execution) abort(reason string) {
	e.abortMu.Lock()
	if e.abortErr == "" {
		e.abortErr = reason
	}
	e.abortMu.Unlock()
	e.stop.Store(true)
}

// stream is what each load connection has, whoever drives it: its operation source,
// its count bound, its open-loop schedule and its error bookkeeping.
type stream struct {
	src   core.OpSource
	ack   core.Acknowledger // src, when it wants to know that its op finished
	sched core.Scheduled    // src, when its ops carry their own send times
	op    core.Op
	conn  core.Conn

	quota        int64 // operations it may issue; -1 = no count bound
	done, errors int64
	inflight     int // issued and not done (an event loop's pipelined connection)
	lastEnd      int64

	// open loop: intended time of the next send, ns from the phase start
	next, period float64
	rng          *rand.Rand

	connErrSince int64 // start of an unbroken run of connection errors, or -1

	// published counts a pub/sub publisher's acknowledged messages by channel.
	published []int64
}

// advance moves the open-loop schedule to the next send. A scheduled source's
// next send is its own (due).
func (s *stream) advance() {
	if s.sched != nil {
		return
	}
	if s.rng != nil {
		s.next += s.rng.ExpFloat64() * s.period
	} else {
		s.next += s.period
	}
}

// errLog keeps the first error message of each class of one driver.
type errLog [core.NumErrorClasses]string

// finish records one finished operation of s, op, into o. It returns the error
// class, or -1 for a success.
func (e *execution) finish(s *stream, op *core.Op, o *outbox, el *errLog, err error, intended, ready, start, end int64) int {
	if s.ack != nil {
		s.ack.Acknowledge()
	}
	s.done++
	s.lastEnd = end
	x := sample{intended: intended, ready: ready, start: start, end: end, kind: op.Kind}
	if isSuccess(err) {
		if s.published != nil {
			if h, ok := core.ParsePubSubHeader(op.Value); ok && int(h.Channel) < len(s.published) {
				s.published[h.Channel]++
			}
		}
		switch {
		case err != nil && op.Kind.CanMiss():
			x.outcome = core.OutcomeMiss
		case op.Kind.IsRead():
			x.bytes = int64(op.RespBytes)
		default:
			x.bytes = int64(op.WriteBytes())
		}
		o.add(x)
		s.connErrSince = -1
		return -1
	}
	s.errors++
	class := core.ClassOf(err)
	x.outcome, x.class = core.OutcomeError, class
	o.add(x)
	if el[class] == "" {
		el[class] = err.Error()
	}
	if class == core.ErrClassInDoubt {
		// A write in doubt: what happened to the stream is the failure under it
		// (a timeout, a lost connection: core.SentFailure), or nothing when the
		// server replied so.
		class = core.ClassOf(errors.Unwrap(err))
	}
	if class != core.ErrClassConnection {
		s.connErrSince = -1
		return int(class)
	}
	if s.connErrSince < 0 {
		s.connErrSince = start
	} else if end-s.connErrSince >= e.unreach {
		e.abort(fmt.Sprintf("target unreachable for %s: %v", time.Duration(end-s.connErrSince).Round(time.Millisecond), err))
	}
	return int(class)
}

// due reports whether s may issue another operation, and, when it is paced (open
// loop, the side probe), its intended send time.
func (e *execution) due(s *stream, paced bool) (intended int64, ok bool) {
	if s.quota >= 0 && s.done+int64(s.inflight) >= s.quota {
		return 0, false
	}
	if s.sched != nil {
		at, more := s.sched.Due()
		if !more {
			e.ranDry.Store(true)
			return 0, false
		}
		s.next = float64(at)
	}
	if paced {
		// The time bound holds even when the schedule is behind: sends still owed at
		// the deadline are never made, and the achieved rate shows it.
		intended = int64(s.next)
		return intended, intended < e.deadline && e.now() < e.deadline
	}
	return 0, e.now() < e.deadline
}

func isSuccess(err error) bool {
	return err == nil || err == core.ErrMiss || errors.Is(err, core.ErrMiss)
}

// driver runs some of a phase's load connections: a worker goroutine, or an event
// loop.
type driver interface {
	run(ctx context.Context)
	lastEnd() int64
	counts() (issued, errors int64, el *errLog)
}

// connectAll opens every connection, a bounded number at a time, and says how many
// of the streams' failed and the first error.
func connectAll(ctx context.Context, e *execution, streams []*stream, probe *worker) (failed int, first error) {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	sem := make(chan struct{}, connectParallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := func(dst *core.Conn, counted bool) {
		defer wg.Done()
		sem <- struct{}{}
		defer func() { <-sem }()
		c, err := e.cfg.Connect(cctx)
		if err == nil {
			*dst = c
			return
		}
		if counted {
			mu.Lock()
			failed++
			if first == nil {
				first = err
			}
			mu.Unlock()
		}
	}
	for _, s := range streams {
		wg.Add(1)
		go open(&s.conn, true)
	}
	if probe != nil {
		wg.Add(1)
		go open(&probe.conn, false)
	}
	wg.Wait()
	return failed, first
}

func closeAll(streams []*stream, probe *worker) {
	for _, s := range streams {
		if s.conn != nil {
			_ = s.conn.Close()
		}
	}
	if probe != nil && probe.conn != nil {
		_ = probe.conn.Close()
	}
}

// pipelineRefusal says why the phase's connections cannot keep the depth it
// asks in flight, or "" when they can (or it asks one at a time).
func pipelineRefusal(depth int, exec string, streams []*stream) string {
	if depth <= 1 {
		return ""
	}
	for _, s := range streams {
		if s.conn == nil {
			continue // not opened before the phase: no worse than the others
		}
		if exec != ExecLoops {
			if _, ok := s.conn.(core.Pipeliner); !ok {
				return fmt.Sprintf("pipeline %d: these connections are driven one request at a time from goroutines (executor %s, or an adapter without a codec), and the adapter's connections cannot keep several in flight there", depth, exec)
			}
			continue
		}
		rc, ok := s.conn.(core.RawConn)
		if !ok {
			continue
		}
		switch raw, _ := rc.Raw(); {
		case len(raw.FDs) > 0:
			return fmt.Sprintf("pipeline %d: a raw connection to several servers (a cluster) keeps one request in flight; pipelining per node is not supported on it", depth)
		case !raw.Pipeline:
			return fmt.Sprintf("pipeline %d: the adapter's connections keep one request in flight (its protocol does not answer several in order)", depth)
		}
	}
	return ""
}

// pipelineAll swaps each opened connection of a goroutine-driven phase for one
// that keeps the phase's depth in flight (core.Pipeliner), before the clock. One
// that fails is opened inside the phase, as after an error.
func (e *execution) pipelineAll(ctx context.Context, streams []*stream) {
	depth, failed := e.cfg.Spec.Depth(), 0
	var first error
	for _, s := range streams {
		if s.conn == nil {
			continue
		}
		c, err := pipelined(ctx, s.conn, depth)
		if err != nil {
			if failed++; first == nil {
				first = err
			}
		}
		s.conn = c
	}
	if failed > 0 {
		e.notes = append(e.notes, fmt.Sprintf("%d of %d connections could not be made to keep %d requests in flight before the phase started (%v); they were opened inside it, as after an error",
			failed, len(streams), depth, first))
	}
}

// allRaw reports whether every opened connection can be driven raw.
func allRaw(streams []*stream) bool {
	opened := 0
	for _, s := range streams {
		if s.conn == nil {
			continue
		}
		rc, ok := s.conn.(core.RawConn)
		if !ok {
			return false
		}
		if _, ok := rc.Raw(); !ok {
			return false
		}
		opened++
	}
	return opened > 0
}

// errorSamples collects the drivers' first errors, distinct, by class.
func errorSamples(logs []*errLog) []string {
	var out []string
	for class := range core.NumErrorClasses {
		for _, el := range logs {
			msg := el[class]
			if msg == "" {
				continue
			}
			if prefix := core.ErrorClass(class).String() + ": "; !strings.HasPrefix(msg, prefix) {
				msg = prefix + msg // an OpError says its class already
			}
			msg = core.CutErrorSample(msg)
			if !slices.Contains(out, msg) && len(out) < core.MaxErrorSamples {
				out = append(out, msg)
			}
		}
	}
	return out
}

func sortedKinds(ks []core.OpKind) []core.OpKind {
	out := slices.Clone(ks)
	slices.Sort(out)
	return slices.Compact(out)
}

// MaxStartWait bounds how far ahead a phase's StartAt may be.
const MaxStartWait = 24 * time.Hour

// lateNote is how late a phase may start after its StartAt before a note says so.
const lateNote = 50 * time.Millisecond

// waitForStart sleeps until the wall-clock time t, a phase's StartAt, and returns
// how late it is then (0 when t was still ahead when it was called).
func waitForStart(ctx context.Context, t time.Time) (late time.Duration, err error) {
	d := time.Until(t)
	if d > MaxStartWait {
		return 0, fmt.Errorf("the phase is to start at %s, more than %s from now", t.UTC().Format(time.RFC3339), MaxStartWait)
	}
	if d <= 0 {
		return -d, nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return max(0, time.Since(t)), nil
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
}
