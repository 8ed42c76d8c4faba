package report

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core"
)

// req is one synthetic probe request: intended send and answer, in ms from the
// phase start.
type req struct {
	intended, end float64
	failed        bool
}

func ms2ns(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// probeAt returns the requests of a 200/s probe (one every 5 ms) over [from, to)
// ms that answer after lat ms, or, inside a pause [p0, p1), when the pause ends
// (one connection, one request in flight: they wait for the pause, then go one by
// one).
func probeAt(from, to, lat, p0, p1 float64) []req {
	var out []req
	free := 0.0
	for t := from; t < to; t += 5 {
		send := max(t, free)
		end := send + lat
		if send < p1 && end > p0 {
			end = p1 + lat
		}
		free = end
		out = append(out, req{t, end, false})
	}
	return out
}

func TestStallDetection(t *testing.T) {
	type want struct {
		start, end float64
		n, failed  int
	}
	for _, tc := range []struct {
		name      string
		threshold float64 // ms
		reqs      []req
		want      []want
		slowest   float64
	}{
		{name: "none", threshold: 1000, reqs: probeAt(0, 1000, 0.2, -1, -1), slowest: 0.2},
		{
			// The pause of 1.5 s starting at 1000 ms: the requests sent from 1000 to
			// 1500 ms wait more than 1 s; the stall is the pause, from the first
			// one's send to the last one's answer.
			name: "a 1.5 s pause is one stall of 1.5 s", threshold: 1000,
			reqs: probeAt(0, 4000, 0.2, 1000, 2500),
			want: []want{{1000, 2521, 105, 0}}, slowest: 1500.2,
		},
		{
			name: "exactly the threshold is not a stall; just above is", threshold: 1000,
			reqs: []req{{0, 1000, false}, {5, 5.2, false}, {10, 1010.001, false}},
			want: []want{{10, 1010.001, 1, 0}}, slowest: 1000.001,
		},
		{
			// Consecutive slow requests merge even where their times do not overlap
			// (a probe slower than the threshold: one request every 2 s).
			name: "consecutive slow requests merge", threshold: 1000,
			reqs: []req{{0, 1500, false}, {2000, 3500, false}, {4000, 4000.3, false}, {6000, 7200, false}},
			want: []want{{0, 3500, 2, 0}, {6000, 7200, 1, 0}}, slowest: 1500,
		},
		{
			// A fast request between two slow ones that overlap in time does not
			// split them (an answer out of order on a reconnect).
			name: "overlapping slow requests merge across a fast one", threshold: 1000,
			reqs: []req{{0, 3000, false}, {5, 5.5, false}, {10, 2500, false}, {4000, 4000.1, false}},
			want: []want{{0, 3000, 2, 0}}, slowest: 3000,
		},
		{
			name: "a fast request splits stalls that do not overlap", threshold: 1000,
			reqs: []req{{0, 1100, false}, {1200, 1200.2, false}, {1300, 2400, false}},
			want: []want{{0, 1100, 1, 0}, {1300, 2400, 1, 0}}, slowest: 1100,
		},
		{
			// A timeout is a stall (its time to fail counts); a connection refused at
			// once is an error, not a stall.
			name: "failed requests", threshold: 1000,
			reqs: []req{{0, 5000, true}, {5, 5005, true}, {6000, 6000.1, true}, {7000, 7000.2, false}},
			want: []want{{0, 5005, 2, 2}}, slowest: 5000,
		},
		{
			name: "a threshold below a second", threshold: 50,
			reqs: []req{{0, 0.3, false}, {5, 60, false}, {10, 61, false}, {15, 15.3, false}, {100, 200, false}},
			want: []want{{5, 61, 2, 0}, {100, 200, 1, 0}}, slowest: 100,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &stallDetector{threshold: ms2ns(tc.threshold)}
			for _, r := range tc.reqs {
				d.add(ms2ns(r.intended), ms2ns(r.end), r.failed)
			}
			var got []want
			for _, s := range d.result() {
				got = append(got, want{float64(s.start) / 1e6, float64(s.end) / 1e6, s.requests, s.failed})
			}
			var exp []want
			for _, w := range tc.want {
				exp = append(exp, want{float64(ms2ns(w.start)) / 1e6, float64(ms2ns(w.end)) / 1e6, w.n, w.failed})
			}
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("stalls %v, want %v", got, exp)
			}
			if d.requests != int64(len(tc.reqs)) || d.slowest != ms2ns(tc.slowest) {
				t.Errorf("%d requests, slowest %d ns; want %d, %d", d.requests, d.slowest, len(tc.reqs), ms2ns(tc.slowest))
			}
		})
	}
}

