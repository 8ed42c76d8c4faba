package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cmpbench/cmpbench/core"
)

// loopsAvailable says this platform has the event-loop executor.
const loopsAvailable = true

// Event loops drive raw connections (core.RawConn) the way memtier_benchmark's
// libevent threads do: a loop (one per core at full load; see loopsFor) owns many
// non-blocking sockets in an epoll set of its own, takes every ready one in one
// epoll_wait, writes each request with one write and reads each reply with one
// read. There is no goroutine per connection to park and wake, and no wasted read
// that finds nothing. When nothing is ready, the loop parks on its epoll
// descriptor through Go's netpoller, so the runtime's other goroutines (the
// collector, the probe, the plugin's gRPC stream) run and are woken on time, as a
// thread blocked in epoll_wait would not let them. Open-loop
// sends are timed by a timerfd in the loop's epoll set, which wakes it within tens
// of microseconds (Go's own timers are only as fine as a millisecond when idle).
// A paced loop that leaves a P free waits in epoll_pwait2 instead, and yields its P
// now and then (wait, loopsBlock): one system call in place of a timer, a poll and
// the netpoller's trip.

const (
	// timeoutCheckEvery is how often busy connections are checked for late replies.
	timeoutCheckEvery = int64(10 * time.Millisecond)
	// yieldEvery bounds how long a loop that may block (loopsBlock) keeps its P
	// before it yields it to the scheduler (runtime.Gosched), so that goroutines
	// readied onto it run; it also bounds each wait in the kernel.
	yieldEvery  = int64(time.Millisecond)
	readBufSize = 4 << 10
	maxEvents   = 256
)

type connState uint8

const (
	stReady   connState = iota // sends when a request is due and a slot is free
	stBackoff                  // after a connection error, in the heap until it may try again
	stDialing                  // a reconnect is under way
	stDone                     // finished its share of the phase
)

// rconn is one connection of a loop. It keeps up to depth requests in flight
// (PhaseSpec.Pipeline; one unless a phase pipelines), in a ring of slots: the
// replies come in the order the requests went, so the oldest is the one the
// next reply answers.
type rconn struct {
	stream
	id  int32
	raw core.RawIO
	fds []int // the connection's sockets: raw.FDs, or raw.FD alone
	// fd is the socket of the request in flight, or of the last one: fds[sock];
	// -1 when there is no connection.
	fd     int
	sock   int32
	router core.Router // set when the connection has several sockets
	// stale says that another socket of the connection failed while a request
	// was in flight: the connection goes once that request is done.
	stale bool
	state connState

	depth  int
	slots  []request // the requests in flight from head, stream.inflight of them
	head   int
	unsent int // of those in flight, the last ones encoded but not written yet

	wbuf    []byte
	woff    int
	wantOut bool // waiting for the socket to take the rest of the requests
	rbuf    []byte
	rlen    int

	// freeAt is when the connection last had a slot free again after all were
	// taken (for one slot: when its last reply came): a request due while all
	// were taken is ready then.
	freeAt int64
	wake   int64 // heap key: the next send, or the end of a backoff
	hidx   int
}

// request is one request of a connection: its operation and its times.
type request struct {
	op                     core.Op
	intended, ready, start int64
}

// oldest is the request the next reply answers.
func (c *rconn) oldest() *request { return &c.slots[c.head] }

// take is a free slot for the next request, now in flight.
func (c *rconn) take() *request {
	s := &c.slots[(c.head+c.inflight)%len(c.slots)]
	c.inflight++
	return s
}

// release frees the oldest slot, its request done.
func (c *rconn) release() *request {
	s := &c.slots[c.head]
	c.head = (c.head + 1) % len(c.slots)
	c.inflight--
	return s
}

// errNoRoute fails a request that no socket of a connection just opened serves.
var errNoRoute = errors.New("no connection to the server that serves this request (its node is down or left the cluster)")

type dialResult struct {
	id         int32
	conn       core.Conn
	err        error
	start, end int64
}

// Special values of an epoll event's Fd field (a connection's index otherwise).
const (
	evDialed = -1 // the eventfd: a reconnect finished
	evTimer  = -2 // the timerfd: a send is due
)

