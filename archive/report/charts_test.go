package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
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
