package report

import (
	"fmt"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
)

// spectrumPerDecade is how many points per decade of 1/(1−q) a spectrum draws.
const spectrumPerDecade = 20

// spectrumX is the spectrum's x values, 1/(1−q) from 1 (q = 0) to the largest
// the most counted series resolves (at most 10⁷: the 99.99999th percentile).
func spectrumX(count int64) []float64 {
	var xs []float64
	for k := 0; ; k++ {
		x := math.Pow(10, float64(k)/spectrumPerDecade)
		if x > float64(count) || k > 7*spectrumPerDecade {
			return xs
		}
		xs = append(xs, x)
	}
}

// spectrumChart is a phase's percentile spectrum: per system and timed op, the
// latency at each percentile, the x axis 1/(1−q) on a log scale; for a fixed-rate
// phase the response time (from the intended send) solid and the service time
// (from the actual send) dashed. Repetitions are pooled.
func (d *data) spectrumChart(ph phaseRef) *chart.Chart {
	open := ph.info.Rate > 0
	var specs []chart.Series
	var hists []*hdrhistogram.Histogram
	var most int64
	for i, sys := range d.systems {
		reps := d.cell(ph, sys).measured()
		for _, op := range d.timedOps(reps) {
			rows := opRows(reps, op)
			for _, k := range spectrumKinds(open) {
				if h := mergeEncoded(rows, k.hdr); h != nil && h.TotalCount() > 0 {
					most = max(most, h.TotalCount())
					specs = append(specs, chart.Series{Label: sys + " " + op + k.name, Color: i, Dash: k.dash, Line: true})
					hists = append(hists, h)
				}
			}
		}
	}
	if len(specs) == 0 {
		return nil
	}
	c := &chart.Chart{
		ID:    fmt.Sprintf("spectrum-%d", ph.index),
		Title: "Latency by percentile: " + ph.name,
		X:     chart.Axis{Label: "percentile", Log: true, Format: chart.Percentile},
		Y:     chart.Axis{Label: "ms (log scale)", Log: true},
	}
	c.Caption = "Each op's latency at every percentile, repetitions pooled; the x axis is 1/(1−q), so each decade is one more nine. " +
		ifStr(open, "Solid: response time, from the intended send (queueing behind a slow server counts); dashed: service time, from the actual send (what YCSB and memtier publish).") +
		ifStr(!open, "Closed loop: response time equals service time.")
	spectrumSeries(c, specs, hists, most)
	return c
}

// spectrumSeries puts each histogram's latency (ms) at every percentile on the
// chart's x axis, 1/(1−q) up to the largest count: a series has no value
// beyond the nines its own count resolves.
func spectrumSeries(c *chart.Chart, specs []chart.Series, hists []*hdrhistogram.Histogram, most int64) {
	xs := spectrumX(most)
	for i, s := range specs {
		for _, x := range xs {
			if x <= float64(hists[i].TotalCount()) {
				s.XYs = append(s.XYs, chart.XY{X: x, Y: float64(max(hists[i].ValueAtQuantile(100*(1-1/x)), core.HistMin)) / 1e6})
			}
		}
		c.Series = append(c.Series, s)
	}
}

// spectrumKind is one latency of a spectrum: its name in the legend, its
// histogram, and whether it is dashed.
type spectrumKind struct {
	name string
	hdr  func(archive.SummaryRow) []byte
	dash int
}

// spectrumKinds are the latencies a spectrum draws: response and service time
// for a fixed-rate phase, the one latency of a closed-loop one.
func spectrumKinds(open bool) []spectrumKind {
	resp := func(r archive.SummaryRow) []byte { return r.RespHDR }
	if !open {
		return []spectrumKind{{"", resp, 0}}
	}
	return []spectrumKind{{" response", resp, 0}, {" service", serviceHDR, 1}}
}

// serviceHDR is a row's service-time histogram: its own, or the response
// time's where the two are the same (closed loop).
func serviceHDR(r archive.SummaryRow) []byte {
	if len(r.SvcHDR) > 0 {
		return r.SvcHDR
	}
	return r.RespHDR
}

