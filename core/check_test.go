package core

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// latencyOf records n values of a distribution and summarizes it as an engine does.
func latencyOf(t *testing.T, seed uint64, n int) Latency {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	h := NewHistogram()
	for range n {
		_ = h.RecordValue(max(1, int64(rng.ExpFloat64()*float64(100*time.Microsecond)*float64(1+seed%7))))
	}
	l, err := Summarize(h)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// What an engine summarizes passes the checks: the host reads percentiles from
// the sparse form of a histogram, the engine from the dense one.
func TestTrueLatenciesPass(t *testing.T) {
	for seed := range uint64(50) {
		n := 1 + int(seed*seed*37%20000)
		l := latencyOf(t, seed, n)
		o := OpInterval{Op: OpGet, OK: int64(n), Hits: int64(n), Response: l, Service: l}
		if err := o.Check(); err != nil {
			t.Fatalf("seed %d, %d values: %v", seed, n, err)
		}
	}
	// A stall of a minute and more, clamped to the histogram's top as an
	// engine clamps it, is a true latency.
	h := NewHistogram()
	_ = h.RecordValue(100_000)
	_ = h.RecordValue(HistMax)
	l, err := Summarize(h)
	if err != nil {
		t.Fatal(err)
	}
	if l.Max <= HistMax {
		t.Fatalf("the top of HistMax's bucket is %d, not above HistMax", l.Max)
	}
	if o := (OpInterval{Op: OpSet, OK: 2, Response: l, Service: l}); o.Check() != nil {
		t.Errorf("a latency of a minute: %v", o.Check())
	}
	empty := OpInterval{Op: OpSet, Errors: [NumErrorClasses]int64{3}}
	if err := empty.Check(); err != nil {
		t.Errorf("an op that only failed: %v", err)
	}
}

func TestImpossibleOps(t *testing.T) {
	l := latencyOf(t, 3, 1000)
	good := OpInterval{Op: OpGet, OK: 1000, Hits: 900, Misses: 100, Response: l, Service: l}
	for _, tc := range []struct {
		name string
		edit func(o *OpInterval)
		want string
	}{
		{"negative ok", func(o *OpInterval) { o.OK = -1 }, "ok -1 is negative"},
		{"negative errors", func(o *OpInterval) { o.Errors[ErrClassTimeout] = -2 }, "timeout errors -2 is negative"},
		{"hits and misses", func(o *OpInterval) { o.Misses = 101 }, "do not add up"},
		{"a write with hits", func(o *OpInterval) { o.Op = OpSet; o.Hits, o.Misses = 1, 0 }, "SET is neither a read nor a delete"},
		{"a count not the successes", func(o *OpInterval) { o.Response.Count = 999 }, "count 999, but 1000 successes"},
		{"no distribution", func(o *OpInterval) { o.Service = Latency{} }, "service time: no distribution"},
		{"percentiles out of order", func(o *OpInterval) { o.Response.P90 = o.Response.P50 - 1 }, "p90"},
		{"a percentile out of range", func(o *OpInterval) { o.Response.Max = histTop + 1 }, "outside the histogram's range"},
		{"a histogram that does not decode", func(o *OpInterval) { o.Response.HDR = []byte("HISTFAAAnonsense") }, "does not decode"},
		{"a histogram of other operations", func(o *OpInterval) {
			m := latencyOf(t, 4, 1000)
			o.Response.HDR = m.HDR
		}, "but its histogram says"},
		{"percentiles of nothing", func(o *OpInterval) { o.Lag = Latency{P99: 5} }, "percentiles of an empty distribution"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			err := o.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v, want %q", err, tc.want)
			}
		})
	}
	if err := good.Check(); err != nil {
		t.Errorf("the true op: %v", err)
	}
}