type loop struct {
	e       *execution
	ctx     context.Context
	out     *outbox
	epfd    int
	epoll   syscall.RawConn // epfd through Go's netpoller, to park on
	efile   *os.File
	pollFn  func(uintptr) bool // polls into ready; made once, so that parking does not allocate
	ready   int
	evfd    int   // written when a reconnect finishes, to wake the loop
	tfd     int   // the pacing timer
	armed   int64 // when tfd fires, ns from the phase start; 0 = disarmed
	yielded int64 // when a loop that blocks last yielded its P
	// blocks says the loop may wait in a system call (block, loopsBlock), and
	// the kernel has epoll_pwait2.
	blocks bool
	ts     kernelTimespec
	conns  []*rconn
	heap   wakeHeap
	events []unix.EpollEvent
	el     errLog
	live   int // connections not done

	mu     sync.Mutex
	closed bool
	dialed chan dialResult
	dials  chan struct{} // the phase's reconnects under way, shared by its loops

	lastCheck int64
}

// newLoops spreads the streams over n loops (loopsFor) and registers their
// sockets; blocks says they may wait in system calls (loopsBlock).
func newLoops(e *execution, c *collector, streams []*stream, n int, blocks bool) ([]*loop, error) {
	loops := make([]*loop, n)
	for i := range loops {
		l, err := newLoop(e, c.outbox(false), blocks)
		if err != nil {
			for _, l := range loops[:i] {
				l.closeFDs()
			}
			return nil, err
		}
		loops[i] = l
	}
	depth := e.cfg.Spec.Depth()
	for i, s := range streams {
		l := loops[i%n]
		c := &rconn{stream: *s, id: int32(len(l.conns)), fd: -1, hidx: -1, rbuf: make([]byte, readBufSize),
			depth: depth, slots: make([]request, depth)}
		l.conns = append(l.conns, c)
		if conn := c.conn; conn != nil {
			c.conn = nil
			if err := l.attach(c, conn); err != nil {
				for _, l := range loops {
					l.closeFDs()
				}
				return nil, err // the caller closes every stream's connection
			}
		}
	}
	dials := make(chan struct{}, connectParallel)
	for _, l := range loops {
		l.live = len(l.conns)
		l.dialed = make(chan dialResult, len(l.conns))
		l.dials = dials
	}
	return loops, nil
}

func newLoop(e *execution, out *outbox, blocks bool) (*loop, error) {
	l := &loop{e: e, out: out, epfd: -1, evfd: -1, tfd: -1, events: make([]unix.EpollEvent, maxEvents), blocks: blocks}
	var err error
	fail := func(what string, err error) (*loop, error) {
		l.closeFDs()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fail("epoll_create1", err)
	}
	if err := unix.SetNonblock(l.epfd, true); err != nil {
		return fail("epoll descriptor", err)
	}
	l.pollFn = func(uintptr) bool {
		l.ready = l.poll()
		return l.ready > 0
	}
	if !blocks {
		if err := l.netpoll(); err != nil {
			return fail("epoll descriptor", err)
		}
	}
	if l.evfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return fail("eventfd", err)
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.evfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: evDialed}); err != nil {
		return fail("epoll_ctl eventfd", err)
	}
	if l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		return fail("timerfd_create", err)
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.tfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: evTimer}); err != nil {
		return fail("epoll_ctl timerfd", err)
	}
	return l, nil
}

// netpoll registers the loop's epoll descriptor with Go's netpoller, to park
// on. A loop that blocks never parks (wait) and does not register it: the
// netpoller's thread would wake for every event the loop's own waits take.
func (l *loop) netpoll() error {
	l.efile = os.NewFile(uintptr(l.epfd), "cmpbench-loop-epoll")
	var err error
	l.epoll, err = l.efile.SyscallConn()
	return err
}

