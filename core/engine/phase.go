package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/trace"
	"sync"
	"syscall"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// Run runs one phase to its end and reports how it ended. Every interval, including
// the last partial one, has been emitted when Run returns. Connections are opened
// before the phase clock starts.
func Run(ctx context.Context, cfg Config) core.PhaseEnd {
	if errs := cfg.Spec.Validate(); len(errs) > 0 {
		return failedEnd("%v", errors.Join(errs...))
	}
	e := newExecution(cfg)
	p, end, ok := e.prepare(ctx)
	if !ok {
		return end
	}
	return e.measure(ctx, p)
}

// failedEnd is a phase that failed before its clock started.
func failedEnd(format string, a ...any) core.PhaseEnd {
	now := time.Now()
	return core.PhaseEnd{Status: core.StatusFailed, Error: fmt.Sprintf(format, a...), Started: now, Ended: now}
}

// interruptedEnd is a phase stopped before its clock started.
func interruptedEnd(ctx context.Context) core.PhaseEnd {
	return core.PhaseEnd{Status: core.StatusInterrupted, Error: "stopped: " + context.Cause(ctx).Error(), Started: time.Now(), Ended: time.Now()}
}

func newExecution(cfg Config) *execution {
	spec := cfg.Spec
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
	return e
}

// prepared is a phase ready for its clock to start: every connection opened (or
// noted as not), subscribers subscribed, the executor chosen.
type prepared struct {
	streams []*stream
	probe   *worker
	pubsub  *pubsubRun
	ps      *core.PubSubSpec
	exec    string
}

// close closes every connection and subscription of a phase that will not run.
func (p *prepared) close() {
	closeAll(p.streams, p.probe)
	if p.pubsub != nil {
		closeSubs(p.pubsub.subs)
	}
}

// prepare does everything before the phase clock starts. When the phase cannot
// start, it returns how it ended instead, with everything opened closed again.
func (e *execution) prepare(ctx context.Context) (p *prepared, end core.PhaseEnd, ok bool) {
	spec := e.cfg.Spec
	p = &prepared{}
	if w, ok := spec.Workload.(core.PubSubSpec); ok {
		p.ps = &w
	}
	if err := e.checkFiles(p.ps); err != nil {
		return nil, failedEnd("%v", err), false
	}
	var err error
	if p.streams, err = e.newStreams(p.ps); err != nil {
		return nil, failedEnd("%v", err), false
	}
	if p.probe, err = e.newProbe(); err != nil {
		return nil, failedEnd("%v", err), false
	}
	unopened, err := e.connect(ctx, p)
	if err != nil {
		return nil, failedEnd("%v", err), false
	}
	if ctx.Err() != nil {
		p.close()
		return nil, interruptedEnd(ctx), false
	}
	p.exec = e.executor(ctx, p.streams, unopened)
	if why := pipelineRefusal(spec.Depth(), p.exec, p.streams); why != "" {
		p.close()
		return nil, failedEnd("%s", why), false
	}
	if p.exec == ExecGoroutines {
		// A worker goroutine, or each of its lanes, also has its pacer's timer
		// descriptor.
		n, subscribers := len(p.streams), subscribersOf(p.ps)
		if _, err := checkFileLimit(n+subscribers, n*(1+spec.Depth())+subscribers+1+connectParallel); err != nil {
			p.close()
			return nil, failedEnd("%v", err), false
		}
		if spec.Depth() > 1 {
			e.pipelineAll(ctx, p.streams)
		}
	}
	if err := e.awaitStart(ctx); err != nil {
		p.close()
		if ctx.Err() != nil {
			return nil, interruptedEnd(ctx), false
		}
		return nil, failedEnd("%v", err), false
	}
	return p, core.PhaseEnd{}, true
}

func subscribersOf(ps *core.PubSubSpec) int {
	if ps == nil {
		return 0
	}
	return ps.Subscribers
}