// The windows of the chart hold the slowest request sent in each 10 s, failed ones
// included, counted from the phase start.
func TestStallWindows(t *testing.T) {
	info := archive.PhaseInfo{System: "s", Index: 1, Kind: core.PhaseMeasured}
	o := newOverTime(&archive.Manifest{Phases: []archive.PhaseInfo{info, {System: "s", Index: 1, Kind: core.PhaseMeasured, Repetition: 1}}})
	for _, r := range []struct {
		intended, resp int64
		outcome        string
		rep            int
	}{
		{0, 3, "hit", 0}, {9_999, 7, "miss", 0}, {10_000, 2, "hit", 0}, {35_000, 4_000, "timeout", 0}, {35_001, 5, "hit", 0},
		{1_000, 900, "hit", 1}, // a later repetition: counted as stalls, not drawn
	} {
		ns := r.intended * int64(time.Millisecond)
		resp := r.resp * int64(time.Millisecond)
		o.addProbe(&archive.ProbeRow{System: "s", PhaseIndex: 1, Repetition: r.rep, IntendedNs: ns, EndNs: ns + resp, ResponseNs: resp, Outcome: r.outcome})
	}
	got := o.windows[chartKey{"s", 1}]
	want := []int64{7, 2, 0, 4_000}
	for i := range want {
		want[i] *= int64(time.Millisecond)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("windows %v, want %v", got, want)
	}
	if s := o.stalls[repKey{"s", 1, 0}].result(); len(s) != 1 || s[0].failed != 1 {
		t.Errorf("stalls of repetition 0: %+v", s)
	}
	if o.stalls[repKey{"s", 1, 1}] == nil {
		t.Error("a later repetition's requests are not looked at")
	}
}

func TestStallFormats(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Second: "1 s", 1500 * time.Millisecond: "1.5 s", 250 * time.Millisecond: "250 ms", 2 * time.Second: "2 s"} {
		if got := threshold(d); got != want {
			t.Errorf("threshold(%s) = %q, want %q", d, got, want)
		}
	}
	for ns, want := range map[int64]string{5_000_000_000: "5.00 s", 1_520_000_000: "1.52 s", 40_000_000: "40.0 ms", 200_000: "0.2 ms"} {
		if got := seconds(ns); got != want {
			t.Errorf("seconds(%d) = %q, want %q", ns, got, want)
		}
	}
	if (archive.PhaseInfo{}).StallThreshold() != time.Second || (archive.PhaseInfo{ProbeStallNs: 5e8}).StallThreshold() != 500*time.Millisecond {
		t.Error("a phase without probe_stall_ns (an older archive) must read as 1 s")
	}
	start := time.Date(2026, 6, 17, 9, 0, 0, 0, time.UTC)
	var stalls []stall
	for i := range 12 {
		stalls = append(stalls, stall{start: int64(i) * 80e9, end: int64(i)*80e9 + int64(1+i%5)*1e9 + 5e6, requests: 200})
	}
	if got, want := stallLine(&stallDetector{}, stalls, archive.PhaseInfo{Started: start}), "12 stalls > 1 s, peak 5.00 s, 09:00:00–09:14:42"; got != want {
		t.Errorf("stall line %q, want %q", got, want)
	}
	if got, want := stallLine(&stallDetector{requests: 1200, slowest: 3e6}, nil, archive.PhaseInfo{ProbeStallNs: 5e8}), "no stall > 500 ms (slowest of 1,200 probe requests: 3.0 ms)"; got != want {
		t.Errorf("no-stall line %q, want %q", got, want)
	}
}

