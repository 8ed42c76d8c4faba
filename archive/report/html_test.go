package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
)

// htmlOf is the generated run's report.html.
func htmlOf(t *testing.T) []byte {
	t.Helper()
	_, files, _ := renderRun(t, archivetest.Options{})
	for _, f := range files {
		if f.Name == HTMLFile {
			return f.Data
		}
	}
	t.Fatalf("no %s among the generated files", HTMLFile)
	return nil
}

// specsOf reads the chart specs a report.html carries, by id.
func specsOf(t *testing.T, page []byte) map[string]browsertest.Spec {
	t.Helper()
	list, err := browsertest.Specs(page)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]browsertest.Spec{}
	for _, c := range list {
		out[c.ID] = c
	}
	return out
}

// checkPageGolden compares a page with testdata/golden (go test -update
// writes it), the vendored uPlot checked apart: inlined once, whole, and
// replaced by a marker. It returns the page with the marker.
func checkPageGolden(t *testing.T, page []byte, golden string) []byte {
	t.Helper()
	lib, err := assets.ReadFile("assets/uplot/uPlot.iife.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(page, lib) != 1 {
		t.Fatalf("the page for %s does not inline uPlot once, whole", golden)
	}
	got := bytes.Replace(page, lib, []byte("/* uPlot "+uplotVersion+", assets/uplot/uPlot.iife.min.js */"), 1)
	golden = filepath.Join("testdata", golden)
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the page differs from %s (go test -update to accept)", golden)
	}
	return got
}

// The page is golden like report.md, but for the vendored uPlot, which is
// checked apart: inlined whole, as the package has it.
func TestHTMLGolden(t *testing.T) {
	got := checkPageGolden(t, htmlOf(t), "report.golden.html")
	for _, bad := range []string{"http://", "https://", "src=", "<link"} {
		if i := bytes.Index(got, []byte(bad)); i >= 0 {
			t.Errorf("report.html refers outside itself (%q at %d): it must open offline", bad, i)
		}
	}
}

// What the charts say: a fixed-rate phase's spectrum has response and service
// time for each op, the probe's stall is shaded where it was, and a fixed-rate
// phase's throughput chart draws its target.
func TestHTMLCharts(t *testing.T) {
	specs := specsOf(t, htmlOf(t))
	tests := []struct {
		id    string
		check func(t *testing.T, c browsertest.Spec)
	}{
		{"spectrum-2", func(t *testing.T, c browsertest.Spec) {
			var labels []string
			for _, s := range c.Series {
				labels = append(labels, s.Label)
				if strings.HasSuffix(s.Label, "service") != s.Dash {
					t.Errorf("%s: dashed %v; service time is dashed, response solid", s.Label, s.Dash)
				}
			}
			want := []string{"fast GET response", "fast GET service", "slow GET response", "slow GET service"}
			for _, w := range want {
				if !strings.Contains(strings.Join(labels, "|"), w) {
					t.Errorf("no %q among %q", w, labels)
				}
			}
			if c.X.Format != "percentile" || !c.X.Log || !c.Y.Log {
				t.Errorf("axes %+v %+v: want a log 1/(1-q) x and a log y", c.X, c.Y)
			}
		}},
		{"spectrum-1", func(t *testing.T, c browsertest.Spec) {
			for _, s := range c.Series {
				if strings.Contains(s.Label, "response") || strings.Contains(s.Label, "service") {
					t.Errorf("closed loop draws one latency per op, got %q", s.Label)
				}
			}
		}},
		{"latency-2", func(t *testing.T, c browsertest.Spec) {
			if len(c.Bands) != 1 || c.Bands[0].Label != "slow stall 1.25 s" || c.Bands[0].From < 1 || c.Bands[0].To > 2.5 {
				t.Errorf("stall bands %+v: want slow's 1.25 s stall", c.Bands)
			}
			if len(c.HLines) != 1 || c.HLines[0].Y != 1000 {
				t.Errorf("lines %+v: want the 1 s threshold", c.HLines)
			}
		}},
		{"rate-2", func(t *testing.T, c browsertest.Spec) {
			if len(c.HLines) != 1 || c.HLines[0].Y != 5000 {
				t.Errorf("lines %+v: want the target 5000 ops/s", c.HLines)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			c, ok := specs[tc.id]
			if !ok {
				t.Fatalf("no chart %s", tc.id)
			}
			if len(c.Series) == 0 || len(c.Xs) == 0 {
				t.Fatalf("chart %s is empty", tc.id)
			}
			for _, s := range c.Series {
				if len(s.Ys) != len(c.Xs) {
					t.Errorf("%s: %d values on %d x", s.Label, len(s.Ys), len(c.Xs))
				}
			}
			tc.check(t, c)
		})
	}
}

// The page opens in a real browser: no console error, no request beyond the
// file, every chart drawn, no sideways scrolling on a laptop. The summary's
// screenshot is kept where CMPBENCH_ARTIFACTS says (.ci/run sets it).
func TestHTMLInChromium(t *testing.T) {
	browsertest.Need(t)
	dir := t.TempDir()
	file := filepath.Join(dir, HTMLFile)
	if err := os.WriteFile(file, htmlOf(t), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := browsertest.ArtifactPath(t, "report-summary-generated.png")
	p := browsertest.Open(t, file, "#summary", shot)
	p.Check(t, file)
	if len(p.Charts) < 6 {
		t.Errorf("%d charts drawn, want the spectrum, latency and throughput of both phases", len(p.Charts))
	}
}

func TestRenderMarkdownKeepsTextThatLooksLikeHTML(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"- a read failed: <nil>\n", "<li>a read failed: &lt;nil&gt;</li>"},
		{"- <script>alert(1)</script>\n", "<li>&lt;script&gt;alert(1)&lt;/script&gt;</li>"},
		{"run `a <b>`\n", "<code>a &lt;b&gt;</code>"},
	} {
		got, err := renderMarkdown(tc.md)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), tc.want) {
			t.Errorf("%q rendered %q, want %q in it", tc.md, got, tc.want)
		}
	}
}