// timedOps are the ops whose latencies describe the phase: its deliveries in a
// pub/sub phase, else every op, sorted.
func (d *data) timedOps(reps []rep) []string {
	var ops []string
	for _, r := range reps {
		for _, row := range r.timed() {
			if !slices.Contains(ops, row.Op) {
				ops = append(ops, row.Op)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

// opRows are op's rows over the repetitions.
func opRows(reps []rep, op string) []archive.SummaryRow {
	var rows []archive.SummaryRow
	for _, r := range reps {
		if row, ok := r.op(op); ok {
			rows = append(rows, row)
		}
	}
	return rows
}

// latencyTimeChart is a phase's latency over time (first repetition): per
// system the side probe's fastest and slowest request of each thousandth of the
// phase as points, each interval's p99 as a line, its stalls shaded.
func (d *data) latencyTimeChart(ph phaseRef) *chart.Chart {
	c := &chart.Chart{
		ID:    fmt.Sprintf("latency-%d", ph.index),
		Title: "Latency over time: " + ph.name,
		X:     chart.Axis{Label: "seconds since the phase started"},
		Y:     chart.Axis{Label: "ms (log scale)", Log: true},
	}
	for i, sys := range d.systems {
		l := d.lines[chartKey{sys, ph.index}]
		if l == nil {
			continue
		}
		if pts := l.points(); len(pts) > 0 {
			c.Series = append(c.Series, chart.Series{Label: sys + " probe", Color: i, Dots: chart.SystemDots, Radius: 1.2, XYs: pts})
		}
		if len(l.p99) > 0 {
			c.Series = append(c.Series, chart.Series{Label: sys + " p99 per interval", Color: i, Line: true, Width: 1.5, XYs: l.p99})
		}
		_, stalls := d.stallsOf(sys, ph.index, 0)
		for _, s := range stalls {
			c.Bands = append(c.Bands, chart.Band{From: float64(s.start) / 1e9, To: float64(s.end) / 1e9, Color: i, Label: sys + " stall " + seconds(s.duration())})
		}
	}
	if len(c.Series) == 0 {
		return nil
	}
	if len(c.Bands) > 0 || slices.ContainsFunc(c.Series, func(s chart.Series) bool { return s.Dots != chart.NoDots }) {
		c.Levels = append(c.Levels, chart.Level{Y: float64(ph.info.StallThreshold()) / 1e6, Label: "stall threshold " + threshold(ph.info.StallThreshold())})
	}
	c.Caption = "Points: the side probe's fastest and slowest request of each thousandth of the phase (one request in flight on its own connection, sent on a fixed schedule, timed from its intended send); lines: each interval's p99 of every op; shaded: stalls, stretches in which the probe waited longer than the threshold. First repetition."
	return c
}

// rateTimeChart is a phase's throughput over time (first repetition): each
// interval's successful ops/s per system, and a fixed-rate phase's target.
func (d *data) rateTimeChart(ph phaseRef) *chart.Chart {
	c := &chart.Chart{
		ID:    fmt.Sprintf("rate-%d", ph.index),
		Title: "Throughput over time: " + ph.name,
		X:     chart.Axis{Label: "seconds since the phase started"},
		Y:     chart.Axis{Label: "successful ops/s", Format: chart.SI, Zero: true},
	}
	for i, sys := range d.systems {
		if l := d.lines[chartKey{sys, ph.index}]; l != nil && len(l.rate) > 1 {
			c.Series = append(c.Series, chart.Series{Label: sys, Color: i, Line: true, Dots: chart.SystemDots, Width: 1.2, Radius: 2, XYs: l.rate})
		}
	}
	if len(c.Series) == 0 {
		return nil
	}
	c.Caption = "Successful operations per second in each interval, the client's count (errors are never throughput). First repetition."
	if ph.info.Rate > 0 {
		c.Levels = append(c.Levels, chart.Level{Y: ph.info.Rate, Label: "target " + thousands(int64(ph.info.Rate)) + " ops/s"})
		c.Caption += " The dashed line is the phase's target rate."
	}
	return c
}

// statsTimeCharts are a phase's server timeline fields (core.StatTimeline) over
// its first repetition, one chart per field, a line per system.
func (d *data) statsTimeCharts(ph phaseRef) []*chart.Chart {
	var fields []string
	for _, sys := range d.systems {
		if fs := d.over.stats.series[chartKey{sys, ph.index}]; fs != nil {
			for _, f := range fs.order {
				if !slices.Contains(fields, f) && len(fields) < maxTimelineFields {
					fields = append(fields, f)
				}
			}
		}
	}
	var out []*chart.Chart
	for j, f := range fields {
		c := &chart.Chart{
			ID:      fmt.Sprintf("server-%d-%d", ph.index, j),
			Title:   "Server: " + core.Printable(f), // the adapter's name of the field
			X:       chart.Axis{Label: "seconds since the phase started"},
			Y:       chart.Axis{Label: core.Printable(f), Format: chart.SI},
			Caption: "What the server said in the samples taken during the phase (a cluster's nodes summed). First repetition.",
		}
		for i, sys := range d.systems {
			if fs := d.over.stats.series[chartKey{sys, ph.index}]; fs != nil && len(fs.xy[f]) > 1 {
				c.Series = append(c.Series, chart.Series{Label: sys, Color: i, Line: true, Dots: chart.SystemDots, Width: 1.2, Radius: 1.5, XYs: fs.xy[f]})
			}
		}
		if len(c.Series) > 0 {
			out = append(out, c)
		}
	}
	return out
}

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
