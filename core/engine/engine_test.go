package engine

import (
	"context"
	"errors"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/memtier"
)

// scriptConn answers every op with the result of fn; it stands in for a server whose
// behaviour the test dictates.
type scriptConn struct{ fn func(op *core.Op) error }

func (c scriptConn) Do(_ context.Context, op *core.Op) error { return c.fn(op) }
func (c scriptConn) Close() error                            { return nil }

// fixedSource issues one op kind on one key.
type fixedSource struct{ kind core.OpKind }

var fixedKey, fixedValue = []byte("k"), []byte("value")

func (s fixedSource) Next(op *core.Op) {
	op.Kind = s.kind
	op.Key = fixedKey
	if s.kind == core.OpSet {
		op.Value = fixedValue
	}
}

func spec(conns int, rate float64, d time.Duration, ops int64) core.PhaseSpec {
	return core.PhaseSpec{
		Name: "t", Kind: core.PhaseMeasured, Connections: conns, Rate: rate, Duration: d, Ops: ops,
		Workload: memtier.Spec{
			SetRatio: 1, GetRatio: 1, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 100, ValueMin: 5, ValueMax: 5,
		},
	}
}

// precise skips tests that check timing to the percent under -short, which the race
// detector run uses: it slows the engine several times over.
func precise(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("checks timing precision; skipped with -short (the -race run)")
	}
}

type collected struct {
	mu        sync.Mutex
	intervals []core.IntervalReport
}

func (c *collected) emit(r core.IntervalReport) {
	c.mu.Lock()
	c.intervals = append(c.intervals, r)
	c.mu.Unlock()
}

// total is every interval of one op kind merged, with its histograms decoded.
type total struct {
	core.OpInterval
	resp, svc, lag *hdrhistogram.Histogram
}

// total merges every interval per op kind, as the host does.
func (c *collected) total() map[core.OpKind]*total {
	c.mu.Lock()
	defer c.mu.Unlock()
	tt := core.NewTotals(true)
	for i := range c.intervals {
		if err := tt.Add(&c.intervals[i]); err != nil {
			panic(err)
		}
	}
	res, err := tt.Result()
	if err != nil {
		panic(err)
	}
	out := map[core.OpKind]*total{}
	for _, o := range res {
		t := &total{OpInterval: o}
		t.resp, _ = o.Response.Histogram()
		t.svc, _ = o.Service.Histogram()
		t.lag, _ = o.Lag.Histogram()
		out[o.Op] = t
	}
	return out
}

func run(t *testing.T, s core.PhaseSpec, kind core.OpKind, fn func(*core.Op) error) (core.PhaseEnd, *collected) {
	t.Helper()
	c := &collected{}
	end := Run(context.Background(), Config{
		Spec:             s,
		Connect:          func(context.Context) (core.Conn, error) { return scriptConn{fn}, nil },
		NewSource:        func(int) (core.OpSource, error) { return fixedSource{kind}, nil },
		Emit:             c.emit,
		UnreachableAfter: 200 * time.Millisecond,
	})
	for i, r := range c.intervals {
		if r.Index != i {
			t.Fatalf("interval %d emitted at position %d: out of order or missing", r.Index, i)
		}
	}
	return end, c
}

