package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// conn is one connection with one request in flight. The engine gives each worker a
// connection of its own for the whole phase and calls Do from that worker only, so
// conn needs no lock. Do reuses its buffers: nothing allocates per operation.
type conn struct {
	t    *target
	addr string // the node's host:port
	nc   net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	// broken: the connection failed, or its replies are out of step with its
	// requests; the next Do dials a new one.
	broken  bool
	scratch []byte
}

// dial connects to the node at addr.
func (t *target) dial(ctx context.Context, addr string) (*conn, error) {
	d := net.Dialer{Timeout: t.timeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err // nothing listening (yet): not a refusal, Open is tried again
	}
	c := &conn{t: t, addr: addr, nc: nc, r: bufio.NewReaderSize(nc, 16<<10), w: bufio.NewWriterSize(nc, 16<<10)}
	if err := c.handshake(); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return c, nil
}

// handshake authenticates, selects the database and names the connection.
func (c *conn) handshake() error {
	auth := c.t.sys.Auth
	steps := [][]string{}
	switch {
	case auth.Username != "":
		steps = append(steps, []string{"AUTH", auth.Username, auth.Password})
	case auth.Password != "":
		steps = append(steps, []string{"AUTH", auth.Password})
	}
	if c.t.opts.db != 0 {
		steps = append(steps, []string{"SELECT", strconv.Itoa(c.t.opts.db)})
	}
	steps = append(steps, []string{"CLIENT", "SETNAME", c.t.opts.clientName})
	for _, args := range steps {
		if _, err := c.command(args...); err != nil {
			return refusal(args[0], err) // args[0] only: AUTH's arguments are secret
		}
	}
	return nil
}

// refusal marks what the server said no to as a refusal: a wrong password or
// database number does not get better by trying Open again. A server that is still
// loading its data (or busy) will answer later, and a network error may pass: those
// stay plain errors, which cmpbench retries.
func refusal(cmd string, err error) error {
	var se *serverError
	if !errors.As(err, &se) {
		return err
	}
	switch se.code() {
	case "LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN":
		return fmt.Errorf("%s: %w", cmd, err)
	case "NOAUTH":
		return core.Refused(fmt.Errorf("%s: %w (the server wants a password: auth: {password: ${VAR}} in the systems file)", cmd, err))
	}
	return core.Refused(fmt.Errorf("%s: %w", cmd, err))
}

// serverError is an error reply (-ERR ..., -OOM ...): the server answered and said
// no, so the connection is still in step. Its ErrorClass method tells the engine
// its class (core.ClassOf finds it, as it finds core.OpError's).
type serverError struct{ msg string }

func (e *serverError) Error() string { return e.msg }

// code is the reply's first word: ERR, OOM, WRONGPASS, NOAUTH, LOADING, ...
func (e *serverError) code() string {
	code, _, _ := strings.Cut(e.msg, " ")
	return code
}

func (e *serverError) ErrorClass() core.ErrorClass {
	switch e.code() {
	case "OOM":
		return core.ErrClassOOM // maxmemory reached with noeviction
	case "BUSY", "LOADING", "TRYAGAIN":
		return core.ErrClassOverload // busy, not full: the same request may pass later
	}
	return core.ErrClassOther
}

var (
	cmdGet = []byte("GET")
	cmdSet = []byte("SET")
	okLine = []byte("+OK\r\n")
)

