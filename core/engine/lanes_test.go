//go:build linux

package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// muxConn is a line connection (raw_test.go's protocol) that keeps several
// requests in flight when Do is called from several goroutines at once, as a
// rueidis client with auto-pipelining does: each call writes its request under
// a lock, and a reader goroutine hands each reply to the oldest waiting call.
type muxConn struct {
	nc      net.Conn
	mu      sync.Mutex
	waiting []chan error
	err     error // the connection failed: every call fails
	// sent counts the keys written, when not nil.
	sent map[string]int
}

func dialMux(addr string) (core.Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	c := &muxConn{nc: nc}
	go c.read()
	return c, nil
}

func (c *muxConn) read() {
	r := bufio.NewReader(c.nc)
	for {
		line, err := r.ReadString('\n')
		c.mu.Lock()
		if err != nil {
			c.err = &core.OpError{Class: core.ErrClassConnection, Err: err}
			for _, w := range c.waiting {
				w <- c.err
			}
			c.waiting = nil
			c.mu.Unlock()
			return
		}
		w := c.waiting[0]
		c.waiting = c.waiting[1:]
		c.mu.Unlock()
		if line != "+\n" {
			w <- &core.OpError{Class: core.ErrClassProtocol, Err: fmt.Errorf("reply %q", line)}
			continue
		}
		w <- nil
	}
}

