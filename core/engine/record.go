package engine

import (
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// How intervals travel: every connection records each finished operation into the
// slot of its shard for the interval in which the operation ended. A shard is shared
// by the connections of one event loop (or a group of worker goroutines) and guarded
// by a mutex held for a few counter and histogram increments. When an interval is
// over, the collector goroutine takes the shards' slots of that interval (a pointer
// swap under the mutex), merges them, encodes the histograms and emits the interval.
// Nothing a sender does ever waits for the per-interval work.

// collectGrace is how long after an interval's end its slots are collected: an
// operation that ended just before the boundary may be recorded just after it.
const collectGrace = 20 * time.Millisecond

// opRecord is what one op kind did in one slot.
type opRecord struct {
	ok, hits, misses, bytes int64
	errors                  [core.NumErrorClasses]int64
	// Allocated on first use and reused as slots cycle.
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

// slot is what one shard recorded in one interval.
type slot struct {
	owner    *shard
	interval int64
	ops      [core.NumOpKinds]opRecord
	probe    []core.ProbeRecord
}

// hasOps reports whether the slot recorded any operation.
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
}

// mergeFrom adds src into s; src is left as it was.
func (s *slot) mergeFrom(src *slot) {
	for k := range s.ops {
		s.ops[k].add(&src.ops[k])
	}
	s.probe = append(s.probe, src.probe...)
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

// shard is a set of slots shared by some connections; see the top of this file.
type shard struct {
	mu      sync.Mutex
	open    bool    // record response time and lag too
	cur     *slot   // the newest interval recorded, or nil
	pending []*slot // older intervals not collected yet, oldest first
	free    []*slot
}

// slotsPerShard is how many slots a shard cycles through: the interval being
// recorded, the one just ended (late records), and one the collector is emitting.
const slotsPerShard = 3

// prepare fills the free list with n slots whose recorders are made for kinds.
func (sh *shard) prepare(kinds []core.OpKind, n int) {
	for range n {
		s := &slot{owner: sh}
		for _, k := range kinds {
			r := &s.ops[k]
			r.svc = newRecorder()
			if sh.open {
				r.resp, r.lag = newRecorder(), newRecorder()
			}
		}
		sh.free = append(sh.free, s)
	}
}

// slotFor returns the slot of interval idx; the caller holds mu.
func (sh *shard) slotFor(idx int64) *slot {
	c := sh.cur
	if c != nil && c.interval == idx {
		return c
	}
	for _, p := range sh.pending {
		if p.interval == idx {
			return p
		}
	}
	if c == nil || idx > c.interval {
		if c != nil {
			sh.pending = append(sh.pending, c)
		}
		sh.cur = sh.take(idx)
		return sh.cur
	}
	// An operation recorded long after it ended, its interval collected already:
	// the newest slot takes it, so that it is counted, one interval late.
	return c
}

func (sh *shard) take(idx int64) *slot {
	var s *slot
	if n := len(sh.free); n > 0 {
		s = sh.free[n-1]
		sh.free = sh.free[:n-1]
	} else {
		s = &slot{owner: sh}
	}
	s.interval = idx
	return s
}

// recordOK records a successful operation: hit says a read found its value.
func (sh *shard) recordOK(op *core.Op, hit bool, idx, intended, ready, start, end int64) {
	sh.mu.Lock()
	r := &sh.slotFor(idx).ops[op.Kind]
	r.ok++
	switch {
	case !op.Kind.IsRead():
		r.bytes += int64(op.WriteBytes())
	case hit:
		r.hits++
		r.bytes += int64(op.RespBytes)
	default:
		r.misses++
	}
	if r.svc == nil {
		r.svc = newRecorder()
		if sh.open {
			r.resp, r.lag = newRecorder(), newRecorder()
		}
	}
	r.svc.record(clampLatency(end - start))
	if sh.open {
		r.resp.record(clampLatency(end - intended))
		r.lag.record(clampLatency(start - ready))
	}
	sh.mu.Unlock()
}

// recordError counts a failed operation; errors are never timed.
func (sh *shard) recordError(kind core.OpKind, class core.ErrorClass, idx int64) {
	sh.mu.Lock()
	sh.slotFor(idx).ops[kind].errors[class]++
	sh.mu.Unlock()
}

// recordProbe keeps one side-probe request.
func (sh *shard) recordProbe(rec core.ProbeRecord, idx int64) {
	sh.mu.Lock()
	s := sh.slotFor(idx)
	s.probe = append(s.probe, rec)
	sh.mu.Unlock()
}

// collect moves the slots of intervals before `before` to out.
func (sh *shard) collect(before int64, out []*slot) []*slot {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	keep := sh.pending[:0]
	for _, p := range sh.pending {
		if p.interval < before {
			out = append(out, p)
		} else {
			keep = append(keep, p)
		}
	}
	clear(sh.pending[len(keep):])
	sh.pending = keep
	if sh.cur != nil && sh.cur.interval < before {
		out = append(out, sh.cur)
		sh.cur = nil
	}
	return out
}

// release returns an emptied slot for reuse.
func (sh *shard) release(s *slot) {
	sh.mu.Lock()
	sh.free = append(sh.free, s)
	sh.mu.Unlock()
}

func clampLatency(v int64) int64 {
	return max(core.HistMin, min(v, core.HistMax))
}

// collector merges the shards' slots per interval and emits the intervals in order.
type collector struct {
	e      *phaseRun
	shards []*shard
	aggs   map[int64]*slot // merged slots of intervals not emitted yet
	next   int64           // the next interval to emit
	buf    []*slot
	enc    encoder
	// totals sums every emitted interval: the phase's totals, merged as the
	// intervals go, so that nobody downstream has to merge them again.
	totals [core.NumOpKinds]opRecord
}

// run emits each interval collectGrace after its end, until done closes; then it
// emits the rest. It returns the phase's elapsed time: the end of its last load
// operation.
func (c *collector) run(done <-chan struct{}, last func() int64) int64 {
	e := c.e
	c.aggs = map[int64]*slot{}
	grace := int64(collectGrace)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		due := (c.next+1)*e.interval + grace
		timer.Reset(time.Duration(due - e.now()))
		select {
		case <-timer.C:
			upto := (e.now() - grace) / e.interval
			c.gather(upto)
			for ; c.next < upto; c.next++ {
				c.emit(c.next, (c.next+1)*e.interval, math.MaxInt64)
			}
		case <-done:
			end := last()
			c.gather(math.MaxInt64)
			// Every interval up to the last operation, and any later one that holds
			// operations (recorded late, after their interval had been emitted);
			// what is left is side-probe requests after the last operation.
			lastIdx := (end - 1) / e.interval
			for idx, s := range c.aggs {
				if idx > lastIdx && s.hasOps() {
					lastIdx = idx
				}
			}
			for ; c.next <= lastIdx && end > 0; c.next++ {
				c.emit(c.next, max(min((c.next+1)*e.interval, end), c.next*e.interval), end)
			}
			for idx, s := range c.aggs {
				delete(c.aggs, idx)
				s.reset()
				s.owner.release(s)
			}
			return end
		}
	}
}

// gather merges every slot of the intervals before `before` into the aggregates.
func (c *collector) gather(before int64) {
	for _, sh := range c.shards {
		c.buf = sh.collect(before, c.buf[:0])
		for i, s := range c.buf {
			c.buf[i] = nil
			// A slot of an interval already emitted holds late records: they count
			// in the next interval.
			idx := max(s.interval, c.next)
			agg := c.aggs[idx]
			if agg == nil {
				s.interval = idx
				c.aggs[idx] = s
				continue
			}
			agg.mergeFrom(s)
			s.reset()
			sh.release(s)
			runtime.Gosched() // let a sender that woke up meanwhile have the processor
		}
	}
}

// emit encodes interval idx and hands it to Config.Emit; probe requests that ended
// after the phase's last operation are left out.
func (c *collector) emit(idx, end, phaseEnd int64) {
	e := c.e
	agg := c.aggs[idx]
	delete(c.aggs, idx)
	rep := core.IntervalReport{
		Index: int(idx),
		Start: time.Duration(idx * e.interval),
		End:   time.Duration(end),
		Ops:   make([]core.OpInterval, len(e.kinds)),
	}
	for i, k := range e.kinds {
		o := &rep.Ops[i]
		o.Op = k
		if agg == nil {
			continue
		}
		r := &agg.ops[k]
		if err := c.summarize(o, r); err != nil {
			e.abort("encoding interval histograms: " + err.Error())
		}
		c.totals[k].add(r)
		runtime.Gosched()
	}
	if agg != nil {
		for _, p := range agg.probe {
			if int64(p.End) <= phaseEnd {
				rep.Probe = append(rep.Probe, p)
			}
		}
		agg.reset()
		agg.owner.release(agg)
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
