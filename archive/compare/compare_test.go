package compare

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
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

func TestUnstableRepetitions(t *testing.T) {
	a := open(t, archivetest.Options{Repeat: 3, Jitter: 0.3})
	rows := Compare(a, a, Defaults)
	if Count(rows, Unstable) == 0 {
		t.Fatal("repetitions 30% apart not flagged UNSTABLE")
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