// attach makes conn the socket of c; on failure the caller still owns conn.
func (l *loop) attach(c *rconn, conn core.Conn) error {
	rc, ok := conn.(core.RawConn)
	var raw core.RawIO
	if ok {
		raw, ok = rc.Raw()
	}
	if !ok {
		return errors.New("the adapter returned a connection that cannot be driven raw")
	}
	fds, router := raw.FDs, core.Router(nil)
	if len(fds) > 0 {
		if router, ok = raw.Codec.(core.Router); !ok {
			return errors.New("the adapter returned a connection of several sockets whose codec does not route")
		}
	} else {
		fds = append(c.fds[:0], raw.FD)
	}
	if c.depth > 1 && (len(raw.FDs) > 0 || !raw.Pipeline) {
		// pipelineRefusal says so before the phase of connections open then.
		return fmt.Errorf("pipeline %d: the adapter returned a connection that keeps one request in flight", c.depth)
	}
	for _, fd := range fds {
		// The loop reads and writes with raw system calls (nbsys_linux.go): a
		// blocking socket would hold a P, and stop the world, until it returned.
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_NONBLOCK == 0 {
			return errors.New("the adapter returned a blocking socket: a raw connection's sockets must be non-blocking (core.RawIO)")
		}
	}
	for i, fd := range fds {
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: c.id, Pad: int32(i)}); err != nil {
			for _, fd := range fds[:i] {
				_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
			}
			return fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	c.conn, c.raw, c.fds, c.router = conn, raw, fds, router
	c.fd, c.sock, c.stale = fds[0], 0, false
	c.rlen, c.wantOut = 0, false
	return nil
}

// detach closes c's connection; the next send opens a new one.
func (l *loop) detach(c *rconn) {
	if c.fd >= 0 {
		for _, fd := range c.fds {
			_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		}
	}
	if c.conn != nil {
		_ = c.conn.Close()
		l.e.conns.lost.Add(1) // closed before the phase's end
	}
	// What was not written goes with the connection: a new one starts clean.
	c.conn, c.fd, c.rlen, c.wantOut = nil, -1, 0, false
	c.wbuf, c.woff = c.wbuf[:0], 0
	if len(c.raw.FDs) > 0 {
		c.fds = nil // the adapter's slice: c's own is reused for a lone socket
	}
}

func (l *loop) lastEnd() int64 {
	var last int64
	for _, c := range l.conns {
		last = max(last, c.lastEnd)
	}
	return last
}

func (l *loop) counts() (issued, errs int64, el *errLog) {
	for _, c := range l.conns {
		issued += c.done
		errs += c.errors
	}
	return issued, errs, &l.el
}

