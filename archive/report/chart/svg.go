package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SVG draws the chart with gonum/plot, as report.md shows it: its title over
// the data (the caption is report.md's to write), the legend at the right.
func (c *Chart) SVG() ([]byte, error) {
	if len(c.Panels) > 0 {
		return c.panelsSVG()
	}
	p := newPlot(c.Title, c.X.Label, c.Y.Label)
	setAxis(p, &p.X, c.X)
	setAxis(p, &p.Y, c.Y)
	for _, b := range c.Bands {
		p.Add(band{b})
	}
	bars, err := addSeries(p, c.Series, len(c.X.Names))
	if err != nil {
		return nil, err
	}
	setRange(&p.Y, c.Y, c.Series, c.Levels)
	targets, err := c.addLevels(p)
	if err != nil {
		return nil, err
	}
	if err := addMarks(p, c.Marks); err != nil {
		return nil, err
	}
	if len(c.X.Names) > 0 {
		if err := layBars(p, len(c.X.Names), bars, targets); err != nil {
			return nil, err
		}
	}
	return render(p)
}

// setAxis gives a plot's axis the scale and ticks a says, and the stretch it
// spans at least (the data may widen it).
func setAxis(p *plot.Plot, ax *plot.Axis, a Axis) {
	switch {
	case len(a.Names) > 0:
		p.NominalX(a.Names...)
	case a.Format == Percentile:
		ax.Scale, ax.Tick.Marker = plot.LogScale{}, percentileTicks{}
	case a.Log:
		ax.Scale, ax.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	case a.Format == SI:
		ax.Tick.Marker = siTicks{}
	}
	if a.Zero {
		ax.Min = 0
	}
	if a.To > a.From {
		ax.Min, ax.Max = a.From, a.To
	}
}

// setRange sets a y axis to span the series and the levels that fit, with
// room: a log axis a little above the highest value (and, with a level to
// fit, down to half the lowest), a linear one from 0 or a little beyond its
// values either way.
func setRange(ax *plot.Axis, a Axis, series []Series, levels []Level) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, xy := range s.XYs {
			lo, hi = min(lo, xy.Y), max(hi, xy.Y)
		}
	}
	fits := false
	for _, l := range levels {
		if l.Fit {
			lo, hi, fits = min(lo, l.Y), max(hi, l.Y), true
		}
	}
	if math.IsInf(hi, -1) {
		return
	}
	switch {
	case a.Log:
		ax.Min, ax.Max = lo, logHeadroom(hi)
		if fits {
			ax.Min = lo / 2
		}
	case a.Zero:
		ax.Min, ax.Max = 0, headroom(hi)
	default:
		span := max(hi-lo, math.Abs(hi)*0.01, 1)
		ax.Min, ax.Max = lo-span*0.05, hi+span*0.08
	}
}

// lineStyle and dotStyle are how a series draws in print.
func (s Series) lineStyle(l *draw.LineStyle) {
	l.Color = plotutil.Color(s.Color)
	if s.Width > 0 {
		l.Width = vg.Points(s.Width)
	}
	if s.Dash > 0 {
		l.Dashes = plotutil.Dashes(s.Dash)
	}
}

func (s Series) dotStyle(g *draw.GlyphStyle) {
	g.Color, g.Shape = plotutil.Color(s.Color), draw.GlyphDrawer(draw.CircleGlyph{})
	if s.Dots == SystemDots {
		g.Shape = plotutil.Shape(s.Color)
	}
	if s.Radius > 0 {
		g.Radius = vg.Points(s.Radius)
	}
}

// addSeries adds the series to p, each with its legend entry, and returns
// the bar charts among them, over the axis's categories.
func addSeries(p *plot.Plot, series []Series, categories int) ([]*plotter.BarChart, error) {
	var bars []*plotter.BarChart
	for _, s := range series {
		if s.Bars {
			b, err := newBars(s, categories)
			if err != nil {
				return nil, err
			}
			p.Add(b)
			p.Legend.Add(s.Label, b)
			bars = append(bars, b)
			continue
		}
		ps, err := s.plotters(xys(s.XYs))
		if err != nil {
			return nil, err
		}
		addPlotters(p, s.Label, ps...)
	}
	return bars, nil
}

// plotters draw a series of lines or dots (or both) through xys.
func (s Series) plotters(xys plotter.XYs) ([]legendPlotter, error) {
	switch {
	case s.Line && s.Dots != NoDots:
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		s.lineStyle(&l.LineStyle)
		s.dotStyle(&sc.GlyphStyle)
		return []legendPlotter{l, sc}, nil
	case s.Line:
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		s.lineStyle(&l.LineStyle)
		return []legendPlotter{l}, nil
	default:
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		s.dotStyle(&sc.GlyphStyle)
		return []legendPlotter{sc}, nil
	}
}

func xys(pts []XY) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, xy := range pts {
		out[i] = plotter.XY{X: xy.X, Y: xy.Y}
	}
	return out
}

