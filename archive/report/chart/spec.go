package chart

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// The charts of report.html are drawn in the browser by uPlot from the specs
// below, written into the page as JSON: every number is computed here, from
// the chart's description, and the page's script (assets/report.js) only
// draws them.

// spec is one chart as the page's script reads it: series over one x axis
// (null where a series has no value at an x), and marks drawn over them.
type spec struct {
	ID     string       `json:"id"`
	Title  string       `json:"title"`
	X      axisSpec     `json:"x"`
	Y      axisSpec     `json:"y"`
	Xs     []num        `json:"xs"`
	Series []seriesSpec `json:"series"`
	Bands  []bandSpec   `json:"bands,omitempty"`
	HLines []levelSpec  `json:"hlines,omitempty"`
	Marks  []markSpec   `json:"marks,omitempty"`
	Panels []panelSpec  `json:"panels,omitempty"`
}

// axisSpec is an axis: its label, whether it is logarithmic, and how its
// ticks read ("percentile": x is 1/(1−q), labelled 90%, 99%, ...; "si": 2.8M).
type axisSpec struct {
	Label  string   `json:"label"`
	Log    bool     `json:"log,omitempty"`
	Format Format   `json:"format,omitempty"`
	Zero   bool     `json:"zero,omitempty"`  // a linear axis that starts at 0
	Names  []string `json:"names,omitempty"` // categories: x = i is names[i]
	Min    *num     `json:"min,omitempty"`   // a stretch the axis spans at least
	Max    *num     `json:"max,omitempty"`
}

// seriesSpec is one series: its label, its color (an index into the page's
// palette: a system's), dashed or not, drawn as a line, as points, as bars.
type seriesSpec struct {
	Label  string `json:"label"`
	Color  int    `json:"color"`
	Dash   bool   `json:"dash,omitempty"`
	Line   bool   `json:"line"`
	Points bool   `json:"points,omitempty"`
	Bars   bool   `json:"bars,omitempty"`
	Ys     []num  `json:"ys"`
}

type bandSpec struct {
	From  num    `json:"from"`
	To    num    `json:"to"`
	Color int    `json:"color"`
	Label string `json:"label"`
}

type levelSpec struct {
	Y        num    `json:"y"`
	Label    string `json:"label"`
	Fit      bool   `json:"fit,omitempty"`
	Category int    `json:"category,omitempty"`
}

type markSpec struct {
	X     num    `json:"x"`
	Y     num    `json:"y"`
	Color int    `json:"color"`
	Label string `json:"label"`
}

// panelSpec is one panel of a chart of panels, on the chart's x axis.
type panelSpec struct {
	Title  string       `json:"title"`
	Y      axisSpec     `json:"y"`
	Xs     []num        `json:"xs"`
	Series []seriesSpec `json:"series"`
}

// num is a number in a chart's JSON: five significant digits (a chart shows no
// more), null for NaN (no value).
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 5, 64), nil
}

// JSON is the page's chart data: the specs of the charts, in order.
func JSON(charts []*Chart) ([]byte, error) {
	specs := make([]spec, len(charts))
	for i, c := range charts {
		specs[i] = c.spec()
	}
	return json.Marshal(specs)
}

func (c *Chart) spec() spec {
	s := spec{ID: c.ID, Title: c.Title, X: c.X.spec(), Y: c.Y.spec()}
	s.Xs, s.Series = aligned(c.Series, len(c.X.Names))
	for _, b := range c.Bands {
		s.Bands = append(s.Bands, bandSpec{num(b.From), num(b.To), b.Color, b.Label})
	}
	for _, l := range c.Levels {
		s.HLines = append(s.HLines, levelSpec{num(l.Y), l.Label, l.Fit, l.Category})
	}
	for _, m := range c.Marks {
		s.Marks = append(s.Marks, markSpec{num(m.X), num(m.Y), m.Color, m.Label})
	}
	for _, p := range c.Panels {
		ps := panelSpec{Title: p.Title, Y: p.Y.spec()}
		ps.Xs, ps.Series = aligned(p.Series, 0)
		s.Panels = append(s.Panels, ps)
	}
	return s
}

func (a Axis) spec() axisSpec {
	s := axisSpec{Label: a.Label, Log: a.Log, Format: a.Format, Zero: a.Zero, Names: a.Names}
	if a.To > a.From {
		from, to := num(a.From), num(a.To)
		s.Min, s.Max = &from, &to
	}
	return s
}

// aligned puts series on one sorted x axis, the union of their x values (and
// of the categories 0 to n−1), each series null where it has none.
func aligned(series []Series, categories int) ([]num, []seriesSpec) {
	var xs []float64
	for i := range categories {
		xs = append(xs, float64(i))
	}
	for _, s := range series {
		for _, xy := range s.XYs {
			xs = append(xs, xy.X)
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	out := make([]num, len(xs))
	for i, x := range xs {
		out[i] = num(x)
	}
	specs := make([]seriesSpec, len(series))
	for k, s := range series {
		ys := make([]num, len(xs))
		for i := range ys {
			ys[i] = num(math.NaN())
		}
		for _, xy := range s.XYs {
			i, _ := slices.BinarySearch(xs, xy.X)
			ys[i] = num(xy.Y)
		}
		specs[k] = seriesSpec{Label: s.Label, Color: s.Color, Dash: s.Dash > 0, Line: s.Line, Points: s.Dots != NoDots, Bars: s.Bars, Ys: ys}
	}
	return out, specs
}