func (l *loop) run(ctx context.Context) {
	l.ctx = ctx
	defer l.closeAll()
	defer l.out.close()

	e := l.e
	now := e.now()
	l.lastCheck = now
	for _, c := range l.conns {
		l.fill(c, now)
	}
	for l.live > 0 && !e.stop.Load() {
		now = e.now()
		l.out.advance(now)
		for l.heap.len() > 0 && l.heap.min().wake <= now {
			c := l.heap.pop()
			if c.state == stBackoff {
				c.state = stReady
			}
			l.fill(c, now)
			now = e.now()
		}
		if l.live == 0 || e.stop.Load() {
			return
		}
		if now-l.lastCheck >= timeoutCheckEvery {
			l.checkTimeouts(now)
		}
		timeout := int64(maxSleep)
		if l.heap.len() > 0 {
			timeout = min(timeout, l.heap.min().wake-now)
		}
		n := l.wait(now, timeout)
		for i := range n {
			ev := l.events[i]
			switch ev.Fd {
			case evDialed:
				l.takeDials()
				continue
			case evTimer:
				var buf [8]byte
				_, _ = nbRead(l.tfd, buf[:])
				l.armed = 0
				continue
			}
			c := l.conns[ev.Fd]
			if c.fd < 0 {
				continue // closed while handling an earlier event of this batch
			}
			if ev.Pad != c.sock {
				l.aside(c, ev.Pad)
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 {
				l.flush(c)
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 && c.fd >= 0 {
				l.readable(c)
			}
		}
	}
}

// wait returns the ready events, waiting up to timeout ns (from now) for one.
// It parks through the netpoller, woken by the loop's timer. When the loops
// leave a P free and are paced well below what they can do (loopsBlock), it
// waits in a system call (block) instead, and yields its P every yieldEvery.
//
// A loop that blocks never parks through the netpoller. A parked goroutine's
// thread becomes the one that waits on the network for the whole process, and
// stops being it when the loop wakes; nobody takes its place until another
// goroutine parks. The free P's thread slept meanwhile, and every goroutine
// waiting on the network (the side probe's timer and replies, the host's gRPC
// stream) waited for the loop's next park: at 20,000 ops/s the probe's sends
// were 1.2-1.6 ms late on average, and 77-148 µs since the loop yields instead
// (bench/HISTORY.md, 2026-12-08). Yielding leaves the network to the free P's
// thread, which waits on it whenever it has nothing to run.
func (l *loop) wait(now, timeout int64) int {
	if timeout <= 0 {
		return l.poll()
	}
	if l.blocks {
		if now-l.yielded >= yieldEvery {
			runtime.Gosched()
			l.yielded = now
		}
		return l.block(min(now+timeout, l.yielded+yieldEvery))
	}
	if n := l.poll(); n > 0 {
		return n
	}
	// Arm the timer unless it fires before the deadline anyway: a spurious wake
	// costs less than a timerfd_settime per wait.
	if at := now + timeout; l.armed == 0 || l.armed <= now || l.armed > at {
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(l.e.baseMono + at)}
		if err := unix.TimerfdSettime(l.tfd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
			// Without the timer nothing would wake the loop for its next send:
			// sleep instead (Go's timers are coarser, and the lag will show it).
			time.Sleep(time.Duration(min(timeout, int64(time.Millisecond))))
			return l.poll()
		}
		l.armed = at
	}
	// Read polls (pollFn) before it parks, and that poll is needed even right
	// after the one above: Read first clears the readiness the netpoller saw, so
	// an event that came since would otherwise wake nobody.
	l.ready = 0
	_ = l.epoll.Read(l.pollFn)
	return l.ready
}

// block waits for events until deadline (ns from the phase start) in one system
// call, epoll_pwait2, whose timeout is in nanoseconds: no timer to arm and read,
// and no trip through the netpoller and another thread. The call is not
// announced to the scheduler (nbsys_linux.go), so the loop keeps its P
// throughout (announced, it measured no different); a goroutine readied onto that
// P is taken by the one the loops leave free, and a signal ends the wait, so the
// runtime's preemption, and the garbage collector's stop of the world, reach the
// loop at once.
func (l *loop) block(deadline int64) int {
	// The kernel may end the wait as late as the thread's timer slack (50 µs by
	// default) after the timeout, and that lag would reach the sends. Slack is
	// per thread and the goroutine may have moved since its last wait, so every
	// wait asks for none; it stays so on that thread (and the threads it starts).
	_, _, _ = unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, 1, 0)
	// Measured from now: the loop's work since wait was called is not slept.
	timeout := deadline - l.e.now()
	if timeout <= 0 {
		return l.poll()
	}
	l.ts = kernelTimespec{sec: timeout / 1e9, nsec: timeout % 1e9}
	n, err := epollPwait2(l.epfd, l.events, &l.ts)
	switch err {
	case nil:
		return n
	case unix.EINTR: // a signal (Go preempts with one): the loop looks again
		return 0
	}
	// ENOSYS before Linux 5.11, EPERM from a seccomp filter, or anything else:
	// the loop parks from now on, as it does when it may not block.
	l.blocks = false
	if err := l.netpoll(); err != nil {
		l.e.abort("an event loop can neither wait in epoll_pwait2 nor park: " + err.Error())
	}
	return l.poll()
}

// poll takes the ready events without blocking.
func (l *loop) poll() int {
	n, err := nbEpollWait(l.epfd, l.events)
	if err != nil {
		return 0
	}
	return n
}

// fill sends c's requests that are due, up to its depth in flight, in one
// write; schedules c for the next one when it is not due yet; and finishes c
// once its stream has ended and nothing is in flight. A request due while
// every slot is taken waits for one, and is ready when one frees (freeAt): its
// response time counts from when it was due.
func (l *loop) fill(c *rconn, now int64) {
	e := l.e
	for c.state == stReady && c.inflight < c.depth {
		intended, ok := e.due(&c.stream, e.open)
		if !ok {
			if c.inflight == 0 {
				c.state = stDone
				l.live--
			}
			break
		}
		if e.open && intended > now {
			l.schedule(c, intended)
			break
		}
		s := c.take()
		c.src.Next(&s.op)
		s.op.RespBytes, s.start = 0, now
		if e.open {
			s.intended, s.ready = intended, max(intended, c.freeAt)
			c.advance()
		}
		if c.fd < 0 {
			l.dial(c, now) // sends s once the connection is open
			return
		}
		switch l.encode(c, s) {
		case core.RouteReopen: // the cluster changed since c's connection was opened
			// Only a router's connection reroutes, and it has one slot: s
			// is its only request, and was not written.
			l.detach(c)
			l.dial(c, now)
			return
		case core.RouteNone:
			s.start = now
			l.complete(c, &core.OpError{Class: core.ErrClassConnection, Err: errNoRoute}, now, false)
			continue
		}
		c.unsent++
	}
	if c.unsent > 0 {
		l.send(c)
	}
}