// newBars is a series' bars over n categories: 0 where it has no value. Their
// width is set once the layout is known (layBars).
func newBars(s Series, n int) (*plotter.BarChart, error) {
	vals := make(plotter.Values, n)
	for _, xy := range s.XYs {
		if i := int(xy.X); i >= 0 && i < n {
			vals[i] = xy.Y
		}
	}
	b, err := plotter.NewBarChart(vals, 1)
	if err != nil {
		return nil, err
	}
	b.Color = plotutil.Color(s.Color)
	b.LineStyle.Width = 0
	return b, nil
}

// levelColor and levelDashes draw every level: a dark gray, dashed.
var (
	levelColor  = plotutil.DarkColors[len(plotutil.DarkColors)-1]
	levelDashes = []vg.Length{vg.Points(4), vg.Points(3)}
)

// addLevels adds the levels across the chart, each with a legend entry (one
// for the levels of one label), those that do not fit only where the y axis
// reaches them; and returns those that span a category's bars, laid out with
// them.
func (c *Chart) addLevels(p *plot.Plot) (map[int]*plotter.Line, error) {
	targets := map[int]*plotter.Line{}
	named := map[string]bool{}
	for _, l := range c.Levels {
		if !l.Fit && (l.Y < p.Y.Min || l.Y > p.Y.Max) {
			continue
		}
		x0, x1 := p.X.Min, p.X.Max
		if l.Category > 0 {
			x0, x1 = float64(l.Category-1), float64(l.Category-1)
		}
		line, err := plotter.NewLine(plotter.XYs{{X: x0, Y: l.Y}, {X: x1, Y: l.Y}})
		if err != nil {
			return nil, err
		}
		line.LineStyle.Color, line.LineStyle.Dashes = levelColor, levelDashes
		if l.Category > 0 {
			line.LineStyle.Width = vg.Points(1.5) // short: a little bolder
			targets[l.Category-1] = line
		}
		legend := l.Label
		if named[legend] {
			legend = ""
		}
		named[l.Label] = true
		addPlotters(p, legend, line)
	}
	return targets, nil
}

// layBars sets the bars' widths and offsets once the plot's layout is known,
// and the targets' spans: each group of bars takes at most 80% of its
// category's room, so that groups never touch, each bar at most 40 points, and
// a target spans its group.
func layBars(p *plot.Plot, n int, bars []*plotter.BarChart, targets map[int]*plotter.Line) error {
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	group, err := dataWidth(p)
	if err != nil {
		return err
	}
	group /= vg.Length(n)
	width := barWidth(group, len(bars))
	for i, b := range bars {
		b.Width = width
		b.Offset = width * vg.Length(float64(i)-float64(len(bars)-1)/2)
	}
	half := float64(width) * float64(len(bars)) / 2 / float64(group)
	for j, l := range targets {
		l.XYs[0].X, l.XYs[1].X = float64(j)-half, float64(j)+half
	}
	return nil
}

// markRadius is a mark's ring's (points).
const markRadius = 5

// addMarks rings each mark's point in its color and writes its label beside
// it: to the right in the left half of the data, else to the left.
func addMarks(p *plot.Plot, marks []Mark) error {
	for _, m := range marks {
		sc, err := plotter.NewScatter(plotter.XYs{{X: m.X, Y: m.Y}})
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(m.Color), Shape: draw.RingGlyph{}, Radius: vg.Points(markRadius)}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: m.X, Y: m.Y}}, Labels: []string{m.Label}})
		if err != nil {
			return err
		}
		st := &lb.TextStyle[0]
		st.Color, st.Font, st.YAlign = plotutil.Color(m.Color), font.From(plot.DefaultFont, vg.Points(9)), text.YBottom
		lb.Offset = vg.Point{X: markRadius + 2, Y: markRadius}
		if rightHalf(p, m.X) {
			st.XAlign, lb.Offset.X = text.XRight, -lb.Offset.X
		}
		p.Add(sc, lb)
	}
	return nil
}

// rightHalf is whether x lies in the right half of p's x axis.
func rightHalf(p *plot.Plot, x float64) bool {
	return p.X.Norm(x) > 0.5
}

// band is a Band as a plotter: a shaded stretch of x over the whole height.
type band struct{ Band }

func (b band) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := max(trX(b.From), c.Min.X), min(trX(b.To), c.Max.X)
	if x1 < x0 {
		return
	}
	x1 = max(x1, x0+1) // a short stall stays visible
	r, g, bl, _ := plotutil.Color(b.Color).RGBA()
	c.SetColor(color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 46})
	var path vg.Path
	path.Move(vg.Point{X: x0, Y: c.Min.Y})
	path.Line(vg.Point{X: x1, Y: c.Min.Y})
	path.Line(vg.Point{X: x1, Y: c.Max.Y})
	path.Line(vg.Point{X: x0, Y: c.Max.Y})
	path.Close()
	c.Fill(path)
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