func TestOutcomesAreCountedByKind(t *testing.T) {
	oom := &core.OpError{Class: core.ErrClassOOM, Err: errors.New("OOM command not allowed")}
	tests := []struct {
		name           string
		kind           core.OpKind
		result         error
		ok, hits, miss int64
		errClass       core.ErrorClass
		errs           int64
		sample         string
	}{
		{"hit", core.OpGet, nil, 1000, 1000, 0, 0, 0, ""},
		{"miss is not an error", core.OpGet, core.ErrMiss, 1000, 0, 1000, 0, 0, ""},
		{"OOM is an error, never throughput", core.OpSet, oom, 0, 0, 0, core.ErrClassOOM, 1000, "oom: OOM command not allowed"},
		{"unclassified error", core.OpSet, errors.New("boom"), 0, 0, 0, core.ErrClassOther, 1000, "other: boom"},
		{"timeout", core.OpSet, context.DeadlineExceeded, 0, 0, 0, core.ErrClassTimeout, 1000, "timeout: context deadline exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			end, c := run(t, spec(3, 0, 10*time.Second, 1000), tc.kind, func(*core.Op) error { return tc.result })
			// A phase of nothing but errors measured nothing: it fails, its counts kept.
			if want := core.StatusOK; end.Status != want && tc.errs < 1000 || tc.errs == 1000 && end.Status != core.StatusFailed {
				t.Fatalf("status %s: %s", end.Status, end.Error)
			}
			// Three connections failing alike give one sample, not three.
			if strings.Join(end.ErrorSamples, "|") != tc.sample {
				t.Fatalf("error samples %q, want %q", end.ErrorSamples, tc.sample)
			}
			got := c.total()[tc.kind]
			if got == nil {
				t.Fatalf("no %s records", tc.kind)
			}
			if got.OK != tc.ok || got.Hits != tc.hits || got.Misses != tc.miss || got.Errors[tc.errClass] != tc.errs || got.ErrorTotal() != tc.errs {
				t.Fatalf("got ok=%d hits=%d misses=%d errors=%v", got.OK, got.Hits, got.Misses, got.Errors)
			}
			recorded := got.Service.Count
			if recorded != tc.ok {
				t.Fatalf("histogram holds %d values, want one per success (%d)", recorded, tc.ok)
			}
		})
	}
}

func TestCountBoundIsExactAcrossConnections(t *testing.T) {
	end, c := run(t, spec(7, 0, 10*time.Second, 10_001), core.OpSet, func(*core.Op) error { return nil })
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	if got := c.total()[core.OpSet].OK; got != 10_001 {
		t.Fatalf("did %d ops, want 10001", got)
	}
}

func TestDurationBoundAndIntervals(t *testing.T) {
	precise(t)
	s := spec(2, 0, 1200*time.Millisecond, 0)
	s.Interval = 200 * time.Millisecond
	end, c := run(t, s, core.OpGet, func(*core.Op) error { time.Sleep(100 * time.Microsecond); return nil })
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	if end.Elapsed < 1200*time.Millisecond || end.Elapsed > 1500*time.Millisecond {
		t.Fatalf("elapsed %s for a 1.2 s phase", end.Elapsed)
	}
	if n := len(c.intervals); n < 6 || n > 8 {
		t.Fatalf("%d intervals of 200 ms in %s", n, end.Elapsed)
	}
	var sum int64
	for _, r := range c.intervals {
		sum += r.Ops[0].OK
		if r.End <= r.Start {
			t.Fatalf("interval %d ends before it starts", r.Index)
		}
	}
	if sum != c.total()[core.OpGet].OK || sum == 0 {
		t.Fatalf("interval counts sum to %d", sum)
	}
}

func TestStallShowsAsEmptyIntervals(t *testing.T) {
	s := spec(1, 0, 900*time.Millisecond, 0)
	s.Interval = 100 * time.Millisecond
	var n int
	end, c := run(t, s, core.OpGet, func(*core.Op) error {
		n++
		if n == 10 {
			time.Sleep(450 * time.Millisecond) // the server stalls
		}
		return nil
	})
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	empty := 0
	for _, r := range c.intervals {
		if r.Ops[0].OK == 0 {
			empty++
		}
	}
	if empty < 3 {
		t.Fatalf("a 450 ms stall left %d empty 100 ms intervals, want at least 3", empty)
	}
	if max := c.total()[core.OpGet].Service.Max; max < int64(440*time.Millisecond) {
		t.Fatalf("max latency %s hides the stall", time.Duration(max))
	}
}

