package ladder

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core"
)

// Section is a ladder's part of the report (section.Method): the table the
// published ladders use — a row per target rate, a column per system with p50
// / p99 in ms of every op of the step; NS (achieved rate) for a step not
// sustained; — once a system's ladder had stopped — for response and service
// time, and its chart. Rows are the steps any system ran. A step's
// repetitions are combined as its ladder says (combined); the caption names
// how.
func (Method) Section(g section.Group) section.Part {
	steps := slices.Clone(g.Steps)
	slices.SortStableFunc(steps, func(a, b section.Step) int { return cmp.Compare(a.Info.Rate, b.Info.Rate) })
	first := steps[0].Info
	part := section.Part{Title: "Ladder " + g.Of, Anchor: "ladder-" + section.NamePart(g.Of)}
	if c := ladderChart(g, steps); c != nil {
		part.Charts = []*chart.Chart{c}
	}
	method, reps := combineOf(first), repetitions(g)
	var b strings.Builder
	fmt.Fprintf(&b, "### Ladder %s\n\n%s; %d connections; each step %s.\n\n", g.Of, first.Workload, first.Connections, time.Duration(first.DurationNs))
	how := "repetitions pooled (histograms merged)"
	switch {
	case method == Mean && reps > 1:
		how = fmt.Sprintf("the mean of the %d repetitions' percentiles (each repetition's own p50 and p99 averaged, as in the published tables; merging their histograms would be exact)", reps)
	case method == Mean:
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
		sure bool // the p99's 95 % interval is archived (response time only)
	}{
		{"Response time (from each operation's intended send: queueing counts)", func(r archive.SummaryRow) []byte { return r.RespHDR }, true},
		{"Service time (from the actual send, as memtier and YCSB publish)", func(r archive.SummaryRow) []byte { return r.SvcHDR }, false},
	} {
		sure := ""
		if t.sure && anySure(steps, g.Systems) {
			sure = " ± after the p99 is its 95 % interval (of the repetitions' mean when there are several, else of the step's own window)."
		}
		fmt.Fprintf(&b, "%s: each cell is p50 / p99 in ms over %s, %s. **NS** marks a step not sustained (%s), with %s; — a step not run because the system's ladder had stopped.%s\n\n", t.what, over, how, below, rate, sure)
		section.TableHead(&b, "| target ops/s |", "|--:|", g.Systems)
		for _, st := range steps {
			fmt.Fprintf(&b, "| %s |", section.Thousands(int64(math.Round(st.Info.Rate))))
			for _, sys := range g.Systems {
				fmt.Fprintf(&b, " %s |", cell(st.Cells[sys], method, t.hdr, t.sure))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	part.Markdown = b.String()
	return part
}

// combineOf is how a ladder combines its steps' repetitions: Pooled or Mean,
// as its steps' parameters say (archives of format version 1 may say nothing:
// pooled).
func combineOf(p archive.PhaseInfo) string {
	var params Params
	if p.Method != nil {
		_ = p.Method.DecodeParams(&params)
	}
	return cmp.Or(params.Combine, Pooled)
}

// repetitions is how many times the ladder's steps were to run.
func repetitions(g section.Group) int {
	n := 1
	for _, p := range g.Phases {
		if p.Method != nil && p.Method.Kind == Name && p.Method.Of == g.Of {
			n = max(n, p.Repetition+1)
		}
	}
	return n
}

// combined is a ladder step of one system over its repetitions, combined by
// method: for each quantile q (0-100) of qs, the percentile in ns of hdr's
// histograms over every op — Pooled: of every repetition's histograms merged,
// which is exact; Mean: the arithmetic mean of each repetition's own
// percentile — nil when no op was timed. achieved is the mean rate achieved
// over the repetitions and sustained whether every repetition held its target,
// whatever the method; status is the first repetition's that did not end ok (""
// when all did), in which case values is nil.
func combined(c section.Cell, method string, hdr func(archive.SummaryRow) []byte, qs ...float64) (values []float64, achieved float64, sustained bool, status string) {
	reps := c.Measured()
	sustained = true
	var rows []archive.SummaryRow
	for _, r := range reps {
		if r.Info.Status != core.StatusOK {
			return nil, 0, false, string(r.Info.Status)
		}
		achieved += r.Throughput / float64(len(reps))
		sustained = sustained && r.Sustained()
		rows = append(rows, r.Timed()...)
	}
	if method != Mean {
		if h := section.MergeHistograms(rows, hdr); h != nil && h.TotalCount() > 0 {
			for _, q := range qs {
				values = append(values, float64(h.ValueAtQuantile(q)))
			}
		}
		return values, achieved, sustained, ""
	}
	timed := 0
	sums := make([]float64, len(qs))
	for _, r := range reps {
		h := section.MergeHistograms(r.Timed(), hdr)
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
func ladderChart(g section.Group, steps []section.Step) *chart.Chart {
	method := combineOf(steps[0].Info)
	how := "repetitions pooled"
	if method == Mean {
		how = "mean of the repetitions' percentiles"
	}
	// The title says response time: the axis's label stays short enough for
	// the chart's height.
	id := "ladder-" + section.NamePart(g.Of)
	c := &chart.Chart{
		ID:    id,
		File:  section.ChartsDir + id + ".svg",
		Title: "Ladder " + g.Of + ": response time against the rate achieved",
		X:     chart.Axis{Label: "ops/s achieved (repetitions averaged)", Format: chart.SI},
		Y:     chart.Axis{Label: "ms (log scale), " + how, Log: true},
	}
	for i, sys := range g.Systems {
		for j, q := range []float64{50, 99, 99.9} {
			line, ns := curve(sys, steps, method, q)
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
	averaged := "pooled"
	if method == Mean {
		averaged = "averaged (the mean of their percentiles)"
	}
	c.Caption = "Each step's response time (from the intended send) at p50 (solid), p99 and p99.9 (dashed), against the rate it achieved, repetitions " + averaged + ". NS marks a step that did not sustain its target: past it, latencies describe an overloaded system."
	return c
}

// curve is one system's quantile q (0-100) of the response time, in ms,
// against the rate each step of a ladder achieved: every step's point, and
// those of the steps not sustained.
func curve(sys string, steps []section.Step, method string, q float64) (line, ns []chart.XY) {
	for _, st := range steps {
		v, achieved, sustained, _ := combined(st.Cells[sys], method, func(r archive.SummaryRow) []byte { return r.RespHDR }, q)
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

// cell is one system's step in the ladder's table.
func cell(c section.Cell, method string, hdr func(archive.SummaryRow) []byte, sure bool) string {
	reps := c.Measured()
	if len(reps) == 0 {
		for _, r := range c.Reps {
			if r.Info.Status != "skipped" {
				return string(r.Info.Status)
			}
		}
		return "—"
	}
	v, achieved, sustained, status := combined(c, method, hdr, 50, 99)
	if status != "" {
		return status
	}
	if !sustained {
		return fmt.Sprintf("NS (%s)", section.Thousands(int64(math.Round(achieved))))
	}
	if v == nil {
		return "—"
	}
	pm := ""
	if h, ok := c.TimedSure("p99", 99); sure && ok {
		pm = section.PlusMinus(h)
	}
	return fmt.Sprintf("%s / %s%s", section.Ms(int64(math.Round(v[0]))), section.Ms(int64(math.Round(v[1]))), pm)
}

// anySure says whether any system's step says how sure its numbers are
// (section.Cell.Sure: an archive of format 3 or later).
func anySure(steps []section.Step, systems []string) bool {
	for _, st := range steps {
		for _, sys := range systems {
			if st.Cells[sys].Sure() {
				return true
			}
		}
	}
	return false
}
