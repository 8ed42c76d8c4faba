package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/memtier"
)

// scripted is a Driver whose phase sends the intervals it is given, ok counts by
// index, each with one latency value per op, then ends.
type scripted struct {
	Driver // only RunPhase is called
	oks    []int64
	delay  time.Duration
	fail   error
	// conns are the connections each interval says it has open; nil: none
	// said (a plugin built before engine.conns).
	conns []int

	mu   sync.Mutex
	spec core.PhaseSpec
}

func (s *scripted) RunPhase(ctx context.Context, spec core.PhaseSpec, on func(core.IntervalReport)) (core.PhaseEnd, error) {
	s.mu.Lock()
	s.spec = spec
	s.mu.Unlock()
	var total int64
	for i, ok := range s.oks {
		time.Sleep(s.delay)
		h := core.NewHistogram()
		_ = h.RecordValues(int64(1000*(i+1)), ok)
		l, _ := core.Summarize(h)
		r := core.IntervalReport{Index: i, Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Ops: []core.OpInterval{{Op: core.OpGet, OK: ok, Response: l, Service: l}}}
		if s.conns != nil {
			r.Conns = &core.Conns{Open: s.conns[i], Opened: s.conns[i]}
		}
		on(r)
		total += ok
	}
	h := core.NewHistogram()
	_ = h.RecordValues(1000, total)
	l, _ := core.Summarize(h)
	return core.PhaseEnd{Status: core.StatusOK, Elapsed: time.Duration(len(s.oks)) * time.Second, CPUUser: time.Second,
		Totals: []core.OpInterval{{Op: core.OpGet, OK: total, Response: l, Service: l}}}, s.fail
}

func TestMultiMergesIntervalsInOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		procs   []*scripted
		want    []int64 // merged ok per interval
		wantErr string
	}{
		{"same length", []*scripted{{oks: []int64{1, 2, 3}}, {oks: []int64{10, 20, 30}, delay: 3 * time.Millisecond}}, []int64{11, 22, 33}, ""},
		{"one ends early", []*scripted{{oks: []int64{1, 2}, delay: 2 * time.Millisecond}, {oks: []int64{10, 20, 30, 40}}}, []int64{11, 22, 30, 40}, ""},
		{"three", []*scripted{{oks: []int64{1}}, {oks: []int64{2}}, {oks: []int64{3}, delay: 5 * time.Millisecond}}, []int64{6}, ""},
		{"a process fails", []*scripted{{oks: []int64{1}}, {oks: []int64{2}, fail: errors.New("boom")}}, []int64{3}, "process 1: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var drivers []Driver
			for _, p := range tc.procs {
				drivers = append(drivers, p)
			}
			spec := core.PhaseSpec{Name: "p", Kind: core.PhaseMeasured, Connections: 7, Rate: 700, Duration: time.Second, Ops: 70,
				Workload: memtier.Spec{SetRatio: 1, GetRatio: 1, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 100, ValueMin: 1, ValueMax: 1}}
			var got []int64
			var counts []int64
			end, err := NewMulti(drivers).RunPhase(context.Background(), spec, func(r core.IntervalReport) {
				if r.Index != len(got) {
					t.Errorf("interval %d passed on after %d", r.Index, len(got))
				}
				got = append(got, r.Ops[0].OK)
				counts = append(counts, r.Ops[0].Response.Count)
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("merged intervals %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] || counts[i] != tc.want[i] {
					t.Errorf("interval %d: %d ok, histogram of %d, want %d", i, got[i], counts[i], tc.want[i])
				}
			}
			var sum int64
			for _, w := range tc.want {
				sum += w
			}
			if len(end.Totals) != 1 || end.Totals[0].OK != sum || end.Totals[0].Response.Count != sum || end.CPUUser != time.Duration(len(tc.procs))*time.Second {
				t.Errorf("merged end: %+v", end)
			}
			// The processes ran shares of the phase that add up to it, from one moment.
			var conns, ops int
			var rate float64
			for i, p := range tc.procs {
				conns += p.spec.Connections
				ops += int(p.spec.Ops)
				rate += p.spec.Rate
				if p.spec.StartAt.IsZero() || !p.spec.StartAt.Equal(tc.procs[0].spec.StartAt) {
					t.Errorf("process %d starts at %v", i, p.spec.StartAt)
				}
			}
			if conns != 7 || ops != 70 || rate < 699.999 || rate > 700.001 {
				t.Errorf("the shares sum to %d conns, %d ops, %g ops/s", conns, ops, rate)
			}
		})
	}
}

// The processes' connections add up, interval by interval; one that ended holds
// none; one that did not count them leaves the merge not counting them either.
func TestMultiAddsConnections(t *testing.T) {
	for _, tc := range []struct {
		name  string
		procs []*scripted
		want  []int // open per interval; -1: not said
	}{
		{"add up", []*scripted{{oks: []int64{1, 2}, conns: []int{3, 2}}, {oks: []int64{1, 2}, conns: []int{4, 4}}}, []int{7, 6}},
		{"one ends early", []*scripted{{oks: []int64{1}, conns: []int{3}}, {oks: []int64{1, 2}, conns: []int{4, 4}, delay: 2 * time.Millisecond}}, []int{7, 4}},
		{"one not counting", []*scripted{{oks: []int64{1, 2}, conns: []int{3, 3}}, {oks: []int64{1, 2}}}, []int{-1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var drivers []Driver
			for _, p := range tc.procs {
				drivers = append(drivers, p)
			}
			spec := core.PhaseSpec{Name: "p", Kind: core.PhaseMeasured, Connections: 8, Duration: time.Second,
				Workload: memtier.Spec{SetRatio: 1, GetRatio: 1, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 100, ValueMin: 1, ValueMax: 1}}
			var got []int
			_, err := NewMulti(drivers).RunPhase(context.Background(), spec, func(r core.IntervalReport) {
				switch {
				case r.Conns == nil:
					got = append(got, -1)
				case r.Conns.Opened != r.Conns.Open:
					t.Errorf("interval %d: %+v, want as many opened as open", r.Index, *r.Conns)
					fallthrough
				default:
					got = append(got, r.Conns.Open)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("connections open %v, want %v", got, tc.want)
			}
		})
	}
}