func TestUnreachableTargetFailsThePhase(t *testing.T) {
	refused := &core.OpError{Class: core.ErrClassConnection, Err: errors.New("connection refused")}
	start := time.Now()
	end, c := run(t, spec(4, 0, 30*time.Second, 0), core.OpGet, func(*core.Op) error { return refused })
	if end.Status != core.StatusFailed {
		t.Fatalf("status %s, want failed", end.Status)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %s to give up on a dead target", time.Since(start))
	}
	got := c.total()[core.OpGet]
	if got.OK != 0 || got.Errors[core.ErrClassConnection] == 0 {
		t.Fatalf("ok=%d connection errors=%d", got.OK, got.Errors[core.ErrClassConnection])
	}
	// Backoff keeps a dead server from costing a spinning CPU.
	if perConnPerSec := float64(got.ErrorTotal()) / 4 / end.Elapsed.Seconds(); perConnPerSec > 150 {
		t.Fatalf("%.0f errors per connection per second: no backoff", perConnPerSec)
	}
}

// A phase shorter than the unreachable bound in which every operation failed
// measured nothing: failed, never ok.
func TestPhaseWithOnlyErrorsFails(t *testing.T) {
	wrongType := &core.OpError{Class: core.ErrClassOther, Err: errors.New("WRONGTYPE")}
	end, _ := run(t, spec(2, 0, 300*time.Millisecond, 0), core.OpGet, func(*core.Op) error { return wrongType })
	if end.Status != core.StatusFailed || !strings.Contains(end.Error, "no operation succeeded") {
		t.Fatalf("%s %q, want failed: no operation succeeded", end.Status, end.Error)
	}
}

func TestLoadFailsOnErrorsOrWhenIncomplete(t *testing.T) {
	s := spec(2, 0, 10*time.Second, 100)
	s.Kind = core.PhaseLoad
	var n int
	var mu sync.Mutex
	end, _ := run(t, s, core.OpSet, func(*core.Op) error {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n == 50 {
			return errors.New("READONLY")
		}
		return nil
	})
	if end.Status != core.StatusFailed {
		t.Fatalf("a load with an error ended %s", end.Status)
	}
	s.Duration = 300 * time.Millisecond
	s.Ops = 1_000_000
	end, _ = run(t, s, core.OpSet, func(*core.Op) error { time.Sleep(time.Millisecond); return nil })
	if end.Status != core.StatusFailed {
		t.Fatalf("a load cut short by its time bound ended %s", end.Status)
	}
}

func TestInterruptedPhase(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	end := Run(ctx, Config{
		Spec:      spec(2, 0, time.Minute, 0),
		Connect:   func(context.Context) (core.Conn, error) { return scriptConn{func(*core.Op) error { return nil }}, nil },
		NewSource: func(int) (core.OpSource, error) { return fixedSource{core.OpGet}, nil },
	})
	if end.Status != core.StatusInterrupted || end.Elapsed > 2*time.Second {
		t.Fatalf("status %s after %s", end.Status, end.Elapsed)
	}
}

func TestOpenLoopHoldsTheRate(t *testing.T) {
	precise(t)
	const rate = 5000
	s := spec(4, rate, 2*time.Second, 0)
	end, c := run(t, s, core.OpGet, func(*core.Op) error { return nil })
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	got := c.total()[core.OpGet]
	achieved := float64(got.OK) / end.Elapsed.Seconds()
	if achieved < rate*0.98 || achieved > rate*1.02 {
		t.Fatalf("achieved %.0f ops/s for a target of %d", achieved, rate)
	}
	if got.resp == nil || got.lag == nil || got.resp.Equals(got.svc) {
		t.Fatal("open loop must record response time and lag apart from service time")
	}
	if got.Response.P50 < got.Service.P50 {
		t.Fatal("response time below service time")
	}
}

