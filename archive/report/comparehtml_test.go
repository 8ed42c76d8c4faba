package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/compare"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
)

// comparePageOf is the compare page of the generated run against the same run
// 20% slower: every metric of it regressed.
func comparePageOf(t *testing.T) []byte {
	t.Helper()
	var sides [2]*archive.Archive
	for i, o := range []archivetest.Options{{}, {Throughput: 0.8, Latency: 1.2}} {
		a, err := archive.Open(fixtureOf(t, o))
		if err != nil {
			t.Fatal(err)
		}
		sides[i] = a
	}
	rows := compare.Compare(sides[0], sides[1], compare.Defaults)
	page, err := CompareHTML(Comparison{A: sides[0], B: sides[1], DirA: "results/a", DirB: "results/b", Rows: rows, Summary: compare.Summary(rows, compare.Defaults)})
	if err != nil {
		t.Fatal(err)
	}
	return page
}

func TestCompareHTMLGolden(t *testing.T) {
	got := checkPageGolden(t, comparePageOf(t), "compare.golden.html")
	for _, want := range []string{`<tr class="regression"><td>fast</td><td>GET</td><td>ops/s</td>`, "regressions, 0 improvements"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the compare page lacks %q", want)
		}
	}
}

// Each system of each phase has its spectrum: every op of A solid, of B
// dashed, B above A where B is 20% slower.
func TestCompareHTMLSpectra(t *testing.T) {
	specs, err := browsertest.Specs(comparePageOf(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 4 {
		t.Fatalf("%d charts, want a spectrum per system (2) and phase (2)", len(specs))
	}
	for _, c := range specs {
		labels := c.Labels()
		for _, want := range []string{"A GET", "B GET"} {
			if !slices.Contains(labels, want) {
				t.Errorf("%s: no %q among %q", c.ID, want, labels)
			}
		}
		var a, b browsertest.Series
		for _, s := range c.Series {
			if s.Dash != strings.HasPrefix(s.Label, "B ") {
				t.Errorf("%s %s: dashed %v; B is dashed, A solid", c.ID, s.Label, s.Dash)
			}
			switch s.Label {
			case "A GET":
				a = s
			case "B GET":
				b = s
			}
		}
		if a.Ys[0] == nil || b.Ys[0] == nil || *b.Ys[0] <= *a.Ys[0] {
			t.Errorf("%s: B's fastest GET is not slower than A's: %v %v", c.ID, a.Ys[0], b.Ys[0])
		}
	}
}

func TestCompareHTMLInChromium(t *testing.T) {
	browsertest.Need(t)
	file := filepath.Join(t.TempDir(), "compare.html")
	if err := os.WriteFile(file, comparePageOf(t), 0o644); err != nil {
		t.Fatal(err)
	}
	p := browsertest.Open(t, file, "#summary", browsertest.ArtifactPath(t, "compare-summary-generated.png"))
	p.Check(t, file)
	if len(p.Charts) != 4 {
		t.Errorf("%d charts drawn, want 4", len(p.Charts))
	}
}