// checkFiles checks that the file descriptor limit admits the phase: each
// connection's socket, the probe's and the subscribers', the duplicates of sockets
// being opened, and each loop's epoll, event and timer descriptors.
func (e *execution) checkFiles(ps *core.PubSubSpec) error {
	n, subscribers := e.cfg.Spec.Connections, subscribersOf(ps)
	note, err := checkFileLimit(n+subscribers, n+subscribers+1+connectParallel+3*runtime.GOMAXPROCS(0))
	if err != nil {
		return err
	}
	if note != "" {
		e.notes = append(e.notes, note)
	}
	return nil
}

// newStreams makes each load connection's stream: its operation source, its share
// of a count bound and its open-loop schedule.
func (e *execution) newStreams(ps *core.PubSubSpec) ([]*stream, error) {
	spec := e.cfg.Spec
	n := spec.Connections
	streams := make([]*stream, n)
	for i := range n {
		src, err := e.cfg.NewSource(i)
		if err != nil {
			return nil, fmt.Errorf("workload for connection %d: %v", i, err)
		}
		s := &stream{src: src, quota: -1, connErrSince: -1}
		s.ack, _ = src.(core.Acknowledger)
		s.sched, _ = src.(core.Scheduled)
		if spec.Ops > 0 {
			_, s.quota = core.Split(spec.Ops, n, i)
		}
		if ps != nil {
			s.published = make([]int64, ps.Channels)
		}
		if e.open {
			e.schedule(s, i)
		}
		streams[i] = s
	}
	return streams, nil
}

// schedule sets connection i's open-loop schedule. Connection i sends at offsets
// i/R, (i+n)/R, ...: the connections interleave evenly and never fire together. A
// shard's connections keep the offsets they have in the whole phase.
func (e *execution) schedule(s *stream, i int) {
	spec := e.cfg.Spec
	g, total := spec.ConnBase+i, spec.AllConnections()
	s.period = 1e9 * float64(spec.Connections) / spec.Rate
	s.next = s.period * float64(g) / float64(total)
	if spec.Poisson {
		s.rng = rand.New(rand.NewPCG(spec.Seed, uint64(g)+0x5eed))
		s.next = s.rng.ExpFloat64() * s.period
	}
}

// newProbe makes the side probe's worker, or nil when the phase has none.
func (e *execution) newProbe() (*worker, error) {
	pr := e.cfg.Spec.Probe
	if pr == nil {
		return nil, nil
	}
	if e.cfg.NewProbeSource == nil {
		return nil, errors.New("a probe is asked for but the engine has no probe source")
	}
	src, err := e.cfg.NewProbeSource()
	if err != nil {
		return nil, fmt.Errorf("probe workload: %v", err)
	}
	// Half a gap in, so that the probe never fires with connection 0.
	gap := 1e9 / pr.Rate
	return &worker{e: e, isProbe: true, stream: stream{src: src, quota: -1, period: gap, next: gap / 2, connErrSince: -1}}, nil
}

// connect opens the connections, and the subscribers, before the clock starts:
// connection setup is never timed. A connection that fails here is opened again
// inside the phase, as after an error; it says how many did. A subscriber that
// fails fails the phase.
func (e *execution) connect(ctx context.Context, p *prepared) (unopened int, err error) {
	unopened, firstErr := connectAll(ctx, e, p.streams, p.probe)
	if unopened > 0 && ctx.Err() == nil {
		e.notes = append(e.notes, fmt.Sprintf("%d of %d connections did not open before the phase started (%v); they were opened inside it, as after an error",
			unopened, len(p.streams), firstErr))
	}
	if p.ps != nil && ctx.Err() == nil {
		subs, err := subscribeAll(ctx, e.cfg.Subscribe, *p.ps, len(p.streams))
		if err != nil && ctx.Err() == nil {
			p.close()
			return unopened, err
		}
		p.pubsub = &pubsubRun{e: e, spec: *p.ps, subs: subs}
	}
	return unopened, nil
}