func (c *muxConn) Do(_ context.Context, op *core.Op) error {
	ch := make(chan error, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.waiting = append(c.waiting, ch)
	if c.sent != nil {
		c.sent[string(op.Key)]++
	}
	_, err := c.nc.Write(lineCodec{}.AppendRequest(nil, op))
	c.mu.Unlock()
	if err != nil {
		_ = c.nc.Close() // the reader fails every call waiting
	}
	select {
	case err := <-ch:
		return err
	case <-time.After(2 * time.Second):
		_ = c.nc.Close()
		return &core.OpError{Class: core.ErrClassTimeout, Err: errors.New("no reply")}
	}
}

func (c *muxConn) Close() error { return c.nc.Close() }

func (c *muxConn) Pipelined(context.Context, int) (core.Conn, error) { return c, nil }

// Issue 46: at a fixed rate, a request due while every lane waits for a reply
// waits for a lane, and its response time counts from when it was due.
func TestLanesAtAFixedRateWaitForALane(t *testing.T) {
	precise(t)
	const depth = 4
	srv := newHoldServer(t, depth, 20*time.Millisecond) // 200 ops/s, against 400 asked
	s := spec(1, 400, time.Second, 0)
	s.Pipeline = depth
	end, c := rawRun(t, nil, ExecGoroutines, s, nil, func() (core.Conn, error) { return dialMux(srv.addr()) })
	if end.Status != core.StatusOK {
		t.Fatalf("%s: %s", end.Status, end.Error)
	}
	if got := srv.most.Load(); got != depth {
		t.Errorf("at most %d requests waited on the connection, want %d", got, depth)
	}
	var ok int64
	for _, o := range c.total() {
		if o.OK == 0 {
			continue
		}
		ok += o.OK
		resp, svc := time.Duration(o.Response.P50), time.Duration(o.Service.P50)
		if svc < 15*time.Millisecond || svc > 100*time.Millisecond {
			t.Errorf("%s: service p50 %s, want about the server's 20 ms", o.Op, svc)
		}
		if resp < 3*svc {
			t.Errorf("%s: response p50 %s, service p50 %s: a request that waited for a lane must count its wait", o.Op, resp, svc)
		}
	}
	if ok < 150 || ok > 260 {
		t.Errorf("%d ops in a second of a server that answers 200 a second", ok)
	}
}

// Issue 46: a connection that fails to open is opened inside the phase by one
// lane, the others waiting for it, and the requests still add up.
func TestLanesReopenTheirConnection(t *testing.T) {
	srv := newHoldServer(t, 4, 0)
	var dials int
	var mu sync.Mutex
	s := spec(1, 0, 10*time.Second, 2_000)
	s.Pipeline = 4
	end, c := rawRun(t, nil, ExecGoroutines, s, nil, func() (core.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if dials++; dials == 1 {
			return nil, errors.New("refused, once")
		}
		return dialMux(srv.addr())
	})
	if end.Status != core.StatusOK {
		t.Fatalf("%s: %s", end.Status, end.Error)
	}
	var ok int64
	for _, o := range c.total() {
		ok += o.OK
	}
	if ok != 2_000 || srv.conns.Load() != 1 || srv.most.Load() != 4 {
		t.Errorf("%d ok of 2,000 over %d connections, at most %d in flight (want 1 connection, 4)", ok, srv.conns.Load(), srv.most.Load())
	}
	// Not open before the clock, opened inside the phase by the lanes.
	var opened, lost int
	for _, r := range c.intervals {
		opened, lost = opened+r.Conns.Opened, lost+r.Conns.Lost
	}
	if last := c.intervals[len(c.intervals)-1].Conns; last.Open != 1 || opened != 1 || lost != 0 {
		t.Errorf("connections: %+v at the end, %d opened and %d lost in all; want 1 open, opened once", *last, opened, lost)
	}
}

// A lane sends the op the source filled in for it, though the source reuses its
// buffers for the next lane's op: every key is sent once.
func TestLanesSendTheirOwnOps(t *testing.T) {
	srv := newHoldServer(t, 8, 0)
	const ops = 4_000
	mc := &muxConn{sent: map[string]int{}}
	s := spec(1, 0, 30*time.Second, ops)
	s.Pipeline = 8
	src := func() core.OpSource {
		var n int
		key := make([]byte, 0, 16)
		return sourceFunc(func(op *core.Op) {
			n++
			key = fmt.Appendf(key[:0], "k%d", n)
			op.Kind, op.Key, op.Value = core.OpSet, key, key
		})
	}
	end, _ := rawRun(t, nil, ExecGoroutines, s, src, func() (core.Conn, error) {
		nc, err := net.DialTimeout("tcp", srv.addr(), time.Second)
		if err != nil {
			return nil, err
		}
		mc.nc = nc
		go mc.read()
		return mc, nil
	})
	if end.Status != core.StatusOK {
		t.Fatalf("%s: %s", end.Status, end.Error)
	}
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if len(mc.sent) != ops {
		t.Errorf("%d distinct keys sent of %d ops", len(mc.sent), ops)
	}
	for k, n := range mc.sent {
		if n != 1 {
			t.Errorf("%s sent %d times", k, n)
		}
	}
}

// The source hears of its ops in the order it filled them in, whatever order
// their replies came in (a cluster's nodes answer out of order).
func TestLanesAcknowledgeInOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		issued   int
		finished []uint64
		want     []int // acknowledgements after each finish
	}{
		{"in order", 3, []uint64{0, 1, 2}, []int{1, 2, 3}},
		{"reversed", 3, []uint64{2, 1, 0}, []int{0, 0, 3}},
		{"a gap", 5, []uint64{1, 0, 3, 4, 2}, []int{0, 2, 2, 2, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var acks countAcks
			l := &lanes{ack: &acks, done: make([]bool, 8)}
			for range tc.issued {
				l.issue()
			}
			var got []int
			for _, seq := range tc.finished {
				l.acknowledge(seq)
				got = append(got, int(acks))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("acknowledged %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("the oldest waits behind more than the ring", func(t *testing.T) {
		var acks countAcks
		l := &lanes{ack: &acks, done: make([]bool, 4)}
		for range 4 {
			l.issue()
		}
		for seq := uint64(1); seq < 4; seq++ {
			l.acknowledge(seq)
		}
		if acks != 0 {
			t.Fatalf("%d acknowledged while the oldest is in flight", acks)
		}
		l.issue() // a fifth: the oldest is acknowledged now, and what followed it
		if acks != 4 {
			t.Fatalf("%d acknowledged, want 4", acks)
		}
		l.acknowledge(0) // its late reply acknowledges nothing more
		l.acknowledge(4)
		if acks != 5 {
			t.Fatalf("%d acknowledged, want 5", acks)
		}
	})
}

type countAcks int

func (a *countAcks) Acknowledge() { *a++ }
