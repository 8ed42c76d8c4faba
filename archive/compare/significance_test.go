package compare

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core/confidence"
)

// archives are the archives generated for the tests, by their options: each
// is written once (one with intervals takes seconds).
var archives = map[string]*archive.Archive{}

func generated(t *testing.T, o archivetest.Options) *archive.Archive {
	t.Helper()
	k := fmt.Sprintf("%+v", o)
	if archives[k] == nil {
		archives[k] = open(t, o)
	}
	return archives[k]
}

// formatTwo is a as an archive of format 2 would be: no intervals.
func formatTwo(a *archive.Archive) *archive.Archive {
	c := clone(a)
	c.Manifest.FormatVersion = 2
	for i := range c.Summary {
		r := &c.Summary[i]
		r.ThroughputLo, r.ThroughputHi, r.CINote = 0, 0, ""
		r.RespP50Lo, r.RespP50Hi, r.RespP99Lo, r.RespP99Hi = 0, 0, 0, 0
		r.RespP999Lo, r.RespP999Hi, r.RespP9999Lo, r.RespP9999Hi = 0, 0, 0, 0
	}
	return c
}

// A change is a regression or an improvement only when significant and
// beyond the threshold; the repetitions judge when both sides have them, a
// single run's interval otherwise; archives without intervals are judged by
// the fixed bands, exactly as before.
func TestSignificance(t *testing.T) {
	if testing.Short() {
		// Three minutes under the race detector (the -short run) for arithmetic
		// over generated archives, with no goroutine of its own: the normal run
		// has it.
		t.Skip("the verdicts' arithmetic runs in the normal test run; skipped with -short (the -race run)")
	}
	// With repetitions on both sides they decide, whatever the windows' own
	// intervals (which take seconds to generate): most have none.
	windows := archivetest.Options{Intervals: 30, Repeat: 3, Jitter: 0.02}
	repeated := archivetest.Options{Repeat: 3, Jitter: 0.02}
	scattered := archivetest.Options{Repeat: 3, Jitter: 0.08} // repetitions 1, 1.08, 1.16
	with := func(o archivetest.Options, throughput, latency float64) archivetest.Options {
		o.Throughput, o.Latency = throughput, latency
		return o
	}
	once := archivetest.Options{Intervals: 30}
	tests := []struct {
		name       string
		a, b       archivetest.Options
		formatTwo  bool // both archives as format 2 wrote them: no intervals
		opt        Options
		ops, lat   string  // verdicts of fast closed-1:10's ops/s and latencies
		change     float64 // of ops/s, within 0.01
		basis      string
		note, none string // in the summary, and not (unless empty)
	}{
		{"alike, repeated", repeated, with(repeated, 1.02, 0), false, Defaults,
			WithinNoise, WithinNoise, 0.02, ByRepetitions, "within noise", "single run"},
		{"a fifth slower, repeated", windows, with(windows, 0.8, 0), false, Defaults,
			Regression, WithinNoise, -0.2, ByRepetitions, "confidence 95%", "no interval"},
		{"a fifth slower, repeated in A only (its median 1.02)", windows, with(once, 0.8, 1.2), false, Defaults,
			Regression, Regression, 0.8/1.02 - 1, ByWindow, "judged by a single run's interval", ""},
		{"a tenth faster beyond the threshold, repetitions too scattered to say", scattered, with(scattered, 1.1, 0), false, Defaults,
			WithinNoise, WithinNoise, 0.1, ByRepetitions, "0 improvements", "noise 3%"},
		{"the same at 50 % confidence", scattered, with(scattered, 1.1, 0), false, Options{Threshold: 0.05, Noise: 0.03, Unstable: 0.1, Confidence: 0.5},
			Improvement, WithinNoise, 0.1, ByRepetitions, "confidence 50%", "no interval"},
		{"the same in format 2: the fixed bands", scattered, with(scattered, 1.1, 0), true, Defaults,
			Improvement, Unchanged, 0.1, "", "no interval: judged by the fixed thresholds", "within noise"},
		{"a fifth slower, one run each", once, with(once, 0.8, 1.2), false, Defaults,
			Regression, Regression, -0.2, ByWindow, "judged by a single run's interval, which covers the noise within the run only", ""},
		{"a fifth slower, one run each, format 2", once, with(once, 0.8, 1.2), true, Defaults,
			Regression, Regression, -0.2, "", "(threshold 5%, noise 3%)", "single run"},
		{"3 % slower, significant but within the threshold", once, with(once, 0.97, 0), false, Defaults,
			WithinNoise, WithinNoise, -0.03, ByWindow, "within noise", "regressions, 0 improvements, 0 unstable"},
		{"the same with a threshold of 2 %", once, with(once, 0.97, 0), false, Options{Threshold: 0.02, Noise: 0.01, Unstable: 0.1, Confidence: 0.95},
			Regression, WithinNoise, -0.03, ByWindow, "threshold 2%", ""},
		{"4 % slower, repeated, format 2: minor, as before", repeated, with(repeated, 0.96, 0), true, Defaults,
			Minor, Unchanged, -0.04, "", "no interval: judged by the fixed thresholds", "within noise"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := generated(t, tc.a), generated(t, tc.b)
			if tc.formatTwo {
				a, b = formatTwo(a), formatTwo(b)
			}
			rows := Compare(a, b, tc.opt)
			checkSignificance(t, rows, tc.ops, tc.lat, tc.change, tc.basis)
			summary := strings.Join(Summary(rows, tc.opt), "\n")
			if !strings.Contains(summary, tc.note) || tc.none != "" && strings.Contains(summary, tc.none) {
				t.Errorf("summary lacks %q or has %q:\n%s", tc.note, tc.none, summary)
			}
		})
	}
}