// executor chooses how the phase's connections are driven.
func (e *execution) executor(ctx context.Context, streams []*stream, unopened int) string {
	exec := e.cfg.Executor
	if exec != ExecAuto {
		return exec
	}
	switch {
	case loopsAvailable && allRaw(streams):
		return ExecLoops
	case loopsAvailable && unopened == len(streams) && ctx.Err() == nil:
		e.notes = append(e.notes, "with no connection open before the phase, the engine could not tell whether event loops could drive them: it ran one goroutine per connection")
	}
	return ExecGoroutines
}

// awaitStart waits, connected, for the agreed time when the shards of a run start
// together.
func (e *execution) awaitStart(ctx context.Context) error {
	at := e.cfg.Spec.StartAt
	if at.IsZero() {
		return nil
	}
	late, err := waitForStart(ctx, at)
	if err != nil {
		return err
	}
	if late > lateNote {
		e.notes = append(e.notes, fmt.Sprintf("started %s after its scheduled time %s: its connections took that long to open",
			late.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano)))
	}
	return nil
}

// measure starts the phase clock, drives the load until the phase ends and says
// how it ended.
func (e *execution) measure(ctx context.Context, p *prepared) core.PhaseEnd {
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	started := time.Now()
	e.baseMono = monotonicNow()
	e.base = time.Now()
	stopWatch := context.AfterFunc(ctx, func() { e.stop.Store(true) })
	defer stopWatch()
	// The phase, named in an execution trace (core/gotrace); free when not tracing.
	defer trace.StartRegion(ctx, "phase "+e.cfg.Spec.Name).End()

	e.conns.opened.Store(p.preparedOpen()) // before the loops take the connections over
	drivers, c, err := e.drivers(p)
	if err != nil {
		p.close()
		return failedEnd("event loops: %v", err)
	}
	stalls := e.watchStalls()
	elapsed := e.drive(ctx, p, drivers, c)

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
	stalls.finish(&end)
	issued, errs := e.counts(&end, p, drivers)
	if end.Totals, err = c.result(); err != nil {
		e.abort("encoding the phase's histograms: " + err.Error())
	}
	e.status(ctx, &end, issued, errs)
	return end
}

// perLoopRate is the fixed rate, in ops/s, that one event loop is given before
// another is added (see loopsFor).
const perLoopRate = 50_000

// loopsFor is how many event loops drive a phase: one per core in a closed loop;
// at a fixed rate, one per perLoopRate ops/s of it, at least one and at most one
// per core and per connection (a rate is a process's share when a run is split
// over processes or shards). A loop paced far below what it can do spends most
// of its CPU waking up for each send and reply, and so does every extra thread
// the runtime keeps spinning for it: on 2 cores at 20,000 and at 50,000 ops/s,
// one loop used 11-13% less CPU than two and halved the send lag's p99
// (bench/README.md, issue 30). What is measured does not change.
func loopsFor(rate float64, cores, streams int) int {
	n := cores
	if rate > 0 && rate < float64(cores)*perLoopRate {
		n = max(1, int(math.Ceil(rate/perLoopRate)))
	}
	return min(n, streams)
}

// blockBelow is the fixed rate per loop, in ops/s, at or under which a loop
// waits for its next send or reply in a system call rather than parking through
// Go's netpoller (loop.block), provided the loops leave a P to the rest of the
// process. On 2 cores at 20,000 ops/s that used about 8% less CPU (medians of 40.0
// against 43.7 CPU-s per million ops) and lowered the send lag's p99 in most
// runs; at 50,000 ops/s, where waits are short and a park often finds a timer
// already armed, it used 5-8% more (bench/README.md, issue 30). Only a lone loop
// blocks in practice: loopsFor adds a second one above 50,000 ops/s. What is
// measured does not change.
const blockBelow = perLoopRate / 2

// loopsBlock says whether the n loops of a phase at rate (0: a closed loop) may
// wait in system calls on a process of procs Ps.
func loopsBlock(rate float64, n, procs int) bool {
	return n > 0 && n < procs && rate > 0 && rate/float64(n) <= blockBelow
}

