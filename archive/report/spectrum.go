package report

import (
	"math"
	"slices"

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

// Quantiles is a latency histogram a spectrum reads: a dense or a packed
// HdrHistogram.
type Quantiles interface {
	TotalCount() int64
	ValueAtPercentile(percentile float64) int64
}

// SpectrumLine is one latency of one op on one system, as a spectrum draws it:
// Kind is "" (a closed loop's one latency), " response" or " service" (dashed).
type SpectrumLine struct {
	System, Op, Kind string
	Color            int
	Hist             Quantiles
}

// spectrumChart is a phase's percentile spectrum: per system and timed op, the
// latency at each percentile, the x axis 1/(1−q) on a log scale; for a fixed-rate
// phase the response time (from the intended send) solid and the service time
// (from the actual send) dashed. Repetitions are pooled.
func (d *data) spectrumChart(ph phaseRef) *chart.Chart {
	open := ph.info.Rate > 0
	var lines []SpectrumLine
	for i, sys := range d.systems {
		reps := d.cell(ph, sys).measured()
		for _, op := range d.timedOps(reps) {
			rows := opRows(reps, op)
			for _, k := range spectrumKinds(open) {
				if h := mergeEncoded(rows, k.hdr); h != nil && h.TotalCount() > 0 {
					lines = append(lines, SpectrumLine{System: sys, Op: op, Kind: k.name, Color: i, Hist: h})
				}
			}
		}
	}
	return SpectrumChart(ph.chartPhase(), lines)
}

// SpectrumChart is the chart of a phase's percentile spectrum (report.html's
// and the live page's): each line's latency at every percentile it resolves;
// nil when no line holds a value.
func SpectrumChart(ph ChartPhase, lines []SpectrumLine) *chart.Chart {
	open := ph.Rate > 0
	var specs []chart.Series
	var hists []Quantiles
	var most int64
	for _, l := range lines {
		if l.Hist == nil || l.Hist.TotalCount() == 0 {
			continue
		}
		most = max(most, l.Hist.TotalCount())
		specs = append(specs, chart.Series{Label: l.System + " " + l.Op + l.Kind, Color: l.Color, Dash: btoi(l.Kind == " service"), Line: true})
		hists = append(hists, l.Hist)
	}
	if len(specs) == 0 {
		return nil
	}
	c := phaseChart("spectrum", ph, "Latency by percentile: ")
	c.X = chart.Axis{Label: "percentile", Log: true, Format: chart.Percentile}
	c.Y = chart.Axis{Label: "ms (log scale)", Log: true}
	c.Caption = "Each op's latency at every percentile, repetitions pooled; the x axis is 1/(1−q), so each decade is one more nine. " +
		ifStr(open, "Solid: response time, from the intended send (queueing behind a slow server counts); dashed: service time, from the actual send (what YCSB and memtier publish).") +
		ifStr(!open, "Closed loop: response time equals service time.")
	spectrumSeries(c, specs, hists, most)
	return c
}

// spectrumSeries puts each histogram's latency (ms) at every percentile on the
// chart's x axis, 1/(1−q) up to the largest count: a series has no value
// beyond the nines its own count resolves.
func spectrumSeries(c *chart.Chart, specs []chart.Series, hists []Quantiles, most int64) {
	xs := spectrumX(most)
	for i, s := range specs {
		for _, x := range xs {
			if x <= float64(hists[i].TotalCount()) {
				s.XYs = append(s.XYs, chart.XY{X: x, Y: float64(max(hists[i].ValueAtPercentile(100*(1-1/x)), core.HistMin)) / 1e6})
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
}

// spectrumKinds are the latencies a spectrum draws: response and service time
// for a fixed-rate phase, the one latency of a closed-loop one.
func spectrumKinds(open bool) []spectrumKind {
	resp := func(r archive.SummaryRow) []byte { return r.RespHDR }
	if !open {
		return []spectrumKind{{"", resp}}
	}
	return []spectrumKind{{" response", resp}, {" service", serviceHDR}}
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