// checkSignificance checks fast closed-1:10's rows: their verdicts, ops/s's
// change, each change within its interval, and what the interval came from.
func checkSignificance(t *testing.T, rows []Row, ops, lat string, chg float64, basis string) {
	t.Helper()
	seen := 0
	for _, r := range rows {
		if r.System != "fast" || r.Phase != "closed-1:10" {
			continue
		}
		seen++
		if r.Basis != basis {
			t.Errorf("%s %s: basis %q, want %q", r.Op, r.Metric, r.Basis, basis)
		}
		want := lat
		if r.Metric == "ops/s" {
			want = ops
			if math.Abs(r.Change-chg) > 0.01 {
				t.Errorf("%s ops/s: change %+.3f, want %+.2f", r.Op, r.Change, chg)
			}
		}
		if r.Verdict != want {
			t.Errorf("%s %s: %s judged %s, want %s", r.Op, r.Metric, r.ChangeText(), r.Verdict, want)
		}
		if r.Basis != "" && !(r.Lo <= r.Change+0.005 && r.Change-0.005 <= r.Hi) {
			t.Errorf("%s %s: change outside its interval: %s", r.Op, r.Metric, r.ChangeText())
		}
		if got := r.ChangeText(); (r.Basis != "") != strings.Contains(got, "[") {
			t.Errorf("%s %s: printed %q with basis %q", r.Op, r.Metric, got, r.Basis)
		}
	}
	if seen != 8 {
		t.Fatalf("%d rows for fast closed-1:10, want 2 ops x 4 metrics", seen)
	}
}

func TestJudgeSignificant(t *testing.T) {
	noThreshold := Options{Confidence: 0.95}
	tests := []struct {
		change, lo, hi float64
		lower          bool
		opt            Options
		want           string
	}{
		{0.06, 0.02, 0.10, false, Defaults, Improvement},
		{0.06, 0.02, 0.10, true, Defaults, Regression},
		{-0.06, -0.10, -0.02, false, Defaults, Regression},
		{-0.06, -0.10, -0.02, true, Defaults, Improvement},
		{0.06, -0.01, 0.13, false, Defaults, WithinNoise},         // not significant
		{0.04, 0.03, 0.05, false, Defaults, WithinNoise},          // significant, within the threshold
		{0.05, 0.04, 0.06, false, Defaults, WithinNoise},          // at the threshold
		{0.04, 0.03, 0.05, false, noThreshold, Improvement},       // no threshold
		{0.0005, 0.0004, 0.0006, false, noThreshold, WithinNoise}, // below the resolution
		{0.06, -0.10, -0.02, false, Defaults, WithinNoise},        // its interval on the other side of zero
	}
	for _, tc := range tests {
		c := confidence.Change{Rel: tc.change, Lo: tc.lo, Hi: tc.hi}
		if got := judgeSignificant(tc.change, c, tc.lower, tc.opt); got != tc.want {
			t.Errorf("judgeSignificant(%+.4f [%+.4f, %+.4f], lowerIsBetter=%v, threshold %g) = %s, want %s",
				tc.change, tc.lo, tc.hi, tc.lower, tc.opt.Threshold, got, tc.want)
		}
	}
}

func TestChangeText(t *testing.T) {
	for _, tc := range []struct {
		row  Row
		want string
	}{
		{Row{Change: 0.123, Lo: 0.091, Hi: 0.156, Basis: ByRepetitions, Verdict: Regression}, "+12.3% [+9.1, +15.6]"},
		{Row{Change: -0.2, Lo: -0.209, Hi: -0.191, Basis: ByWindow, Verdict: WithinNoise}, "-20.0% [-20.9, -19.1]"},
		{Row{Change: 0.123, Verdict: Minor}, "+12.3%"},
		{Row{Change: math.Inf(1), Verdict: Regression}, "+Inf (from 0)"},
		{Row{Verdict: Missing}, "—"},
	} {
		if got := tc.row.ChangeText(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.row, got, tc.want)
		}
	}
}
