// Package rawsock is the socket of an adapter's raw connection (core.RawConn):
// a non-blocking TCP descriptor of its own, which the engine's event loops drive
// through the adapter's codec, and blocking round trips with poll for callers
// that do not drive it (the side probe, validation, a handshake). The adapter
// owns the protocol (its core.Codec); the socket only moves bytes.
package rawsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cmpbench/cmpbench/core"
)

// readBufSize is a socket's first read buffer, made at its first round trip;
// it grows for larger replies.
const readBufSize = 4 << 10

// Socket is one raw connection to one server address.
type Socket struct {
	addr    string
	timeout time.Duration // of a dial, and of one reply
	codec   core.Codec
	// handshake runs on every new descriptor before anything else is sent
	// (authentication, a name); nil when the protocol has none.
	handshake func(*Socket) error
	fd        int // -1 while closed: after a failure, until Redial
	wbuf      []byte
	rbuf      []byte
	// Pipeline says the protocol answers the socket's requests in the order
	// they were sent (core.RawIO.Pipeline); the adapter sets it.
	Pipeline bool
}

// New is a socket to addr that speaks codec; it is closed until Redial.
// handshake, when not nil, runs on every descriptor the socket opens.
func New(addr string, timeout time.Duration, codec core.Codec, handshake func(*Socket) error) *Socket {
	return &Socket{addr: addr, timeout: timeout, codec: codec, handshake: handshake, fd: -1}
}

// Addr is the server's address.
func (s *Socket) Addr() string { return s.addr }

// Raw is what the engine needs to drive the socket, or ok false while it is
// closed.
func (s *Socket) Raw() (core.RawIO, bool) {
	if s.fd < 0 {
		return core.RawIO{}, false
	}
	return core.RawIO{FD: s.fd, Timeout: s.timeout, Codec: s.codec, Pipeline: s.Pipeline}, true
}

// Redial opens the socket when it is closed (at first, after a failure); nil at
// once while it is open. It implements core.Redialer for the adapters' conns.
func (s *Socket) Redial(ctx context.Context) error {
	if s.fd >= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	d := net.Dialer{Timeout: s.timeout, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	tcp := nc.(*net.TCPConn)
	_ = tcp.SetNoDelay(true)
	// A descriptor of our own: closing the net.Conn takes the original out of
	// Go's poller, which must not see this socket's events.
	var fd int
	var derr error
	rc, err := tcp.SyscallConn()
	if err == nil {
		err = rc.Control(func(orig uintptr) { fd, derr = unix.FcntlInt(orig, unix.F_DUPFD_CLOEXEC, 0) })
	}
	tcp.Close()
	if err == nil {
		err = derr
	}
	if err != nil {
		return fmt.Errorf("take the socket of %s: %w", s.addr, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	s.fd = fd
	if s.handshake != nil {
		if err := s.handshake(s); err != nil {
			s.Close()
			return err
		}
		if s.fd < 0 {
			return errors.New("the connection failed during its handshake")
		}
	}
	return nil
}

// Do sends op's request and reads its reply, reopening the socket first when a
// failure closed it.
func (s *Socket) Do(ctx context.Context, op *core.Op) error {
	if err := s.Redial(ctx); err != nil {
		return &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	s.wbuf = s.codec.AppendRequest(s.wbuf[:0], op)
	return s.RoundTrip(s.wbuf, op)
}

// RoundTrip writes req and reads one reply, parsed by the codec into op. A
// connection error, a timeout or a reply that cannot be parsed closes the
// socket: its stream can no longer be trusted.
func (s *Socket) RoundTrip(req []byte, op *core.Op) error {
	deadline := time.Now().Add(s.timeout)
	for off := 0; off < len(req); {
		n, err := unix.Write(s.fd, req[off:])
		if err == unix.EAGAIN || err == unix.EINTR {
			if err := s.wait(unix.POLLOUT, deadline); err != nil {
				return s.fail(op, err)
			}
			continue
		}
		if err != nil {
			return s.fail(op, &core.OpError{Class: core.ErrClassConnection, Err: err})
		}
		off += n
	}
	rlen := 0
	if s.rbuf == nil { // only round trips read here: the engine's loops have their own buffers
		s.rbuf = make([]byte, readBufSize)
	}
	for {
		if rlen == len(s.rbuf) {
			s.rbuf = append(s.rbuf, make([]byte, len(s.rbuf))...)
		}
		n, err := unix.Read(s.fd, s.rbuf[rlen:])
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			if err := s.wait(unix.POLLIN, deadline); err != nil {
				return s.fail(op, err)
			}
			continue
		case err != nil:
			return s.fail(op, &core.OpError{Class: core.ErrClassConnection, Err: err})
		case n == 0:
			return s.fail(op, &core.OpError{Class: core.ErrClassConnection, Err: errors.New("connection closed by the server")})
		}
		rlen += n
		m, opErr := s.codec.ParseReply(s.rbuf[:rlen], op)
		if m == 0 {
			continue
		}
		if oe, ok := opErr.(*core.OpError); ok && oe.Class == core.ErrClassProtocol {
			return s.fail(op, opErr) // a miss is a plain core.ErrMiss
		}
		return opErr
	}
}

// wait polls the socket until it is ready for events or the deadline passes.
func (s *Socket) wait(events int16, deadline time.Time) error {
	left := time.Until(deadline)
	if left <= 0 {
		return &core.OpError{Class: core.ErrClassTimeout, Err: fmt.Errorf("no reply within %s", s.timeout)}
	}
	fds := []unix.PollFd{{Fd: int32(s.fd), Events: events}}
	ms := int((left + time.Millisecond - 1) / time.Millisecond)
	if _, err := unix.Poll(fds, ms); err != nil && err != unix.EINTR {
		return &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	return nil
}

// fail closes a socket whose stream can no longer be trusted; the next Do or
// Redial opens a new one. A write whose request went out is in doubt where the
// codec says so (core.SentFailure).
func (s *Socket) fail(op *core.Op, err error) error {
	s.Close()
	return core.SentFailure(s.codec, op, err)
}

// Close closes the descriptor; the socket can be reopened with Redial.
func (s *Socket) Close() {
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}
