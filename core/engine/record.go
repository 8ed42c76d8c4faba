package engine

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// How intervals travel: each driver (an event loop, or a worker goroutine) appends
// every finished operation, as a sample of its times and outcome, to a batch that
// it alone owns — an append into a reused slice, with no lock and no allocation.
// A full batch, or one whose interval has ended, goes to the collector over a
// channel, once per batch. The collector goroutine counts the samples into the
// interval's histograms, and once every driver has moved past an interval, encodes
// and emits it. Nothing a sender does waits for the per-interval work.

// sample is one finished operation as its driver saw it; times are ns from the
// phase start.
type sample struct {
	intended, ready, start, end int64
	bytes                       int64 // written, or read (hits)
	kind                        core.OpKind
	outcome                     core.Outcome
	class                       core.ErrorClass // when outcome is OutcomeError
}

// batch is samples of one driver and one interval.
type batch struct {
	interval int64
	probe    bool // side-probe requests, kept one by one
	samples  []sample
}

// outbox is a driver's side of the path: its current batch and how far it has got.
type outbox struct {
	c     *collector
	cur   *batch
	probe bool
	// mark is the interval of the current batch: every earlier interval of this
	// driver has been handed over. MaxInt64 once the driver is done.
	mark atomic.Int64
}

// add records one finished operation.
func (o *outbox) add(s sample) {
	// A driver's operations end in order; one measured a moment before an
	// earlier-recorded one (a reconnect's end) counts with the current batch.
	idx := max(s.end/o.c.e.interval, o.cur.interval)
	if idx != o.cur.interval || len(o.cur.samples) == cap(o.cur.samples) {
		o.handOver(idx)
	}
	o.cur.samples = append(o.cur.samples, s)
}

// advance says the driver has nothing more for the intervals before now's: an
// idle driver must not hold the others' intervals back.
func (o *outbox) advance(now int64) {
	if idx := now / o.c.e.interval; idx > o.cur.interval {
		o.handOver(idx)
	}
}

// handOver sends the current batch, if it has samples, and starts one for idx.
func (o *outbox) handOver(idx int64) {
	if len(o.cur.samples) > 0 {
		o.c.in <- o.cur
		o.cur = o.c.take()
		o.cur.probe = o.probe
	}
	o.cur.interval = idx
	o.mark.Store(idx)
}

// close hands over the last batch; the driver has finished.
func (o *outbox) close() {
	if len(o.cur.samples) > 0 {
		o.c.in <- o.cur
		o.cur = nil
	}
	o.mark.Store(math.MaxInt64)
}

// opRecord is what one op kind did in one interval.
type opRecord struct {
	ok, hits, misses, bytes int64
	errors                  [core.NumErrorClasses]int64
	// Allocated on first use, and reused as slots cycle.
	resp, svc, lag *recorder
}

func (r *opRecord) empty() bool {
	if r.ok != 0 {
		return false
	}
	for _, n := range r.errors {
		if n != 0 {
			return false
		}
	}
	return true
}

// add adds o into r.
func (r *opRecord) add(o *opRecord) {
	if o.empty() {
		return
	}
	r.ok += o.ok
	r.hits += o.hits
	r.misses += o.misses
	r.bytes += o.bytes
	for c := range r.errors {
		r.errors[c] += o.errors[c]
	}
	r.resp = mergeHist(r.resp, o.resp)
	r.svc = mergeHist(r.svc, o.svc)
	r.lag = mergeHist(r.lag, o.lag)
}

func mergeHist(into, from *recorder) *recorder {
	if from == nil || from.total == 0 {
		return into
	}
	if into == nil {
		into = newRecorder()
	}
	from.mergeInto(into)
	return into
}

// slot is one interval being collected.
type slot struct {
	ops   [core.NumOpKinds]opRecord
	probe []core.ProbeRecord
	// The connection counts when the interval ended (sampleConns).
	opened, lost int64
	sampled      bool
}

// hasOps reports whether the slot counted any operation.
func (s *slot) hasOps() bool {
	for k := range s.ops {
		if !s.ops[k].empty() {
			return true
		}
	}
	return false
}

// reset empties the slot and keeps its histograms and buffers.
func (s *slot) reset() {
	for k := range s.ops {
		r := &s.ops[k]
		for _, h := range [...]*recorder{r.resp, r.svc, r.lag} {
			if h != nil {
				h.reset()
			}
		}
		*r = opRecord{resp: r.resp, svc: r.svc, lag: r.lag}
	}
	s.probe = s.probe[:0]
	s.opened, s.lost, s.sampled = 0, 0, false
}

