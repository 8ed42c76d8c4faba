package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
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
	sweeps, sweepSteps := d.sweepSteps()
	for _, name := range sweeps {
		tp, curve, err := d.sweepCharts(name, sweepSteps[name])
		if err != nil {
			return nil, err
		}
		if tp != nil {
			base := chartsDir + "sweep-" + unsafeName.ReplaceAllString(name, "_")
			out = append(out, chart{base + "-throughput.svg", "Sweep " + name + ": throughput against connections", tp},
				chart{base + "-latency.svg", "Sweep " + name + ": p99.99 against throughput", curve})
		}
	}
	ladders, steps := d.ladderSteps()
	for _, name := range ladders {
		svg, err := d.ladderChart(name, steps[name])
		if err != nil {
			return nil, err
		}
		if svg != nil {
			out = append(out, chart{chartsDir + "ladder-" + unsafeName.ReplaceAllString(name, "_") + ".svg", "Ladder " + name + ": latency against the rate achieved", svg})
		}
	}
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
	for _, ph := range d.measured {
		more, err := d.overTimeCharts(ph)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
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

// timeChart draws, for the first repetition of a phase, the side probe's requests
// (of each thousandth of the phase, the fastest and the slowest) as points and each
// interval's p99 as a line, per system.
func (d *data) timeChart(ph phaseRef) ([]byte, error) {
	p := plot.New()
	p.Title.Text = "Latency over time: " + ph.name + " (first repetition)"
	p.X.Label.Text = "seconds since the phase started (points: fastest and slowest probe request of each 1/1000 of the phase)"
	p.Y.Label.Text = "ms (log scale)"
	latencyAxis(p)
	drawn := false
	var highest float64
	for i, sys := range d.systems {
		l := d.lines[chartKey{sys, ph.index}]
		if l == nil {
			continue
		}
		probe := l.points()
		for _, xy := range probe {
			highest = max(highest, xy.Y)
		}
		for _, xy := range l.p99 {
			highest = max(highest, xy.Y)
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
		if len(l.p99) > 0 {
			ln, err := plotter.NewLine(l.p99)
			if err != nil {
				return nil, err
			}
			ln.Color = color
			ln.Width = vg.Points(1.5)
			p.Add(ln)
			p.Legend.Add(sys+" p99 per interval", ln)
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

// latencyAxis makes p's y axis a log scale of latencies with decade ticks, and
// puts its legend at the top left, where latency charts have room.
func latencyAxis(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
}
