package report

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/methods/ladder"
)

// Every chart of the generated run, opened in Chromium: no text reaches beyond
// its edges (a title, an axis label or a legend entry cut off).
func TestChartTextsInsideInChromium(t *testing.T) {
	browsertest.Need(t)
	_, files, _ := renderRun(t, archivetest.Options{})
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><body>\n")
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f.Name, ".svg") {
			continue
		}
		svg := string(f.Data)
		svg = svg[strings.Index(svg, "<svg"):]
		fmt.Fprintf(&page, "<div>%s</div>\n", strings.Replace(svg, "<svg", fmt.Sprintf("<svg id=%q", f.Name), 1))
		n++
	}
	page.WriteString("</body></html>\n")
	if n < 4 {
		t.Fatalf("%d charts in the generated run", n)
	}
	file := filepath.Join(t.TempDir(), "charts.html")
	if err := os.WriteFile(file, []byte(page.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := browsertest.TextsOutside(t, file); len(out) > 0 {
		t.Errorf("texts beyond their chart's edges: %q", out)
	}
}

// mdChart is a chart as report.md lists it: ![title](file), then its caption.
var mdChart = regexp.MustCompile(`(?m)^!\[(.*)\]\((charts/[^)]+\.svg)\)\n\n(.*)\n`)

// pageCaption is a figure of report.html and its caption.
var pageCaption = regexp.MustCompile(`<figure class="chart" data-chart="([^"]*)"><div class="plot"></div><figcaption>(.*?)</figcaption></figure>`)

// Each chart is described once and drawn twice: report.md and report.html show
// the same charts in the same order, each SVG's title (its first text) is
// the title of the page's chart, and report.md's caption under it is the
// page's figure's.
func TestChartsAlikeInReportAndPage(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  archivetest.Options
	}{
		{"phases", archivetest.Options{}},
		{"soak", archivetest.Options{Soak: true}},
		{"ladder", archivetest.Options{Ladder: ladder.Mean, Repeat: 2}},
		{"sweep", archivetest.Options{Sweep: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, files, _ := renderRun(t, tc.opt)
			page := fileNamed(t, files, HTMLFile)
			specs, err := browsertest.Specs(page)
			if err != nil {
				t.Fatal(err)
			}
			captions := map[string]string{}
			for _, m := range pageCaption.FindAllSubmatch(page, -1) {
				captions[string(m[1])] = html.UnescapeString(string(m[2]))
			}
			listed := mdChart.FindAllSubmatch(fileNamed(t, files, archive.ReportFile), -1)
			if len(listed) != len(specs) || len(specs) < 4 {
				t.Fatalf("report.md lists %d charts, report.html has %d", len(listed), len(specs))
			}
			for i, m := range listed {
				title, file, caption := string(m[1]), string(m[2]), string(m[3])
				if first := svgFirstText(t, fileNamed(t, files, file)); first != title {
					t.Errorf("%s: the SVG's title %q, report.md's %q", file, first, title)
				}
				if s := specs[i]; s.Title != title || captions[s.ID] != caption {
					t.Errorf("chart %d: report.md %q (%s), report.html %q (%s)", i, title, caption, s.Title, captions[s.ID])
				}
			}
			if tc.name == "sweep" && !slices.ContainsFunc(specs, func(s browsertest.Spec) bool { return s.Title == "Sweep closed: throughput against connections" }) {
				t.Errorf("no sweep chart among %d", len(specs))
			}
		})
	}
}

// svgFirstText is the first text an SVG draws: a chart's title.
func svgFirstText(t *testing.T, svg []byte) string {
	t.Helper()
	texts, err := chart.Texts(svg)
	if err != nil || len(texts) == 0 {
		t.Fatalf("an SVG without texts (%v)", err)
	}
	return texts[0]
}
