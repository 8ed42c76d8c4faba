package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/methods/sweep"
)

// sweeps writes, for each concurrency sweep of the suite and each system, the table
// of the published load-latency curves: a column per connection count, rows of
// throughput and p99.99, the knee marked — computed from the archive by the rule
// the run used (core.Knee), so the report says where the run put later phases.
func (d *data) sweeps(b *strings.Builder) {
	names, steps := d.sweepSteps()
	for _, name := range names {
		st := steps[name]
		first, rule := st[0].info, sweepRule(st[0].info)
		says := fmt.Sprintf("throughput grows by less than %g%% to the next step", rule.Gain*100)
		if rule.P99BoundNs > 0 {
			says += fmt.Sprintf(", or the next step's p99 exceeds %s ms", ms(rule.P99BoundNs))
		}
		fmt.Fprintf(b, "### Sweep %s\n\n%s; closed loop; each step %s. The knee is the first step after which %s (or the next step did not end ok); phases written with `connections: knee` ran there.\n\n",
			name, first.Workload, time.Duration(first.DurationNs), says)
		for _, sys := range d.systems {
			points, worst := d.sweepPoints(st, sys)
			var p9999 []string
			for _, w := range worst {
				if w < 0 {
					p9999 = append(p9999, "—")
				} else {
					p9999 = append(p9999, ms(w))
				}
			}
			knee := sweep.Knee(points, rule.Gain, rule.P99BoundNs)
			fmt.Fprintf(b, "**%s**", sys)
			if knee >= 0 {
				fmt.Fprintf(b, " — knee at %d connections", points[knee].Connections)
			} else {
				b.WriteString(" — no knee: the first step did not end ok")
			}
			conns := make([]string, len(points))
			for i, p := range points {
				conns[i] = fmt.Sprint(p.Connections)
				if i == knee {
					conns[i] = fmt.Sprintf("**%d** (knee)", p.Connections)
				}
			}
			b.WriteString("\n\n")
			tableHead(b, "| connections |", "|---|", conns)
			b.WriteString("| ops/s |")
			for _, p := range points {
				if p.OK {
					fmt.Fprintf(b, " %s |", thousands(int64(math.Round(p.Throughput))))
				} else {
					b.WriteString(" — |")
				}
			}
			b.WriteString("\n| p99.99 ms (worst op) |")
			for _, v := range p9999 {
				fmt.Fprintf(b, " %s |", v)
			}
			b.WriteString("\n\n")
		}
	}
}

// sweepSteps are the suite's sweeps in order and, for each, its steps by
// connections.
func (d *data) sweepSteps() ([]string, map[string][]phaseRef) {
	return d.groups(func(p archive.PhaseInfo) string {
		if p.Method == nil || p.Method.Kind != sweep.Name {
			return ""
		}
		return p.Method.Of
	}, func(p archive.PhaseInfo) float64 { return float64(p.Connections) })
}

// sweepRule is a sweep's knee rule, as its steps carry it.
func sweepRule(p archive.PhaseInfo) sweep.Params {
	var params sweep.Params
	if p.Method != nil {
		_ = p.Method.DecodeParams(&params)
	}
	return params
}

// sweepPoints is what a system's sweep measured, step by step, as the runner
// reckons it (repetitions: mean throughput, worst p99), and each step's worst
// p99.99 (-1 where the step did not run).
func (d *data) sweepPoints(steps []phaseRef, sys string) ([]sweep.Point, []int64) {
	points := make([]sweep.Point, len(steps))
	worst := make([]int64, len(steps))
	for i, ph := range steps {
		points[i] = sweep.Point{Connections: ph.info.Connections}
		reps := d.cell(ph, sys).measured()
		points[i].OK = len(reps) > 0
		worst[i] = -1
		for _, r := range reps {
			points[i].Throughput += r.throughput / float64(len(reps))
			points[i].OK = points[i].OK && r.info.Status == core.StatusOK
			for _, row := range r.rows {
				points[i].P99 = max(points[i].P99, row.RespP99)
				worst[i] = max(worst[i], row.RespP9999)
			}
		}
	}
	return points, worst
}

// sweepCharts are a sweep's throughput against connections and its
// load-latency curve, the worst op's p99.99 against the throughput: one line
// per system, a point per step that ended ok, the knee marked.
func (d *data) sweepCharts(name string, steps []phaseRef) []*chart.Chart {
	rule := sweepRule(steps[0].info)
	base := "sweep-" + namePart(name)
	tp := &chart.Chart{
		ID: base + "-throughput", File: chartsDir + base + "-throughput.svg",
		Title:   "Sweep " + name + ": throughput against connections",
		Caption: "Closed loop, one point per step of connections, its throughput the mean of its repetitions; the knee is where the run put phases written with `connections: knee`.",
		X:       chart.Axis{Label: "connections (log scale)", Log: true},
		Y:       chart.Axis{Label: "ops/s", Format: chart.SI, Zero: true},
	}
	curve := &chart.Chart{
		ID: base + "-latency", File: chartsDir + base + "-latency.svg",
		Title:   "Sweep " + name + ": p99.99 against throughput",
		Caption: "Closed loop, one point per step of connections: the p99.99 of its worst op against its throughput; the knee is where the run put phases written with `connections: knee`.",
		X:       chart.Axis{Label: "ops/s", Format: chart.SI},
		Y:       chart.Axis{Label: "p99.99 ms, worst op (log scale)", Log: true},
	}
	for i, sys := range d.systems {
		points, worst := d.sweepPoints(steps, sys)
		knee := sweep.Knee(points, rule.Gain, rule.P99BoundNs)
		var a, c []chart.XY
		for j, pt := range points {
			if !pt.OK || worst[j] <= 0 {
				continue
			}
			a = append(a, chart.XY{X: float64(pt.Connections), Y: pt.Throughput})
			c = append(c, chart.XY{X: pt.Throughput, Y: float64(worst[j]) / 1e6})
			if j == knee {
				label := fmt.Sprintf("knee: %d connections", pt.Connections)
				tp.Marks = append(tp.Marks, chart.Mark{X: a[len(a)-1].X, Y: a[len(a)-1].Y, Color: i, Label: label})
				curve.Marks = append(curve.Marks, chart.Mark{X: c[len(c)-1].X, Y: c[len(c)-1].Y, Color: i, Label: label})
			}
		}
		if len(a) > 0 {
			tp.Series = append(tp.Series, chart.Series{Label: sys, Color: i, Line: true, Dots: chart.Circles, Radius: 2, XYs: a})
			curve.Series = append(curve.Series, chart.Series{Label: sys, Color: i, Line: true, Dots: chart.Circles, Radius: 2, XYs: c})
		}
	}
	if len(tp.Series) == 0 {
		return nil
	}
	return []*chart.Chart{tp, curve}
}