func TestImpossibleEnds(t *testing.T) {
	l := latencyOf(t, 5, 10)
	op := OpInterval{Op: OpGet, OK: 10, Hits: 10, Response: l, Service: l}
	sums := map[OpKind]*OpInterval{OpGet: &op}
	good := PhaseEnd{Status: StatusOK, Elapsed: 6 * time.Second, Stalled: time.Second,
		Stalls: []Span{{Start: time.Second, End: 2 * time.Second}}, Totals: []OpInterval{op}}
	for _, tc := range []struct {
		name string
		edit func(e *PhaseEnd)
		want string
	}{
		{"status", func(e *PhaseEnd) { e.Status = "running" }, `status "running"`},
		{"negative elapsed", func(e *PhaseEnd) { e.Elapsed = -1 }, "elapsed"},
		{"stalled beyond the phase", func(e *PhaseEnd) { e.Stalled = 7 * time.Second }, "stalled 7s of its 6s"},
		{"a stall outside the phase", func(e *PhaseEnd) { e.Stalls[0].End = 7 * time.Second }, "a stall from 1s to 7s"},
		{"stalls beyond their total", func(e *PhaseEnd) { e.Stalled = time.Millisecond }, "stalls of 1s in all"},
		{"totals not the sums", func(e *PhaseEnd) { e.Totals[0].Bytes = 5 }, "but its intervals sum to"},
		{"totals missing an op", func(e *PhaseEnd) { e.Totals = []OpInterval{{Op: OpSet}} }, "totals: no GET"},
		{"negative pub/sub counts", func(e *PhaseEnd) { e.PubSub = &PubSubCounts{Lost: -1} }, "pub/sub counts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := good
			e.Stalls = append([]Span(nil), good.Stalls...)
			e.Totals = append([]OpInterval(nil), good.Totals...)
			tc.edit(&e)
			err := e.Check(sums)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v, want %q", err, tc.want)
			}
		})
	}
	if err := good.Check(sums); err != nil {
		t.Errorf("the true end: %v", err)
	}
}

func TestImpossibleIntervals(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    IntervalReport
		want string
	}{
		{"ends before it starts", IntervalReport{Index: 1, Start: time.Second, End: 0}, "interval 1 from 1s to 0s"},
		{"an op twice", IntervalReport{Ops: []OpInterval{{Op: OpGet}, {Op: OpGet}}}, "GET twice"},
		{"a probe request ending before it starts", IntervalReport{Probe: []ProbeRecord{{Intended: 5, Start: 5, End: 4}}}, "side-probe request"},
		{"negative connections", IntervalReport{Conns: &Conns{Open: 2, Opened: 3, Lost: -1}}, "connections"},
	} {
		if err := tc.r.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check() = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestClientStalled(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		elapsed, stalled time.Duration
		kind             PhaseKind
		open             bool
		fails            bool
		window           time.Duration
	}{
		{6 * time.Second, 0, PhaseMeasured, false, false, 6 * time.Second},
		// A tenth of a second of a starved client on a busy machine: a caveat.
		{6 * time.Second, 150 * ms, PhaseMeasured, false, false, 5850 * ms},
		{6 * time.Second, 499 * ms, PhaseMeasured, false, false, 5501 * ms},
		{6 * time.Second, 500 * ms, PhaseMeasured, false, true, 5500 * ms},
		{6 * time.Second, 3 * time.Second, PhaseMeasured, true, true, 6 * time.Second},
		{300 * time.Second, 5 * time.Second, PhaseMeasured, false, false, 295 * time.Second},
		{300 * time.Second, 6 * time.Second, PhaseMeasured, false, true, 294 * time.Second},
		// A load's rate is no result: it is never failed for its client's stall.
		{840 * ms, 86 * ms, PhaseLoad, false, false, 754 * ms},
		{6 * time.Second, 3 * time.Second, PhaseLoad, false, false, 3 * time.Second},
	} {
		end := PhaseEnd{Status: StatusOK, Elapsed: tc.elapsed, Stalled: tc.stalled, Stalls: []Span{{0, tc.stalled}}}
		if got := StalledTooLong(tc.elapsed, tc.stalled) && tc.kind == PhaseMeasured; got != tc.fails {
			t.Errorf("%s of %s (%s): fails %v, want %v", tc.stalled, tc.elapsed, tc.kind, got, tc.fails)
		}
		if got := RateWindow(tc.elapsed, tc.stalled, tc.open); got != tc.window {
			t.Errorf("RateWindow(%s, %s, %v) = %s, want %s", tc.elapsed, tc.stalled, tc.open, got, tc.window)
		}
		JudgeStalls(&end, tc.kind)
		if (end.Status == StatusFailed) != tc.fails || tc.stalled > 0 && !tc.fails && len(end.Notes) != 1 {
			t.Errorf("%s of %s (%s): judged %s %q, notes %q", tc.stalled, tc.elapsed, tc.kind, end.Status, end.Error, end.Notes)
		}
	}
}

func TestJudgeErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		totals []OpInterval
		want   string
	}{
		{"a few errors", []OpInterval{{Op: OpSet, OK: 90, Errors: [NumErrorClasses]int64{ErrClassOOM: 10}}}, ""},
		{"half", []OpInterval{{Op: OpSet, OK: 50, Errors: [NumErrorClasses]int64{ErrClassOOM: 50}}}, ""},
		{"most writes at stop-writes", []OpInterval{{Op: OpGet, OK: 1000, Hits: 1000}, {Op: OpSet, OK: 13, Errors: [NumErrorClasses]int64{ErrClassOverload: 80, ErrClassTimeout: 7}}},
			"87% of its SET operations failed (87 of 100; 80 overload)"},
		{"deliveries are not issued", []OpInterval{{Op: OpDeliver, OK: 1, Errors: [NumErrorClasses]int64{ErrClassOther: 5}}}, ""},
	} {
		end := PhaseEnd{Status: StatusOK}
		JudgeErrors(&end, tc.totals)
		if tc.want == "" && end.Status != StatusOK || tc.want != "" && (end.Status != StatusFailed || !strings.Contains(end.Error, tc.want)) {
			t.Errorf("%s: %s %q, want %q", tc.name, end.Status, end.Error, tc.want)
		}
	}
}

// Stalls of several processes combine into their mean (the share of the client
// that stood still) and their spans, merged where they overlap: one process of
// four stopped for half the window does not make the rate of all four twice what
// they sent (the review of issue 43).
func TestCombinedStalls(t *testing.T) {
	const s = time.Second
	got, spans := CombinedStalls([]time.Duration{3 * s, 0, 0, 0},
		[][]Span{{{Start: 1 * s, End: 4 * s}}, nil, {{Start: 3 * s, End: 5 * s}}, {{Start: 7 * s, End: 8 * s}}})
	if got != 750*time.Millisecond {
		t.Errorf("stalled %s, want the mean 750ms", got)
	}
	if want := []Span{{Start: 1 * s, End: 5 * s}, {Start: 7 * s, End: 8 * s}}; !slices.Equal(spans, want) {
		t.Errorf("spans %v, want %v", spans, want)
	}
	end := PhaseEnd{Status: StatusOK, Elapsed: 6 * s, Stalled: got}
	if JudgeStalls(&end, PhaseMeasured); end.Status != StatusFailed {
		t.Errorf("one process of four stopped for half the phase: %s", end.Status)
	}
	if got, spans := CombinedStalls(nil, nil); got != 0 || spans != nil {
		t.Errorf("no process: %s %v", got, spans)
	}
}

// A phase cut to what its intervals cover keeps only the stalls within it.
func TestCutTo(t *testing.T) {
	const s = time.Second
	e := PhaseEnd{Status: StatusOK, Elapsed: 10 * s, Stalled: 5 * s, Stalls: []Span{{Start: 1 * s, End: 3 * s}, {Start: 6 * s, End: 8 * s}}}
	e.CutTo(7 * s)
	if want := []Span{{Start: 1 * s, End: 3 * s}, {Start: 6 * s, End: 7 * s}}; e.Elapsed != 7*s || !slices.Equal(e.Stalls, want) || e.Stalled != 4*s {
		t.Errorf("cut to 7s: elapsed %s, stalled %s in %v", e.Elapsed, e.Stalled, e.Stalls)
	}
	if err := e.Check(nil); err != nil {
		t.Errorf("the cut end does not check: %v", err)
	}
}
