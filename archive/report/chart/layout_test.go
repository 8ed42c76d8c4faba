package chart

import (
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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
			p := newPlot("A title\nits second line", "seconds", "ms")
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

// Bars of one group take at most 80% of its room, so that groups never touch,
// whatever the number of systems and phases.
func TestBarWidth(t *testing.T) {
	for _, systems := range []int{1, 2, 5, 12} {
		for _, group := range []vg.Length{20, 60, 300} {
			w := barWidth(group, systems)
			if w <= 0 || w*vg.Length(systems) > group*0.8+1e-9 || w > 40 {
				t.Errorf("%d systems in a group of %v points: bars %v wide", systems, group, w)
			}
		}
	}
}
