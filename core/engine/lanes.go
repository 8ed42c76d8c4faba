package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/cmpbench/cmpbench/core"
)

// lanes drive a pipelined connection that the engine cannot drive raw (TLS, a
// cluster client: a core.Pipeliner): depth goroutines, each with its own op and
// send timer, share the connection, its stream, its records and its error
// bookkeeping under mu. A lane claims the next request (its intended time, counted
// in flight against the count bound), waits for its time, sends it and records
// it. Closed loop, a lane sends its next request as soon as its reply arrives
// (memtier_benchmark's semantics); fixed rate, a request due while every lane
// waits for a reply is taken by the first lane freed, its response time counted
// from when it was due. On the event loops, a ring of slots per connection does
// the same with one goroutine (loop_linux.go).
type lanes struct {
	w     *worker
	depth int
	mu    sync.Mutex
	// The source is acknowledged in the order it filled ops in, though a cluster
	// connection's nodes answer out of order: done marks the finished ops after
	// the oldest unacknowledged one, by their number.
	ack         core.Acknowledger
	issued, acd uint64
	done        []bool
}

func (w *worker) runLanes(ctx context.Context, depth int) {
	defer w.close()
	l := &lanes{w: w, depth: depth, ack: w.ack}
	w.ack = nil // finish does not acknowledge: acknowledge does, in order
	if l.ack != nil {
		l.done = make([]bool, core.MaxPipeline)
	}
	var wg sync.WaitGroup
	for range depth {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.run(ctx)
		}()
	}
	wg.Wait()
}

// run is one lane.
func (l *lanes) run(ctx context.Context) {
	w, e := l.w, l.w.e
	var p pacer
	defer p.close()
	var op core.Op
	var own owned
	var prevEnd int64
	for !e.stop.Load() {
		intended, ok := l.claim()
		if !ok {
			return
		}
		if e.open && !l.waitUntil(&p, intended) {
			l.mu.Lock()
			w.inflight--
			l.mu.Unlock()
			return
		}
		l.mu.Lock()
		w.src.Next(&op)
		own.take(&op)
		seq := l.issue()
		conn, err := l.connection(ctx)
		l.mu.Unlock()
		op.RespBytes = 0
		ready := max(intended, prevEnd)
		start := e.now()
		if err == nil {
			err = conn.Do(ctx, &op)
		}
		end := e.now()
		prevEnd = end
		if !e.open {
			intended, ready = start, start
		}
		l.mu.Lock()
		w.inflight--
		class := e.finish(&w.stream, &op, w.out, &w.el, err, intended, ready, start, end)
		w.watch.outcome(&e.conns, class)
		l.acknowledge(seq)
		l.mu.Unlock()
		if class == int(core.ErrClassConnection) {
			// As one request at a time: wait before the next attempt.
			l.sleep(&p, e.now()+int64(reconnectBackoff))
			prevEnd = e.now()
		}
	}
}

// claim takes the connection's next request, counted in flight, and says when it
// is due (open loop).
func (l *lanes) claim() (intended int64, ok bool) {
	w, e := l.w, l.w.e
	l.mu.Lock()
	defer l.mu.Unlock()
	if intended, ok = e.due(&w.stream, e.open); ok {
		if e.open {
			w.advance()
		}
		w.inflight++
	}
	return intended, ok
}

// connection is the lanes' connection, opened again (pipelined) when it failed to
// open before the phase or since; a failure is the request's connection error.
// Under mu: the other lanes wait for it rather than open their own.
func (l *lanes) connection(ctx context.Context) (core.Conn, error) {
	w := l.w
	if w.conn != nil {
		return w.conn, nil
	}
	c, err := w.e.cfg.Connect(ctx)
	if err == nil {
		c, err = pipelined(ctx, c, l.depth)
	}
	if err != nil {
		return nil, &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	w.conn = c
	w.watch.opened(&w.e.conns)
	return c, nil
}

// pipelined asks a connection for one that keeps depth requests in flight.
func pipelined(ctx context.Context, c core.Conn, depth int) (core.Conn, error) {
	p, ok := c.(core.Pipeliner)
	if !ok {
		_ = c.Close()
		return nil, fmt.Errorf("pipeline %d: the adapter's connection cannot keep several requests in flight", depth)
	}
	return p.Pipelined(ctx, depth)
}

// issue numbers the op just filled in. Under mu.
func (l *lanes) issue() uint64 {
	if l.ack == nil {
		return 0
	}
	if l.issued-l.acd == uint64(len(l.done)) {
		// The oldest has waited behind more than the source keeps: it is
		// acknowledged now, as the source itself would (ycsb.Source), with
		// what finished after it.
		l.acknowledge(l.acd)
	}
	l.issued++
	return l.issued - 1
}

// acknowledge marks op seq finished and acknowledges, oldest first, every
// finished op not preceded by an unfinished one. Under mu.
func (l *lanes) acknowledge(seq uint64) {
	if l.ack == nil || seq < l.acd {
		return // acknowledged already
	}
	n := uint64(len(l.done))
	l.done[seq%n] = true
	for l.acd < l.issued && l.done[l.acd%n] {
		l.done[l.acd%n] = false
		l.ack.Acknowledge()
		l.acd++
	}
}

// waitUntil waits for the intended send time t on the lane's timer. It returns
// false when the phase stops.
func (l *lanes) waitUntil(p *pacer, t int64) bool {
	e := l.w.e
	for {
		d := t - e.now()
		if d <= 0 {
			return true
		}
		if e.stop.Load() {
			return false
		}
		l.sleep(p, e.now()+min(d, int64(maxSleep)))
	}
}

// sleep waits until t (ns from the phase start) and tells the outbox how far the
// connection got.
func (l *lanes) sleep(p *pacer, t int64) {
	e := l.w.e
	p.sleepUntil(e.baseMono + t)
	l.mu.Lock()
	l.w.out.advance(e.now())
	l.mu.Unlock()
}

// owned is a lane's copy of the bytes an op refers to. A source fills ops in
// from buffers of its own that its next Next overwrites, and a lane sends its op
// after releasing the source to the next lane. Reused: once grown, nothing is
// allocated.
type owned struct {
	buf            []byte
	fields, values [][]byte
}

// take copies what op refers to into o, and points op at the copies.
func (o *owned) take(op *core.Op) {
	n := len(op.Key) + len(op.Value)
	for _, f := range op.Fields {
		n += len(f)
	}
	for _, v := range op.Values {
		n += len(v)
	}
	if cap(o.buf) < n {
		o.buf = make([]byte, 0, n)
	}
	o.buf = o.buf[:0]
	op.Key = o.copy(op.Key)
	op.Value = o.copy(op.Value)
	if op.Fields != nil {
		o.fields = o.fields[:0]
		for _, f := range op.Fields {
			o.fields = append(o.fields, o.copy(f))
		}
		op.Fields = o.fields
	}
	if op.Values != nil {
		o.values = o.values[:0]
		for _, v := range op.Values {
			o.values = append(o.values, o.copy(v))
		}
		op.Values = o.values
	}
}

// copy appends b to o.buf, which has room for it, and returns the copy.
func (o *owned) copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	i := len(o.buf)
	o.buf = append(o.buf, b...)
	return o.buf[i:len(o.buf):len(o.buf)]
}