// drivers makes what drives the load connections, event loops or one worker
// goroutine each, and the collector they report to.
func (e *execution) drivers(p *prepared) ([]driver, *collector, error) {
	var drivers []driver
	extra := 0 // the deliveries' outbox
	if p.pubsub != nil {
		extra = 1
	}
	if p.exec != ExecLoops {
		c := newCollector(e, len(p.streams)+extra, p.probe != nil)
		for _, s := range p.streams {
			drivers = append(drivers, &worker{e: e, out: c.outbox(false), stream: *s, watch: connWatch{down: s.conn == nil}})
		}
		return drivers, c, nil
	}
	rate, procs := e.cfg.Spec.Rate, runtime.GOMAXPROCS(0)
	n := loopsFor(rate, procs, len(p.streams))
	c := newCollector(e, n+extra, p.probe != nil)
	loops, err := newLoops(e, c, p.streams, n, loopsBlock(rate, n, procs))
	if err != nil {
		return nil, nil, err
	}
	for _, s := range p.streams {
		s.conn = nil // the loops own them now
	}
	for _, l := range loops {
		drivers = append(drivers, l)
	}
	return drivers, c, nil
}

// drive runs the drivers, the probe and the pub/sub deliveries, and the collector
// until all have ended. It returns the phase's elapsed time.
func (e *execution) drive(ctx context.Context, p *prepared, drivers []driver, c *collector) int64 {
	if p.probe != nil {
		p.probe.out = c.outbox(true)
		p.probe.watch.down = p.probe.conn == nil
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
	if p.probe != nil {
		all.Add(1)
		go func() {
			defer all.Done()
			p.probe.run(ctx)
		}()
	}
	if p.pubsub != nil {
		p.pubsub.out = c.outbox(false)
		p.pubsub.start(ctx, &load, &all, p.streams)
	}
	go func() { load.Wait(); e.loadDone.Store(true) }()
	done := make(chan struct{})
	go func() { all.Wait(); close(done) }()
	return c.run(done, func() int64 {
		var last int64
		for _, d := range drivers {
			last = max(last, d.lastEnd())
		}
		if e.ranToDeadline(drivers) {
			// Its window is its duration, however early its last operation
			// ended: a client that stood still past the deadline sent nothing
			// after its last one, and its rate must say so.
			last = max(last, e.deadline)
		}
		return last
	})
}

// ranToDeadline says, once the drivers have ended, whether the phase ended at its
// time bound: neither stopped nor failed, nor done with its count bound.
func (e *execution) ranToDeadline(drivers []driver) bool {
	if e.stop.Load() || e.ranDry.Load() {
		return false
	}
	if e.cfg.Spec.Ops <= 0 {
		return true
	}
	var issued int64
	for _, d := range drivers {
		n, _, _ := d.counts()
		issued += n
	}
	return issued < e.cfg.Spec.Ops
}

// counts adds the drivers' error samples and the pub/sub counts to end, and returns
// the operations issued and failed.
func (e *execution) counts(end *core.PhaseEnd, p *prepared, drivers []driver) (issued, errs int64) {
	var logs []*errLog
	for _, d := range drivers {
		i, er, el := d.counts()
		issued += i
		errs += er
		logs = append(logs, el)
	}
	if p.pubsub != nil {
		for _, s := range p.pubsub.subs {
			logs = append(logs, &s.el)
		}
		published := make([][]int64, len(p.streams))
		for i, s := range p.streams {
			published[i] = s.published
		}
		end.PubSub = p.pubsub.counts(published)
	}
	end.ErrorSamples = errorSamples(logs)
	return issued, errs
}

// status sets how the phase ended: failed, interrupted, or ok.
func (e *execution) status(ctx context.Context, end *core.PhaseEnd, issued, errs int64) {
	spec := e.cfg.Spec
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
}
