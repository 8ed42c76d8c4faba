//go:build linux

package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cmpbench/cmpbench/core"
)

// lineServer is a real TCP server for the raw executor's tests, speaking a line
// protocol: each request is a line, each reply a line that the test's script
// chooses: "+" success, "$" miss, "-msg" an error reply ("-OOM..." an OOM).
type lineServer struct {
	ln       net.Listener
	requests atomic.Int64
	accepted atomic.Int64
	open     atomic.Int64 // connections accepted and not closed by either side
	// script answers request number n (from 1): the reply line, a delay before it,
	// and whether to close the connection instead of replying.
	script func(n int64) (reply string, delay time.Duration, hangUp bool)
	// misrouted, when set, says a request line is not this server's to serve:
	// it is answered "-misrouted" (an error of class other).
	misrouted func(line []byte) bool

	mu    sync.Mutex
	conns []net.Conn
}

// listen starts s on a free loopback port (its script "+" unless set), serving
// each connection it accepts until s is closed.
func (s *lineServer) listen() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.ln = ln
	if s.script == nil {
		s.script = func(int64) (string, time.Duration, bool) { return "+", 0, false }
	}
	go s.accept(ln)
	return nil
}

// accept serves each connection ln accepts, until ln is closed.
func (s *lineServer) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.open.Add(1)
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func newLineServer(t testing.TB, script func(n int64) (string, time.Duration, bool)) *lineServer {
	return startLineServer(t, &lineServer{script: script})
}