func TestOpenLoopResponseTimeIncludesQueueing(t *testing.T) {
	// One connection at 100 ops/s against a server that stalls once for 300 ms: the
	// ops scheduled during the stall wait, and their response time must show it,
	// while their service time does not.
	var n int
	s := spec(1, 100, 1500*time.Millisecond, 0)
	_, c := run(t, s, core.OpGet, func(*core.Op) error {
		n++
		if n == 20 {
			time.Sleep(300 * time.Millisecond)
		}
		return nil
	})
	got := c.total()[core.OpGet]
	if p := got.Response.P99; p < int64(100*time.Millisecond) {
		t.Fatalf("p99 response %s hides the 300 ms stall (coordinated omission)", time.Duration(p))
	}
	if p := got.Service.P90; p > int64(50*time.Millisecond) {
		t.Fatalf("p90 service %s: queueing leaked into service time", time.Duration(p))
	}
	// Waiting for a connection held by a stalled server is queueing, not the
	// client's own lag.
	if p := got.Lag.Max; p > int64(50*time.Millisecond) {
		t.Fatalf("lag max %s: queueing behind the stall counted as client lag", time.Duration(p))
	}
}

func TestOpenLoopSchedulesAreStaggered(t *testing.T) {
	precise(t)
	const conns, rate = 4, 400
	var mu sync.Mutex
	var sends []time.Time
	s := spec(conns, rate, 500*time.Millisecond, 0)
	run(t, s, core.OpGet, func(*core.Op) error {
		mu.Lock()
		sends = append(sends, time.Now())
		mu.Unlock()
		return nil
	})
	sort.Slice(sends, func(i, j int) bool { return sends[i].Before(sends[j]) })
	// Evenly interleaved workers send every 1/rate = 2.5 ms; synchronized ones would
	// send in bursts of 4 with 10 ms gaps, three gaps in four too short. Count gaps
	// too short for an even spread: a loaded machine (go test runs packages side
	// by side) delays some sends into their successor's, so a quarter is allowed.
	bunched := 0
	for i := 1; i < len(sends); i++ {
		if sends[i].Sub(sends[i-1]) < 800*time.Microsecond {
			bunched++
		}
	}
	if len(sends) < 150 || bunched > len(sends)/4 {
		t.Fatalf("%d of %d sends came within 0.8 ms of the previous one", bunched, len(sends))
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("counts allocations over a long run, without the race detector")
	}
	allocs := func(ops int64) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		Run(context.Background(), Config{
			Spec:      spec(1, 0, time.Minute, ops),
			Connect:   func(context.Context) (core.Conn, error) { return scriptConn{func(*core.Op) error { return nil }}, nil },
			NewSource: func(int) (core.OpSource, error) { return fixedSource{core.OpSet}, nil },
		})
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	small, large := allocs(1000), allocs(201_000)
	if extra := int64(large) - int64(small); float64(extra)/200_000 > 0.001 {
		t.Fatalf("200,000 more ops cost %d more allocations", extra)
	}
}

func BenchmarkHotPathClosedLoop(b *testing.B) {
	b.ReportAllocs()
	Run(context.Background(), Config{
		Spec:      spec(1, 0, time.Hour, int64(b.N)),
		Connect:   func(context.Context) (core.Conn, error) { return scriptConn{func(*core.Op) error { return nil }}, nil },
		NewSource: func(int) (core.OpSource, error) { return fixedSource{core.OpSet}, nil },
	})
}

func TestOpenLoopHoldsItsTimeBoundWhenBehind(t *testing.T) {
	// A target far above what the connection can do: the phase still ends on time.
	s := spec(2, 1e9, 500*time.Millisecond, 0)
	start := time.Now()
	end, c := run(t, s, core.OpGet, func(*core.Op) error { time.Sleep(50 * time.Microsecond); return nil })
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("a 500 ms phase took %s", took)
	}
	if got := c.total()[core.OpGet].OK; float64(got)/end.Elapsed.Seconds() > 0.97e9 {
		t.Fatalf("achieved %d ops", got)
	}
}

