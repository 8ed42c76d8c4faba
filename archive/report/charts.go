package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image/color"
	"math"
	"regexp"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/cmpbench/cmpbench/archive/report/chart"
	"strconv"
)

// chartFile is one generated SVG file and what report.md says about it.
type chartFile struct {
	file, title, caption string
	svg                  []byte
}

// reportCharts are the report's charts, each described once by the section
// that owns it: report.md lists those with a file, in the order of all;
// report.html shows each in its section.
type reportCharts struct {
	summary []*chart.Chart         // every measured phase side by side: the bars
	phases  map[int][]*chart.Chart // by measured phase
	order   []*chart.Chart
}

// reportCharts describes the report's charts.
func (d *data) reportCharts() reportCharts {
	r := reportCharts{phases: map[int][]*chart.Chart{}}
	if len(d.measured) == 0 {
		return r
	}
	r.summary = d.barCharts()
	r.order = append(r.order, r.summary...)
	for _, ph := range d.measured {
		r.phases[ph.index] = d.phaseCharts(ph)
		r.order = append(r.order, r.phases[ph.index]...)
	}
	return r
}

// all are the charts in report.md's order.
func (r reportCharts) all() []*chart.Chart {
	return r.order
}

// svgFiles draws the charts that have a file, then the charts not yet
// described by the model.
func (d *data) svgFiles(r reportCharts) ([]chartFile, error) {
	var out []chartFile
	for _, c := range r.all() {
		if c.File == "" {
			continue
		}
		svg, err := c.SVG()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.File, err)
		}
		out = append(out, chartFile{c.File, c.Title, c.Caption, svg})
	}
	more, err := d.charts()
	return append(out, more...), err
}

const chartsDir = "charts/"

