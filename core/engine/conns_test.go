//go:build linux

package engine

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// drop closes n of the server's connections from its side, the oldest first.
func (s *lineServer) drop(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(n, len(s.conns))
	for _, c := range s.conns[:n] {
		c.Close()
	}
	s.conns = s.conns[n:]
}

// pause stops accepting: a new connection is refused until resume.
func (s *lineServer) pause() { s.ln.Close() }

// resume listens again on the same address.
func (s *lineServer) resume(t *testing.T, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Errorf("listening again on %s: %v", addr, err)
		return
	}
	s.ln = ln
	go s.accept(ln)
}

// connsAt is one interval's connections as the engine reported them, and as
// the server counted them (accepted and not closed) when the report arrived.
type connsAt struct {
	index  int
	end    time.Duration
	conns  *core.Conns
	server int64
}

// The engine reports the connections it holds open at each interval's end, the
// side probe's among them: a real server that closes three of them mid-phase,
// and refuses new ones for a while, sees the count drop, and come back once the
// engine has reopened them; at every interval the engine's count is the
// server's.
func TestConnectionsOpenAreCounted(t *testing.T) {
	const (
		conns    = 4
		dropped  = 3
		interval = 200 * time.Millisecond
		dropAt   = 2 // after this interval: the server closes and refuses
		resumeAt = 5 // after this one: it accepts again
	)
	for _, exec := range executors {
		t.Run(exec, func(t *testing.T) {
			srv := newLineServer(t, nil)
			addr := srv.addr()
			s := spec(conns, 2000, 2*time.Second, 0)
			s.Interval = interval
			s.Probe = &core.ProbeSpec{Rate: 100, Op: core.OpGet}
			var got []connsAt
			end := Run(context.Background(), Config{
				Spec:           s,
				Connect:        func(context.Context) (core.Conn, error) { return dialConn(addr, time.Second) },
				NewSource:      func(int) (core.OpSource, error) { return fixedSource{core.OpGet}, nil },
				NewProbeSource: func() (core.OpSource, error) { return fixedSource{core.OpGet}, nil },
				Emit: func(r core.IntervalReport) {
					got = append(got, connsAt{r.Index, r.End, r.Conns, srv.open.Load()})
					switch r.Index {
					case dropAt:
						srv.drop(dropped)
						srv.pause()
					case resumeAt:
						srv.resume(t, addr)
					}
				},
				UnreachableAfter: 10 * time.Second,
				Executor:         exec,
			})
			if end.Status != core.StatusOK {
				t.Fatalf("%s: %s", end.Status, end.Error)
			}
			if len(got) < resumeAt+2 {
				t.Fatalf("%d intervals", len(got))
			}
			all := conns + 1 // and the probe's
			var opened, lost int
			for _, g := range got {
				if g.conns == nil {
					t.Fatalf("interval %d says nothing of its connections", g.index)
				}
				c := *g.conns
				opened += c.Opened
				lost += c.Lost
				want := all
				if g.index > dropAt && g.index <= resumeAt {
					want = all - dropped
				}
				// The intervals at the phase's end are emitted once its
				// connections are closed: the server has seen them go, the
				// engine counts what it held up to the end.
				atEnd := g.end >= s.Duration
				if c.Open != want || !atEnd && g.server != int64(c.Open) || c.Open != opened-lost {
					t.Errorf("interval %d: the engine counts %+v open (%d opened, %d lost so far), the server %d; want %d",
						g.index, c, opened, lost, g.server, want)
				}
				switch g.index {
				case 0:
					if c.Opened != all || c.Lost != 0 {
						t.Errorf("interval 0: %+v, want the %d connections opened before the clock", c, all)
					}
				case dropAt + 1:
					if c.Lost != dropped || c.Opened != 0 {
						t.Errorf("interval %d, the server's close: %+v, want %d lost", g.index, c, dropped)
					}
				case resumeAt + 1:
					if c.Opened != dropped || c.Lost != 0 {
						t.Errorf("interval %d, the server back: %+v, want %d reopened", g.index, c, dropped)
					}
				}
			}
			if opened != all+dropped || lost != dropped {
				t.Errorf("%d opened and %d lost in all, want %d and %d", opened, lost, all+dropped, dropped)
			}
		})
	}
}
