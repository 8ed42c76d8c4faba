package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core"
)

// Section is a sweep's part of the report (section.Method): for each system,
// the table of the published load-latency curves — a column per connection
// count, rows of throughput and p99.99, the knee marked, computed from the
// archive by the rule the run used (Knee), so the report says where the run
// put later phases — and its two charts.
func (Method) Section(g section.Group) section.Part {
	steps := slices.Clone(g.Steps)
	slices.SortStableFunc(steps, func(a, b section.Step) int { return cmp.Compare(a.Info.Connections, b.Info.Connections) })
	first, rule := steps[0].Info, ruleOf(steps[0])
	says := fmt.Sprintf("throughput grows by less than %g%% to the next step", rule.Gain*100)
	if rule.P99BoundNs > 0 {
		says += fmt.Sprintf(", or the next step's p99 exceeds %s ms", section.Ms(rule.P99BoundNs))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Sweep %s\n\n%s; closed loop; each step %s. The knee is the first step after which %s (or the next step did not end ok); phases written with `connections: knee` ran there.\n\n",
		g.Of, first.Workload, time.Duration(first.DurationNs), says)
	for _, sys := range g.Systems {
		points, worst := pointsOf(steps, sys)
		knee := Knee(points, rule.Gain, rule.P99BoundNs)
		fmt.Fprintf(&b, "**%s**", sys)
		if knee >= 0 {
			fmt.Fprintf(&b, " — knee at %d connections", points[knee].Connections)
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
		section.TableHead(&b, "| connections |", "|---|", conns)
		b.WriteString("| ops/s |")
		for i, p := range points {
			if p.OK {
				pm := "" // its 95 % interval, where the archive holds it
				if h, ok := steps[i].Cells[sys].RateSure(); ok {
					pm = section.PlusMinus(h)
				}
				fmt.Fprintf(&b, " %s%s |", section.Thousands(int64(math.Round(p.Throughput))), pm)
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n| p99.99 ms (worst op) |")
		for _, w := range worst {
			if w < 0 {
				b.WriteString(" — |")
			} else {
				fmt.Fprintf(&b, " %s |", section.Ms(w))
			}
		}
		b.WriteString("\n\n")
	}
	return section.Part{Title: "Sweep " + g.Of, Anchor: "sweep-" + section.NamePart(g.Of), Markdown: b.String(), Charts: charts(g, steps, rule)}
}

// ruleOf is a sweep's knee rule, as its steps carry it.
func ruleOf(st section.Step) Params {
	var params Params
	if st.Info.Method != nil {
		_ = st.Info.Method.DecodeParams(&params)
	}
	return params
}

// pointsOf is what a system's sweep measured, step by step, as the run
// reckoned it (repetitions: mean throughput, worst p99), and each step's worst
// p99.99 (-1 where the step did not run).
func pointsOf(steps []section.Step, sys string) ([]Point, []int64) {
	points := make([]Point, len(steps))
	worst := make([]int64, len(steps))
	for i, st := range steps {
		points[i] = Point{Connections: st.Info.Connections}
		reps := st.Cells[sys].Measured()
		points[i].OK = len(reps) > 0
		worst[i] = -1
		for _, r := range reps {
			points[i].Throughput += r.Throughput / float64(len(reps))
			points[i].OK = points[i].OK && r.Info.Status == core.StatusOK
			for _, row := range r.Rows {
				points[i].P99 = max(points[i].P99, row.RespP99)
				worst[i] = max(worst[i], row.RespP9999)
			}
		}
	}
	return points, worst
}

// charts are a sweep's throughput against connections and its load-latency
// curve, the worst op's p99.99 against the throughput: one line per system, a
// point per step that ended ok, the knee marked.
func charts(g section.Group, steps []section.Step, rule Params) []*chart.Chart {
	base := "sweep-" + section.NamePart(g.Of)
	tp := &chart.Chart{
		ID: base + "-throughput", File: section.ChartsDir + base + "-throughput.svg",
		Title:   "Sweep " + g.Of + ": throughput against connections",
		Caption: "Closed loop, one point per step of connections, its throughput the mean of its repetitions; the knee is where the run put phases written with `connections: knee`.",
		X:       chart.Axis{Label: "connections (log scale)", Log: true},
		Y:       chart.Axis{Label: "ops/s", Format: chart.SI, Zero: true},
	}
	latency := &chart.Chart{
		ID: base + "-latency", File: section.ChartsDir + base + "-latency.svg",
		Title:   "Sweep " + g.Of + ": p99.99 against throughput",
		Caption: "Closed loop, one point per step of connections: the p99.99 of its worst op against its throughput; the knee is where the run put phases written with `connections: knee`.",
		X:       chart.Axis{Label: "ops/s", Format: chart.SI},
		Y:       chart.Axis{Label: "p99.99 ms, worst op (log scale)", Log: true},
	}
	for i, sys := range g.Systems {
		points, worst := pointsOf(steps, sys)
		knee := Knee(points, rule.Gain, rule.P99BoundNs)
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
				latency.Marks = append(latency.Marks, chart.Mark{X: c[len(c)-1].X, Y: c[len(c)-1].Y, Color: i, Label: label})
			}
		}
		if len(a) > 0 {
			tp.Series = append(tp.Series, chart.Series{Label: sys, Color: i, Line: true, Dots: chart.Circles, Radius: 2, XYs: a})
			latency.Series = append(latency.Series, chart.Series{Label: sys, Color: i, Line: true, Dots: chart.Circles, Radius: 2, XYs: c})
		}
	}
	if len(tp.Series) == 0 {
		return nil
	}
	return []*chart.Chart{tp, latency}
}
