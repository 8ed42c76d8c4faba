package report

import (
	"bytes"
	"fmt"
	"html/template"
	"math"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/compare"
	"github.com/cmpbench/cmpbench/archive/report/chart"
)

// Comparison is what `cmpbench compare --html` renders: two archives, where
// they were read from, and compare's rows and summary for them.
type Comparison struct {
	A, B       *archive.Archive
	DirA, DirB string
	Rows       []compare.Row
	Summary    []string
}

// comparePage is the comparison's page: each side's run, the summary, and per
// phase the verdicts and each system's spectrum of A against B.
type comparePage struct {
	Title     string
	Sides     []compareSide
	Summary   []string
	Regressed bool // a metric regressed, or a phase ended ok in A and not in B
	Phases    []comparePhase
	Charts    template.JS
	inlined
}

type compareSide struct {
	Label, Dir string
	Facts      []string
	Systems    []archive.SystemInfo
}

type comparePhase struct {
	Anchor, Name string
	Rows         []compareRow
	Charts       []chartView
}

type compareRow struct {
	System, Op, Metric, A, B, Change, Verdict, Class string
}

// CompareHTML renders the comparison's page: self-contained like report.html,
// with the same script and style.
func CompareHTML(c Comparison) ([]byte, error) {
	sides := [2]*data{}
	p := &comparePage{Title: fmt.Sprintf("cmpbench compare: %s → %s", c.A.Manifest.RunID, c.B.Manifest.RunID), Summary: c.Summary}
	for i, a := range []*archive.Archive{c.A, c.B} {
		d, err := load(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", []string{c.DirA, c.DirB}[i], err)
		}
		sides[i] = d
		p.Sides = append(p.Sides, compareSide{Label: "AB"[i : i+1], Dir: []string{c.DirA, c.DirB}[i], Facts: d.facts(), Systems: a.Manifest.Systems})
	}
	p.Regressed = compare.Count(c.Rows, compare.Regression) > 0 || len(compare.FailedInB(c.Rows)) > 0
	var specs []*chart.Chart
	for _, ph := range comparePhases(c.Rows) {
		ph.Anchor = fmt.Sprintf("phase-%d", len(p.Phases)+1)
		for i, sys := range systemsOf(ph.rows) {
			if s := compareSpectrum(sides, ph.Name, sys, fmt.Sprintf("spectrum-%d-%d", len(p.Phases)+1, i)); s != nil {
				specs = append(specs, s)
				ph.Charts = append(ph.Charts, chartView{s.ID, s.Caption})
			}
		}
		p.Phases = append(p.Phases, ph.comparePhase)
	}
	var err error
	if p.Charts, p.inlined, err = pageParts(specs); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&b, "compare.html.tmpl", p); err != nil {
		return nil, fmt.Errorf("compare page: %w", err)
	}
	return b.Bytes(), nil
}

type phaseRows struct {
	comparePhase
	rows []compare.Row
}

// comparePhases groups the rows by phase, in compare's order, each row as the
// page shows it.
func comparePhases(rows []compare.Row) []*phaseRows {
	var out []*phaseRows
	byName := map[string]*phaseRows{}
	for _, r := range rows {
		ph := byName[r.Phase]
		if ph == nil {
			ph = &phaseRows{comparePhase: comparePhase{Name: r.Phase}}
			byName[r.Phase] = ph
			out = append(out, ph)
		}
		ph.rows = append(ph.rows, r)
		ph.Rows = append(ph.Rows, viewRow(r))
	}
	return out
}

func viewRow(r compare.Row) compareRow {
	v := compareRow{System: r.System, Op: dash(r.Op), Metric: dash(r.Metric), A: sideValue(r.A, r.HasA, r.StatusA), B: sideValue(r.B, r.HasB, r.StatusB), Change: r.ChangeText(), Verdict: r.Verdict}
	switch r.Verdict {
	case compare.Regression:
		v.Class = "regression"
	case compare.Improvement:
		v.Class = "improvement"
	case compare.Unstable, compare.NotComparable, compare.Minor:
		v.Class = "minor"
	}
	return v
}

// sideValue is one side's number as compare prints it: the phase's status where
// it did not end ok, "—" where there is no value.
func sideValue(v float64, has bool, status string) string {
	switch {
	case status != "" && status != "ok":
		return status
	case !has:
		return "—"
	case v >= 100 || v == 0:
		return thousands(int64(math.Round(v)))
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func systemsOf(rows []compare.Row) []string {
	var out []string
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1] != r.System {
			out = append(out, r.System)
		}
	}
	return out
}

// compareSpectrum is one system's percentile spectrum in one phase: each timed
// op's response time in A (solid) and B (dashed), repetitions pooled; nil when
// neither archive measured it.
func compareSpectrum(sides [2]*data, phase, sys, id string) *chart.Chart {
	var specs []chart.Series
	var hists []Quantiles
	var most int64
	ops := map[string]int{}
	for i, d := range sides {
		ph, ok := d.measuredNamed(phase)
		if !ok {
			continue
		}
		reps := d.cell(ph, sys).measured()
		for _, op := range d.timedOps(reps) {
			h := mergeEncoded(opRows(reps, op), func(r archive.SummaryRow) []byte { return r.RespHDR })
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			if _, ok := ops[op]; !ok {
				ops[op] = len(ops)
			}
			most = max(most, h.TotalCount())
			specs = append(specs, chart.Series{Label: "AB"[i:i+1] + " " + op, Color: ops[op], Dash: i, Line: true})
			hists = append(hists, h)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	c := &chart.Chart{
		ID:    id,
		Title: fmt.Sprintf("Latency by percentile: %s, %s", sys, phase),
		X:     chart.Axis{Label: "percentile", Log: true, Format: chart.Percentile},
		Y:     chart.Axis{Label: "ms (log scale)", Log: true},
		Caption: "Each op's response time at every percentile, A solid and B dashed, repetitions pooled; the x axis is 1/(1−q), so each decade is one more nine. " +
			"Response time is measured from the intended send at a fixed rate and equals service time in a closed loop.",
	}
	spectrumSeries(c, specs, hists, most)
	return c
}

// measuredNamed is the measured phase of that name.
func (d *data) measuredNamed(name string) (phaseRef, bool) {
	for _, ph := range d.measured {
		if ph.name == name {
			return ph, true
		}
	}
	return phaseRef{}, false
}
