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
	"runtime"
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
	ExecLoops      = "loops"      // one event loop per core over raw sockets
	ExecGoroutines = "goroutines" // one goroutine per connection, calling Conn.Do
)

// Engine capabilities, advertised by plugins next to their adapter's, so that a
// host can tell what a plugin built with an older engine lacks.
const (
	CapProbe = "engine.probe" // runs the side probe (PhaseSpec.Probe)
	CapLag   = "engine.lag"   // records send lag and encodes intervals as core.Latency
	// CapPubSub: runs pub/sub workloads (core.PubSubSpec) and reports their counts.
	CapPubSub = "engine.pubsub"
)

// Capabilities are what this engine can do.
var Capabilities = []string{CapProbe, CapLag, CapPubSub}

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
	src  core.OpSource
	ack  core.Acknowledger // src, when it wants to know that its op finished
	op   core.Op
	conn core.Conn

	quota        int64 // operations it may issue; -1 = no count bound
	done, errors int64
	lastEnd      int64

	// open loop: intended time of the next send, ns from the phase start
	next, period float64
	rng          *rand.Rand

	connErrSince int64 // start of an unbroken run of connection errors, or -1

	// published counts a pub/sub publisher's acknowledged messages by channel.
	published []int64
}

// advance moves the open-loop schedule to the next send.
func (s *stream) advance() {
	if s.rng != nil {
		s.next += s.rng.ExpFloat64() * s.period
	} else {
		s.next += s.period
	}
}

// errLog keeps the first error message of each class of one driver.
type errLog [core.NumErrorClasses]string