func clampLatency(v int64) int64 {
	return max(core.HistMin, min(v, core.HistMax))
}

// collector turns the drivers' batches into intervals and emits them in order.
type collector struct {
	e     *execution
	boxes []*outbox
	in    chan *batch // from the drivers
	free  chan *batch // emptied batches, for the drivers to take
	size  int         // samples per batch

	slots map[int64]*slot // intervals not emitted yet
	spare []*slot
	next  int64 // the next interval to emit
	// opsEnd is the latest end of an operation counted (the side probe's aside):
	// after the load's last one, a pub/sub phase still counts deliveries.
	opsEnd int64
	enc    encoder
	// totals sums every emitted interval: the phase's totals, merged as the
	// intervals go, so that nobody downstream has to merge them again.
	totals [core.NumOpKinds]opRecord
	// connsAt is the next interval whose connections are to be sampled;
	// prevOpened and prevLost the counts of the interval emitted last.
	connsAt, prevOpened, prevLost int64
}

// newCollector makes the collector of a phase with drivers load drivers (and a
// probe, if probe), and every batch and slot it will cycle through, before the
// clock starts, so that no operation waits for memory to be allocated.
func newCollector(e *execution, drivers int, probe bool) *collector {
	n := drivers
	if probe {
		n++
	}
	// A batch of 1,024 samples (48 KB) for a few event loops; smaller ones for
	// thousands of goroutines, so that the batches in flight stay a few MB.
	c := &collector{e: e, size: max(64, min(1024, 16384/n)), slots: map[int64]*slot{}}
	inFlight := 2*n + 8
	c.in = make(chan *batch, inFlight)
	total := inFlight + 2*n + 1 // the channel's, one current and one spare per driver, the collector's
	c.free = make(chan *batch, total)
	for range total {
		c.free <- &batch{samples: make([]sample, 0, c.size)}
	}
	for range 3 { // the interval being filled, the one just ended, one being emitted
		s := &slot{}
		for _, k := range e.kinds {
			r := &s.ops[k]
			r.svc = newRecorder()
			if e.open {
				r.resp, r.lag = newRecorder(), newRecorder()
			}
		}
		c.spare = append(c.spare, s)
	}
	return c
}

// outbox makes a driver's outbox.
func (c *collector) outbox(probe bool) *outbox {
	o := &outbox{c: c, probe: probe, cur: c.take()}
	o.cur.probe = probe
	c.boxes = append(c.boxes, o)
	return o
}

// take returns an empty batch.
func (c *collector) take() *batch {
	select {
	case b := <-c.free:
		return b
	default:
		return &batch{samples: make([]sample, 0, c.size)}
	}
}

// collectEvery is how often the collector looks for intervals every driver has
// moved past.
const collectEvery = 10 * time.Millisecond

// run counts batches as they come and emits each interval once every driver has
// moved past it, until done closes; then it emits the rest. It returns the phase's
// elapsed time: the end of its last load operation.
func (c *collector) run(done <-chan struct{}, last func() int64) int64 {
	e := c.e
	tick := time.NewTicker(collectEvery)
	defer tick.Stop()
	for {
		select {
		case b := <-c.in:
			c.count(b)
		case <-tick.C:
			if e.loadDone.Load() {
				// The workload has ended: only the side probe's last request may
				// still come, and the final emission below puts it in the last
				// interval, which must not go out before it.
				continue
			}
			upto := e.now() / e.interval // never an interval still going
			c.sampleConns(upto)
			for _, o := range c.boxes {
				upto = min(upto, o.mark.Load())
			}
			c.drain() // what was sent before the marks were read
			for ; c.next < upto; c.next++ {
				c.emit(c.next, (c.next+1)*e.interval)
			}
		case <-done:
			c.drain()
			end := last()
			// Every interval up to the last operation, and any later one that holds
			// operations; what is left is side-probe requests that ended after the
			// last one. They were sent, and the server counted them: they are kept,
			// in the last interval.
			lastIdx := (end - 1) / e.interval
			for idx, s := range c.slots {
				if idx > lastIdx && s.hasOps() {
					lastIdx = idx
				}
			}
			if end > 0 {
				for idx, s := range c.slots {
					if idx > lastIdx {
						last := c.slot(lastIdx)
						last.probe = append(last.probe, s.probe...)
						delete(c.slots, idx)
					}
				}
			}
			// An interval ends with the phase's last operation, or its last
			// delivery: a pub/sub phase's subscribers drain after its last publish.
			// (An interval that only holds late samples ends now.)
			stop, now := max(end, c.opsEnd), e.now()
			for ; c.next <= lastIdx && end > 0; c.next++ {
				from, to := c.next*e.interval, (c.next+1)*e.interval
				if stop > from {
					to = min(to, stop)
				} else {
					to = min(to, max(now, from+1))
				}
				c.emit(c.next, to)
			}
			return end
		}
	}
}

