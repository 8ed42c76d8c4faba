package chart

import (
	"bytes"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func init() {
	// Sans-serif reads better at small sizes; the face is embedded in gonum/plot.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

// The size of an SVG chart of one plot; a chart of panels is as wide, and
// panelHeight a panel high.
const (
	chartWidth  = 8 * vg.Inch
	chartHeight = 4.5 * vg.Inch
	panelHeight = 2.4 * vg.Inch
)

// chartMargin is the blank border of a chart: nothing drawn touches its edge;
// legendGap is the room between a chart's data and its legend (points).
const (
	chartMargin vg.Length = 8
	legendGap   vg.Length = 10
)

// newPlot is a plot with its title and axis labels; its legend goes at the
// right of the data, never over it (drawWithLegend).
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	return p
}

// render draws p as an SVG chart of the usual size.
func render(p *plot.Plot) ([]byte, error) {
	c, err := draw.NewFormattedCanvas(chartWidth, chartHeight, "svg")
	if err != nil {
		return nil, err
	}
	drawWithLegend(draw.New(c), p, p.Legend)
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// layout splits a chart's canvas, within its margin: the plot's area, and a
// band for the legend, outside the data: at its right, level with the top of
// the data (below the title of p, if any), or, for a legend too wide or too
// tall for that (long names, many series), below the plot, at most 40% of the
// chart's height. No band when the legend has no entries.
func layout(c draw.Canvas, p *plot.Plot, leg plot.Legend) (area, band draw.Canvas, hasBand bool) {
	c = draw.Crop(c, chartMargin, -chartMargin, chartMargin, -chartMargin)
	r := leg.Rectangle(c)
	w, h := r.Max.X-r.Min.X, r.Max.Y-r.Min.Y
	if w <= 0 {
		return c, c, false
	}
	var title vg.Length
	if p != nil && p.Title.Text != "" {
		title = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	size := c.Size()
	if w+legendGap <= size.X*0.35 && h <= size.Y-title {
		w += legendGap
		return draw.Crop(c, 0, -w, 0, 0), draw.Crop(c, size.X-w+legendGap, 0, 0, -title), true
	}
	h = min(h, size.Y*0.4)
	return draw.Crop(c, 0, 0, h+legendGap, 0), draw.Crop(c, 0, 0, 0, -(size.Y - h)), true
}

// drawWithLegend draws p on c, and leg in the band at its right: p's own
// legend is never drawn over its data.
func drawWithLegend(c draw.Canvas, p *plot.Plot, leg plot.Legend) {
	area, band, ok := layout(c, p, leg)
	p.Legend = plot.NewLegend()
	p.Draw(area)
	p.Legend = leg
	if ok {
		leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
		leg.Draw(band)
	}
}

// dataWidth is how wide p's data area is once drawn by render.
func dataWidth(p *plot.Plot) (vg.Length, error) {
	c, err := draw.NewFormattedCanvas(chartWidth, chartHeight, "svg")
	if err != nil {
		return 0, err
	}
	area, _, _ := layout(draw.New(c), p, p.Legend)
	return p.DataCanvas(area).Size().X, nil
}

// barWidth is the width of each of n bars in a group of room points: together
// at most 80% of it, so that groups never touch, and each at most 40 points.
func barWidth(room vg.Length, n int) vg.Length {
	return max(0.5, min(40, room*0.8/vg.Length(max(n, 1))))
}

// headroom is the top of a linear axis whose highest value is top: a little
// room above it.
func headroom(top float64) float64 { return top * 1.08 }

// logHeadroom is the top of a log axis whose highest value is top: a little
// room above it.
func logHeadroom(top float64) float64 { return top * math.Pow(10, 0.15) }