// finish records one finished operation of s into o. It returns the error class,
// or -1 for a success.
func (e *execution) finish(s *stream, o *outbox, el *errLog, err error, intended, ready, start, end int64) int {
	if s.ack != nil {
		s.ack.Acknowledge()
	}
	s.done++
	s.lastEnd = end
	x := sample{intended: intended, ready: ready, start: start, end: end, kind: s.op.Kind}
	if isSuccess(err) {
		if s.published != nil {
			if h, ok := core.ParsePubSubHeader(s.op.Value); ok && int(h.Channel) < len(s.published) {
				s.published[h.Channel]++
			}
		}
		switch {
		case !s.op.Kind.IsRead():
			x.bytes = int64(s.op.WriteBytes())
		case err == nil:
			x.bytes = int64(s.op.RespBytes)
		default:
			x.outcome = core.OutcomeMiss
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
	if s.quota >= 0 && s.done >= s.quota {
		return 0, false
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

// Run runs one phase to its end and reports how it ended. Every interval, including
// the last partial one, has been emitted when Run returns. Connections are opened
// before the phase clock starts.
func Run(ctx context.Context, cfg Config) core.PhaseEnd {
	spec := cfg.Spec
	failed := func(format string, a ...any) core.PhaseEnd {
		now := time.Now()
		return core.PhaseEnd{Status: core.StatusFailed, Error: fmt.Sprintf(format, a...), Started: now, Ended: now}
	}
	if errs := spec.Validate(); len(errs) > 0 {
		return failed("%v", errors.Join(errs...))
	}
	e := &execution{
		cfg:      cfg,
		kinds:    sortedKinds(spec.Workload.OpKinds()),
		open:     spec.OpenLoop(),
		interval: int64(spec.Interval),
		deadline: int64(spec.Duration),
		unreach:  int64(cfg.UnreachableAfter),
	}
	if e.interval == 0 {
		e.interval = int64(core.DefaultInterval)
	}
	if e.unreach == 0 {
		e.unreach = int64(DefaultUnreachableAfter)
	}
	n := spec.Connections
	var ps *core.PubSubSpec
	if w, ok := spec.Workload.(core.PubSubSpec); ok {
		ps = &w
	}
	subscribers := 0
	if ps != nil {
		subscribers = ps.Subscribers
	}
	// Each connection's socket, the probe's and the subscribers', the duplicates
	// of sockets being opened, and each loop's epoll, event and timer descriptors.
	if note, err := checkFileLimit(n+subscribers, n+subscribers+1+connectParallel+3*runtime.GOMAXPROCS(0)); err != nil {
		return failed("%v", err)
	} else if note != "" {
		e.notes = append(e.notes, note)
	}

	streams := make([]*stream, n)
	for i := range n {
		src, err := cfg.NewSource(i)
		if err != nil {
			return failed("workload for connection %d: %v", i, err)
		}
		s := &stream{src: src, quota: -1, connErrSince: -1}
		s.ack, _ = src.(core.Acknowledger)
		if spec.Ops > 0 {
			_, s.quota = core.Split(spec.Ops, n, i)
		}
		if ps != nil {
			s.published = make([]int64, ps.Channels)
		}
		if e.open {
			// Connection i sends at offsets i/R, (i+n)/R, ...: the connections
			// interleave evenly and never fire together. A shard's connections
			// keep the offsets they have in the whole phase.
			g, total := spec.ConnBase+i, spec.AllConnections()
			s.period = 1e9 * float64(n) / spec.Rate
			s.next = s.period * float64(g) / float64(total)
			if spec.Poisson {
				s.rng = rand.New(rand.NewPCG(spec.Seed, uint64(g)+0x5eed))
				s.next = s.rng.ExpFloat64() * s.period
			}
		}
		streams[i] = s
	}
	var probe *worker
	if pr := spec.Probe; pr != nil {
		if cfg.NewProbeSource == nil {
			return failed("a probe is asked for but the engine has no probe source")
		}
		src, err := cfg.NewProbeSource()
		if err != nil {
			return failed("probe workload: %v", err)
		}
		// Half a gap in, so that the probe never fires with connection 0.
		gap := 1e9 / pr.Rate
		probe = &worker{e: e, isProbe: true, stream: stream{src: src, quota: -1, period: gap, next: gap / 2, connErrSince: -1}}
	}

	// Connections open before the clock starts: connection setup is never timed.
	// One that fails here is opened again inside the phase, as after an error.
	unopened, firstErr := connectAll(ctx, e, streams, probe)
	if unopened > 0 && ctx.Err() == nil {
		e.notes = append(e.notes, fmt.Sprintf("%d of %d connections did not open before the phase started (%v); they were opened inside it, as after an error",
			unopened, len(streams), firstErr))
	}
	var pubsub *pubsubRun
	closeConns := func() {
		closeAll(streams, probe)
		if pubsub != nil {
			closeSubs(pubsub.subs)
		}
	}
	if ps != nil && ctx.Err() == nil {
		// Subscribers are opened, and subscribed, before the clock too.
		subs, err := subscribeAll(ctx, cfg.Subscribe, *ps, n)
		if err != nil && ctx.Err() == nil {
			closeConns()
			return failed("%v", err)
		}
		pubsub = &pubsubRun{e: e, spec: *ps, subs: subs}
	}
	if ctx.Err() != nil {
		closeConns()
		return core.PhaseEnd{Status: core.StatusInterrupted, Error: "stopped: " + context.Cause(ctx).Error(), Started: time.Now(), Ended: time.Now()}
	}

	exec := cfg.Executor
	if exec == ExecAuto {
		exec = ExecGoroutines
		if loopsAvailable && allRaw(streams) {
			exec = ExecLoops
		} else if loopsAvailable && unopened == len(streams) && ctx.Err() == nil {
			e.notes = append(e.notes, "with no connection open before the phase, the engine could not tell whether event loops could drive them: it ran one goroutine per connection")
		}
	}
	if exec == ExecGoroutines {
		// A worker goroutine also has its pacer's timer descriptor.
		if _, err := checkFileLimit(n+subscribers, 2*n+subscribers+1+connectParallel); err != nil {
			closeConns()
			return failed("%v", err)
		}
	}
	if !spec.StartAt.IsZero() {
		// The shards of a run start together: wait, connected, for the agreed time.
		late, err := waitForStart(ctx, spec.StartAt)
		if err != nil {
			closeConns()
			if ctx.Err() != nil {
				return core.PhaseEnd{Status: core.StatusInterrupted, Error: "stopped: " + context.Cause(ctx).Error(), Started: time.Now(), Ended: time.Now()}
			}
			return failed("%v", err)
		}
		if late > lateNote {
			e.notes = append(e.notes, fmt.Sprintf("started %s after its scheduled time %s: its connections took that long to open",
				late.Round(time.Millisecond), spec.StartAt.UTC().Format(time.RFC3339Nano)))
		}
	}
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	started := time.Now()
	e.baseMono = monotonicNow()
	e.base = time.Now()
	stopWatch := context.AfterFunc(ctx, func() { e.stop.Store(true) })
	defer stopWatch()

	var drivers []driver
	var c *collector
	extra := 0 // the deliveries' outbox
	if pubsub != nil {
		extra = 1
	}
	if exec == ExecLoops {
		n := min(runtime.GOMAXPROCS(0), len(streams))
		c = newCollector(e, n+extra, probe != nil)
		loops, err := newLoops(e, c, streams, n)
		if err != nil {
			closeConns()
			return failed("event loops: %v", err)
		}
		for _, s := range streams {
			s.conn = nil // the loops own them now
		}
		for _, l := range loops {
			drivers = append(drivers, l)
		}
	} else {
		c = newCollector(e, len(streams)+extra, probe != nil)
		for _, s := range streams {
			drivers = append(drivers, &worker{e: e, out: c.outbox(false), stream: *s})
		}
	}
	if probe != nil {
		probe.out = c.outbox(true)
	}

	var load, all sync.WaitGroup
	for _, d := range drivers {
		load.Add(1)
		all.Add(1)
		go func() {
			defer all.Done()
			defer load.Done()
			d.run(ctx)
		}()
	}
	if probe != nil {
		all.Add(1)
		go func() {
			defer all.Done()
			probe.run(ctx)
		}()
	}
	if pubsub != nil {
		pubsub.out = c.outbox(false)
		pubsub.start(ctx, &load, &all, streams)
	}
	go func() { load.Wait(); e.loadDone.Store(true) }()
	done := make(chan struct{})
	go func() { all.Wait(); close(done) }()
	elapsed := c.run(done, func() int64 {
		var last int64
		for _, d := range drivers {
			last = max(last, d.lastEnd())
		}
		return last
	})

	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	end := core.PhaseEnd{
		Status:    core.StatusOK,
		Started:   started,
		Ended:     started.Add(time.Duration(elapsed)),
		Elapsed:   time.Duration(elapsed),
		CPUUser:   time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime)),
		CPUSystem: time.Duration(syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime)),
		Notes:     e.notes,
	}
	var issued, errs int64
	var logs []*errLog
	for _, d := range drivers {
		i, er, el := d.counts()
		issued += i
		errs += er
		logs = append(logs, el)
	}
	if pubsub != nil {
		for _, s := range pubsub.subs {
			logs = append(logs, &s.el)
		}
		published := make([][]int64, len(streams))
		for i, s := range streams {
			published[i] = s.published
		}
		end.PubSub = pubsub.counts(published)
	}
	end.ErrorSamples = errorSamples(logs)
	var err error
	if end.Totals, err = c.result(); err != nil {
		e.abort("encoding the phase's histograms: " + err.Error())
	}
	switch {
	case e.abortErr != "":
		end.Status, end.Error = core.StatusFailed, e.abortErr
	case ctx.Err() != nil:
		end.Status, end.Error = core.StatusInterrupted, "stopped: "+context.Cause(ctx).Error()
	case spec.Kind == core.PhaseLoad && errs > 0:
		end.Status, end.Error = core.StatusFailed, fmt.Sprintf("load: %d of %d writes failed", errs, issued)
	case spec.Kind == core.PhaseLoad && issued < spec.Ops:
		end.Status, end.Error = core.StatusFailed, fmt.Sprintf("load incomplete: %d of %d writes done within %s", issued, spec.Ops, spec.Duration)
	case issued == 0:
		end.Status, end.Error = core.StatusFailed, fmt.Sprintf("no operation was sent: the phase's %s ended before the first", spec.Duration)
	case errs >= issued:
		// Nothing was measured: a phase that only failed is not a result.
		end.Status, end.Error = core.StatusFailed, fmt.Sprintf("no operation succeeded: %d of %d failed", errs, issued)
	}
	return end
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
