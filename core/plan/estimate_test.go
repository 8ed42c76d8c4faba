package plan_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/workloads/suites"
)

// The estimate of every built-in suite, at scale 1 and 0.01, worked out by hand from
// the suite files. Each phase costs plan.PhaseOverhead (3 s) more than its time. Memtier
// keys are "kv_" and the number: at most 3 + the digits of key_max bytes; values
// average (min+max)/2. A YCSB record of the ycsb suite is its key, "user" + at most 19
// digits (hashed) = 23 B, ten field names "field0".."field9" = 60 B, and ten values of
// 128 B = 1280 B: 1363 B in all.
func TestEstimateBuiltinSuites(t *testing.T) {
	const s = time.Second
	for _, tc := range []struct {
		suite    string
		scale    float64
		repeat   int
		min, max time.Duration
		ops      int64
		closed   int    // closed-loop phases without an op count
		bytes    int64  // data added to the server
		open     string // phases whose inserts are not counted
		mayStop  bool
	}{
		// load (60 s bound, 10,000 keys), closed-1:10 5 s, rate-5000 5 s.
		// max 60+5+5 + 3x3 = 79 s; min 5+5 + 9 = 19 s (the load may take no time).
		// ops 10,000 + 5000/s x 5 s = 35,000. bytes 10,000 x (3+5 + 256) = 2,640,000;
		// the later SETs overwrite the loaded keys.
		{suite: "smoke", scale: 1, repeat: 1, min: 19 * s, max: 79 * s, ops: 35_000, closed: 1, bytes: 2_640_000},
		// --repeat 3: the two measured phases three times each, 7 phases.
		// max 60 + 3x10 + 7x3 = 111 s; min 30 + 21 = 51 s; ops 10,000 + 3x25,000.
		{suite: "smoke", scale: 1, repeat: 3, min: 51 * s, max: 111 * s, ops: 85_000, closed: 3, bytes: 2_640_000},
		// 100 keys (the load keeps its 60 s bound), the others 1 s.
		// max 60+1+1 + 9 = 71 s; min 1+1 + 9 = 11 s; ops 100 + 5000; bytes 100 x (3+3 + 256).
		{suite: "smoke", scale: 0.01, repeat: 1, min: 11 * s, max: 71 * s, ops: 5_100, closed: 1, bytes: 26_200},

		// load (30 min, 1,000,000 keys of 1-4 KB), three mixes of 300 s in a closed loop.
		// max 1800 + 900 + 4x3 = 2712 s; min 900 + 12 = 912 s;
		// bytes 1,000,000 x (3+7 + 2560) = 2,570,000,000.
		{suite: "memtier", scale: 1, repeat: 1, min: 912 * s, max: 2712 * s, ops: 1_000_000, closed: 3, bytes: 2_570_000_000},
		// 10,000 keys, 3 s mixes: max 1800 + 9 + 12; min 9 + 12; bytes 10,000 x (3+5 + 2560).
		{suite: "memtier", scale: 0.01, repeat: 1, min: 21 * s, max: 1821 * s, ops: 10_000, closed: 3, bytes: 25_680_000},

		// memtier's load, then three sweeps of 7 steps of 60 s and a 300 s phase at
		// each knee: 25 phases. max 1800 + 3x(420+300) + 25x3 = 4035 s; min 2160 + 75.
		{suite: "knee", scale: 1, repeat: 1, min: 2235 * s, max: 4035 * s, ops: 1_000_000, closed: 24, bytes: 2_570_000_000},
		// steps of 1 s (0.6 s, floored), knees of 3 s: max 1800 + 3x10 + 75; min 30 + 75.
		{suite: "knee", scale: 0.01, repeat: 1, min: 105 * s, max: 1905 * s, ops: 10_000, closed: 24, bytes: 25_680_000},

		// load (30 min, 1,000,000 keys of 256 B), then three ladders, each step 20 s
		// twice: 10 + 10 + 5 steps, 51 phases. max 1800 + 50x20 + 51x3 = 2953 s. A
		// ladder stops at its first step not sustained: min counts the load's
		// overhead and each ladder's first step twice, 3 + 3x2x(20+3) = 141 s.
		// ops 1,000,000 + 2 ladders of 8,770,000/s summed over the steps x 20 s x 2
		// (350,800,000 each) + 670,000/s x 20 s x 2 (26,800,000) = 729,400,000.
		// bytes 1,000,000 x (3+7 + 256).
		{suite: "latency", scale: 1, repeat: 1, min: 141 * s, max: 2953 * s, ops: 729_400_000, bytes: 266_000_000, mayStop: true},
		// 10,000 keys, steps of 1 s: max 1800 + 50 + 153; min 3 + 3x2x(1+3);
		// ops 10,000 + 2x8,770,000x2 + 670,000x2; bytes 10,000 x (3+5 + 256).
		{suite: "latency", scale: 0.01, repeat: 1, min: 27 * s, max: 2003 * s, ops: 36_430_000, bytes: 2_640_000, mayStop: true},

		// load (30 min), three mixes at 100,000/s for 30 min: max 1800 + 5400 + 12;
		// min 5400 + 12; ops 1,000,000 + 3 x 180,000,000.
		{suite: "soak", scale: 1, repeat: 1, min: 5412 * s, max: 7212 * s, ops: 541_000_000, bytes: 2_570_000_000},
		// 18 s each: max 1800 + 54 + 12; ops 10,000 + 3 x 1,800,000.
		{suite: "soak", scale: 0.01, repeat: 1, min: 66 * s, max: 1866 * s, ops: 5_410_000, bytes: 25_680_000},

		// one ladder, 6 steps of 20 s twice: max 12x23 = 276 s, min its first step
		// twice, 46 s; 780,000 messages/s summed over the steps x 20 s x 2. Pub/sub
		// stores nothing.
		{suite: "pubsub", scale: 1, repeat: 1, min: 46 * s, max: 276 * s, ops: 31_200_000, mayStop: true},
		{suite: "pubsub", scale: 0.01, repeat: 1, min: 8 * s, max: 48 * s, ops: 1_560_000, mayStop: true},

		// load (6 h bound, 100,000,000 records), then for C, A, B and D: a warm-up of
		// 1,000,000 ops at 100,000/s (600 s bound, 10 s when sustained), 300 s at
		// 100,000/s, a closed-loop warm-up of 1,000,000 ops (600 s bound), 300 s in a
		// closed loop: 17 phases. max 21600 + 4x1800 + 51 = 28851 s (8h0m51s); min
		// 4x(10+300+300) + 51 = 2491 s. ops 100,000,000 + 4 x 32,000,000.
		// bytes: the load is 100,000,000 x 10 x 128 B = 128 GB of values, with 2.3 GB
		// of keys and 6 GB of field names 136.3 GB; D inserts 5% of its ops, new
		// records: 1,000,000 + 30,000,000 + 1,000,000 ops at most are 1,600,000 records
		// (2,180,800,000 B), and what D-max inserts is unknown.
		{suite: "ycsb", scale: 1, repeat: 1, min: 2491 * s, max: 28851 * s, ops: 228_000_000, closed: 4,
			bytes: 136_300_000_000 + 2_180_800_000, open: "D-max"},
		// 1,000,000 records (the load keeps its 6 h), warm-ups of 10,000 ops in 6 s
		// (0.1 s at 100,000/s), 3 s windows: max 21600 + 4x18 + 51 = 21723 s;
		// min 4x(0.1+3+3) + 51 = 75.4 s; ops 1,000,000 + 4 x 320,000; D inserts
		// 500 + 15,000 + 500 records.
		{suite: "ycsb", scale: 0.01, repeat: 1, min: 75*s + 400*time.Millisecond, max: 21723 * s, ops: 2_280_000, closed: 4,
			bytes: 1_363_000_000 + 16_000*1363, open: "D-max"},
	} {
		data, err := suites.Get(tc.suite)
		if err != nil {
			t.Fatal(err)
		}
		su, err := plan.ParseSuite(tc.suite+".yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build(su, []string{"a", "b"}, tc.scale, 1, tc.repeat)
		if err != nil {
			t.Fatal(err)
		}
		e := p.Estimate("b")
		if e.System != "b" || e.MinWall != tc.min || e.MaxWall != tc.max || e.Ops != tc.ops || len(e.ClosedLoop) != tc.closed ||
			e.Bytes != tc.bytes || strings.Join(e.OpenInserts, ",") != tc.open || e.MayStop != tc.mayStop {
			t.Errorf("%s at scale %g, repeat %d:\n got %s to %s, %d ops, %d closed, %d B, open %v, may stop %v\nwant %s to %s, %d ops, %d closed, %d B, open %q, may stop %v",
				tc.suite, tc.scale, tc.repeat, e.MinWall, e.MaxWall, e.Ops, len(e.ClosedLoop), e.Bytes, e.OpenInserts, e.MayStop,
				tc.min, tc.max, tc.ops, tc.closed, tc.bytes, tc.open, tc.mayStop)
		}
		if a := p.Estimate("a"); a.MaxWall != e.MaxWall || a.Bytes != e.Bytes {
			t.Errorf("%s: systems a and b run the same phases but are estimated apart", tc.suite)
		}
	}
}

// The ycsb suite at scale 1 in one line, as the dry run and a run's start print it.
func TestEstimateString(t *testing.T) {
	data, _ := suites.Get("ycsb")
	su, _ := plan.ParseSuite("ycsb.yaml", data)
	p, err := plan.Build(su, []string{"a"}, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := "time 41m31s + 104,000,000 ops at the system's rate (at most 8h0m51s); 228,000,000 ops + as many as the system serves in 4 closed-loop phases; writes 138.5 GB + the records D-max inserts"
	if got := p.Estimate("a").String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	data, _ = suites.Get("latency")
	su, _ = plan.ParseSuite("latency.yaml", data)
	p, _ = plan.Build(su, []string{"a"}, 1, 1, 1)
	want = "time 2m21s + 1,000,000 ops at the system's rate (at most 49m13s); at most 729,400,000 ops; writes 266.0 MB"
	if got := p.Estimate("a").String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// SETs beyond the loaded range add keys, at most one per SET; ordered YCSB keys are
// as long as the largest record number; a ladder that never stops is not an upper
// bound.
func TestEstimateNewData(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		bytes      int64
		mayStop    bool
	}{
		// load: 1000 x (3+4 + 150) = 157,000. grow: 100/s x 10 s = 1000 ops, 500
		// SETs, over keys 1..3000 of which 2000 are new: 500 x (3+4 + 150) = 78,500.
		// again: the same range, all of it written before (as far as the estimate
		// knows): nothing.
		{"memtier SETs beyond the load", `name: x
defaults: {connections: 4, memtier: {key_max: 1000, value_size: 100-200}}
phases:
  - {name: load, kind: load, duration: 10s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: grow, duration: 10s, rate: 100, memtier: {ratio: "1:1", key_max: 3000}}
  - {name: again, duration: 10s, memtier: {ratio: "1:1", key_max: 3000}}
`, 157_000 + 78_500, false},
		// No load: a closed loop may SET every key of its range: 50 x (3+2 + 32).
		{"closed-loop SETs without a load", `name: x
phases:
  - {name: a, duration: 10s, connections: 2, memtier: {key_max: 50}}
`, 50 * 37, false},
		// Ordered keys: "user" + up to 4 digits (record 1999); 2 fields of 10 B with
		// names field0, field1: 2000 x (8 + 12 + 20) = 80,000. The inserts of i
		// (phase 4: the ladder is two, from record 4,000,000,000,000): 1000/s x 2 s x 0.5 = 1000 records
		// of "user" + 13 digits: 1000 x (17 + 12 + 20) = 49,000. A ladder that runs
		// every step (stop_after_ns: 0) is no upper bound.
		{"ordered ycsb keys and inserts", `name: x
defaults: {connections: 2, ycsb: {record_count: 2000, field_count: 2, field_length: 10, insert_order: ordered}}
phases:
  - {name: load, kind: load, duration: 10s}
  - {name: r, ycsb: {workload: C}, ladder: {rates: [10, 20], step: 1s, stop_after_ns: 0}}
  - {name: i, rate: 1000, duration: 2s, ycsb: {read_proportion: 0.5, insert_proportion: 0.5}}
`, 80_000 + 49_000, false},
	} {
		su, err := plan.ParseSuite("x.yaml", []byte(tc.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		p, err := plan.Build(su, []string{"a"}, 1, 1, 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if e := p.Estimate("a"); e.Bytes != tc.bytes || e.MayStop != tc.mayStop {
			t.Errorf("%s: %d B, may stop %v; want %d B, %v", tc.name, e.Bytes, e.MayStop, tc.bytes, tc.mayStop)
		}
	}
}

func TestFormatBytesAndCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 2_640_000: "2.6 MB", 999_960: "1.0 MB",
		138_480_800_000: "138.5 GB", 2_000_000_000_000: "2.0 TB"} {
		if got := plan.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 228_000_000: "228,000,000"} {
		if got := plan.FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// What is left of a running phase: the rest of its duration, or of its op count at
// the rate so far, whichever ends first; and what happens around it (plan.PhaseOverhead).
func TestLeft(t *testing.T) {
	const s = time.Second
	timed := core.PhaseSpec{Duration: 10 * s}
	counted := core.PhaseSpec{Duration: 60 * s, Ops: 1000}
	fixed := core.PhaseSpec{Duration: 60 * s, Ops: 1000, Rate: 100}
	for _, tc := range []struct {
		name        string
		spec        core.PhaseSpec
		elapsed     time.Duration
		done        int64
		least, most time.Duration
	}{
		{"time-bounded, under way", timed, 4 * s, 123, 6 * s, 6 * s},
		{"time-bounded, past its duration", timed, 11 * s, 0, 0, 0},
		{"counted, closed loop, nothing done yet", counted, 0, 0, 0, 60 * s},
		// 250 in 2 s: 750 more take 6 s.
		{"counted, closed loop, under way", counted, 2 * s, 250, 6 * s, 6 * s},
		// 100 in 50 s: 900 more would take 450 s, but the phase ends at 60 s.
		{"counted, slower than its bound", counted, 50 * s, 100, 10 * s, 10 * s},
		{"counted, done", counted, 3 * s, 1000, 0, 0},
		// 1000 at 100/s: 10 s, 2 s of which have gone.
		{"counted, fixed rate, nothing done yet", fixed, 2 * s, 0, 8 * s, 58 * s},
	} {
		least, most := plan.Left(tc.spec, tc.elapsed, tc.done)
		if least != tc.least+plan.PhaseOverhead || most != tc.most+plan.PhaseOverhead {
			t.Errorf("%s: %s to %s, want %s to %s and plan.PhaseOverhead", tc.name, least, most, tc.least, tc.most)
		}
	}
}

// Once a run has measured a closed-loop rate, a load takes its op count at that
// rate: the system's own, else as fast as the fastest and as slow as the slowest
// system measured; and each phase its measured overhead, not plan.PhaseOverhead.
func TestEstimateMeasured(t *testing.T) {
	data, _ := suites.Get("smoke")
	su, _ := plan.ParseSuite("smoke.yaml", data)
	p, err := plan.Build(su, []string{"a", "b"}, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	const s, ms = time.Second, time.Millisecond
	b := p.Steps[3:] // b's load (10,000 ops, at most 60 s) and two 5 s phases
	for _, tc := range []struct {
		name        string
		m           plan.Measured
		least, most time.Duration
		unmeasured  int64
	}{
		{"nothing measured", plan.Measured{}, 10*s + 3*plan.PhaseOverhead, 70*s + 3*plan.PhaseOverhead, 10_000},
		{"its own rate", plan.Measured{Rates: map[string]float64{"a": 1000, "b": 5000}, Overhead: 200 * ms}, 10*s + 2*s + 600*ms, 10*s + 2*s + 600*ms, 0},
		{"the others' rates", plan.Measured{Rates: map[string]float64{"a": 1000, "c": 5000}, Overhead: 200 * ms}, 10*s + 2*s + 600*ms, 10*s + 10*s + 600*ms, 0},
		{"a one-off cost among the gaps", plan.Measured{Rates: map[string]float64{"b": 5000}, Overhead: 200 * ms, MeanOverhead: time.Second}, 10*s + 2*s + 600*ms, 10*s + 2*s + 3*s, 0},
		{"slower than its bound", plan.Measured{Rates: map[string]float64{"b": 100}}, 70*s + 3*plan.PhaseOverhead, 70*s + 3*plan.PhaseOverhead, 0},
	} {
		e := plan.EstimateMeasured(b, tc.m)
		if e.MinWall != tc.least || e.MaxWall != tc.most || e.Unmeasured != tc.unmeasured {
			t.Errorf("%s: %s to %s, %d unmeasured; want %s to %s, %d", tc.name, e.MinWall, e.MaxWall, e.Unmeasured, tc.least, tc.most, tc.unmeasured)
		}
	}
	m := plan.Measured{Rates: map[string]float64{"b": 5000}, Overhead: 200 * ms}
	if least, most, _ := m.Left(b[0], s, 4000); least != 1500*ms+200*ms || most != least {
		t.Errorf("b's load 1 s in, 4,000 done: %s to %s left, want 1.7s (at its rate so far)", least, most)
	}
	if least, most, u := m.Left(b[0], 500*ms, 0); least != 1500*ms+200*ms || most != least || u != 0 {
		t.Errorf("b's load 0.5 s in, none done: %s to %s left, %d unmeasured; want 1.7s (at its measured rate)", least, most, u)
	}
	if least, most, u := (plan.Measured{}).Left(b[0], 0, 0); least != plan.PhaseOverhead || most != time.Minute+plan.PhaseOverhead || u != 10_000 {
		t.Errorf("b's load, no rate: %s to %s left, %d unmeasured; want its bounds, 10,000 unmeasured", least, most, u)
	}
	for _, tc := range []struct {
		e    plan.Estimate
		want string
	}{
		{plan.Estimate{MinWall: 25 * s, MaxWall: 6*time.Hour + 25*s, Unmeasured: 100_000}, "25s + 100,000 ops at x (at most 6h0m25s)"},
		{plan.Estimate{MinWall: 25 * s, MaxWall: 40 * s}, "25s to 40s"},
		{plan.Estimate{MinWall: 1400 * ms, MaxWall: 1400 * ms}, "1s"},
	} {
		if got := tc.e.Time("x"); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

// The steps a run has still to go through, for its ETA: the rest of one system's
// phases, then the next system's, whose ladders are its own.
func TestEstimateSteps(t *testing.T) {
	data, _ := suites.Get("smoke")
	su, _ := plan.ParseSuite("smoke.yaml", data)
	p, err := plan.Build(su, []string{"a", "b"}, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	// a's two 5 s phases and b's three: 10 + 19 s to 10 + 79 s, with 3 s each.
	e := plan.EstimateSteps(p.Steps[1:])
	if e.System != "a" || e.MinWall != 16*time.Second+p.Estimate("b").MinWall || e.MaxWall != 16*time.Second+p.Estimate("b").MaxWall {
		t.Errorf("smoke after a's load: %s, %s to %s", e.System, e.MinWall, e.MaxWall)
	}

	data, _ = suites.Get("latency")
	su, _ = plan.ParseSuite("latency.yaml", data)
	p, err = plan.Build(su, []string{"a", "b"}, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	half := len(p.Steps) / 2
	from := half / 2 // in the middle of one of a's ladders
	got := plan.EstimateSteps(p.Steps[from:])
	want := plan.EstimateSteps(p.Steps[from:half]).MinWall + p.Estimate("b").MinWall
	if got.MinWall != want {
		t.Errorf("latency from a's step %d: at least %s, want %s (a's rest and all of b)", from, got.MinWall, want)
	}
	if all := plan.EstimateSteps(p.Steps); all.MaxWall != p.Estimate("a").MaxWall+p.Estimate("b").MaxWall {
		t.Errorf("the whole run: at most %s", all.MaxWall)
	}
}
