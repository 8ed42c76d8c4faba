package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/methods/ladder"
)

// The report reads a ladder's method from the manifest, and so draws the same
// report again from the archive alone, and names it in the ladder's tables and
// chart. The generated run's second repetition is twice as
// slow: pooled and mean differ.
func TestLadderReportNamesItsMethod(t *testing.T) {
	for _, tc := range []struct {
		method, caption, axis string
	}{
		{ladder.Pooled, "over every op of the step, repetitions pooled (histograms merged).", "repetitions pooled"},
		{ladder.Mean, "over every op of the step, the mean of the 2 repetitions' percentiles", "mean of the repetitions' percentiles"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			dir := fixtureOf(t, archivetest.Options{Ladder: tc.method, Repeat: 2})
			md, err := os.ReadFile(filepath.Join(dir, archive.ReportFile))
			if err != nil {
				t.Fatal(err)
			}
			section := string(md[strings.Index(string(md), "### Ladder rate"):])
			section, _, _ = strings.Cut(section, "\n### ")
			golden := filepath.Join("testdata", "ladder-"+tc.method+".golden.md")
			if *update {
				os.WriteFile(golden, []byte(section), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if section != string(want) {
				t.Fatalf("ladder section differs from %s (go test -update to accept):\n%s", golden, section)
			}
			if strings.Count(section, tc.caption) != 2 {
				t.Errorf("the response and service time tables do not both say %q", tc.caption)
			}
			a, err := archive.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if files, err := Generate(a); err != nil || files[0].Name != archive.ReportFile || string(files[0].Data) != string(md) {
				t.Errorf("the report regenerated from the archive differs (%v)", err)
			}
			if texts := svgTexts(t, filepath.Join(dir, "charts", "ladder-rate.svg")); !strings.Contains(texts, tc.axis) {
				t.Errorf("the chart's axis does not say %q: %s", tc.axis, texts)
			}
		})
	}
}
