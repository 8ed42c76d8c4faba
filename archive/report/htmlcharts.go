package report

import (
	"fmt"

	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
)

// ladderSpec is a ladder's response time against the rate each step achieved:
// per system its p50, p99 and p99.9, a step not sustained marked NS.
func (d *data) ladderSpec(name string, steps []phaseRef) *chart.Chart {
	method := ladderCombine(steps[0].info)
	c := &chart.Chart{
		ID:    "ladder-" + namePart(name),
		Title: "Ladder " + name + ": response time against the rate achieved",
		X:     chart.Axis{Label: "ops/s achieved (repetitions averaged)", Format: chart.SI},
		Y:     chart.Axis{Label: "response time, ms (log scale)", Log: true},
	}
	for i, sys := range d.systems {
		for j, q := range []float64{50, 99, 99.9} {
			line, _, ns := d.ladderCurve(sys, steps, method, q)
			if len(line) == 0 {
				continue
			}
			c.Series = append(c.Series, chart.Series{Label: fmt.Sprintf("%s p%g", sys, q), Color: i, Dash: j, Line: true, Dots: chart.Circles, Width: 1.2, Radius: 2.5, XYs: line})
			for _, xy := range ns {
				c.Marks = append(c.Marks, chart.Mark{X: xy.X, Y: xy.Y, Color: i, Label: "NS"})
			}
		}
	}
	if len(c.Series) == 0 {
		return nil
	}
	c.Caption = "Each step's response time (from the intended send) at p50 (solid), p99 and p99.9 (dashed), against the rate it achieved, repetitions " + ifStr(method == core.LadderMean, "averaged (the mean of their percentiles)") + ifStr(method != core.LadderMean, "pooled") + ". NS marks a step that did not sustain its target: past it, latencies describe an overloaded system."
	return c
}

// sweepSpec is a sweep's load-latency curve: per system, the worst op's p99.99
// against the throughput of each step, the knee marked.
func (d *data) sweepSpec(name string, steps []phaseRef) *chart.Chart {
	first := steps[0].info
	c := &chart.Chart{
		ID:    "sweep-" + namePart(name),
		Title: "Sweep " + name + ": p99.99 against throughput",
		X:     chart.Axis{Label: "ops/s", Format: chart.SI},
		Y:     chart.Axis{Label: "p99.99 ms, worst op (log scale)", Log: true},
	}
	for i, sys := range d.systems {
		points, worst := d.sweepPoints(steps, sys)
		knee := core.Knee(points, first.SweepGain, first.SweepP99BoundNs)
		var xys []chart.XY
		for j, pt := range points {
			if !pt.OK || worst[j] <= 0 {
				continue
			}
			xy := chart.XY{X: pt.Throughput, Y: float64(worst[j]) / 1e6}
			xys = append(xys, xy)
			if j == knee {
				c.Marks = append(c.Marks, chart.Mark{X: xy.X, Y: xy.Y, Color: i, Label: fmt.Sprintf("knee: %d connections", pt.Connections)})
			}
		}
		if len(xys) > 0 {
			c.Series = append(c.Series, chart.Series{Label: sys, Color: i, Line: true, Dots: chart.Circles, Radius: 2, XYs: xys})
		}
	}
	if len(c.Series) == 0 {
		return nil
	}
	c.Caption = "Closed loop, one point per step of connections; the knee is where the run put phases written with `connections: knee`."
	return c
}