// drain counts every batch already sent.
func (c *collector) drain() {
	for {
		select {
		case b := <-c.in:
			c.count(b)
		default:
			return
		}
	}
}

// count adds a batch's samples to its interval and returns the batch for reuse.
func (c *collector) count(b *batch) {
	s := c.slot(max(b.interval, c.next)) // late samples count in the next interval
	for i := range b.samples {
		x := &b.samples[i]
		if b.probe {
			s.probe = append(s.probe, core.ProbeRecord{Intended: time.Duration(x.intended), Start: time.Duration(x.start),
				End: time.Duration(x.end), Op: x.kind, Outcome: x.outcome, Class: x.class})
			continue
		}
		c.opsEnd = max(c.opsEnd, x.end)
		r := &s.ops[x.kind]
		if x.outcome == core.OutcomeError {
			r.errors[x.class]++
			continue
		}
		r.ok++
		r.bytes += x.bytes
		switch {
		case !x.kind.CanMiss():
		case x.outcome == core.OutcomeOK:
			r.hits++
		default:
			r.misses++
		}
		if r.svc == nil {
			r.svc = newRecorder()
			if c.e.open {
				r.resp, r.lag = newRecorder(), newRecorder()
			}
		}
		r.svc.record(clampLatency(x.end - x.start))
		if c.e.open {
			r.resp.record(clampLatency(x.end - x.intended))
			r.lag.record(clampLatency(x.start - x.ready))
		}
	}
	b.samples = b.samples[:0]
	select {
	case c.free <- b:
	default:
	}
	runtime.Gosched() // a batch takes tens of microseconds: let senders run
}

func (c *collector) slot(idx int64) *slot {
	s := c.slots[idx]
	if s == nil {
		if n := len(c.spare); n > 0 {
			s, c.spare = c.spare[n-1], c.spare[:n-1]
		} else {
			s = &slot{}
		}
		c.slots[idx] = s
	}
	return s
}

// emit encodes interval idx, with its side-probe requests, and hands it to
// Config.Emit.
func (c *collector) emit(idx, end int64) {
	e := c.e
	s := c.slots[idx]
	delete(c.slots, idx)
	rep := core.IntervalReport{
		Index: int(idx),
		Start: time.Duration(idx * e.interval),
		End:   time.Duration(end),
		Ops:   make([]core.OpInterval, len(e.kinds)),
	}
	for i, k := range e.kinds {
		o := &rep.Ops[i]
		o.Op = k
		if s == nil {
			continue
		}
		r := &s.ops[k]
		if err := c.summarize(o, r); err != nil {
			e.abort("encoding interval histograms: " + err.Error())
		}
		c.totals[k].add(r)
		runtime.Gosched()
	}
	rep.Conns = c.conns(s)
	if s != nil {
		rep.Probe = append(rep.Probe, s.probe...)
		s.reset()
		c.spare = append(c.spare, s)
	}
	if e.cfg.Emit != nil {
		e.cfg.Emit(rep)
	}
}

// result is the phase's totals, one per op kind of the workload.
func (c *collector) result() ([]core.OpInterval, error) {
	out := make([]core.OpInterval, len(c.e.kinds))
	for i, k := range c.e.kinds {
		out[i].Op = k
		if err := c.summarize(&out[i], &c.totals[k]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *collector) summarize(o *core.OpInterval, r *opRecord) error {
	o.OK, o.Hits, o.Misses, o.Bytes, o.Errors = r.ok, r.hits, r.misses, r.bytes, r.errors
	var err error
	if o.Service, err = c.enc.summarize(r.svc); err != nil {
		return err
	}
	o.Response = o.Service
	if c.e.open {
		runtime.Gosched()
		if o.Response, err = c.enc.summarize(r.resp); err != nil {
			return err
		}
		runtime.Gosched()
		if o.Lag, err = c.enc.summarize(r.lag); err != nil {
			return err
		}
	}
	return nil
}