func TestFewerOpsThanConnections(t *testing.T) {
	// Some connections get no operations at all; they must not run until the time bound.
	start := time.Now()
	end, c := run(t, spec(50, 0, time.Minute, 3), core.OpSet, func(*core.Op) error { return nil })
	if end.Status != core.StatusOK || time.Since(start) > 5*time.Second {
		t.Fatalf("3 ops over 50 connections: %s after %s", end.Status, time.Since(start))
	}
	if got := c.total()[core.OpSet].OK; got != 3 {
		t.Fatalf("%d ops", got)
	}
}

func TestProbeRecordsEveryRequestApart(t *testing.T) {
	precise(t)
	s := spec(2, 0, 2*time.Second, 0)
	s.Probe = &core.ProbeSpec{Rate: 200, Op: core.OpGet}
	var probeConns, loadConns int
	var mu sync.Mutex
	c := &collected{}
	end := Run(context.Background(), Config{
		Spec: s,
		Connect: func(context.Context) (core.Conn, error) {
			mu.Lock()
			defer mu.Unlock()
			loadConns++
			return scriptConn{func(*core.Op) error { time.Sleep(20 * time.Microsecond); return nil }}, nil
		},
		NewSource:      func(int) (core.OpSource, error) { return fixedSource{core.OpSet}, nil },
		NewProbeSource: func() (core.OpSource, error) { probeConns++; return fixedSource{core.OpGet}, nil },
		Emit:           c.emit,
	})
	if end.Status != core.StatusOK {
		t.Fatal(end.Error)
	}
	var probes []core.ProbeRecord
	for _, r := range c.intervals {
		probes = append(probes, r.Probe...)
	}
	want := 200 * end.Elapsed.Seconds()
	if n := float64(len(probes)); n < want*0.98 || n > want*1.02 {
		t.Fatalf("%d probe records in %s, want %.0f ± 2%%", len(probes), end.Elapsed, want)
	}
	if loadConns != 3 || probeConns != 1 {
		t.Fatalf("%d connections for 2 workers and a probe, %d probe sources", loadConns, probeConns)
	}
	for i, p := range probes {
		if p.Op != core.OpGet || p.Outcome != core.OutcomeOK || p.End < p.Start || p.Start < p.Intended {
			t.Fatalf("record %d: %+v", i, p)
		}
		if i > 0 && p.Intended-probes[i-1].Intended != 5*time.Millisecond {
			t.Fatalf("probe sends %s apart, want 5ms", p.Intended-probes[i-1].Intended)
		}
	}
	// The probe's GETs are not the workload's: only SETs were counted.
	if got := c.total(); got[core.OpGet] != nil && got[core.OpGet].OK > 0 {
		t.Fatal("probe requests counted as load")
	}
}

func TestProbeStopsWithACountBoundedLoad(t *testing.T) {
	s := spec(2, 0, time.Minute, 1000)
	s.Probe = &core.ProbeSpec{Rate: 100, Op: core.OpGet}
	start := time.Now()
	end := Run(context.Background(), Config{
		Spec:           s,
		Connect:        func(context.Context) (core.Conn, error) { return scriptConn{func(*core.Op) error { return nil }}, nil },
		NewSource:      func(int) (core.OpSource, error) { return fixedSource{core.OpSet}, nil },
		NewProbeSource: func() (core.OpSource, error) { return fixedSource{core.OpGet}, nil },
	})
	if end.Status != core.StatusOK || time.Since(start) > 2*time.Second {
		t.Fatalf("%s after %s: the probe kept the phase alive", end.Status, time.Since(start))
	}
}

