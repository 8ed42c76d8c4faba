package rawsock

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// lineCodec is a protocol of lines: the request is the key, the reply a line;
// "bad" is a reply that cannot be parsed.
type lineCodec struct{}

func (lineCodec) AppendRequest(dst []byte, op *core.Op) []byte {
	return append(append(dst, op.Key...), '\n')
}

func (lineCodec) ParseReply(src []byte, op *core.Op) (int, error) {
	i := bytes.IndexByte(src, '\n')
	if i < 0 {
		return 0, nil
	}
	switch string(src[:i]) {
	case "bad":
		return i + 1, &core.OpError{Class: core.ErrClassProtocol, Err: errors.New("bad reply")}
	case "miss":
		return i + 1, core.ErrMiss
	}
	op.RespBytes = i
	return i + 1, nil
}

// server answers each line on a real loopback socket: "echo X" with X, "close"
// by closing the connection, "hang" never, anything else as it came.
func server(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewScanner(c)
				r.Buffer(make([]byte, 1<<20), 1<<20)
				for r.Scan() {
					line := r.Text()
					switch {
					case line == "close":
						return
					case line == "hang":
						continue
					case strings.HasPrefix(line, "echo "):
						line = strings.TrimPrefix(line, "echo ")
					}
					c.Write([]byte(line + "\n"))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestSocket(t *testing.T) {
	addr := server(t)
	s := New(addr, 300*time.Millisecond, lineCodec{}, nil)
	if _, ok := s.Raw(); ok {
		t.Fatal("a socket not yet dialled is raw")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		key    string
		fails  bool // with an OpError of class
		class  core.ErrorClass
		miss   bool
		bytes  int
		closed bool // the failure closed the socket
	}{
		{key: "echo hello", bytes: 5},
		{key: "miss", miss: true},
		{key: "bad", fails: true, class: core.ErrClassProtocol, closed: true},
		{key: "echo again", bytes: 5}, // reopened by Do
		{key: "close", fails: true, class: core.ErrClassConnection, closed: true},
		{key: "hang", fails: true, class: core.ErrClassTimeout, closed: true},
		{key: "echo " + strings.Repeat("x", 100_000), bytes: 100_000}, // grows the read buffer
	} {
		op := &core.Op{Key: []byte(tc.key)}
		err := s.Do(ctx, op)
		var oe *core.OpError
		switch {
		case tc.fails:
			if !errors.As(err, &oe) || oe.Class != tc.class {
				t.Errorf("%.20s: %v, want class %s", tc.key, err, tc.class)
			}
		case tc.miss:
			if !errors.Is(err, core.ErrMiss) {
				t.Errorf("%.20s: %v, want a miss", tc.key, err)
			}
		case err != nil || op.RespBytes != tc.bytes:
			t.Errorf("%.20s: %v, %d bytes; want %d", tc.key, err, op.RespBytes, tc.bytes)
		}
		if _, open := s.Raw(); open == tc.closed {
			t.Errorf("%.20s: open %v after it", tc.key, open)
		}
	}
	s.Close()
}

// A handshake runs on every descriptor the socket opens, and its failure fails
// the dial.
func TestSocketHandshake(t *testing.T) {
	addr := server(t)
	shakes := 0
	fail := false
	s := New(addr, time.Second, lineCodec{}, func(s *Socket) error {
		shakes++
		if fail {
			return errors.New("refused")
		}
		return s.RoundTrip([]byte("echo hi\n"), &core.Op{})
	})
	ctx := context.Background()
	if err := s.Do(ctx, &core.Op{Key: []byte("close")}); err == nil {
		t.Fatal("a closed connection gave no error")
	}
	if err := s.Do(ctx, &core.Op{Key: []byte("echo x")}); err != nil || shakes != 2 {
		t.Fatalf("after a reopening: %v, %d handshakes", err, shakes)
	}
	s.Close()
	fail = true
	if err := s.Redial(ctx); err == nil || err.Error() != "refused" {
		t.Fatalf("a failed handshake: %v", err)
	}
	if _, open := s.Raw(); open || shakes != 3 {
		t.Fatalf("open %v after %d handshakes", open, shakes)
	}
}