// schedule puts c in the heap until wake: its next send, or the end of a
// backoff.
func (l *loop) schedule(c *rconn, wake int64) {
	if c.hidx >= 0 {
		if c.wake == wake {
			return
		}
		l.heap.remove(c)
	}
	c.wake = wake
	l.heap.push(c)
}

// encode appends s's request to c's write buffer and routes it: the socket's
// index, or core.RouteReopen or core.RouteNone when none of c's sockets
// serves it.
func (l *loop) encode(c *rconn, s *request) int {
	if s.op.Kind == core.OpPublish {
		core.StampPublish(s.op.Value, s.intended, s.ready, l.e.now())
	}
	switch {
	case c.woff == len(c.wbuf) || c.inflight == 1:
		// Written, or the tail of a request answered before it was all
		// written (one the server refused early): nothing of it is sent.
		c.wbuf, c.woff = c.wbuf[:0], 0
	case c.woff >= len(c.wbuf)/2:
		// A socket that never drains (large values, a deep pipeline): the
		// written part is dropped, so the buffer does not grow with the phase.
		c.wbuf, c.woff = c.wbuf[:copy(c.wbuf, c.wbuf[c.woff:])], 0
	}
	before := len(c.wbuf)
	c.wbuf = c.raw.Codec.AppendRequest(c.wbuf, &s.op)
	if c.router == nil {
		return 0
	}
	i := c.router.Route()
	if i >= len(c.fds) {
		i = core.RouteReopen
	}
	if i < 0 || int32(i) == c.sock {
		if i < 0 {
			c.wbuf = c.wbuf[:before] // not sent
		}
		return i
	}
	if c.wantOut { // the last request's socket: nothing more to write there
		c.wantOut = false
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: c.id, Pad: c.sock})
	}
	c.fd, c.sock, c.rlen = c.fds[i], int32(i), 0
	return i
}

// send writes c's encoded requests; their service time starts here.
func (l *loop) send(c *rconn) {
	now := l.e.now()
	for i := c.inflight - c.unsent; i < c.inflight; i++ {
		s := &c.slots[(c.head+i)%len(c.slots)]
		s.start = now
		if !l.e.open {
			s.intended, s.ready = now, now
		}
	}
	c.unsent = 0
	l.flush(c)
}

// flush writes what the socket takes of c's requests, and asks to be told when
// it can take the rest.
func (l *loop) flush(c *rconn) {
	for c.woff < len(c.wbuf) {
		n, err := nbWrite(c.fd, c.wbuf[c.woff:])
		switch {
		case err == unix.EAGAIN:
			if !c.wantOut {
				c.wantOut = true
				_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: c.id, Pad: c.sock})
			}
			return
		case err == unix.EINTR:
			continue
		case err != nil:
			l.broken(c, err)
			return
		}
		c.woff += n
	}
	if c.wantOut {
		c.wantOut = false
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: c.id, Pad: c.sock})
	}
}

// readable reads what c's socket holds (more than one read only when a read
// fills the buffer, which then grows: the replies of one batch are answered
// together, and a pipelined connection's batches do not split); it completes
// every whole reply read, oldest request first, and then sends what is due in
// their place, in one write.
func (l *loop) readable(c *rconn) {
	for got := false; ; {
		if c.rlen == len(c.rbuf) {
			c.rbuf = append(c.rbuf, make([]byte, len(c.rbuf))...)
		}
		n, err := nbRead(c.fd, c.rbuf[c.rlen:])
		switch {
		case err == unix.EAGAIN:
			if !got {
				return
			}
		case err == unix.EINTR:
			continue
		case err != nil || n == 0:
			if got {
				break // the replies that came first are answered; the next event says this again
			}
			if err == nil {
				err = errors.New("connection closed by the server")
			}
			l.broken(c, err)
			l.fill(c, l.e.now())
			return
		default:
			c.rlen += n
			got = true
			if c.rlen == len(c.rbuf) {
				continue // full: more may be there
			}
		}
		break
	}
	if c.inflight == c.unsent {
		l.broken(c, &core.OpError{Class: core.ErrClassProtocol, Err: fmt.Errorf("%d bytes arrived with no request in flight", c.rlen)})
		l.fill(c, l.e.now())
		return
	}
	var end int64
	off := 0
	for c.inflight > c.unsent {
		m, opErr := c.raw.Codec.ParseReply(c.rbuf[off:c.rlen], &c.oldest().op)
		if m == 0 {
			break
		}
		if end == 0 {
			end = l.e.now() // the replies of one read came together
		}
		off += m
		if !l.complete(c, opErr, end, true) {
			break // the connection is gone, and its buffer with it
		}
	}
	if off == 0 {
		return // no whole reply yet: the rest comes with a later event
	}
	if c.fd >= 0 {
		c.rlen = copy(c.rbuf, c.rbuf[off:c.rlen])
	}
	l.fill(c, end)
}

