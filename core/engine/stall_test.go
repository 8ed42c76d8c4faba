package engine

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// The watch counts a gap in the client's clock as a stall only when the process
// used almost no CPU in it: a process that kept its goroutines busy was running.
func TestStallWatchBeats(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	for _, tc := range []struct {
		name    string
		beats   [][2]int64 // phase clock and CPU time, ms
		elapsed time.Duration
		spans   []core.Span
		total   time.Duration
	}{
		{"steady ticks", [][2]int64{{20, 1}, {40, 2}, {60, 3}}, time.Second, nil, 0},
		{"a gap of a busy process", [][2]int64{{20, 1}, {520, 400}}, time.Second, nil, 0},
		{"a stop", [][2]int64{{20, 1}, {3020, 2}, {3040, 3}}, 6 * time.Second,
			[]core.Span{{Start: 40 * time.Millisecond, End: 3020 * time.Millisecond}}, 2980 * time.Millisecond},
		{"a gap under the threshold", [][2]int64{{20, 1}, {110, 1}}, time.Second, nil, 0},
		{"a stop past the phase's end", [][2]int64{{20, 1}, {1000, 700}, {9000, 701}}, 6 * time.Second,
			[]core.Span{{Start: 1020 * time.Millisecond, End: 6 * time.Second}}, 4980 * time.Millisecond},
		{"two stops", [][2]int64{{20, 1}, {520, 2}, {540, 3}, {1540, 4}}, 2 * time.Second,
			[]core.Span{{Start: 40 * time.Millisecond, End: 520 * time.Millisecond}, {Start: 560 * time.Millisecond, End: 1540 * time.Millisecond}}, 1460 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &stallWatch{stop: make(chan struct{}), finished: make(chan struct{})}
			close(w.finished)
			for _, b := range tc.beats {
				w.beat(ms(b[0]), time.Duration(ms(b[1])))
			}
			end := core.PhaseEnd{Elapsed: tc.elapsed}
			w.finish(&end)
			if end.Stalled != tc.total || len(end.Stalls) != len(tc.spans) {
				t.Fatalf("stalled %s in %v, want %s in %v", end.Stalled, end.Stalls, tc.total, tc.spans)
			}
			for i := range tc.spans {
				if end.Stalls[i] != tc.spans[i] {
					t.Errorf("span %d: %v, want %v", i, end.Stalls[i], tc.spans[i])
				}
			}
		})
	}
}

// A phase keeps its longest stalls, in order, and counts every one.
func TestStallWatchKeepsTheLongest(t *testing.T) {
	w := &stallWatch{stop: make(chan struct{}), finished: make(chan struct{})}
	close(w.finished)
	var now int64
	for i := range core.MaxStallSpans + 20 {
		gap := int64(200+i) * int64(time.Millisecond)
		now += gap
		w.beat(now, 0)
	}
	end := core.PhaseEnd{Elapsed: time.Duration(now)}
	w.finish(&end)
	if len(end.Stalls) != core.MaxStallSpans {
		t.Fatalf("%d spans kept", len(end.Stalls))
	}
	if first := end.Stalls[0]; first.End-first.Start != time.Duration(220-20)*time.Millisecond+20*time.Millisecond-stallTick {
		t.Errorf("the shortest kept is %s", first.End-first.Start)
	}
	var want time.Duration
	for i := range core.MaxStallSpans + 20 {
		want += time.Duration(200+i)*time.Millisecond - stallTick
	}
	if end.Stalled != want {
		t.Errorf("stalled %s, want %s", end.Stalled, want)
	}
}

// What the engine's own encoder summarizes passes the host's checks, a latency
// clamped to the histogram's top among it (issue 43: a minute-long stall must not
// read as an impossible number).
func TestEncodedLatenciesPassTheChecks(t *testing.T) {
	var enc encoder
	for seed := range int64(20) {
		r := newRecorder()
		n := int64(0)
		for i := range 1000 + seed*997 {
			r.record(clampLatency(1 + (i*7919+seed*104729)%int64(5*time.Millisecond)))
			n++
		}
		if seed%3 == 0 {
			r.record(clampLatency(int64(2 * time.Minute)))
			n++
		}
		l, err := enc.summarize(r)
		if err != nil {
			t.Fatal(err)
		}
		o := core.OpInterval{Op: core.OpSet, OK: n, Response: l, Service: l}
		if err := o.Check(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
