package resp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cmpbench/cmpbench/core"
)

// A raw connection is a plain TCP socket that speaks RESP2 through the codec: the
// engine's event loops drive it themselves (core.RawConn), one write and one read
// per operation. A TLS connection to one server (streamConn, stream.go) speaks the
// same codec over crypto/tls in its worker's goroutine. Cluster targets keep
// rueidis connections, which do topology and redirections; so does `options:
// {driver: rueidis}`.

// rawConn is one raw connection. Its Do is for callers that do not drive it (the
// side probe, validation): blocking writes and reads with poll.
type rawConn struct {
	t     *target
	fd    int // -1 after a failure until Do reconnects
	codec codec
	wbuf  []byte
	rbuf  []byte
}

// useRaw says whether the target's connections can be raw.
func (t *target) useRaw() bool {
	return !t.cluster && !t.sys.TLS.Enabled && t.sys.Options["driver"] != "rueidis"
}

// dialRaw opens a socket, authenticates and hands over the descriptor.
func (t *target) dialRaw(ctx context.Context) (*rawConn, error) {
	c := &rawConn{t: t, fd: -1, codec: codec{profile: t.profile}, rbuf: make([]byte, readBufSize)}
	return c, c.dial(ctx)
}

// dialTCP opens a TCP connection to the target, without Nagle's delay.
func (t *target) dialTCP(ctx context.Context) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: t.timeout, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", t.sys.Endpoint)
	if err != nil {
		return nil, err
	}
	tcp := nc.(*net.TCPConn)
	_ = tcp.SetNoDelay(true)
	return tcp, nil
}

func (c *rawConn) dial(ctx context.Context) error {
	t := c.t
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	tcp, err := t.dialTCP(ctx)
	if err != nil {
		return err
	}
	// A descriptor of our own: closing the net.Conn takes the original out of Go's
	// poller, which must not see this socket's events.
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
		return fmt.Errorf("take the socket of %s: %w", t.sys.Endpoint, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	c.fd = fd
	if err := handshake(c.t.sys.Auth, &c.wbuf, c.roundTrip); err != nil {
		c.closeFD()
		return err
	}
	if c.fd < 0 {
		return errors.New("the connection failed during its handshake (CLIENT SETNAME)")
	}
	return nil
}

// handshake authenticates a codec connection as the rueidis client does, over
// RESP2; roundTrip writes *wbuf and reads one reply.
func handshake(auth core.AuthConfig, wbuf *[]byte, roundTrip func(*core.Op) error) error {
	var args []string
	switch {
	case auth.Username != "":
		args = []string{"AUTH", auth.Username, auth.Password}
	case auth.Password != "":
		args = []string{"AUTH", auth.Password}
	}
	if args != nil {
		if err := command(wbuf, roundTrip, args...); err != nil {
			return core.Refused(fmt.Errorf("AUTH: %w", err))
		}
	}
	// Named like the control connection, for CLIENT LIST; a server without CLIENT
	// SETNAME is fine.
	_ = command(wbuf, roundTrip, "CLIENT", "SETNAME", "cmpbench")
	return nil
}

// command sends one command and reads its reply, which must not be an error.
func command(wbuf *[]byte, roundTrip func(*core.Op) error, args ...string) error {
	*wbuf = appendHeader((*wbuf)[:0], len(args))
	for _, a := range args {
		*wbuf = appendBulkString(*wbuf, a)
	}
	var op core.Op
	err := roundTrip(&op)
	if errors.Is(err, core.ErrMiss) {
		return nil
	}
	var oe *core.OpError
	if errors.As(err, &oe) {
		return oe.Err
	}
	return err
}

// Raw implements core.RawConn.
func (c *rawConn) Raw() (core.RawIO, bool) {
	if c.fd < 0 {
		return core.RawIO{}, false
	}
	return core.RawIO{FD: c.fd, Timeout: c.t.timeout, Codec: c.codec}, true
}

// Redial implements core.Redialer: it reconnects after a failure.
func (c *rawConn) Redial(ctx context.Context) error {
	if c.fd >= 0 {
		return nil
	}
	return c.dial(ctx)
}

// Do implements core.Conn with blocking I/O, reconnecting after a failure if Redial
// did not.
func (c *rawConn) Do(ctx context.Context, op *core.Op) error {
	if err := c.Redial(ctx); err != nil {
		return &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	c.wbuf = c.codec.AppendRequest(c.wbuf[:0], op)
	return c.roundTrip(op)
}

// roundTrip writes c.wbuf and reads one reply.
func (c *rawConn) roundTrip(op *core.Op) error {
	deadline := time.Now().Add(c.t.timeout)
	for off := 0; off < len(c.wbuf); {
		n, err := unix.Write(c.fd, c.wbuf[off:])
		if err == unix.EAGAIN || err == unix.EINTR {
			if err := c.wait(unix.POLLOUT, deadline); err != nil {
				return c.fail(err)
			}
			continue
		}
		if err != nil {
			return c.fail(&core.OpError{Class: core.ErrClassConnection, Err: err})
		}
		off += n
	}
	rlen := 0
	for {
		if rlen == len(c.rbuf) {
			c.rbuf = append(c.rbuf, make([]byte, len(c.rbuf))...)
		}
		n, err := unix.Read(c.fd, c.rbuf[rlen:])
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			if err := c.wait(unix.POLLIN, deadline); err != nil {
				return c.fail(err)
			}
			continue
		case err != nil:
			return c.fail(&core.OpError{Class: core.ErrClassConnection, Err: err})
		case n == 0:
			return c.fail(&core.OpError{Class: core.ErrClassConnection, Err: errors.New("connection closed by the server")})
		}
		rlen += n
		m, opErr := c.codec.ParseReply(c.rbuf[:rlen], op)
		if m == 0 {
			continue
		}
		if oe, ok := opErr.(*core.OpError); ok && oe.Class == core.ErrClassProtocol {
			return c.fail(opErr) // a miss is a plain core.ErrMiss
		}
		return opErr
	}
}

// wait polls the socket until it is ready for events or the deadline passes.
func (c *rawConn) wait(events int16, deadline time.Time) error {
	left := time.Until(deadline)
	if left <= 0 {
		return &core.OpError{Class: core.ErrClassTimeout, Err: fmt.Errorf("no reply within %s", c.t.timeout)}
	}
	fds := []unix.PollFd{{Fd: int32(c.fd), Events: events}}
	ms := int((left + time.Millisecond - 1) / time.Millisecond)
	if _, err := unix.Poll(fds, ms); err != nil && err != unix.EINTR {
		return &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	return nil
}

// fail closes a connection whose stream can no longer be trusted; the next Do opens
// a new one.
func (c *rawConn) fail(err error) error {
	c.closeFD()
	return err
}

func (c *rawConn) closeFD() {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// Close implements core.Conn.
func (c *rawConn) Close() error {
	c.closeFD()
	return nil
}

var (
	_ core.RawConn  = (*rawConn)(nil)
	_ core.Redialer = (*rawConn)(nil)
)
