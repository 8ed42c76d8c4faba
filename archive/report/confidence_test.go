package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
)

// A run whose phases have intervals shows each number's interval in the
// tables, the console and the page, says how sure each phase is against the
// first system, and calls a phase whose throughput fell across its window
// unsteady, in its rate cell and the caveats.
func TestReportSaysHowSure(t *testing.T) {
	dir := fixtureOf(t, archivetest.Options{Intervals: 30, Drift: -0.3})
	md, _ := os.ReadFile(filepath.Join(dir, archive.ReportFile))
	golden := filepath.Join("testdata", "report.sure.golden.md")
	if *update {
		os.WriteFile(golden, md, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != string(want) {
		t.Fatalf("report differs from %s (go test -update to accept):\n%s", golden, md)
	}
	page, _ := os.ReadFile(filepath.Join(dir, HTMLFile))
	_, _, tables := renderRun(t, archivetest.Options{Intervals: 30, Drift: -0.3})
	pm := regexp.MustCompile(`\d ±\d+(\.\d)? %`)
	for _, c := range []struct {
		what, text string
		want       []string
	}{
		{"report.md", string(md), []string{"## How sure", "(unsteady)", "fast, closed-1:10 is unsteady: throughput fell", "against fast |", "**significant**"}},
		{"report.html", string(page), []string{"(unsteady)", `<div class="vs">against fast: ops/s`}},
		{"the console", string(tables.Compact), []string{"fast: unsteady"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.text, w) {
				t.Errorf("%s lacks %q", c.what, w)
			}
		}
		if n := len(pm.FindAllString(c.text, -1)); n < 8 {
			t.Errorf("%s shows %d intervals (± %%), want every phase's", c.what, n)
		}
	}
}