// aside handles an event on a socket of c's other than that of the request in
// flight (a connection to several servers): a server that closed it, or sent
// what nobody asked for, takes c's connection, at once when c is idle, else
// once its request is done (the socket leaves the epoll set meanwhile).
func (l *loop) aside(c *rconn, sock int32) {
	fd := c.fds[sock]
	var b [64]byte
	_, err := nbRead(fd, b[:])
	if err == unix.EAGAIN || err == unix.EINTR {
		return
	}
	if c.inflight == 0 {
		l.detach(c)
		return
	}
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	c.stale = true
}

// complete records the outcome of c's oldest request, and reports whether c's
// connection is still open. replied says the outcome came in a reply the codec
// parsed: a timeout the server replied keeps the stream, which is in step; any
// other timeout, a protocol error or a lost connection drops it, and with it
// every request still in flight on it (drop); a connection error also backs c
// off before its next attempt. The caller then calls fill.
func (l *loop) complete(c *rconn, opErr error, end int64, replied bool) bool {
	e := l.e
	if c.inflight == c.depth {
		c.freeAt = end
	}
	s := c.release()
	class := e.finish(&c.stream, &s.op, l.out, &l.el, opErr, s.intended, s.ready, s.start, end)
	if replied && class == int(core.ErrClassTimeout) {
		class = -1 // the server's own timeout reply: the stream is in step
	}
	if c.stale && class != int(core.ErrClassConnection) {
		l.drop(c, end)
	}
	switch class {
	case int(core.ErrClassProtocol), int(core.ErrClassTimeout):
		l.drop(c, end) // the stream can no longer be trusted
	case int(core.ErrClassConnection):
		if !errors.Is(opErr, errNoRoute) || c.stale {
			l.drop(c, end)
		}
		// Wait before the next attempt on a broken connection instead of spinning;
		// the wait is the server's doing, not send lag.
		c.state = stBackoff
		c.freeAt = end + int64(reconnectBackoff)
		l.schedule(c, c.freeAt)
	}
	return c.fd >= 0
}

// errDropped fails the requests still in flight on a connection that an
// earlier request's failure closed.
var errDropped = errors.New("the connection was closed after an earlier request on it failed")

// drop closes c's connection, and fails every request still in flight on it
// as a connection error at end (in doubt where the codec says a write may
// have been applied).
func (l *loop) drop(c *rconn, end int64) {
	codec := c.raw.Codec
	l.detach(c)
	for c.inflight > 0 {
		s := c.release()
		err := core.SentFailure(codec, &s.op, &core.OpError{Class: core.ErrClassConnection, Err: errDropped})
		// Their failure is the connection's, at end: a run of connection
		// errors (a target unreachable) counts from there, not from when they
		// were sent, before the failure that took the connection.
		l.e.finish(&c.stream, &s.op, l.out, &l.el, err, s.intended, s.ready, end, end)
	}
	c.unsent = 0
}

// broken handles a socket error: the oldest request in flight, if any, fails
// with it, and the others with the connection.
func (l *loop) broken(c *rconn, err error) {
	if c.inflight == 0 {
		l.detach(c) // an idle connection the server closed: reopened on the next send
		return
	}
	if core.ClassOf(err) != core.ErrClassProtocol {
		err = core.SentFailure(c.raw.Codec, &c.oldest().op, &core.OpError{Class: core.ErrClassConnection, Err: err})
	}
	l.complete(c, err, l.e.now(), false)
}

