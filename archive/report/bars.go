package report

import (
	"github.com/cmpbench/cmpbench/archive/report/chart"
)

// barCharts are the throughput and the p99.9 of every measured phase, a group
// of bars per phase and a bar per system: closed-loop and fixed-rate phases
// never share a chart (the one measures capacity, the other holds a rate;
// their latencies are service and response time).
func (d *data) barCharts() []*chart.Chart {
	var closed, fixed []phaseRef
	for _, ph := range d.measured {
		if ph.info.Rate > 0 {
			fixed = append(fixed, ph)
		} else {
			closed = append(closed, ph)
		}
	}
	var out []*chart.Chart
	if len(closed) > 0 {
		out = append(out, d.throughputBars(closed, "", " (closed loop)", "Successful ops/s of each closed-loop phase, the median of its repetitions (errors are never throughput)."),
			d.latencyBars(closed, "", " (closed loop)", "The p99.9 of every op of each closed-loop phase merged, in ms, the median of its repetitions: service time, which in a closed loop is the response time."))
	}
	if len(fixed) > 0 {
		out = append(out, d.throughputBars(fixed, "-fixed-rate", " (fixed rate)", "Successful ops/s of each fixed-rate phase, the median of its repetitions (errors are never throughput); the dashes: each phase's target."),
			d.latencyBars(fixed, "-fixed-rate", " (fixed rate)", "The p99.9 of every op of each fixed-rate phase merged, in ms, the median of its repetitions: response time, from each operation's intended send (queueing behind a slow server counts)."))
	}
	return out
}

// throughputBars is charts/throughput<suffix>.svg: the phases' throughput,
// and the target of each that has one.
func (d *data) throughputBars(phases []phaseRef, suffix, kind, caption string) *chart.Chart {
	c := d.bars(phases, "ops/s", func(c cell) (float64, bool) {
		sp := c.throughput()
		return sp.Median, sp.N > 0
	})
	c.ID, c.File = "throughput"+suffix, chartsDir+"throughput"+suffix+".svg"
	c.Title, c.Caption = "Throughput per phase and system"+kind, caption
	for j, ph := range phases {
		if ph.info.Rate > 0 {
			c.Levels = append(c.Levels, chart.Level{Y: ph.info.Rate, Label: "target", Fit: true, Category: j + 1})
		}
	}
	return c
}

// latencyBars is charts/p999<suffix>.svg: the p99.9 of every op of the phases.
func (d *data) latencyBars(phases []phaseRef, suffix, kind, caption string) *chart.Chart {
	c := d.bars(phases, "ms", func(c cell) (float64, bool) {
		v, ok := c.allOpsQuantile(99.9)
		return float64(v) / 1e6, ok
	})
	c.ID, c.File = "p999"+suffix, chartsDir+"p999"+suffix+".svg"
	c.Title, c.Caption = "p99.9 latency per phase and system"+kind, caption
	return c
}

// bars is a chart of one group of bars per phase, a bar per system (none
// where the system measured nothing).
func (d *data) bars(phases []phaseRef, unit string, value func(cell) (float64, bool)) *chart.Chart {
	c := &chart.Chart{X: chart.Axis{Label: "phase"}, Y: chart.Axis{Label: unit, Format: chart.SI, Zero: true}}
	for _, ph := range phases {
		c.X.Names = append(c.X.Names, ph.name)
	}
	for i, sys := range d.systems {
		s := chart.Series{Label: sys, Color: i, Bars: true}
		for j, ph := range phases {
			if v, ok := value(d.cell(ph, sys)); ok {
				s.XYs = append(s.XYs, chart.XY{X: float64(j), Y: v})
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}
