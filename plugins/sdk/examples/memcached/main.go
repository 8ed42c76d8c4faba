// Command cmpbench-adapter-memcached is an example third-party adapter plugin: it
// benchmarks memcached over its text protocol, a system cmpbench does not ship.
// Build it into a plugin directory and cmpbench finds it:
//
//	go build -o plugins.d/cmpbench-adapter-memcached ./plugins/sdk/examples/memcached
//
// An adapter only executes operations and reads the server; it never times, logs or
// prints — cmpbench's engine, running inside this process, does all of that.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/plugins/sdk"
)

func main() { sdk.Serve(adapter{}) }

const defaultTimeout = 5 * time.Second

type adapter struct{}

func (adapter) Info() core.Info {
	return core.Info{Name: "memcached", Version: "1", Ops: []core.OpKind{core.OpGet, core.OpSet},
		Options: []core.Option{{Name: "noreply", Type: core.OptionBool, Default: "false",
			Doc: "send SETs with noreply; the engine then times only the send, so leave it off for latency"}}}
}

// ValidateSystem implements core.SystemValidator: what this adapter cannot do is
// found at --dry-run, before any server is contacted.
func (adapter) ValidateSystem(sys core.SystemConfig) error {
	if sys.TLS.Enabled || sys.Auth.Password != "" {
		return errors.New("this example adapter supports neither TLS nor authentication")
	}
	return nil
}

func (a adapter) Open(ctx context.Context, sys core.SystemConfig) (core.Target, error) {
	if err := a.ValidateSystem(sys); err != nil {
		// A refusal: cmpbench does not retry it while a server starts.
		return nil, core.Refused(err)
	}
	t := &target{addr: sys.Endpoint, timeout: sys.Timeout, noreply: sys.Options["noreply"] == "true"}
	if t.timeout <= 0 {
		t.timeout = defaultTimeout
	}
	c, err := t.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := c.command("version"); err != nil {
		return nil, fmt.Errorf("version: %w", err)
	}
	return t, nil
}

type target struct {
	addr    string
	timeout time.Duration
	noreply bool
}

func (t *target) dial(ctx context.Context) (*conn, error) {
	d := net.Dialer{Timeout: t.timeout}
	nc, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	return &conn{t: t, nc: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10)}, nil
}

func (t *target) Connect(ctx context.Context) (core.Conn, error) { return t.dial(ctx) }

func (t *target) Capture(ctx context.Context) (core.Capture, error) {
	c, err := t.dial(ctx)
	if err != nil {
		return core.Capture{}, err
	}
	defer c.Close()
	cp := core.Capture{Product: "memcached", Sections: map[string]string{}}
	v, err := c.command("version")
	if err != nil {
		return cp, err
	}
	cp.Version = strings.TrimPrefix(strings.TrimSpace(v), "VERSION ")
	cp.VersionField = "version"
	for _, s := range []struct{ cmd, name string }{{"stats", "stats"}, {"stats settings", "settings"}} {
		out, err := c.command(s.cmd)
		if err != nil {
			cp.Refused = append(cp.Refused, s.cmd+": "+err.Error())
			continue
		}
		cp.Sections[s.name] = out
	}
	return cp, nil
}

func (t *target) Stats(ctx context.Context) (map[string]string, error) {
	c, err := t.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	out, err := c.command("stats")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "STAT" {
			m["stats."+f[1]] = f[2]
		}
	}
	return m, nil
}

func (t *target) Close(context.Context) error { return nil }

// conn is one memcached connection, one request in flight.
type conn struct {
	t       *target
	nc      net.Conn
	r       *bufio.Reader
	w       *bufio.Writer
	scratch []byte
	broken  bool
}

var (
	crlf   = []byte("\r\n")
	end    = []byte("END\r\n")
	stored = []byte("STORED\r\n")
	value  = []byte("VALUE ")
)

func (c *conn) Do(ctx context.Context, op *core.Op) error {
	if c.broken {
		fresh, err := c.t.dial(ctx)
		if err != nil {
			return &core.OpError{Class: core.ErrClassConnection, Err: err}
		}
		_ = c.nc.Close()
		*c = *fresh
	}
	_ = c.nc.SetDeadline(time.Now().Add(c.t.timeout))
	b := c.scratch[:0]
	switch op.Kind {
	case core.OpSet:
		b = append(b, "set "...)
		b = append(b, op.Key...)
		b = append(b, " 0 0 "...)
		b = strconv.AppendInt(b, int64(len(op.Value)), 10)
		if c.t.noreply {
			b = append(b, " noreply"...)
		}
		b = append(b, crlf...)
		c.w.Write(b)
		c.w.Write(op.Value)
		c.w.Write(crlf)
	case core.OpGet:
		b = append(b, "get "...)
		b = append(b, op.Key...)
		b = append(b, crlf...)
		c.w.Write(b)
	default:
		return &core.OpError{Class: core.ErrClassOther, Err: core.ErrUnsupported}
	}
	c.scratch = b
	if err := c.w.Flush(); err != nil {
		return c.fail(err)
	}
	if op.Kind == core.OpSet && c.t.noreply {
		return nil // the server answers nothing
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return c.fail(err)
	}
	switch {
	case op.Kind == core.OpSet && bytes.Equal(line, stored):
		return nil
	case op.Kind == core.OpGet && bytes.Equal(line, end):
		return core.ErrMiss
	case op.Kind == core.OpGet && bytes.HasPrefix(line, value):
		f := bytes.Fields(line)
		if len(f) < 4 {
			return c.protocol(line)
		}
		n, err := strconv.Atoi(string(f[3]))
		if err != nil {
			return c.protocol(line)
		}
		if _, err := c.r.Discard(n + 2); err != nil {
			return c.fail(err)
		}
		if tail, err := c.r.ReadSlice('\n'); err != nil || !bytes.Equal(tail, end) {
			return c.protocol(tail)
		}
		op.RespBytes = n
		return nil
	case bytes.HasPrefix(line, []byte("SERVER_ERROR out of memory")):
		return &core.OpError{Class: core.ErrClassOOM, Err: errors.New(strings.TrimSpace(string(line)))}
	case bytes.HasPrefix(line, []byte("SERVER_ERROR")):
		return &core.OpError{Class: core.ErrClassOther, Err: errors.New(strings.TrimSpace(string(line)))}
	default:
		return c.protocol(line)
	}
}

func (c *conn) fail(err error) error {
	c.broken = true
	return &core.OpError{Class: core.ClassOf(err), Err: err}
}

func (c *conn) protocol(line []byte) error {
	c.broken = true // the stream is out of step; start over on a new connection
	return &core.OpError{Class: core.ErrClassProtocol, Err: fmt.Errorf("unexpected reply %q", bytes.TrimSpace(line))}
}

// command sends a control command and reads its reply up to END (or one line).
func (c *conn) command(cmd string) (string, error) {
	_ = c.nc.SetDeadline(time.Now().Add(c.t.timeout))
	if _, err := c.w.WriteString(cmd + "\r\n"); err != nil {
		return "", err
	}
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	var out strings.Builder
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(line, "ERROR") || strings.HasPrefix(line, "CLIENT_ERROR") || strings.HasPrefix(line, "SERVER_ERROR") {
			return "", errors.New(strings.TrimSpace(line))
		}
		if line == "END\r\n" {
			return out.String(), nil
		}
		out.WriteString(strings.TrimRight(line, "\r\n") + "\n")
		if !strings.HasPrefix(line, "STAT ") {
			return out.String(), nil // a one-line reply such as VERSION
		}
	}
}

func (c *conn) Close() error { return c.nc.Close() }