func init() {
	// Sans-serif reads better at small sizes; the face is embedded in gonum/plot.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// maxNamePart bounds the part of a file name or anchor made from a name in an
// archive (a phase's, a ladder's): the archive may come from anywhere.
const maxNamePart = 64

// namePart makes a name of the archive's safe in a file name or an anchor: its
// characters outside [A-Za-z0-9._-] become _, and a longer one is cut, with a
// hash of the whole so that two long names stay apart.
func namePart(name string) string {
	s := unsafeName.ReplaceAllString(name, "_")
	if len(s) <= maxNamePart {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	return s[:maxNamePart-9] + "-" + hex.EncodeToString(sum[:4])
}

// charts draws, with gonum/plot: grouped bars of throughput and of p99.9 per measured
// phase and system, and for each measured phase the latency over time of every
// system (the side probe's requests and each interval's p99).
func (d *data) charts() ([]chartFile, error) {
	if len(d.measured) == 0 {
		return nil, nil
	}
	var out []chartFile
	sweeps, sweepSteps := d.sweepSteps()
	for _, name := range sweeps {
		tp, curve, err := d.sweepCharts(name, sweepSteps[name])
		if err != nil {
			return nil, err
		}
		if tp != nil {
			base := chartsDir + "sweep-" + namePart(name)
			out = append(out, chartFile{base + "-throughput.svg", "Sweep " + name + ": throughput against connections", "", tp},
				chartFile{base + "-latency.svg", "Sweep " + name + ": p99.99 against throughput", "", curve})
		}
	}
	ladders, steps := d.ladderSteps()
	for _, name := range ladders {
		svg, err := d.ladderChart(name, steps[name])
		if err != nil {
			return nil, err
		}
		if svg != nil {
			out = append(out, chartFile{chartsDir + "ladder-" + namePart(name) + ".svg", "Ladder " + name + ": latency against the rate achieved", "", svg})
		}
	}
	return out, nil
}

// The size of a chart of one plot.
const (
	chartWidth  = 8 * vg.Inch
	chartHeight = 4.5 * vg.Inch
)

// chartMargin is the blank border of a chart: nothing drawn touches its edge;
// legendGap is the room between a chart's data and its legend (points).
const (
	chartMargin vg.Length = 8
	legendGap   vg.Length = 10
)

// newChart is a plot with its title and axis labels; its legend goes at the
// right of the data, never over it (drawChart).
func newChart(title, xLabel, yLabel string) *plot.Plot {
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
	drawChart(draw.New(c), p, p.Legend)
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

// drawChart draws p on c, and leg in the band at its right: p's own legend is
// never drawn over its data.
func drawChart(c draw.Canvas, p *plot.Plot, leg plot.Legend) {
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

// latencyAxis makes p's y axis a log scale of latencies with decade ticks.
func latencyAxis(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
}

// headroom is the top of a linear axis whose highest value is top: a little
// room above it.
func headroom(top float64) float64 { return top * 1.08 }

// logHeadroom is the top of a log axis whose highest value is top: a little
// room above it.
func logHeadroom(top float64) float64 { return top * math.Pow(10, 0.15) }

// style is how a series draws: its color, its line's width (0: the default) and
// dashes (none: solid), and its points' shape and radius.
type style struct {
	color  color.Color
	width  vg.Length
	dashes []vg.Length
	shape  draw.GlyphDrawer
	radius vg.Length
}

// systemStyle is system i's style: its color and point shape, a line 1.2 points
// wide, points of radius.
func systemStyle(i int, radius vg.Length) style {
	return style{color: plotutil.Color(i), width: vg.Points(1.2), shape: plotutil.Shape(i), radius: radius}
}

// setLine gives a line the style's color, width and dashes.
func (s style) setLine(l *draw.LineStyle) {
	l.Color = s.color
	if s.width > 0 {
		l.Width = s.width
	}
	if s.dashes != nil {
		l.Dashes = s.dashes
	}
}

// setPoints gives points the style's color, shape and radius.
func (s style) setPoints(g *draw.GlyphStyle) {
	g.Color, g.Shape, g.Radius = s.color, s.shape, s.radius
}

// addLine adds xys to p as a line in style s, with a legend entry unless legend
// is "".
func addLine(p *plot.Plot, legend string, xys plotter.XYs, s style) error {
	l, err := plotter.NewLine(xys)
	if err == nil {
		s.setLine(&l.LineStyle)
		addPlotters(p, legend, l)
	}
	return err
}

// addPoints adds xys to p as points in style s, with a legend entry unless legend
// is "".
func addPoints(p *plot.Plot, legend string, xys plotter.XYs, s style) error {
	sc, err := plotter.NewScatter(xys)
	if err == nil {
		s.setPoints(&sc.GlyphStyle)
		addPlotters(p, legend, sc)
	}
	return err
}

// addLinePoints adds xys to p as a line with a point at each value, in style s,
// with one legend entry for both.
func addLinePoints(p *plot.Plot, legend string, xys plotter.XYs, s style) error {
	l, sc, err := plotter.NewLinePoints(xys)
	if err == nil {
		s.setLine(&l.LineStyle)
		s.setPoints(&sc.GlyphStyle)
		addPlotters(p, legend, l, sc)
	}
	return err
}

// legendPlotter is a plotter that can stand in a legend.
type legendPlotter interface {
	plot.Plotter
	plot.Thumbnailer
}

// addPlotters adds ps to p, with one legend entry for them all unless legend is "".
func addPlotters(p *plot.Plot, legend string, ps ...legendPlotter) {
	thumbs := make([]plot.Thumbnailer, len(ps))
	for i, pl := range ps {
		p.Add(pl)
		thumbs[i] = pl
	}
	if legend != "" {
		p.Legend.Add(legend, thumbs...)
	}
}

// plotXYs are chart points as gonum/plot's.
func plotXYs(pts []chart.XY) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, xy := range pts {
		out[i] = plotter.XY{X: xy.X, Y: xy.Y}
	}
	return out
}

// siTicks: until the ladders and sweeps are described (the next step).
type siTicks struct{}

func (siTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label == "" {
			continue
		}
		v, unit := t.Value, ""
		for _, u := range []struct {
			f float64
			s string
		}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
			if math.Abs(t.Value) >= u.f {
				v, unit = t.Value/u.f, u.s
				break
			}
		}
		ticks[i].Label = strconv.FormatFloat(v, 'g', 4, 64) + unit
	}
	return ticks
}
