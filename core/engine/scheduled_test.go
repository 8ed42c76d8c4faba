package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// timedSource is a core.Scheduled stream: GETs due at its times, then its end.
type timedSource struct {
	at []int64
	i  int
}

func (s *timedSource) Due() (int64, bool) {
	if s.i >= len(s.at) {
		return 0, false
	}
	return s.at[s.i], true
}

func (s *timedSource) Next(op *core.Op) {
	op.Kind, op.Key, op.Value = core.OpGet, fixedKey, nil
	s.i++
}

// TestScheduledSourceSendsAtItsOwnTimes: a source that says when each of its
// operations is due (a trace) is sent at those times, not on the phase rate's
// schedule, its response time counted from them; its end ends the phase there,
// every operation sent, not at the time bound; in a closed loop only the end
// counts. On the event loops and on goroutines alike.
func TestScheduledSourceSendsAtItsOwnTimes(t *testing.T) {
	const conns, perConn, gap = 2, 40, 5 * time.Millisecond
	times := func(c int) []int64 {
		at := make([]int64, perConn)
		for i := range at {
			at[i] = int64(i*conns+c) * int64(gap) / conns
		}
		return at
	}
	span := time.Duration(perConn) * gap
	for _, exec := range executors {
		for _, rate := range []float64{1e6, 0} { // a rate whose own schedule would be done in microseconds
			t.Run(fmt.Sprintf("%s rate %g", exec, rate), func(t *testing.T) {
				// Request 20 is answered 100 ms late: the requests due behind it
				// on its connection wait, and their response time says so.
				srv := newLineServer(t, func(n int64) (string, time.Duration, bool) {
					if n == 20 {
						return "+", 100 * time.Millisecond, false
					}
					return "+", 0, false
				})
				c := 0
				src := func() core.OpSource { c++; return &timedSource{at: times(c - 1)} }
				end, col := rawRun(t, srv, exec, spec(conns, rate, 30*time.Second, 0), src, nil)
				if end.Status != core.StatusOK {
					t.Fatal(end.Error)
				}
				got := col.total()[core.OpGet]
				if got == nil || got.OK != conns*perConn {
					t.Fatalf("sent %v, want every one of %d", got, conns*perConn)
				}
				if end.Elapsed > 10*time.Second {
					t.Errorf("the phase ran %s: it must end with its streams, not at its time bound", end.Elapsed)
				}
				if rate == 0 {
					return
				}
				if end.Elapsed < span-gap {
					t.Errorf("the phase ran %s: the requests are due over %s", end.Elapsed, span)
				}
				if p := time.Duration(got.resp.Max()); p < 90*time.Millisecond {
					t.Errorf("slowest response %s: the 100 ms reply must show, counted from when it was due", p)
				}
			})
		}
	}
}