// Do executes one operation. It never times itself: the engine reads the clock
// around it. ctx is the phase's: it has no deadline (each operation is bounded by the
// system's timeout here) and is cancelled only when the phase is stopped early; it
// is used for dialling again.
func (c *conn) Do(ctx context.Context, op *core.Op) error {
	if c.broken {
		if err := c.redial(ctx); err != nil {
			return &core.OpError{Class: core.ErrClassConnection, Err: err}
		}
	}
	switch op.Kind {
	case core.OpGet:
		c.writeArray(2)
		c.writeBulk(cmdGet)
		c.writeBulk(op.Key)
	case core.OpSet:
		c.writeArray(3)
		c.writeBulk(cmdSet)
		c.writeBulk(op.Key)
		c.writeBulk(op.Value)
	default:
		// Not reached: cmpbench runs only the op kinds Info lists.
		return &core.OpError{Class: core.ErrClassOther, Err: fmt.Errorf("%s: %w", op.Kind, core.ErrUnsupported)}
	}
	_ = c.nc.SetDeadline(time.Now().Add(c.t.timeout))
	if err := c.w.Flush(); err != nil {
		return c.fail(core.ClassOf(err), err)
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		if op.Kind == core.OpSet {
			// The write was sent: it may or may not have been applied.
			return c.fail(core.ErrClassInDoubt, err)
		}
		return c.fail(core.ClassOf(err), err)
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return c.protocol(line)
	}
	switch {
	case line[0] == '-':
		return &serverError{msg: string(line[1 : len(line)-2])}
	case op.Kind == core.OpSet && bytes.Equal(line, okLine):
		return nil
	case op.Kind == core.OpGet && line[0] == '$':
		n, ok := parseInt(line[1 : len(line)-2])
		switch {
		case !ok:
			return c.protocol(line)
		case n < 0:
			return core.ErrMiss // $-1: no such key. A miss is an outcome, not an error.
		}
		// The value itself is not needed: skip it and its CRLF.
		if _, err := c.r.Discard(n); err != nil {
			return c.fail(core.ClassOf(err), err)
		}
		if crlf, err := c.r.Peek(2); err != nil || crlf[0] != '\r' || crlf[1] != '\n' {
			return c.protocol(crlf)
		}
		_, _ = c.r.Discard(2)
		op.RespBytes = n
		return nil
	}
	return c.protocol(line)
}

func (c *conn) writeArray(n int) {
	c.scratch = append(c.scratch[:0], '*')
	c.scratch = strconv.AppendInt(c.scratch, int64(n), 10)
	c.scratch = append(c.scratch, '\r', '\n')
	_, _ = c.w.Write(c.scratch)
}

func (c *conn) writeBulk(b []byte) {
	c.scratch = append(c.scratch[:0], '$')
	c.scratch = strconv.AppendInt(c.scratch, int64(len(b)), 10)
	c.scratch = append(c.scratch, '\r', '\n')
	_, _ = c.w.Write(c.scratch)
	_, _ = c.w.Write(b)
	_, _ = c.w.WriteString("\r\n")
}

// parseInt reads a decimal integer, "-1" included, without allocating.
func parseInt(b []byte) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	n := 0
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int(d-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// fail reports a failed connection; the next Do dials again.
func (c *conn) fail(class core.ErrorClass, err error) error {
	c.broken = true
	return &core.OpError{Class: class, Err: err}
}

// protocol reports a reply that makes no sense here: the stream is out of step, so
// the connection is not used again.
func (c *conn) protocol(got []byte) error {
	c.broken = true
	return &core.OpError{Class: core.ErrClassProtocol, Err: fmt.Errorf("unexpected reply %q", bytes.TrimSpace(got))}
}

func (c *conn) redial(ctx context.Context) error {
	fresh, err := c.t.dial(ctx, c.addr)
	if err != nil {
		return err
	}
	_ = c.nc.Close()
	*c = *fresh
	return nil
}

func (c *conn) Close() error { return c.nc.Close() }

// shards is one worker's connection to the system: a conn to every node, each
// operation sent to the node its key hashes to (shardOf), one request in flight
// at a time. Of a single server it is that server's conn.
type shards []*conn

func (s shards) Do(ctx context.Context, op *core.Op) error {
	return s[shardOf(op.Key, len(s))].Do(ctx, op)
}

func (s shards) Close() error {
	var errs []error
	for _, c := range s {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// shardOf is the node of n that holds key: FNV-1a of the key, modulo n. It
// depends on the key alone, so every worker, the load and a later read place a
// key alike; it allocates nothing.
func shardOf(key []byte, n int) int {
	h := uint32(2166136261)
	for _, b := range key {
		h ^= uint32(b)
		h *= 16777619
	}
	return int(h % uint32(n))
}

// command sends a control command and reads its reply as text: a simple string or
// an integer as written, a bulk string's content ("" for nil). Arrays are not needed
// here.
func (c *conn) command(args ...string) (string, error) {
	_ = c.nc.SetDeadline(time.Now().Add(c.t.timeout))
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return "", fmt.Errorf("unexpected reply %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', ':':
		return body, nil
	case '-':
		return "", &serverError{msg: body}
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", fmt.Errorf("unexpected reply %q", line)
		}
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}
