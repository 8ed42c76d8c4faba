package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/methods/ladder"
)

// ladders writes, for each fixed-rate ladder of the suite, the table the published
// ladders use: a row per target rate, a column per system with p50 / p99 in ms of
// every op of the step; NS (achieved rate) for a step not sustained; — once a
// system's ladder had stopped. Rows are the steps any system ran. A step's
// repetitions are combined as its ladder says (combined); the caption names how.
func (d *data) ladders(b *strings.Builder) {
	names, steps := d.ladderSteps()
	for _, name := range names {
		first := steps[name][0].info
		method, reps := ladderCombine(first), d.ladderRepetitions(name)
		fmt.Fprintf(b, "### Ladder %s\n\n%s; %d connections; each step %s.\n\n", name, first.Workload, first.Connections, time.Duration(first.DurationNs))
		how := "repetitions pooled (histograms merged)"
		switch {
		case method == ladder.Mean && reps > 1:
			how = fmt.Sprintf("the mean of the %d repetitions' percentiles (each repetition's own p50 and p99 averaged, as in the published tables; merging their histograms would be exact)", reps)
		case method == ladder.Mean:
			how = "one repetition (combine: mean has nothing to average)"
		}
		over := "every op of the step"
		if _, ok := first.Spec.(core.PubSubSpec); ok {
			over = "every delivery of the step (DELIVER: publish to subscriber; the rate is of publishes)"
		}
		below, rate := fmt.Sprintf("below %.0f%% of its target", archive.SustainedFraction*100), "the rate achieved"
		if reps > 1 {
			below, rate = "a repetition "+below, rate+" (the mean over the repetitions)"
		}
		for _, t := range []struct {
			what string
			hdr  func(archive.SummaryRow) []byte
		}{
			{"Response time (from each operation's intended send: queueing counts)", func(r archive.SummaryRow) []byte { return r.RespHDR }},
			{"Service time (from the actual send, as memtier and YCSB publish)", func(r archive.SummaryRow) []byte { return r.SvcHDR }},
		} {
			fmt.Fprintf(b, "%s: each cell is p50 / p99 in ms over %s, %s. **NS** marks a step not sustained (%s), with %s; — a step not run because the system's ladder had stopped.\n\n", t.what, over, how, below, rate)
			tableHead(b, "| target ops/s |", "|--:|", d.systems)
			for _, ph := range steps[name] {
				fmt.Fprintf(b, "| %s |", thousands(int64(math.Round(ph.info.Rate))))
				for _, sys := range d.systems {
					fmt.Fprintf(b, " %s |", ladderCell(d.cell(ph, sys), method, t.hdr))
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
	}
}

// ladderCombine is how a ladder combines its steps' repetitions: ladder.Pooled
// or ladder.Mean, as the manifest says (older archives say nothing: pooled).
func ladderCombine(p archive.PhaseInfo) string {
	var params ladder.Params
	if p.Method != nil {
		_ = p.Method.DecodeParams(&params)
	}
	return cmp.Or(params.Combine, ladder.Pooled)
}

// ladderOf is the ladder a phase is a step of, or "".
func ladderOf(p archive.PhaseInfo) string {
	if p.Method == nil || p.Method.Kind != ladder.Name {
		return ""
	}
	return p.Method.Of
}

// ladderRepetitions is how many times the ladder's steps were to run.
func (d *data) ladderRepetitions(name string) int {
	n := 1
	for _, p := range d.m.Phases {
		if ladderOf(p) == name {
			n = max(n, p.Repetition+1)
		}
	}
	return n
}

// ladderSteps are the suite's ladders in order and, for each, its steps by rate.
func (d *data) ladderSteps() ([]string, map[string][]phaseRef) {
	return d.groups(ladderOf, func(p archive.PhaseInfo) float64 { return p.Rate })
}

// groups gathers the measured phases that are steps of a ladder or sweep (group
// names the one a phase belongs to, "" for none): the groups in suite order and,
// for each, its steps ordered by by.
func (d *data) groups(group func(archive.PhaseInfo) string, by func(archive.PhaseInfo) float64) ([]string, map[string][]phaseRef) {
	var names []string
	steps := map[string][]phaseRef{}
	for _, ph := range d.measured {
		if g := group(ph.info); g != "" {
			if _, seen := steps[g]; !seen {
				names = append(names, g)
			}
			steps[g] = append(steps[g], ph)
		}
	}
	for _, name := range names {
		slices.SortStableFunc(steps[name], func(a, b phaseRef) int { return cmp.Compare(by(a.info), by(b.info)) })
	}
	return names, steps
}

// combined is a ladder step of one system over its repetitions, combined by
// method: for each quantile q (0-100) of qs, the percentile in ns of hdr's
// histograms over every op — ladder.Pooled: of every repetition's histograms
// merged, which is exact; ladder.Mean: the arithmetic mean of each repetition's
// own percentile — nil when no op was timed. achieved is the mean rate achieved
// over the repetitions and sustained whether every repetition held its target,
// whatever the method; status is the first repetition's that did not end ok (""
// when all did), in which case values is nil.
func combined(c cell, method string, hdr func(archive.SummaryRow) []byte, qs ...float64) (values []float64, achieved float64, sustained bool, status string) {
	reps := c.measured()
	sustained = true
	var rows []archive.SummaryRow
	for _, r := range reps {
		if r.info.Status != core.StatusOK {
			return nil, 0, false, string(r.info.Status)
		}
		achieved += r.throughput / float64(len(reps))
		sustained = sustained && r.sustained()
		rows = append(rows, r.timed()...)
	}
	if method != ladder.Mean {
		if h := mergeEncoded(rows, hdr); h != nil && h.TotalCount() > 0 {
			for _, q := range qs {
				values = append(values, float64(h.ValueAtQuantile(q)))
			}
		}
		return values, achieved, sustained, ""
	}
	timed := 0
	sums := make([]float64, len(qs))
	for _, r := range reps {
		h := mergeEncoded(r.timed(), hdr)
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		timed++
		for i, q := range qs {
			sums[i] += float64(h.ValueAtQuantile(q))
		}
	}
	if timed == 0 {
		return nil, achieved, sustained, ""
	}
	for i := range sums {
		sums[i] /= float64(timed)
	}
	return sums, achieved, sustained, ""
}

// ladderChart is a ladder's response time against the rate each step
// achieved: per system its p50 (solid), p99 and p99.9 (dashed), combined as
// the ladder says, a step not sustained marked NS.
func (d *data) ladderChart(name string, steps []phaseRef) *chart.Chart {
	method := ladderCombine(steps[0].info)
	how := "repetitions pooled"
	if method == ladder.Mean {
		how = "mean of the repetitions' percentiles"
	}
	// The title says response time: the axis's label stays short enough for
	// the chart's height.
	c := &chart.Chart{
		ID:    "ladder-" + namePart(name),
		File:  chartsDir + "ladder-" + namePart(name) + ".svg",
		Title: "Ladder " + name + ": response time against the rate achieved",
		X:     chart.Axis{Label: "ops/s achieved (repetitions averaged)", Format: chart.SI},
		Y:     chart.Axis{Label: "ms (log scale), " + how, Log: true},
	}
	for i, sys := range d.systems {
		for j, q := range []float64{50, 99, 99.9} {
			line, ns := d.ladderCurve(sys, steps, method, q)
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
	c.Caption = "Each step's response time (from the intended send) at p50 (solid), p99 and p99.9 (dashed), against the rate it achieved, repetitions " + ifStr(method == ladder.Mean, "averaged (the mean of their percentiles)") + ifStr(method != ladder.Mean, "pooled") + ". NS marks a step that did not sustain its target: past it, latencies describe an overloaded system."
	return c
}

// ladderCurve is one system's quantile q (0-100) of the response time, in ms,
// against the rate each step of a ladder achieved: every step's point, and
// those of the steps not sustained.
func (d *data) ladderCurve(sys string, steps []phaseRef, method string, q float64) (line, ns []chart.XY) {
	for _, ph := range steps {
		v, achieved, sustained, _ := combined(d.cell(ph, sys), method, func(r archive.SummaryRow) []byte { return r.RespHDR }, q)
		if v == nil {
			continue
		}
		xy := chart.XY{X: achieved, Y: v[0] / 1e6}
		line = append(line, xy)
		if !sustained {
			ns = append(ns, xy)
		}
	}
	return line, ns
}

func ladderCell(c cell, method string, hdr func(archive.SummaryRow) []byte) string {
	reps := c.measured()
	if len(reps) == 0 {
		for _, r := range c.reps {
			if r.info.Status != "skipped" {
				return string(r.info.Status)
			}
		}
		return "—"
	}
	v, achieved, sustained, status := combined(c, method, hdr, 50, 99)
	if status != "" {
		return status
	}
	if !sustained {
		return fmt.Sprintf("NS (%s)", thousands(int64(math.Round(achieved))))
	}
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%s / %s", ms(int64(math.Round(v[0]))), ms(int64(math.Round(v[1]))))
}