// startLineServer starts s, its script and check set.
func startLineServer(t testing.TB, s *lineServer) *lineServer {
	t.Helper()
	if err := s.listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

// serve answers one connection without allocating per request.
func (s *lineServer) serve(c net.Conn) {
	defer s.open.Add(-1)
	defer c.Close()
	buf := make([]byte, 64<<10)
	out := make([]byte, 0, 256)
	n := 0
	for {
		m, err := c.Read(buf[n:])
		if err != nil {
			return
		}
		n += m
		for {
			i := bytes.IndexByte(buf[:n], '\n')
			if i < 0 {
				break
			}
			wrong := s.misrouted != nil && s.misrouted(buf[:i])
			copy(buf, buf[i+1:n])
			n -= i + 1
			reply, delay, hangUp := s.script(s.requests.Add(1))
			if wrong {
				reply = "-misrouted"
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			if hangUp {
				return
			}
			out = append(append(out[:0], reply...), '\n')
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

// close stops accepting and drops every connection: a dead server.
func (s *lineServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
}

func (s *lineServer) addr() string { return s.ln.Addr().String() }

// lineConn is a core.RawConn of the line protocol.
type lineConn struct {
	fd      int
	addr    string
	timeout time.Duration
}

func dialLine(addr string, timeout time.Duration) (*lineConn, error) {
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	rc, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var derr error
	if err := rc.Control(func(orig uintptr) { fd, derr = unix.FcntlInt(orig, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &lineConn{fd: fd, addr: addr, timeout: timeout}, nil
}

// dialConn is dialLine as a core.Conn, nil on failure.
func dialConn(addr string, timeout time.Duration) (core.Conn, error) {
	c, err := dialLine(addr, timeout)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (c *lineConn) Raw() (core.RawIO, bool) {
	return core.RawIO{FD: c.fd, Timeout: c.timeout, Codec: lineCodec{}}, true
}

// Do is the blocking path, for the goroutine executor and the side probe. Like the
// resp adapter's, it opens a new socket after a failure.
func (c *lineConn) Do(_ context.Context, op *core.Op) error {
	if c.fd < 0 {
		nc, err := dialLine(c.addr, c.timeout)
		if err != nil {
			return &core.OpError{Class: core.ErrClassConnection, Err: err}
		}
		c.fd = nc.fd
	}
	err := c.roundTrip(op)
	var oe *core.OpError
	if errors.As(err, &oe) && oe.Class == core.ErrClassConnection {
		unix.Close(c.fd)
		c.fd = -1
	}
	return err
}

func (c *lineConn) roundTrip(op *core.Op) error {
	req := lineCodec{}.AppendRequest(nil, op)
	if _, err := unix.Write(c.fd, req); err != nil {
		return &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	buf := make([]byte, 256)
	n := 0
	for {
		fds := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, 1000); err != nil && err != unix.EINTR {
			return &core.OpError{Class: core.ErrClassConnection, Err: err}
		}
		m, err := unix.Read(c.fd, buf[n:])
		if err == unix.EAGAIN {
			continue
		}
		if err != nil || m == 0 {
			return &core.OpError{Class: core.ErrClassConnection, Err: errors.New("closed")}
		}
		n += m
		if k, err := (lineCodec{}).ParseReply(buf[:n], op); k > 0 {
			return err
		}
	}
}

func (c *lineConn) Close() error {
	if c.fd < 0 {
		return nil
	}
	return unix.Close(c.fd)
}

type lineCodec struct{}

func (lineCodec) AppendRequest(dst []byte, op *core.Op) []byte {
	dst = append(dst, byte('0'+op.Kind))
	dst = append(dst, op.Key...)
	return append(dst, '\n')
}

var errOOM = &core.OpError{Class: core.ErrClassOOM, Err: errors.New("OOM command not allowed")}

func (lineCodec) ParseReply(src []byte, op *core.Op) (int, error) {
	i := bytes.IndexByte(src, '\n')
	if i < 0 {
		return 0, nil
	}
	switch {
	case i == 1 && src[0] == '+':
		op.RespBytes = 1
		return i + 1, nil
	case i == 1 && src[0] == '$':
		return i + 1, core.ErrMiss
	case i > 3 && string(src[:4]) == "-OOM":
		return i + 1, errOOM
	case i > 0 && src[0] == '-':
		return i + 1, &core.OpError{Class: core.ErrClassOther, Err: errors.New(string(src[1:i]))}
	}
	return i + 1, &core.OpError{Class: core.ErrClassProtocol, Err: errors.New("bad reply")}
}

// rawRun runs a phase of raw line connections to srv with the given executor.
func rawRun(t testing.TB, srv *lineServer, exec string, s core.PhaseSpec, src func() core.OpSource, connect func() (core.Conn, error)) (core.PhaseEnd, *collected) {
	t.Helper()
	if connect == nil {
		connect = func() (core.Conn, error) { return dialConn(srv.addr(), 300*time.Millisecond) }
	}
	if src == nil {
		src = func() core.OpSource { return fixedSource{core.OpGet} }
	}
	c := &collected{}
	end := Run(context.Background(), Config{
		Spec:             s,
		Connect:          func(context.Context) (core.Conn, error) { return connect() },
		NewSource:        func(int) (core.OpSource, error) { return src(), nil },
		NewProbeSource:   func() (core.OpSource, error) { return src(), nil },
		Emit:             c.emit,
		UnreachableAfter: 300 * time.Millisecond,
		Executor:         exec,
	})
	for i, r := range c.intervals {
		if r.Index != i {
			t.Fatalf("interval %d emitted at position %d", r.Index, i)
		}
	}
	return end, c
}

var executors = []string{ExecLoops, ExecGoroutines}

func TestRawOutcomesAreCounted(t *testing.T) {
	srv := newLineServer(t, func(n int64) (string, time.Duration, bool) {
		switch {
		case n%10 == 0:
			return "$", 0, false
		case n%25 == 1:
			return "-OOM command not allowed", 0, false
		}
		return "+", 0, false
	})
	for _, exec := range executors {
		t.Run(exec, func(t *testing.T) {
			srv.requests.Store(0)
			end, c := rawRun(t, srv, exec, spec(5, 0, 10*time.Second, 10_000), nil, nil)
			if end.Status != core.StatusOK {
				t.Fatalf("%s: %s", end.Status, end.Error)
			}
			got := c.total()[core.OpGet]
			if got.OK+got.ErrorTotal() != 10_000 || got.Errors[core.ErrClassOOM] != 400 || got.Misses != 1000 || got.Hits != 10_000-400-1000 {
				t.Fatalf("ok=%d hits=%d misses=%d errors=%v", got.OK, got.Hits, got.Misses, got.Errors)
			}
			if got.Service.Count != got.OK {
				t.Fatalf("%d timed of %d successes", got.Service.Count, got.OK)
			}
			if len(end.ErrorSamples) != 1 || end.ErrorSamples[0] != "oom: OOM command not allowed" {
				t.Fatalf("error samples %q", end.ErrorSamples)
			}
		})
	}
}

func TestAutoPicksLoopsForRawConnections(t *testing.T) {
	srv := newLineServer(t, nil)
	// The loop executor never calls Do: a Do that panics proves which one ran.
	end, c := rawRun(t, srv, ExecAuto, spec(3, 0, 10*time.Second, 3000), nil, func() (core.Conn, error) {
		lc, err := dialLine(srv.addr(), time.Second)
		if err != nil {
			return nil, err
		}
		return &loopOnly{lc}, nil
	})
	if end.Status != core.StatusOK || c.total()[core.OpGet].OK != 3000 {
		t.Fatalf("%s %s", end.Status, end.Error)
	}
}

// loopOnly is a raw connection whose blocking path must not be used.
type loopOnly struct{ *lineConn }

func (l *loopOnly) Do(context.Context, *core.Op) error {
	panic("the event loop called Do")
}

// slowSource makes every send late by its delay: a client-side stall before the
// send, which must show as lag and never as service time.
type slowSource struct{ delay time.Duration }

func (s slowSource) Next(op *core.Op) {
	time.Sleep(s.delay)
	op.Kind, op.Key = core.OpGet, fixedKey
}

func TestSendLagIsTheClientsOwnDelay(t *testing.T) {
	srv := newLineServer(t, nil)
	for _, exec := range executors {
		t.Run(exec, func(t *testing.T) {
			// 2 connections at 100 ops/s: every send is due 20 ms after the last
			// on its connection, and the client takes 3 ms to prepare it.
			end, c := rawRun(t, srv, exec, spec(2, 100, 1500*time.Millisecond, 0), func() core.OpSource { return slowSource{3 * time.Millisecond} }, nil)
			if end.Status != core.StatusOK {
				t.Fatal(end.Error)
			}
			got := c.total()[core.OpGet]
			if got.Lag.Count != got.OK || got.OK < 100 {
				t.Fatalf("%d lag values for %d ops", got.Lag.Count, got.OK)
			}
			if p := time.Duration(got.Lag.P50); p < 3*time.Millisecond || p > 20*time.Millisecond {
				t.Fatalf("lag p50 %s, want the 3 ms the client took", p)
			}
			if p := time.Duration(got.Service.P90); p >= 3*time.Millisecond {
				t.Fatalf("service p90 %s: the client's delay leaked into service time", p)
			}
			if got.Response.P50 < got.Lag.P50+got.Service.P50/2 {
				t.Fatalf("response p50 %d below lag p50 %d", got.Response.P50, got.Lag.P50)
			}
		})
	}
}

func TestConnectingIsNotTimed(t *testing.T) {
	srv := newLineServer(t, nil)
	for _, exec := range executors {
		t.Run(exec, func(t *testing.T) {
			before := time.Now()
			end, c := rawRun(t, srv, exec, spec(4, 0, 300*time.Millisecond, 0), nil, func() (core.Conn, error) {
				time.Sleep(100 * time.Millisecond) // a slow handshake (TLS, AUTH)
				return dialConn(srv.addr(), time.Second)
			})
			if end.Status != core.StatusOK {
				t.Fatal(end.Error)
			}
			if end.Started.Sub(before) < 100*time.Millisecond {
				t.Fatal("the phase clock started before its connections were open")
			}
			if max := time.Duration(c.total()[core.OpGet].Service.Max); max >= 100*time.Millisecond {
				t.Fatalf("service max %s: connection setup was timed", max)
			}
		})
	}
}

func TestConnectionsThatDidNotOpenBeforeThePhaseAreNoted(t *testing.T) {
	srv := newLineServer(t, nil)
	for _, tc := range []struct {
		name    string
		failing int64 // the first Connect calls that fail
		notes   []string
	}{
		{"all open", 0, nil},
		{"two of four", 2, []string{"2 of 4 connections did not open before the phase started (refused for the test); they were opened inside it, as after an error"}},
		{"none", 4, []string{
			"4 of 4 connections did not open before the phase started (refused for the test); they were opened inside it, as after an error",
			"with no connection open before the phase, the engine could not tell whether event loops could drive them: it ran one goroutine per connection",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			end, c := rawRun(t, srv, ExecAuto, spec(4, 0, 10*time.Second, 400), nil, func() (core.Conn, error) {
				if calls.Add(1) <= tc.failing {
					return nil, errors.New("refused for the test")
				}
				return dialConn(srv.addr(), time.Second)
			})
			if end.Status != core.StatusOK {
				t.Fatal(end.Error)
			}
			if got := c.total()[core.OpGet]; got.OK != 400 {
				t.Fatalf("ok=%d errors=%v", got.OK, got.Errors)
			}
			if !slices.Equal(end.Notes, tc.notes) {
				t.Fatalf("notes %q, want %q", end.Notes, tc.notes)
			}
		})
	}
}

// redialConn is a lineConn whose reconnect is slow (TLS, AUTH) and can be made
// outside Do, as the resp adapter's connections are.
type redialConn struct {
	*lineConn
	delay time.Duration
}

func (c *redialConn) Redial(context.Context) error {
	if c.fd >= 0 {
		return nil
	}
	time.Sleep(c.delay)
	nc, err := dialLine(c.addr, c.timeout)
	if err != nil {
		return err
	}
	c.fd = nc.fd
	return nil
}

func (c *redialConn) Do(ctx context.Context, op *core.Op) error {
	if err := c.Redial(ctx); err != nil {
		return &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	return c.lineConn.Do(ctx, op)
}

func TestReconnectIsSendLagNotServiceTime(t *testing.T) {
	// The server hangs up on every 20th request; each reconnect takes 100 ms. The
	// goroutine executor reconnects before it starts the next operation's clock.
	const delay = 100 * time.Millisecond
	srv := newLineServer(t, func(n int64) (string, time.Duration, bool) { return "+", 0, n%20 == 0 })
	end, c := rawRun(t, srv, ExecGoroutines, spec(1, 50, 2*time.Second, 0), nil, func() (core.Conn, error) {
		lc, err := dialLine(srv.addr(), time.Second)
		if err != nil {
			return nil, err
		}
		return &redialConn{lineConn: lc, delay: delay}, nil
	})
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	got := c.total()[core.OpGet]
	if got.Errors[core.ErrClassConnection] < 3 || srv.accepted.Load() < 4 {
		t.Fatalf("errors %v, %d connections accepted: the server did not hang up", got.Errors, srv.accepted.Load())
	}
	if max := time.Duration(got.Service.Max); max >= delay {
		t.Fatalf("service max %s: a reconnect was timed as service", max)
	}
	if max := time.Duration(got.Lag.Max); max < delay {
		t.Fatalf("send lag max %s: a reconnect of %s is not in it", max, delay)
	}
}

func TestLoopReconnectsAtMostConnectParallelAtOnce(t *testing.T) {
	// Every other request is answered by hanging up, and a reconnect takes 20 ms:
	// 4 × connectParallel connections would all dial at once.
	srv := newLineServer(t, func(n int64) (string, time.Duration, bool) { return "+", 0, n%2 == 0 })
	var now, peak atomic.Int64
	connect := func() (core.Conn, error) {
		n := now.Add(1)
		defer now.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		return dialConn(srv.addr(), time.Second)
	}
	end, c := rawRun(t, srv, ExecLoops, spec(4*connectParallel, 0, 10*time.Second, 8*connectParallel), nil, connect)
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	if got := c.total()[core.OpGet]; got.Errors[core.ErrClassConnection] < 2*connectParallel {
		t.Fatalf("errors %v: the connections were not dropped", got.Errors)
	}
	if p := peak.Load(); p > connectParallel {
		t.Fatalf("%d connections were being opened at once, more than %d", p, connectParallel)
	}
}

func TestLoopTimesOutAndReconnects(t *testing.T) {
	// Request 20 never gets a reply: a timeout error, after which the connection is
	// replaced and the phase goes on.
	srv := newLineServer(t, func(n int64) (string, time.Duration, bool) {
		if n == 20 {
			return "+", 2 * time.Second, false
		}
		return "+", 0, false
	})
	end, c := rawRun(t, srv, ExecLoops, spec(1, 0, 10*time.Second, 100), nil, nil)
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	got := c.total()[core.OpGet]
	if got.Errors[core.ErrClassTimeout] != 1 || got.OK != 99 {
		t.Fatalf("ok=%d errors=%v", got.OK, got.Errors)
	}
	if srv.accepted.Load() != 2 {
		t.Fatalf("%d connections accepted, want the first and its replacement", srv.accepted.Load())
	}
	if time.Duration(got.Service.Max) > 300*time.Millisecond {
		t.Fatal("the late reply was timed")
	}
}

func TestLoopSurvivesAServerThatHangsUp(t *testing.T) {
	srv := newLineServer(t, func(n int64) (string, time.Duration, bool) { return "+", 0, n%50 == 0 })
	for _, exec := range executors {
		t.Run(exec, func(t *testing.T) {
			srv.requests.Store(0)
			end, c := rawRun(t, srv, exec, spec(2, 0, 10*time.Second, 1000), nil, nil)
			if end.Status != core.StatusOK {
				t.Fatal(end.Error)
			}
			got := c.total()[core.OpGet]
			if got.OK+got.ErrorTotal() != 1000 || got.Errors[core.ErrClassConnection] < 15 || got.OK < 900 {
				t.Fatalf("ok=%d errors=%v", got.OK, got.Errors)
			}
		})
	}
}

func TestLoopGivesUpOnADeadServer(t *testing.T) {
	srv := newLineServer(t, nil)
	go func() { time.Sleep(200 * time.Millisecond); srv.close() }()
	start := time.Now()
	end, c := rawRun(t, srv, ExecLoops, spec(4, 0, time.Minute, 0), nil, nil)
	if end.Status != core.StatusFailed || !strings.Contains(end.Error, "unreachable") {
		t.Fatalf("%s: %s", end.Status, end.Error)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
	got := c.total()[core.OpGet]
	if got.OK == 0 || got.Errors[core.ErrClassConnection] == 0 {
		t.Fatalf("ok=%d errors=%v", got.OK, got.Errors)
	}
	if perConnPerSec := float64(got.Errors[core.ErrClassConnection]) / 4 / end.Elapsed.Seconds(); perConnPerSec > 150 {
		t.Fatalf("%.0f errors per connection per second: no backoff", perConnPerSec)
	}
}

func TestLoopOpenLoopHoldsTheRate(t *testing.T) {
	precise(t)
	srv := newLineServer(t, nil)
	const rate = 4000
	end, c := rawRun(t, srv, ExecLoops, spec(8, rate, 2*time.Second, 0), nil, nil)
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	got := c.total()[core.OpGet]
	if achieved := float64(got.OK) / end.Elapsed.Seconds(); achieved < rate*0.98 || achieved > rate*1.02 {
		t.Fatalf("achieved %.0f ops/s of %d", achieved, rate)
	}
	if p := time.Duration(got.Lag.P99); p > 5*time.Millisecond {
		t.Fatalf("lag p99 %s on an idle loopback", p)
	}
}

func TestLoopStopsWhenInterrupted(t *testing.T) {
	srv := newLineServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	end := Run(ctx, Config{
		Spec:      spec(4, 0, time.Minute, 0),
		Connect:   func(context.Context) (core.Conn, error) { return dialConn(srv.addr(), time.Second) },
		NewSource: func(int) (core.OpSource, error) { return fixedSource{core.OpGet}, nil },
		Executor:  ExecLoops,
	})
	if end.Status != core.StatusInterrupted || end.Elapsed > 2*time.Second {
		t.Fatalf("%s after %s", end.Status, end.Elapsed)
	}
}

func TestLoopHotPathDoesNotAllocate(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("counts allocations over a long run, without the race detector")
	}
	srv := newLineServer(t, nil)
	for _, depth := range []int{1, 16} { // one at a time, and pipelined (issue 46)
		allocs := func(ops int64) uint64 {
			var before, after runtime.MemStats
			s := spec(2, 0, time.Minute, ops)
			s.Pipeline = depth
			runtime.GC()
			runtime.ReadMemStats(&before)
			rawRun(t, srv, ExecLoops, s, nil, func() (core.Conn, error) { return dialPipeline(srv.addr()) })
			runtime.ReadMemStats(&after)
			return after.Mallocs - before.Mallocs
		}
		small, large := allocs(1000), allocs(101_000)
		if extra := int64(large) - int64(small); float64(extra)/100_000 > 0.001 {
			t.Fatalf("pipeline %d: 100,000 more ops cost %d more allocations", depth, extra)
		}
	}
}

func BenchmarkHotPathLoops(b *testing.B) {
	srv := newLineServer(b, nil)
	b.ReportAllocs()
	b.ResetTimer()
	end, _ := rawRun(b, srv, ExecLoops, spec(4, 0, time.Hour, int64(b.N)), nil, nil)
	if end.Status != core.StatusOK {
		b.Fatal(end.Error)
	}
}

// BenchmarkHotPathLoopsPipelined is BenchmarkHotPathLoops with 16 requests in
// flight per connection (issue 46): written together, replies parsed as they
// come.
func BenchmarkHotPathLoopsPipelined(b *testing.B) {
	srv := newLineServer(b, nil)
	s := spec(4, 0, time.Hour, int64(b.N))
	s.Pipeline = 16
	b.ReportAllocs()
	b.ResetTimer()
	end, _ := rawRun(b, srv, ExecLoops, s, nil, func() (core.Conn, error) { return dialPipeline(srv.addr()) })
	if end.Status != core.StatusOK {
		b.Fatal(end.Error)
	}
}

// BenchmarkPacedLoops runs the loops at a fixed 20,000 ops/s over 50
// connections, where each send waits for its time (issue 30), against a line
// server in a process of its own (this test binary again, see TestMain), as a
// plugin runs apart from the server it measures. ns/op is the rate's; what it
// reports is the engine's CPU per operation (the phase's setup included: run it
// long, -benchtime 100000x) and the send lag's p99, the cost and the precision of
// the loop's waits.
func BenchmarkPacedLoops(b *testing.B) {
	addr := lineServerProcess(b)
	connect := func() (core.Conn, error) { return dialConn(addr, 300*time.Millisecond) }
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	end, c := rawRun(b, nil, ExecLoops, spec(50, 20_000, time.Hour, int64(b.N)), nil, connect)
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if end.Status != core.StatusOK {
		b.Fatal(end.Error)
	}
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(time.Duration(c.total()[core.OpGet].Lag.P99).Microseconds()), "lag-p99-µs")
}

// The side probe keeps its time beside loops that wait in the kernel (loop.wait):
// a loop that blocks must leave the network polled for the probe's timer and
// replies, which go through Go's netpoller. When the loop parked through the
// netpoller once a millisecond instead, nobody polled between its parks, and the
// probe's sends were 0.8-1.9 ms late on average; they are tens of µs late now.
func TestProbeIsOnTimeBesideBlockingLoops(t *testing.T) {
	precise(t)
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Skip("a loop waits in the kernel only when it leaves a P free: needs GOMAXPROCS >= 2")
	}
	s := spec(20, 5_000, 3*time.Second, 0)
	if n := loopsFor(s.Rate, procs, s.Connections); !loopsBlock(s.Rate, n, procs) {
		t.Fatalf("%d loops at %v ops/s on %d Ps would not block: the test tests nothing", n, s.Rate, procs)
	}
	s.Probe = &core.ProbeSpec{Rate: 200, Op: core.OpGet}
	addr := lineServerProcess(t)
	end, c := rawRun(t, nil, ExecLoops, s, nil, func() (core.Conn, error) { return dialConn(addr, 300*time.Millisecond) })
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	var lags []time.Duration
	for _, r := range c.intervals {
		for _, p := range r.Probe {
			lags = append(lags, p.Start-p.Intended)
		}
	}
	if len(lags) < 400 {
		t.Fatalf("%d probe requests in %s", len(lags), end.Elapsed)
	}
	slices.Sort(lags)
	t.Logf("the probe's send lag: p50 %s, p90 %s, max %s", lags[len(lags)/2], lags[len(lags)*9/10], lags[len(lags)-1])
	if p50 := lags[len(lags)/2]; p50 > 250*time.Microsecond {
		t.Fatalf("the probe's send lag: p50 %s, p90 %s over %d requests; want a p50 under 250µs", p50, lags[len(lags)*9/10], len(lags))
	}
}

// lineServerEnv makes the test binary a line server (TestMain): it prints its
// address and serves until its standard input closes.
const lineServerEnv = "CMPBENCH_TEST_LINE_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(lineServerEnv) != "" {
		s := &lineServer{}
		if err := s.listen(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(s.addr())
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lineServerProcess starts a line server in a process of its own, ended with t,
// and returns its address.
func lineServerProcess(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), lineServerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	hung := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() }) // it never said where it listens
	line, err := bufio.NewReader(stdout).ReadString('\n')
	hung.Stop()
	if err != nil {
		t.Fatalf("the line server process: %v", err)
	}
	return strings.TrimSpace(line)
}

// ackSource checks that the engine tells a source each operation has finished
// (core.Acknowledger) before it asks for the next, whoever drives the connection.
type ackSource struct {
	fixedSource
	srv            *lineServer
	issued, acked  int64
	early, unacked *atomic.Int64
	acks           *atomic.Int64
}

func (s *ackSource) Next(op *core.Op) {
	if s.issued != s.acked {
		s.unacked.Add(1)
	}
	s.issued++
	s.fixedSource.Next(op)
}

func (s *ackSource) Acknowledge() {
	s.acked++
	// Acknowledgements so far, then the requests the server has seen: read in
	// this order, other connections' acknowledgements in between cannot make the
	// requests look fewer (each was counted by the server before its reply).
	acked := s.acks.Add(1)
	if s.srv.requests.Load() < acked {
		s.early.Add(1) // acknowledged before the server saw the request
	}
}

func TestSourcesAreToldWhenAnOperationFinishes(t *testing.T) {
	srv := newLineServer(t, nil)
	for _, exec := range executors {
		t.Run(exec, func(t *testing.T) {
			srv.requests.Store(0)
			var early, unacked, acks atomic.Int64
			src := func() core.OpSource {
				return &ackSource{fixedSource: fixedSource{core.OpGet}, srv: srv, early: &early, unacked: &unacked, acks: &acks}
			}
			end, c := rawRun(t, srv, exec, spec(4, 20_000, 10*time.Second, 2000), src, nil)
			if end.Status != core.StatusOK {
				t.Fatalf("%s: %s", end.Status, end.Error)
			}
			// A failed operation is acknowledged too (as YCSB's), and may never have
			// reached the server: only those may be acknowledged "early".
			if got := c.total()[core.OpGet]; acks.Load() != got.OK+got.ErrorTotal() || unacked.Load() != 0 || early.Load() > got.ErrorTotal() {
				t.Fatalf("%d operations (%d failed), %d acknowledged; %d asked for before the last was acknowledged, %d acknowledged early",
					got.OK+got.ErrorTotal(), got.ErrorTotal(), acks.Load(), unacked.Load(), early.Load())
			}
		})
	}
}

// The loops call the kernel without telling the scheduler, which is only safe on
// non-blocking sockets: a connection that hands over a blocking one fails the
// phase, saying why, instead of hanging the process.
func TestLoopsRefuseABlockingSocket(t *testing.T) {
	srv := newLineServer(t, nil)
	end, _ := rawRun(t, srv, ExecLoops, spec(2, 0, 10*time.Second, 100), nil, func() (core.Conn, error) {
		lc, err := dialLine(srv.addr(), time.Second)
		if err != nil {
			return nil, err
		}
		if err := unix.SetNonblock(lc.fd, false); err != nil {
			return nil, err
		}
		return lc, nil
	})
	if end.Status == core.StatusOK || !strings.Contains(end.Error, "blocking socket") {
		t.Fatalf("%s %q, want the phase failed for a blocking socket", end.Status, end.Error)
	}
}