// Every side-probe request sent is recorded, also the one still in flight when
// the workload ends: the server counted it, and the report sets the requests the
// client recorded against the server's counts.
func TestProbeRequestsAfterTheLoadAreKept(t *testing.T) {
	for _, probeDelay := range []time.Duration{0, 30 * time.Millisecond} {
		s := spec(2, 0, time.Minute, 200)
		s.Probe = &core.ProbeSpec{Rate: 1000, Op: core.OpGet}
		var sent atomic.Int64
		c := &collected{}
		end := Run(context.Background(), Config{
			Spec: s,
			Connect: func(context.Context) (core.Conn, error) {
				return scriptConn{func(op *core.Op) error {
					if op.Kind == core.OpGet { // the probe's
						sent.Add(1)
						time.Sleep(probeDelay)
						return nil
					}
					time.Sleep(100 * time.Microsecond)
					return nil
				}}, nil
			},
			NewSource:      func(int) (core.OpSource, error) { return fixedSource{core.OpSet}, nil },
			NewProbeSource: func() (core.OpSource, error) { return fixedSource{core.OpGet}, nil },
			Emit:           c.emit,
		})
		if end.Status != core.StatusOK {
			t.Fatal(end.Error)
		}
		recorded := 0
		for _, r := range c.intervals {
			recorded += len(r.Probe)
		}
		if int64(recorded) != sent.Load() || recorded == 0 {
			t.Errorf("probe delay %s: %d probe requests sent, %d recorded", probeDelay, sent.Load(), recorded)
		}
	}
}

func TestLoopsBlock(t *testing.T) {
	for _, tc := range []struct {
		rate     float64
		n, procs int
		want     bool
	}{
		{rate: 20_000, n: 1, procs: 2, want: true},  // a P left, well below a loop's rate
		{rate: 25_000, n: 1, procs: 2, want: true},  //
		{rate: 25_001, n: 1, procs: 2, want: false}, // close to what a loop can do
		{rate: 50_000, n: 1, procs: 2, want: false}, //
		{rate: 40_000, n: 2, procs: 4, want: true},  // per loop
		{rate: 20_000, n: 2, procs: 2, want: false}, // no P left
		{rate: 20_000, n: 1, procs: 1, want: false}, //
		{rate: 0, n: 1, procs: 2, want: false},      // a closed loop is never short of work
		{rate: 20_000, n: 0, procs: 2, want: false}, // nothing to drive
		{rate: 0.001, n: 1, procs: 16, want: true},  //
		{rate: 1e300, n: 2, procs: 16, want: false}, //
	} {
		if got := loopsBlock(tc.rate, tc.n, tc.procs); got != tc.want {
			t.Errorf("loopsBlock(%v, %d loops, %d Ps) = %v, want %v", tc.rate, tc.n, tc.procs, got, tc.want)
		}
	}
}

func TestLoopsFor(t *testing.T) {
	for _, tc := range []struct {
		rate           float64
		cores, streams int
		want           int
	}{
		{rate: 0, cores: 2, streams: 50, want: 2},          // closed loop: one per core
		{rate: 0, cores: 16, streams: 4, want: 4},          // no more loops than connections
		{rate: 200, cores: 2, streams: 50, want: 1},        // a side load
		{rate: 20_000, cores: 2, streams: 1000, want: 1},   // paced: one per 50,000 ops/s
		{rate: 50_000, cores: 2, streams: 50, want: 1},     //
		{rate: 50_001, cores: 2, streams: 50, want: 2},     //
		{rate: 100_000, cores: 2, streams: 50, want: 2},    //
		{rate: 1_000_000, cores: 2, streams: 50, want: 2},  // never more than the cores
		{rate: 180_000, cores: 16, streams: 1000, want: 4}, //
		{rate: 1_000_000, cores: 16, streams: 3, want: 3},  //
		{rate: 20_000, cores: 2, streams: 0, want: 0},      // nothing to drive
		{rate: 1e300, cores: 2, streams: 50, want: 2},      // far beyond any machine
		{rate: 0.001, cores: 8, streams: 50, want: 1},      //
	} {
		if got := loopsFor(tc.rate, tc.cores, tc.streams); got != tc.want {
			t.Errorf("loopsFor(%v, %d cores, %d connections) = %d, want %d", tc.rate, tc.cores, tc.streams, got, tc.want)
		}
	}
}
