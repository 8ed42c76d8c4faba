package archive_test

import (
	"math"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core"
)

// Each measured phase's numbers are archived with their 95 % intervals, and
// what has none says why; a phase whose throughput fell across its window is
// archived unsteady, by how much, and a steady one is not.
func TestConfidenceIsArchived(t *testing.T) {
	dir, err := archivetest.Write(t.TempDir(), archivetest.Options{Intervals: 30, Drift: -0.3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range a.Summary {
		switch {
		case r.Kind == string(core.PhaseLoad):
			if r.CINote != "too few intervals" || r.ThroughputHi != 0 {
				t.Errorf("%s %s %s (1 s): note %q, throughput interval %g-%g", r.System, r.Phase, r.Op, r.CINote, r.ThroughputLo, r.ThroughputHi)
			}
		case r.Phase == "soak":
		case r.Sustained != nil && !*r.Sustained:
			checked++
			if r.RespP50Hi != 0 || r.RespP99Hi != 0 || r.CINote != "latencies: not sustained, so not of the rate asked" || r.ThroughputHi == 0 {
				t.Errorf("%s %s %s not sustained: p50 interval %d-%d, throughput's %g-%g, note %q",
					r.System, r.Phase, r.Op, r.RespP50Lo, r.RespP50Hi, r.ThroughputLo, r.ThroughputHi, r.CINote)
			}
		default:
			checked++
			// A drifting window's mean is as uncertain as its drift is large.
			drifting := r.System == a.Manifest.Systems[0].Name && r.Phase == "closed-1:10"
			if !(r.ThroughputLo < r.Throughput && r.Throughput < r.ThroughputHi) || (r.ThroughputHi-r.ThroughputLo)/r.Throughput > 0.2 && !drifting {
				t.Errorf("%s %s %s: throughput %g, interval %g-%g", r.System, r.Phase, r.Op, r.Throughput, r.ThroughputLo, r.ThroughputHi)
			}
			for _, p := range []struct {
				name        string
				q           float64
				lo, val, hi int64
			}{{"p50", 0.5, r.RespP50Lo, r.RespP50, r.RespP50Hi}, {"p99", 0.99, r.RespP99Lo, r.RespP99, r.RespP99Hi}, {"p99.9", 0.999, r.RespP999Lo, r.RespP999, r.RespP999Hi}} {
				if float64(r.Count)*(1-p.q) < 20 {
					if p.hi != 0 || !strings.Contains(r.CINote, p.name+": too few operations") {
						t.Errorf("%s %s %s: %s of %d operations: interval %d-%d, note %q", r.System, r.Phase, r.Op, p.name, r.Count, p.lo, p.hi, r.CINote)
					}
					continue
				}
				if !(p.lo <= p.val && p.val <= p.hi) || p.lo <= 0 || p.lo == p.hi {
					t.Errorf("%s %s %s: %s %d, interval %d-%d", r.System, r.Phase, r.Op, p.name, p.val, p.lo, p.hi)
				}
			}
			if r.RespP9999Hi != 0 || !strings.Contains(r.CINote, "p99.99: too few operations") {
				t.Errorf("%s %s %s: p99.99 of %d operations: interval %d-%d, note %q", r.System, r.Phase, r.Op, r.Count, r.RespP9999Lo, r.RespP9999Hi, r.CINote)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no measured phase checked")
	}
	for _, pi := range a.Manifest.Phases {
		if pi.Kind != core.PhaseMeasured || pi.Name == "soak" {
			continue
		}
		drifts := pi.System == a.Manifest.Systems[0].Name && pi.Name == "closed-1:10"
		c := pi.Confidence
		sustained := pi.Rate == 0 || pi.System == a.Manifest.Systems[0].Name // the second misses its rate
		if c == nil || len(c.Rate) != 2 || c.Rate[0] >= c.Rate[1] {
			t.Errorf("%s %s: phase confidence %+v", pi.System, pi.Name, c)
		} else if !sustained {
			if _, _, ok := c.RespOf("p99"); ok || !strings.Contains(c.Note, "not sustained") {
				t.Errorf("%s %s not sustained: its latencies have intervals, or no note %q", pi.System, pi.Name, c.Note)
			}
		} else if lo, hi, ok := c.RespOf("p99"); !ok || lo >= hi || lo <= 0 {
			t.Errorf("%s %s: every op's p99 interval %d-%d (%v)", pi.System, pi.Name, lo, hi, ok)
		}
		switch u := pi.Unsteady; {
		case drifts && (u == nil || u.What != "throughput" || math.Abs(u.Change+0.3) > 0.05):
			t.Errorf("%s %s fell by 30 %%: unsteady %+v", pi.System, pi.Name, u)
		case !drifts && u != nil:
			t.Errorf("%s %s is steady: unsteady %+v (%s)", pi.System, pi.Name, u, u.Sentence())
		}
	}
}

// A phase that did not end ok keeps its numbers, but no interval vouches for
// them: its rows and the phase say why.
func TestFailedPhaseHasNoInterval(t *testing.T) {
	dir, err := archivetest.Write(t.TempDir(), archivetest.Options{Intervals: 10, FailPhase: "closed-1:10"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := a.Manifest.Systems[0].Name
	n := 0
	for _, r := range a.Summary {
		if r.System == first && r.Phase == "closed-1:10" {
			n++
			if r.ThroughputHi != 0 || r.RespP99Hi != 0 || r.CINote != "the phase ended failed" {
				t.Errorf("%s: throughput interval %g-%g, p99's %d-%d, note %q", r.Op, r.ThroughputLo, r.ThroughputHi, r.RespP99Lo, r.RespP99Hi, r.CINote)
			}
		}
	}
	for _, p := range a.Manifest.Phases {
		if p.System == first && p.Name == "closed-1:10" && (p.Confidence == nil || len(p.Confidence.Rate) != 0 || p.Unsteady != nil) {
			t.Errorf("the failed phase: confidence %+v, unsteady %+v", p.Confidence, p.Unsteady)
		}
	}
	if n == 0 {
		t.Fatal("no row of the failed phase")
	}
}
