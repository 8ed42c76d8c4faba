package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
)

// The legend sits in a band at the right of the data, never over it, below the
// title and inside the chart's margin, however long the names.
func TestChartLayout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names []string
	}{
		{"two short", []string{"r1", "r2"}},
		{"long names", []string{"redis-on-flash-with-a-long-name p99 per interval", "aerospike-ce probe"}},
		{"many", strings.Split("a b c d e f g h i", " ")},
		{"very long names", []string{strings.Repeat("a-system-name-", 5) + " p99 per interval", "b"}},
		{"very many", strings.Split(strings.Repeat("sys-x p99 per interval,", 12), ",")[:12]},
		{"none", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newChart("A title\nits second line", "seconds", "ms")
			for _, n := range tc.names {
				l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 1, Y: 2}})
				if err != nil {
					t.Fatal(err)
				}
				addPlotters(p, n, l)
			}
			c, err := draw.NewFormattedCanvas(chartWidth, chartHeight, "svg")
			if err != nil {
				t.Fatal(err)
			}
			area, band, ok := layout(draw.New(c), p, p.Legend)
			data := p.DataCanvas(area)
			if ok != (len(tc.names) > 0) {
				t.Fatalf("band %v with %d entries", ok, len(tc.names))
			}
			if data.Min.X < chartMargin || data.Max.X > chartWidth-chartMargin || data.Max.Y > chartHeight-chartMargin {
				t.Errorf("data %v beyond the chart's margin", data.Rectangle)
			}
			if !ok {
				return
			}
			leg := p.Legend.Rectangle(band)
			right, below := leg.Min.X >= data.Max.X, leg.Max.Y <= data.Min.Y
			if !right && !below || leg.Min.X < chartMargin-0.01 || leg.Max.X > chartWidth-chartMargin+0.01 || leg.Min.Y < chartMargin-0.01 {
				t.Errorf("legend %v overlaps the data %v or leaves the chart", leg, data.Rectangle)
			}
			if top := chartHeight - chartMargin - p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y; leg.Max.Y > top+0.01 {
				t.Errorf("legend's top %v is beside the title, above %v", leg.Max.Y, top)
			}
			// However long or many the names, the data keeps room.
			if size := data.Size(); size.X < chartWidth/2 || size.Y < chartHeight/3 {
				t.Errorf("the data has %v of a %vx%v chart", size, chartWidth, chartHeight)
			}
		})
	}
}

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
