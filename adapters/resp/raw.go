package resp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/rawsock"
)

// A raw connection is a plain TCP socket that speaks RESP2 through the codec: the
// engine's event loops drive it themselves (core.RawConn), one write and one read
// per operation. A TLS connection to one server (streamConn, stream.go) speaks the
// same codec over crypto/tls in its worker's goroutine. Cluster targets keep
// rueidis connections, which do topology and redirections; so does `options:
// {driver: rueidis}`.

// rawConn is one raw connection: its socket (core/rawsock) is driven by the
// engine, or by Do for callers that do not drive it (the side probe,
// validation).
type rawConn struct {
	*rawsock.Socket
}

// useRaw says whether the target's connections can be raw.
func (t *target) useRaw() bool {
	return !t.cluster && !t.sys.TLS.Enabled && t.sys.Options["driver"] != "rueidis"
}

// dialRaw opens a socket and authenticates it; so does every reopening.
func (t *target) dialRaw(ctx context.Context) (*rawConn, error) {
	var wbuf []byte
	hs := func(s *rawsock.Socket) error {
		return handshake(t.sys.Auth, &wbuf, func(op *core.Op) error { return s.RoundTrip(wbuf, op) })
	}
	c := &rawConn{rawsock.New(t.sys.Endpoint, t.timeout, codec{profile: t.profile}, hs)}
	c.Pipeline = true // a server answers a connection's commands in order
	return c, c.Redial(ctx)
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

// Close implements core.Conn.
func (c *rawConn) Close() error {
	c.Socket.Close()
	return nil
}

var (
	_ core.RawConn  = (*rawConn)(nil)
	_ core.Redialer = (*rawConn)(nil)
)