// A phase with more stalls than the table holds lists its longest, in the order
// they happened, and says how many more there were.
func TestStallTableIsBounded(t *testing.T) {
	_, files, _ := renderRun(t, archivetest.Options{})
	md := string(files[0].Data)
	if !strings.Contains(md, "| slow | 10:00:31.200 | 1.20 s | 1.25 s | 50 | 1 |") ||
		!strings.Contains(md, "- slow: 1 stall > 1 s, peak 1.25 s, 10:00:31–10:00:32 (1 probe request in them failed)") ||
		!strings.Contains(md, "- slow, rate-5000 had 1 stall > 1 s (the longest 1.25 s)") {
		t.Errorf("report lacks the stall, its table row or its caveat:\n%s", md)
	}
	d := &data{m: archive.Manifest{Repeat: 1}, systems: []string{"s"}, measured: []phaseRef{{index: 1, name: "soak"}}}
	d.m.Phases = []archive.PhaseInfo{{System: "s", Index: 1, Name: "soak", Kind: core.PhaseMeasured, Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}
	d.over = newOverTime(&d.m)
	det := &stallDetector{threshold: 1e9}
	for i := range 25 {
		at := int64(i) * 10e9
		det.add(at, at+int64(1e9)+int64(i+1)*1e7, false) // the later, the longer
		det.add(at+5e6, at+5e6+1e5, false)
	}
	d.over.stalls[repKey{"s", 1, 0}] = det
	var b strings.Builder
	d.stallSection(&b)
	out := b.String()
	if n := strings.Count(out, "| s | "); n != maxStallRows {
		t.Errorf("%d rows, want %d:\n%s", n, maxStallRows, out)
	}
	if !strings.Contains(out, "The 20 longest of 25 stalls; 5 shorter ones are not listed.") ||
		strings.Contains(out, "| 0.00 s | 1.01 s |") || !strings.Contains(out, "| s | 00:00:50.000 | 50.00 s | 1.06 s |") ||
		strings.Index(out, "00:00:50.000") > strings.Index(out, "00:04:00.000") {
		t.Errorf("table:\n%s", out)
	}
}

// A phase longer than one 10 s window gets two more charts: the slowest probe
// request of each window with the stall threshold, and the server's timeline
// fields; they parse, show every system, and regenerate byte for byte.
func TestOverTimeChartsOfASoak(t *testing.T) {
	dir := fixtureOf(t, archivetest.Options{Soak: true})
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(a)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range files {
		names[f.Name] = true
		if old, err := a.ReadFile(f.Name); err != nil || string(old) != string(f.Data) {
			t.Errorf("%s regenerated differently", f.Name)
		}
	}
	for _, short := range []string{"charts/probe-max-1-closed-1_10.svg", "charts/server-2-rate-5000.svg"} {
		if names[short] {
			t.Errorf("%s: a 3 s phase has no course to chart", short)
		}
	}
	for file, want := range map[string][]string{
		"charts/probe-max-3-soak.svg": {"fast", "slow", "stall threshold 1 s", "Slowest probe request per 10 s: soak"},
		"charts/server-3-soak.svg":    {"fast", "slow", "memory.used_memory", "rocksdb.num_running_compactions"},
	} {
		if !names[file] {
			t.Errorf("no %s among %v", file, names)
			continue
		}
		texts := svgTexts(t, filepath.Join(dir, file))
		for _, w := range want {
			if !strings.Contains(texts, w) {
				t.Errorf("%s lacks %q (texts: %s)", file, w, texts)
			}
		}
	}
	md, _ := a.ReadFile(archive.ReportFile)
	for _, want := range []string{
		"![Slowest probe request per 10 s: soak](charts/probe-max-3-soak.svg)",
		"![Server stats over time: soak](charts/server-3-soak.svg)",
		"- slow: 1 stall > 1 s, peak 2.00 s, 10:00:47–10:00:49",
		"| slow | 10:00:47.000 | 12.00 s | 2.00 s | 100 | 0 |",
		"- fast: no stall > 1 s (slowest of 8,000 probe requests: 40.0 ms)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// Issue 43, bug 2: a side-probe stall during which the client itself was not
// running is the client's, never the server's; a server stall that a short
// client stop touched stays the server's (the review of the change).
func TestStallsWhileTheClientStood(t *testing.T) {
	if testing.Short() {
		t.Skip("renders two soaks' reports (33 s under -race): the run without -short has it")
	}
	const s = time.Second
	for _, tc := range []struct {
		name   string
		stalls []core.Span
		status string
		whose  string
		blamed bool // the server's stall caveat is there
	}{
		{"the client stood through the stall", []core.Span{{Start: 12 * s, End: 13900 * time.Millisecond}}, "failed",
			"| the client's: not running for 1.90 s of it |", false},
		{"a short client stop inside a server stall", []core.Span{{Start: 12 * s, End: 12300 * time.Millisecond}}, "ok",
			"| the server's (the client was not running for 300.0 ms of it) |", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, files, _ := renderRun(t, archivetest.Options{Soak: true, ClientStalls: tc.stalls})
			md := string(fileNamed(t, files, archive.ReportFile))
			if !strings.Contains(md, tc.whose) {
				t.Errorf("the stalls table lacks %q:\n%s", tc.whose, md)
			}
			if got := strings.Contains(md, "slow, soak had 1 stall > 1 s"); got != tc.blamed {
				t.Errorf("the server's stall caveat there: %v, want %v\n%s", got, tc.blamed, md)
			}
			if !strings.Contains(md, "slow, soak was client-stalled: the client process was not running for") {
				t.Errorf("no client-stalled caveat:\n%s", md)
			}
			if tc.status == "failed" && !strings.Contains(md, "slow, soak ended failed: `the client was not running for 1.9s") {
				t.Errorf("the phase did not fail:\n%s", md)
			}
		})
	}
}

// fileNamed is the rendered file of that name.
func fileNamed(t *testing.T, files []File, name string) []byte {
	t.Helper()
	for _, f := range files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("no %s among the rendered files", name)
	return nil
}
