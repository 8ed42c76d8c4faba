package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot/plotter"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// The charts of report.html are drawn in the browser by uPlot from the specs
// below, written into the page as JSON: the numbers are computed here, from the
// archive, and the page's script only draws them.

// chartSpec is one chart of report.html: series over one x axis (NaN where a
// series has no value at an x), and marks drawn over them.
type chartSpec struct {
	ID      string       `json:"id"`
	Title   string       `json:"title"`
	Caption string       `json:"-"`
	X       axisSpec     `json:"x"`
	Y       axisSpec     `json:"y"`
	Xs      []num        `json:"xs"`
	Series  []seriesSpec `json:"series"`
	Bands   []bandSpec   `json:"bands,omitempty"`  // shaded stretches of x (stalls)
	HLines  []hlineSpec  `json:"hlines,omitempty"` // a target or threshold
	Marks   []markSpec   `json:"marks,omitempty"`  // labelled points (the knee)
}

// axisSpec is an axis: its label, whether it is logarithmic, and how its ticks
// read ("percentile": x is 1/(1−q), labelled 90%, 99%, ...; "si": 2.8M).
type axisSpec struct {
	Label  string `json:"label"`
	Log    bool   `json:"log,omitempty"`
	Format string `json:"format,omitempty"`
	Zero   bool   `json:"zero,omitempty"` // a linear axis that starts at 0
}

// seriesSpec is one series: its label, its color (an index into the page's
// palette: a system's), dashed or not, drawn as a line, as points, or both.
type seriesSpec struct {
	Label  string `json:"label"`
	Color  int    `json:"color"`
	Dash   bool   `json:"dash,omitempty"`
	Line   bool   `json:"line"`
	Points bool   `json:"points,omitempty"`
	Ys     []num  `json:"ys"`
}

type bandSpec struct {
	From  num    `json:"from"`
	To    num    `json:"to"`
	Color int    `json:"color"`
	Label string `json:"label"`
}

type hlineSpec struct {
	Y     num    `json:"y"`
	Label string `json:"label"`
}

