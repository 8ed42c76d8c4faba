package resp

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// A subscription is a connection of its own, plain or TLS, speaking RESP2 (pushes
// are then arrays: "message", channel, payload), read through a buffer: a
// message's payload is handed to the engine in place when it fits the buffer.
// In a cluster it goes to the configured endpoint: PUBLISH reaches the
// subscribers of every node.

// subBuffer is a subscription's read buffer.
const subBuffer = 64 << 10

type subscription struct {
	nc      net.Conn
	r       *bufio.Reader
	args    [3][]byte
	scratch [3][]byte // where elements that do not stay in the buffer go
}

// Subscribe implements core.Subscriber.
func (t *target) Subscribe(ctx context.Context, channels [][]byte) (core.Subscription, error) {
	if len(channels) == 0 {
		return nil, errors.New("subscribe: no channel")
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	d := net.Dialer{Timeout: t.timeout, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", t.sys.Endpoint)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if t.tls != nil {
		tc := tls.Client(nc, t.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, refusal(fmt.Errorf("TLS handshake with %s: %w", t.sys.Endpoint, err))
		}
		nc = tc
	}
	s := &subscription{nc: nc, r: bufio.NewReaderSize(nc, subBuffer)}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	if err := s.handshake(t.sys.Auth, channels); err != nil {
		nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	return s, nil
}

// handshake authenticates, names the connection and subscribes.
func (s *subscription) handshake(auth core.AuthConfig, channels [][]byte) error {
	var b []byte
	switch {
	case auth.Username != "":
		b = appendCommand(b, []byte("AUTH"), []byte(auth.Username), []byte(auth.Password))
	case auth.Password != "":
		b = appendCommand(b, []byte("AUTH"), []byte(auth.Password))
	}
	authed := b != nil
	b = appendCommand(b, []byte("CLIENT"), []byte("SETNAME"), []byte("cmpbench"))
	b = appendCommand(b, append([][]byte{[]byte("SUBSCRIBE")}, channels...)...)
	if _, err := s.nc.Write(b); err != nil {
		return err
	}
	if authed {
		if line, err := s.line(); err != nil {
			return err
		} else if line[0] == '-' {
			return core.Refused(fmt.Errorf("AUTH: %s", line[1:]))
		}
	}
	if _, err := s.line(); err != nil { // CLIENT SETNAME: a server without it is fine
		return err
	}
	for range channels {
		n, err := s.push()
		if err != nil {
			return fmt.Errorf("SUBSCRIBE: %w", err)
		}
		if n != 3 || string(s.args[0]) != "subscribe" {
			return fmt.Errorf("SUBSCRIBE: unexpected reply %q", s.args[0])
		}
	}
	return nil
}

func appendCommand(dst []byte, args ...[]byte) []byte {
	dst = appendHeader(dst, len(args))
	for _, a := range args {
		dst = appendBulk(dst, a)
	}
	return dst
}

// Next implements core.Subscription.
func (s *subscription) Next() ([]byte, error) {
	for {
		n, err := s.push()
		if err != nil {
			return nil, err
		}
		if n == 3 && string(s.args[0]) == "message" {
			return s.args[2], nil
		}
		// subscribe confirmations and other pushes are not messages
	}
}

// line reads one line without its CRLF; an error reply is returned as a line
// starting with '-'.
func (s *subscription) line() ([]byte, error) {
	l, err := s.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(l) < 3 || l[len(l)-2] != '\r' {
		return nil, fmt.Errorf("%w: %q", errMalformed, truncate(l, 40))
	}
	return l[:len(l)-2], nil
}

// push reads one array of bulk strings and integers into s.args (its first three
// elements; valid until the next read) and returns its length.
func (s *subscription) push() (int, error) {
	l, err := s.line()
	if err != nil {
		return 0, err
	}
	if l[0] == '-' {
		return 0, fmt.Errorf("server: %s", l[1:])
	}
	if l[0] != '*' && l[0] != '>' {
		return 0, fmt.Errorf("%w: expected an array, got %q", errMalformed, truncate(l, 40))
	}
	n, err := strconv.Atoi(string(l[1:]))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %q", errMalformed, truncate(l, 40))
	}
	for i := range n {
		// Only the last element may stay in the reader's buffer; earlier ones
		// (a kind and a channel: short) are copied out of the next read's way.
		keep := &s.scratch[min(i, len(s.scratch)-1)]
		v, err := s.element(keep, i == n-1)
		if err != nil {
			return 0, err
		}
		if i < len(s.args) {
			s.args[i] = v
		}
	}
	return n, nil
}

// element reads one bulk string or integer: in place when last and it fits the
// buffer, else into *keep.
func (s *subscription) element(keep *[]byte, last bool) ([]byte, error) {
	l, err := s.line()
	if err != nil {
		return nil, err
	}
	switch l[0] {
	case ':':
		*keep = append((*keep)[:0], l[1:]...)
		return *keep, nil
	case '$':
	default:
		return nil, fmt.Errorf("%w: unexpected %q in a push", errMalformed, truncate(l, 40))
	}
	n, err := strconv.Atoi(string(l[1:]))
	if err != nil || n < -1 {
		return nil, fmt.Errorf("%w: %q", errMalformed, truncate(l, 40))
	}
	if n < 0 {
		return nil, nil
	}
	if last && n+2 <= s.r.Size() {
		b, err := s.r.Peek(n + 2)
		if err != nil {
			return nil, err
		}
		_, _ = s.r.Discard(n + 2)
		return b[:n], nil
	}
	if cap(*keep) < n+2 {
		*keep = make([]byte, n+2)
	}
	b := (*keep)[:n+2]
	if _, err := io.ReadFull(s.r, b); err != nil {
		return nil, err
	}
	return b[:n], nil
}

// Close implements core.Subscription.
func (s *subscription) Close() error { return s.nc.Close() }
