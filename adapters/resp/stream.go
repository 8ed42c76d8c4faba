package resp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// streamConn is one TLS connection to one server, speaking RESP2 through the codec
// in its worker's goroutine: the request is encoded into a reused buffer and
// written with one call, and the reply is parsed where it was read. A dedicated
// rueidis connection passes every command through a writer and a reader goroutine
// of its own, two hand-offs per operation that this saves.
type streamConn struct {
	t     *target
	nc    net.Conn // nil after a failure until Redial or Do reconnects
	tcp   net.Conn // nc's TCP connection
	codec codec
	wbuf  []byte
	rbuf  []byte
}

// useStream says whether the target's connections are stream connections.
func (t *target) useStream() bool {
	return !t.cluster && t.tls != nil && t.sys.Options["driver"] != "rueidis"
}

// dialStream connects, shakes hands and authenticates.
func (t *target) dialStream(ctx context.Context) (*streamConn, error) {
	c := &streamConn{t: t, codec: codec{profile: t.profile}, rbuf: make([]byte, readBufSize)}
	return c, c.dial(ctx)
}

// readBufSize is a connection's first read buffer; it grows for larger replies.
const readBufSize = 4 << 10

func (c *streamConn) dial(ctx context.Context) error {
	t := c.t
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	nc, err := t.dialTCP(ctx)
	if err != nil {
		return err
	}
	tc := tls.Client(nc, t.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return refusal(fmt.Errorf("TLS handshake with %s: %w", t.sys.Endpoint, err))
	}
	c.nc, c.tcp = tc, nc
	if err := handshake(t.sys.Auth, &c.wbuf, c.roundTrip); err != nil {
		c.close()
		return err
	}
	if c.nc == nil {
		return errors.New("the connection failed during its handshake (CLIENT SETNAME)")
	}
	return nil
}

// Redial implements core.Redialer: it reconnects after a failure.
func (c *streamConn) Redial(ctx context.Context) error {
	if c.nc != nil {
		return nil
	}
	return c.dial(ctx)
}

// Do implements core.Conn, reconnecting after a failure if Redial did not.
func (c *streamConn) Do(ctx context.Context, op *core.Op) error {
	if err := c.Redial(ctx); err != nil {
		return &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	c.wbuf = c.codec.AppendRequest(c.wbuf[:0], op)
	return c.roundTrip(op)
}

// roundTrip writes c.wbuf and reads one reply, within the connection timeout.
func (c *streamConn) roundTrip(op *core.Op) error {
	if err := c.nc.SetDeadline(time.Now().Add(c.t.timeout)); err != nil {
		return c.fail(err)
	}
	if _, err := c.nc.Write(c.wbuf); err != nil {
		return c.fail(err)
	}
	rlen := 0
	for {
		if rlen == len(c.rbuf) {
			c.rbuf = append(c.rbuf, make([]byte, len(c.rbuf))...)
		}
		n, err := c.nc.Read(c.rbuf[rlen:])
		rlen += n
		if n > 0 {
			if m, opErr := c.codec.ParseReply(c.rbuf[:rlen], op); m > 0 {
				if oe, ok := opErr.(*core.OpError); ok && oe.Class == core.ErrClassProtocol {
					c.close() // the stream can no longer be trusted (a miss is a plain core.ErrMiss)
				}
				return opErr
			}
		}
		if err != nil {
			return c.fail(err)
		}
	}
}

// fail closes the connection after a network error, which it returns classified;
// the next Do opens a new one.
func (c *streamConn) fail(err error) error {
	c.close()
	class := core.ErrClassConnection
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		class, err = core.ErrClassTimeout, fmt.Errorf("no reply within %s", c.t.timeout)
	}
	return &core.OpError{Class: class, Err: err}
}

// close closes the TCP connection under TLS without a close_notify alert: after a
// failure the server may have stopped reading, and crypto/tls would wait up to 5 s
// for the alert to be written.
func (c *streamConn) close() {
	if c.nc != nil {
		_ = c.tcp.Close()
		c.nc, c.tcp = nil, nil
	}
}

// Close implements core.Conn.
func (c *streamConn) Close() error {
	c.close()
	return nil
}

var (
	_ core.Conn     = (*streamConn)(nil)
	_ core.Redialer = (*streamConn)(nil)
)
