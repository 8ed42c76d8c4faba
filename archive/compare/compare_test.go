package compare

import (
	"slices"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core"
)

func open(t *testing.T, o archivetest.Options) *archive.Archive {
	t.Helper()
	dir, err := archivetest.Write(t.TempDir(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestIdenticalArchivesPass(t *testing.T) {
	a := open(t, archivetest.Options{})
	rows := Compare(a, a, Defaults)
	if len(rows) == 0 {
		t.Fatal("nothing compared")
	}
	for _, r := range rows {
		if r.Verdict != Unchanged && r.Verdict != NotComparable {
			t.Errorf("%+v", r)
		}
	}
	if Count(rows, Regression) != 0 {
		t.Fatal("regressions between identical archives")
	}
}

func TestTwentyPercentRegressionIsFlagged(t *testing.T) {
	a := open(t, archivetest.Options{})
	b := open(t, archivetest.Options{Throughput: 0.8, Latency: 1.2})
	rows := Compare(a, b, Defaults)
	var seen int
	for _, r := range rows {
		if r.System != "fast" || r.Phase != "closed-1:10" {
			continue
		}
		seen++
		if r.Verdict != Regression {
			t.Errorf("%s %s %s: %+.1f%% judged %s", r.Phase, r.Op, r.Metric, r.Change*100, r.Verdict)
		}
		want := 0.2
		if r.Metric == "ops/s" {
			want = -0.2
		}
		if d := r.Change - want; d > 0.01 || d < -0.01 {
			t.Errorf("%s %s: change %+.3f, want %+.1f", r.Op, r.Metric, r.Change, want)
		}
	}
	if seen != 8 {
		t.Fatalf("%d rows for fast closed-1:10, want 2 ops x 4 metrics", seen)
	}
	// The other way round it is an improvement.
	if n := Count(Compare(b, a, Defaults), Improvement); n == 0 {
		t.Fatal("no improvement found comparing the other way")
	}
}

func TestBands(t *testing.T) {
	tests := []struct {
		change float64
		lower  bool
		want   string
	}{
		{0.02, false, Unchanged}, {-0.03, true, Unchanged}, {0.04, false, Minor},
		{0.06, false, Improvement}, {-0.06, false, Regression}, {0.06, true, Regression}, {-0.2, true, Improvement},
	}
	for _, tc := range tests {
		if got := judge(tc.change, tc.lower, Defaults); got != tc.want {
			t.Errorf("judge(%+.2f, lowerIsBetter=%v) = %s, want %s", tc.change, tc.lower, got, tc.want)
		}
	}
}

// Repetitions 30 % apart are UNSTABLE where nothing else judges them (an
// archive without intervals); where their interval does, they are within noise.
func TestUnstableRepetitions(t *testing.T) {
	a := open(t, archivetest.Options{Repeat: 3, Jitter: 0.3})
	rows := Compare(a, a, Defaults)
	if n := Count(rows, Unstable); n != 0 || Count(rows, WithinNoise) == 0 {
		t.Fatalf("repetitions 30%% apart, judged by their interval: %d UNSTABLE, %d within noise", n, Count(rows, WithinNoise))
	}
	a = formatTwo(a)
	rows = Compare(a, a, Defaults)
	if Count(rows, Unstable) == 0 {
		t.Fatal("repetitions 30% apart in an archive without intervals not flagged UNSTABLE")
	}
	var b strings.Builder
	if err := Write(&b, rows); err != nil || !strings.Contains(b.String(), "UNSTABLE") {
		t.Fatalf("%v\n%s", err, b.String())
	}
}

func TestMissingPhases(t *testing.T) {
	a := open(t, archivetest.Options{})
	b := open(t, archivetest.Options{})
	b.Summary = b.Summary[:0]
	if rows := Compare(a, b, Defaults); Count(rows, Missing) != len(rows) {
		t.Fatal("phases present on one side only must be reported missing")
	}
}

// clone copies the parts of an archive the tests change.
func clone(a *archive.Archive) *archive.Archive {
	c := *a
	c.Summary = slices.Clone(a.Summary)
	c.Manifest.Phases = slices.Clone(a.Manifest.Phases)
	return &c
}

// edit changes every summary row and the manifest phase of system's phase.
func edit(a *archive.Archive, system, phase string, row func(*archive.SummaryRow), info func(*archive.PhaseInfo)) {
	for i := range a.Summary {
		if r := &a.Summary[i]; r.System == system && r.Phase == phase && row != nil {
			row(r)
		}
	}
	for i := range a.Manifest.Phases {
		if p := &a.Manifest.Phases[i]; p.System == system && p.Name == phase && info != nil {
			info(p)
		}
	}
}

func fail(status core.PhaseStatus) (func(*archive.SummaryRow), func(*archive.PhaseInfo)) {
	return func(r *archive.SummaryRow) { r.Status = string(status) }, func(p *archive.PhaseInfo) { p.Status = status }
}

// line prints one row as compare does.
func line(t *testing.T, r Row) string {
	t.Helper()
	var b strings.Builder
	if err := Write(&b, []Row{r}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(strings.SplitN(b.String(), "\n", 2)[1]), " ")
}

func TestCompareVerdictsThatCannotMislead(t *testing.T) {
	base := open(t, archivetest.Options{})
	noBand := Options{Threshold: 0, Noise: 0, Unstable: 0.1}
	failedRow, failedInfo := fail(core.StatusFailed)
	skippedRow, skippedInfo := fail(core.StatusSkipped)
	tests := []struct {
		name                      string
		a, b                      func(*archive.Archive)
		opt                       Options
		system, phase, op, metric string
		want                      string // verdict
		line                      string // the printed row, fields joined by one space
	}{
		{
			name: "a phase that failed in B is shown failed, not compared",
			b: func(b *archive.Archive) {
				edit(b, "fast", "closed-1:10", func(r *archive.SummaryRow) {
					failedRow(r)
					r.Throughput, r.Count = r.Throughput/2, r.Count/2
				}, failedInfo)
			},
			opt: Defaults, system: "fast", phase: "closed-1:10", op: "GET", metric: "ops/s",
			want: "failed", line: "fast closed-1:10 GET ops/s 1000 failed — failed",
		},
		{
			name: "a phase skipped in A (no rows) is shown skipped",
			a: func(a *archive.Archive) {
				edit(a, "slow", "closed-1:10", skippedRow, skippedInfo)
				dropRows(a, "slow", "closed-1:10")
			},
			opt:    Defaults,
			system: "slow", phase: "closed-1:10", op: "SET", metric: "p99 ms",
			want: "skipped", line: "slow closed-1:10 SET p99 ms skipped 0.298 — skipped",
		},
		{
			name: "a change that rounds to zero is no regression, even without a noise band",
			b: func(b *archive.Archive) {
				edit(b, "fast", "closed-1:10", func(r *archive.SummaryRow) { r.Throughput *= 0.99996 }, nil)
			},
			opt:    noBand,
			system: "fast", phase: "closed-1:10", op: "GET", metric: "ops/s",
			want: Unchanged, line: "fast closed-1:10 GET ops/s 1000 1000 -0.0% unchanged",
		},
		{
			name: "a step sustained in A and not in B at the same throughput is no regression",
			b: func(b *archive.Archive) {
				no := false
				edit(b, "fast", "rate-5000", func(r *archive.SummaryRow) { r.Sustained = &no }, nil)
			},
			opt:    Defaults,
			system: "fast", phase: "rate-5000", op: "GET", metric: "ops/s",
			want: Unchanged, line: "fast rate-5000 GET ops/s 4545 4545 +0.0% unchanged",
		},
		{
			name: "a latency with nothing timed in B is absent, not -100%",
			b: func(b *archive.Archive) {
				edit(b, "fast", "closed-1:10", func(r *archive.SummaryRow) {
					if r.Op == "GET" {
						r.Count, r.Hits, r.Misses, r.Throughput = 0, 0, 0, 0
						r.RespP50, r.RespP99, r.RespP999, r.RespHDR = 0, 0, 0, nil
					}
				}, nil)
			},
			opt:    Defaults,
			system: "fast", phase: "closed-1:10", op: "GET", metric: "p99 ms",
			want: Absent, line: "fast closed-1:10 GET p99 ms 0.248 — — absent",
		},
		{
			name: "no throughput at all in B is a real -100%",
			b: func(b *archive.Archive) {
				edit(b, "fast", "closed-1:10", func(r *archive.SummaryRow) {
					if r.Op == "GET" {
						r.Count, r.Throughput = 0, 0
					}
				}, nil)
			},
			opt:    Defaults,
			system: "fast", phase: "closed-1:10", op: "GET", metric: "ops/s",
			want: Regression, line: "fast closed-1:10 GET ops/s 1000 0 -100.0% regression",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := clone(base), clone(base)
			if tc.a != nil {
				tc.a(a)
			}
			if tc.b != nil {
				tc.b(b)
			}
			rows := Compare(a, b, tc.opt)
			var found bool
			for _, r := range rows {
				if r.System != tc.system || r.Phase != tc.phase || r.Op != tc.op || r.Metric != tc.metric {
					continue
				}
				found = true
				if r.Verdict != tc.want {
					t.Errorf("verdict %q, want %q", r.Verdict, tc.want)
				}
				if got := line(t, r); got != tc.line {
					t.Errorf("printed\n  %s\nwant\n  %s", got, tc.line)
				}
			}
			if !found {
				t.Fatal("no such row")
			}
			for _, r := range rows {
				if r.System == tc.system && r.Phase == tc.phase && r.NotOK() && (r.Verdict == Regression || r.Verdict == Improvement) {
					t.Errorf("a phase that did not end ok judged: %+v", r)
				}
			}
		})
	}
}

func dropRows(a *archive.Archive, system, phase string) {
	a.Summary = slices.DeleteFunc(a.Summary, func(r archive.SummaryRow) bool { return r.System == system && r.Phase == phase })
}

func TestCompareNothingComparableIsAnError(t *testing.T) {
	a := open(t, archivetest.Options{})
	b := open(t, archivetest.Options{Systems: []string{"redis", "valkey"}})
	rows := Compare(a, b, Defaults)
	err := Comparable(rows)
	if err == nil {
		t.Fatal("archives that share no system were compared")
	}
	for _, want := range []string{"share no measured phase", "A has fast/closed-1:10", "B has redis/closed-1:10"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	// Shared phases that failed on one side leave nothing compared either.
	c := clone(a)
	for _, sys := range []string{"fast", "slow"} {
		for _, ph := range []string{"closed-1:10", "rate-5000"} {
			r, i := fail(core.StatusFailed)
			edit(c, sys, ph, r, i)
		}
	}
	if err := Comparable(Compare(a, c, Defaults)); err == nil || !strings.Contains(err.Error(), "did not end ok") {
		t.Fatalf("every shared phase failed in B: %v", err)
	}
	if err := Comparable(Compare(a, a, Defaults)); err != nil {
		t.Fatal(err)
	}
}
