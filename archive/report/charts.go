package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// chart is one generated SVG file and what the report says about it.
type chart struct {
	file, title string
	svg         []byte
}

const chartsDir = "charts/"

func init() {
	// Sans-serif reads better at small sizes; the face is embedded in gonum/plot.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// charts draws, with gonum/plot: grouped bars of throughput and of p99.9 per measured
// phase and system, and for each measured phase the latency over time of every
// system (the side probe's requests and each interval's p99).
func (d *data) charts() ([]chart, error) {
	if len(d.measured) == 0 {
		return nil, nil
	}
	var out []chart
	names := make([]string, len(d.measured))
	for i, ph := range d.measured {
		names[i] = ph.name
	}
	tp, err := d.barChart("Throughput (successful ops/s, median of repetitions)", "ops/s", names, func(c cell) (float64, bool) {
		sp := c.throughput()
		return sp.Median, sp.N > 0
	})
	if err != nil {
		return nil, err
	}
	out = append(out, chart{chartsDir + "throughput.svg", "Throughput per phase and system", tp})
	lat, err := d.barChart("p99.9 latency, all ops (ms)", "ms", names, func(c cell) (float64, bool) {
		v, ok := c.allOpsQuantile(99.9)
		return float64(v) / 1e6, ok
	})
	if err != nil {
		return nil, err
	}
	out = append(out, chart{chartsDir + "p999.svg", "p99.9 latency per phase and system", lat})
	for _, ph := range d.measured {
		svg, err := d.timeChart(ph)
		if err != nil {
			return nil, err
		}
		if svg == nil {
			continue
		}
		file := fmt.Sprintf("%slatency-%d-%s.svg", chartsDir, ph.index, unsafeName.ReplaceAllString(ph.name, "_"))
		out = append(out, chart{file, "Latency over time: " + ph.name, svg})
	}
	return out, nil
}

// barChart draws one group of bars per phase, one bar (and legend entry) per system.
func (d *data) barChart(title, unit string, phases []string, value func(cell) (float64, bool)) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = unit
	p.Y.Min = 0
	p.NominalX(phases...)
	p.Legend.Top, p.Legend.Left = true, true
	width := vg.Points(min(40, 240/float64(max(1, len(d.systems)))))
	var highest float64
	for i, sys := range d.systems {
		vals := make(plotter.Values, len(d.measured))
		for j, ph := range d.measured {
			if v, ok := value(d.cell(ph, sys)); ok {
				vals[j] = v
				highest = max(highest, v)
			}
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(float64(i)-float64(len(d.systems)-1)/2)
		p.Add(bars)
		p.Legend.Add(sys, bars)
	}
	// Head room for the legend above the bars, and half a group's room at each side.
	p.Y.Max = highest * (1.15 + 0.07*float64(len(d.systems)))
	p.X.Min, p.X.Max = -0.5, float64(len(phases))-0.5
	return render(p, 8*vg.Inch, 4.5*vg.Inch)
}

// timeChart draws, for the first repetition of a phase, every probe request's
// response time as a point and each interval's p99 as a line, per system.
func (d *data) timeChart(ph phaseRef) ([]byte, error) {
	p := plot.New()
	p.Title.Text = "Latency over time: " + ph.name + " (first repetition)"
	p.X.Label.Text = "seconds since the phase started"
	p.Y.Label.Text = "ms (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	drawn := false
	var highest float64
	for i, sys := range d.systems {
		var probe plotter.XYs
		for _, r := range d.probe {
			if r.System == sys && r.PhaseIndex == ph.index && r.Repetition == 0 && (r.Outcome == "hit" || r.Outcome == "ok" || r.Outcome == "miss") {
				probe = append(probe, plotter.XY{X: float64(r.IntendedNs) / 1e9, Y: float64(max(r.ResponseNs, 1)) / 1e6})
				highest = max(highest, float64(r.ResponseNs)/1e6)
			}
		}
		byInterval := map[int][]archive.IntervalRow{}
		for _, r := range d.intervals {
			if r.System == sys && r.PhaseIndex == ph.index && r.Repetition == 0 {
				byInterval[r.Interval] = append(byInterval[r.Interval], r)
			}
		}
		idx := make([]int, 0, len(byInterval))
		for k := range byInterval {
			idx = append(idx, k)
		}
		sort.Ints(idx)
		var p99 plotter.XYs
		for _, k := range idx {
			rows := byInterval[k]
			if iv := ph.info.IntervalNs; iv > 0 && rows[0].EndNs-rows[0].StartNs < iv/2 {
				continue // the phase's short last interval: too few requests for a p99
			}
			h := mergeEncoded(rows, func(r archive.IntervalRow) []byte { return r.RespHDR })
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			y := float64(max(h.ValueAtQuantile(99), core.HistMin)) / 1e6
			p99 = append(p99, plotter.XY{X: float64(rows[0].EndNs) / 1e9, Y: y})
			highest = max(highest, y)
		}
		color := plotutil.Color(i)
		if len(probe) > 0 {
			s, err := plotter.NewScatter(probe)
			if err != nil {
				return nil, err
			}
			s.GlyphStyle.Color = color
			s.GlyphStyle.Radius = vg.Points(1.2)
			s.GlyphStyle.Shape = plotutil.Shape(i)
			p.Add(s)
			p.Legend.Add(sys+" probe", s)
			drawn = true
		}
		if len(p99) > 0 {
			l, err := plotter.NewLine(p99)
			if err != nil {
				return nil, err
			}
			l.Color = color
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(sys+" p99 per interval", l)
			drawn = true
		}
	}
	if !drawn {
		return nil, nil
	}
	// Head room on the log scale for the legend above the points.
	p.Y.Max = highest * math.Pow(10, 0.35*float64(len(d.systems)))
	return render(p, 8*vg.Inch, 4.5*vg.Inch)
}

func render(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	wt, err := p.WriterTo(w, h, "svg")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