// checkTimeouts fails the operations whose reply is later than the timeout.
func (l *loop) checkTimeouts(now int64) {
	l.lastCheck = now
	for _, c := range l.conns {
		if c.state == stReady && c.inflight > c.unsent && c.raw.Timeout > 0 && now-c.oldest().start > int64(c.raw.Timeout) {
			l.complete(c, core.SentFailure(c.raw.Codec, &c.oldest().op, &core.OpError{Class: core.ErrClassTimeout, Err: fmt.Errorf("no reply within %s", c.raw.Timeout)}), now, false)
			l.fill(c, now)
		}
	}
}

// dial opens a new socket for c in the background; c's one request is sent when it is
// there, so that the reconnect counts as send lag (or as a connection error). At most
// connectParallel reconnects of the phase run at once: after a server restart,
// thousands of connections would otherwise each hold a thread (and descriptors)
// waiting for their handshake.
func (l *loop) dial(c *rconn, now int64) {
	c.state, c.unsent = stDialing, 0
	id := c.id
	go func() {
		var conn core.Conn
		var err error
		select {
		case l.dials <- struct{}{}:
			l.mu.Lock()
			closed := l.closed
			l.mu.Unlock()
			if closed { // the phase ended while this waited its turn
				<-l.dials
				return
			}
			conn, err = l.e.cfg.Connect(l.ctx)
			<-l.dials
		case <-l.ctx.Done():
			err = l.ctx.Err()
		}
		if err != nil {
			conn = nil // a failed Connect may return a typed nil
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.closed {
			if conn != nil {
				_ = conn.Close()
			}
			return
		}
		l.dialed <- dialResult{id: id, conn: conn, err: err, start: now, end: l.e.now()}
		var one [8]byte
		one[0] = 1
		_, _ = unix.Write(l.evfd, one[:])
	}()
}

// takeDials attaches the sockets of finished reconnects.
func (l *loop) takeDials() {
	var buf [8]byte
	_, _ = nbRead(l.evfd, buf[:])
	for {
		select {
		case d := <-l.dialed:
			c := l.conns[d.id]
			c.state = stReady
			err := d.err
			if err == nil {
				if err = l.attach(c, d.conn); err != nil {
					_ = d.conn.Close()
				} else {
					l.e.conns.opened.Add(1)
				}
			}
			if err == nil && l.encode(c, c.oldest()) < 0 {
				err = errNoRoute
			}
			if err != nil {
				c.oldest().start = d.start
				l.complete(c, &core.OpError{Class: core.ErrClassConnection, Err: err}, d.end, false)
				continue
			}
			c.unsent = 1
			l.fill(c, l.e.now()) // sends it, and what else is due
		default:
			return
		}
	}
}

// closeAll closes every socket and the loop's own descriptors.
func (l *loop) closeAll() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	for drained := false; !drained; {
		select {
		case d := <-l.dialed:
			if d.conn != nil {
				_ = d.conn.Close()
			}
		default:
			drained = true
		}
	}
	for _, c := range l.conns {
		if c.conn != nil {
			_ = c.conn.Close()
			c.conn, c.fd = nil, -1
		}
	}
	l.closeFDs()
}

func (l *loop) closeFDs() {
	for _, fd := range []*int{&l.evfd, &l.tfd} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	switch {
	case l.efile != nil:
		l.efile.Close() // closes epfd
		l.efile = nil
	case l.epfd >= 0:
		unix.Close(l.epfd)
	}
	l.epfd = -1
}

// wakeHeap orders waiting connections by wake time.
type wakeHeap struct{ items []*rconn }

func (h *wakeHeap) len() int           { return len(h.items) }
func (h *wakeHeap) min() *rconn        { return h.items[0] }
func (h *wakeHeap) less(i, j int) bool { return h.items[i].wake < h.items[j].wake }

func (h *wakeHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].hidx, h.items[j].hidx = i, j
}

func (h *wakeHeap) push(c *rconn) {
	c.hidx = len(h.items)
	h.items = append(h.items, c)
	h.up(c.hidx)
}

func (h *wakeHeap) pop() *rconn { return h.remove(h.items[0]) }

// remove takes c out of the heap.
func (h *wakeHeap) remove(c *rconn) *rconn {
	at, last := c.hidx, len(h.items)-1
	h.swap(at, last)
	h.items[last] = nil
	h.items = h.items[:last]
	if at < last {
		h.down(at)
		h.up(at)
	}
	c.hidx = -1
	return c
}

func (h *wakeHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h *wakeHeap) down(i int) {
	last := len(h.items)
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.less(l, m) {
			m = l
		}
		if r < last && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.swap(i, m)
		i = m
	}
}