type markSpec struct {
	X     num    `json:"x"`
	Y     num    `json:"y"`
	Color int    `json:"color"`
	Label string `json:"label"`
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

// xySeries is one series before it is aligned on the chart's x values.
type xySeries struct {
	spec seriesSpec
	xys  plotter.XYs
}

// aligned puts series on one sorted x axis, the union of their x values, each
// series NaN where it has none.
func aligned(c *chartSpec, series []xySeries) {
	var xs []float64
	for _, s := range series {
		for _, xy := range s.xys {
			xs = append(xs, xy.X)
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	c.Xs = make([]num, len(xs))
	for i, x := range xs {
		c.Xs[i] = num(x)
	}
	for _, s := range series {
		ys := make([]num, len(xs))
		for i := range ys {
			ys[i] = num(math.NaN())
		}
		for _, xy := range s.xys {
			i, _ := slices.BinarySearch(xs, xy.X)
			ys[i] = num(xy.Y)
		}
		s.spec.Ys = ys
		c.Series = append(c.Series, s.spec)
	}
}

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
func (d *data) spectrumChart(ph phaseRef) *chartSpec {
	open := ph.info.Rate > 0
	var specs []seriesSpec
	var hists []*hdrhistogram.Histogram
	var most int64
	for i, sys := range d.systems {
		reps := d.cell(ph, sys).measured()
		for _, op := range d.timedOps(reps) {
			rows := opRows(reps, op)
			for _, k := range spectrumKinds(open) {
				if h := mergeEncoded(rows, k.hdr); h != nil && h.TotalCount() > 0 {
					most = max(most, h.TotalCount())
					specs = append(specs, seriesSpec{Label: sys + " " + op + k.name, Color: i, Dash: k.dash, Line: true})
					hists = append(hists, h)
				}
			}
		}
	}
	if len(specs) == 0 {
		return nil
	}
	c := &chartSpec{
		ID:    fmt.Sprintf("spectrum-%d", ph.index),
		Title: "Latency by percentile: " + ph.name,
		X:     axisSpec{Label: "percentile", Log: true, Format: "percentile"},
		Y:     axisSpec{Label: "ms (log scale)", Log: true},
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
func spectrumSeries(c *chartSpec, specs []seriesSpec, hists []*hdrhistogram.Histogram, most int64) {
	xs := spectrumX(most)
	for _, x := range xs {
		c.Xs = append(c.Xs, num(x))
	}
	for i, s := range specs {
		s.Ys = make([]num, len(xs))
		for j, x := range xs {
			s.Ys[j] = num(math.NaN())
			if x <= float64(hists[i].TotalCount()) {
				s.Ys[j] = num(float64(max(hists[i].ValueAtQuantile(100*(1-1/x)), core.HistMin)) / 1e6)
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
	dash bool
}

// spectrumKinds are the latencies a spectrum draws: response and service time
// for a fixed-rate phase, the one latency of a closed-loop one.
func spectrumKinds(open bool) []spectrumKind {
	resp := func(r archive.SummaryRow) []byte { return r.RespHDR }
	if !open {
		return []spectrumKind{{"", resp, false}}
	}
	return []spectrumKind{{" response", resp, false}, {" service", serviceHDR, true}}
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
func (d *data) latencyTimeChart(ph phaseRef) *chartSpec {
	c := &chartSpec{
		ID:    fmt.Sprintf("latency-%d", ph.index),
		Title: "Latency over time: " + ph.name,
		X:     axisSpec{Label: "seconds since the phase started"},
		Y:     axisSpec{Label: "ms (log scale)", Log: true},
	}
	var series []xySeries
	for i, sys := range d.systems {
		l := d.lines[chartKey{sys, ph.index}]
		if l == nil {
			continue
		}
		if pts := l.points(); len(pts) > 0 {
			series = append(series, xySeries{seriesSpec{Label: sys + " probe", Color: i, Points: true}, pts})
		}
		if len(l.p99) > 0 {
			series = append(series, xySeries{seriesSpec{Label: sys + " p99 per interval", Color: i, Line: true}, l.p99})
		}
		_, stalls := d.stallsOf(sys, ph.index, 0)
		for _, s := range stalls {
			c.Bands = append(c.Bands, bandSpec{num(float64(s.start) / 1e9), num(float64(s.end) / 1e9), i, sys + " stall " + seconds(s.duration())})
		}
	}
	if len(series) == 0 {
		return nil
	}
	aligned(c, series)
	if len(c.Bands) > 0 || slices.ContainsFunc(series, func(s xySeries) bool { return s.spec.Points }) {
		c.HLines = append(c.HLines, hlineSpec{num(float64(ph.info.StallThreshold()) / 1e6), "stall threshold " + threshold(ph.info.StallThreshold())})
	}
	c.Caption = "Points: the side probe's fastest and slowest request of each thousandth of the phase (one request in flight on its own connection, sent on a fixed schedule, timed from its intended send); lines: each interval's p99 of every op; shaded: stalls, stretches in which the probe waited longer than the threshold. First repetition."
	return c
}

// rateTimeChart is a phase's throughput over time (first repetition): each
// interval's successful ops/s per system, and a fixed-rate phase's target.
func (d *data) rateTimeChart(ph phaseRef) *chartSpec {
	c := &chartSpec{
		ID:    fmt.Sprintf("rate-%d", ph.index),
		Title: "Throughput over time: " + ph.name,
		X:     axisSpec{Label: "seconds since the phase started"},
		Y:     axisSpec{Label: "successful ops/s", Format: "si", Zero: true},
	}
	var series []xySeries
	for i, sys := range d.systems {
		if l := d.lines[chartKey{sys, ph.index}]; l != nil && len(l.rate) > 1 {
			series = append(series, xySeries{seriesSpec{Label: sys, Color: i, Line: true, Points: true}, l.rate})
		}
	}
	if len(series) == 0 {
		return nil
	}
	aligned(c, series)
	c.Caption = "Successful operations per second in each interval, the client's count (errors are never throughput). First repetition."
	if ph.info.Rate > 0 {
		c.HLines = append(c.HLines, hlineSpec{num(ph.info.Rate), "target " + thousands(int64(ph.info.Rate)) + " ops/s"})
		c.Caption += " The dashed line is the phase's target rate."
	}
	return c
}

// statsTimeCharts are a phase's server timeline fields (core.StatTimeline) over
// its first repetition, one chart per field, a line per system.
func (d *data) statsTimeCharts(ph phaseRef) []*chartSpec {
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
	var out []*chartSpec
	for j, f := range fields {
		c := &chartSpec{
			ID:      fmt.Sprintf("server-%d-%d", ph.index, j),
			Title:   "Server: " + core.Printable(f), // the adapter's name of the field
			X:       axisSpec{Label: "seconds since the phase started"},
			Y:       axisSpec{Label: core.Printable(f), Format: "si"},
			Caption: "What the server said in the samples taken during the phase (a cluster's nodes summed). First repetition.",
		}
		var series []xySeries
		for i, sys := range d.systems {
			if fs := d.over.stats.series[chartKey{sys, ph.index}]; fs != nil && len(fs.xy[f]) > 1 {
				series = append(series, xySeries{seriesSpec{Label: sys, Color: i, Line: true, Points: true}, fs.xy[f]})
			}
		}
		if len(series) > 0 {
			aligned(c, series)
			out = append(out, c)
		}
	}
	return out
}

// ladderSpec is a ladder's response time against the rate each step achieved:
// per system its p50, p99 and p99.9, a step not sustained marked NS.
func (d *data) ladderSpec(name string, steps []phaseRef) *chartSpec {
	method := ladderCombine(steps[0].info)
	c := &chartSpec{
		ID:    "ladder-" + namePart(name),
		Title: "Ladder " + name + ": response time against the rate achieved",
		X:     axisSpec{Label: "ops/s achieved (repetitions averaged)", Format: "si"},
		Y:     axisSpec{Label: "response time, ms (log scale)", Log: true},
	}
	var series []xySeries
	for i, sys := range d.systems {
		for j, q := range []float64{50, 99, 99.9} {
			line, _, ns := d.ladderCurve(sys, steps, method, q)
			if len(line) == 0 {
				continue
			}
			series = append(series, xySeries{seriesSpec{Label: fmt.Sprintf("%s p%g", sys, q), Color: i, Dash: j > 0, Line: true, Points: true}, line})
			for _, xy := range ns {
				c.Marks = append(c.Marks, markSpec{num(xy.X), num(xy.Y), i, "NS"})
			}
		}
	}
	if len(series) == 0 {
		return nil
	}
	aligned(c, series)
	c.Caption = "Each step's response time (from the intended send) at p50 (solid), p99 and p99.9 (dashed), against the rate it achieved, repetitions " + ifStr(method == core.LadderMean, "averaged (the mean of their percentiles)") + ifStr(method != core.LadderMean, "pooled") + ". NS marks a step that did not sustain its target: past it, latencies describe an overloaded system."
	return c
}

// sweepSpec is a sweep's load-latency curve: per system, the worst op's p99.99
// against the throughput of each step, the knee marked.
func (d *data) sweepSpec(name string, steps []phaseRef) *chartSpec {
	first := steps[0].info
	c := &chartSpec{
		ID:    "sweep-" + namePart(name),
		Title: "Sweep " + name + ": p99.99 against throughput",
		X:     axisSpec{Label: "ops/s", Format: "si"},
		Y:     axisSpec{Label: "p99.99 ms, worst op (log scale)", Log: true},
	}
	var series []xySeries
	for i, sys := range d.systems {
		points, worst := d.sweepPoints(steps, sys)
		knee := core.Knee(points, first.SweepGain, first.SweepP99BoundNs)
		var xys plotter.XYs
		for j, pt := range points {
			if !pt.OK || worst[j] <= 0 {
				continue
			}
			xy := plotter.XY{X: pt.Throughput, Y: float64(worst[j]) / 1e6}
			xys = append(xys, xy)
			if j == knee {
				c.Marks = append(c.Marks, markSpec{num(xy.X), num(xy.Y), i, fmt.Sprintf("knee: %d connections", pt.Connections)})
			}
		}
		if len(xys) > 0 {
			series = append(series, xySeries{seriesSpec{Label: sys, Color: i, Line: true, Points: true}, xys})
		}
	}
	if len(series) == 0 {
		return nil
	}
	aligned(c, series)
	c.Caption = "Closed loop, one point per step of connections; the knee is where the run put phases written with `connections: knee`."
	return c
}
