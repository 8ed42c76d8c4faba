package report

import (
	"sort"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// data is what a report is drawn from, read from the archive once.
type data struct {
	m           archive.Manifest
	summary     []archive.SummaryRow
	intervals   []archive.IntervalRow
	probe       []archive.ProbeRow
	stats       []archive.ServerStatRow
	validations []core.Validation
	measured    []phaseRef // measured phases in suite order
	systems     []string   // in run order
}

// phaseRef names one phase of the suite.
type phaseRef struct {
	index int
	name  string
	info  archive.PhaseInfo // of its first repetition on the first system that ran it
}

func load(a *archive.Archive) (*data, error) {
	d := &data{m: a.Manifest, summary: a.Summary}
	var err error
	if d.intervals, err = a.Intervals(); err != nil {
		return nil, err
	}
	if d.probe, err = a.Probe(); err != nil {
		return nil, err
	}
	if d.stats, err = a.ServerStats(); err != nil {
		return nil, err
	}
	if d.validations, err = a.Validations(); err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for _, p := range d.m.Phases {
		if p.Kind == core.PhaseMeasured && !seen[p.Index] {
			seen[p.Index] = true
			d.measured = append(d.measured, phaseRef{index: p.Index, name: p.Name, info: p})
		}
	}
	sort.SliceStable(d.measured, func(i, j int) bool { return d.measured[i].index < d.measured[j].index })
	for _, s := range d.m.Systems {
		d.systems = append(d.systems, s.Name)
	}
	return d, nil
}

// rep is one repetition of one phase on one system.
type rep struct {
	info       archive.PhaseInfo
	rows       []archive.SummaryRow // one per op, sorted by op
	throughput float64              // successful ops/s, all ops
}

func (r rep) op(name string) (archive.SummaryRow, bool) {
	for _, row := range r.rows {
		if row.Op == name {
			return row, true
		}
	}
	return archive.SummaryRow{}, false
}

func (r rep) sustained() bool {
	return len(r.rows) == 0 || r.rows[0].Sustained == nil || *r.rows[0].Sustained
}

// cell is one system in one measured phase, over its repetitions.
type cell struct {
	system string
	reps   []rep
}

func (d *data) cell(ph phaseRef, system string) cell {
	c := cell{system: system}
	for _, p := range d.m.Phases {
		if p.System != system || p.Index != ph.index {
			continue
		}
		r := rep{info: p}
		for _, row := range d.summary {
			if row.System == system && row.PhaseIndex == ph.index && row.Repetition == p.Repetition {
				r.rows = append(r.rows, row)
			}
		}
		sort.Slice(r.rows, func(i, j int) bool { return r.rows[i].Op < r.rows[j].Op })
		if len(r.rows) > 0 {
			r.throughput = r.rows[0].AchievedRate
		}
		c.reps = append(c.reps, r)
	}
	sort.Slice(c.reps, func(i, j int) bool { return c.reps[i].info.Repetition < c.reps[j].info.Repetition })
	return c
}

// measured is the repetitions that produced numbers.
func (c cell) measured() []rep {
	var out []rep
	for _, r := range c.reps {
		if len(r.rows) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// throughput is the spread of the achieved rate over repetitions.
func (c cell) throughput() archive.Spread {
	var v []float64
	for _, r := range c.measured() {
		v = append(v, r.throughput)
	}
	return archive.SpreadOf(v)
}

// latency is the median over repetitions of a percentile of op; open-loop phases use
// response time, closed-loop ones service time (the same thing there).
func (c cell) latency(op string, pick func(archive.SummaryRow) int64) (int64, bool) {
	var v []float64
	for _, r := range c.measured() {
		if row, ok := r.op(op); ok && row.Count > 0 {
			v = append(v, float64(pick(row)))
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	return int64(archive.SpreadOf(v).Median), true
}

// allOpsQuantile merges every op's histogram of each repetition and returns the
// median over repetitions of quantile q (0-100).
func (c cell) allOpsQuantile(q float64) (int64, bool) {
	var v []float64
	for _, r := range c.measured() {
		h := mergeEncoded(r.rows, func(row archive.SummaryRow) []byte { return row.RespHDR })
		if h != nil && h.TotalCount() > 0 {
			v = append(v, float64(h.ValueAtQuantile(q)))
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	return int64(archive.SpreadOf(v).Median), true
}

func mergeEncoded[T any](rows []T, enc func(T) []byte) *hdrhistogram.Histogram {
	var out *hdrhistogram.Histogram
	for _, r := range rows {
		h, err := core.DecodeHist(enc(r))
		if err != nil || h == nil {
			continue
		}
		if out == nil {
			out = core.NewHistogram()
		}
		out.Merge(h)
	}
	return out
}

// commandCalls reads how many times the server ran op's command from INFO
// commandstats ("calls=N,usec=...,rejected_calls=M"): executed plus rejected, summed
// over a cluster's nodes (keys cmdstat_get@node).
func (d *data) commandCalls(system string, phaseIndex, repetition int, op, point string) (int64, bool) {
	key := "cmdstat_" + strings.ToLower(op)
	var calls int64
	sampled, found := false, false
	var at int64
	for _, s := range d.stats {
		if s.System == system && s.PhaseIndex == phaseIndex && s.Repetition == repetition && s.Point == point {
			sampled = true
			at = max(at, s.TimeUnixNs) // the last sample of that point
		}
	}
	for _, s := range d.stats {
		if s.System != system || s.PhaseIndex != phaseIndex || s.Repetition != repetition || s.Point != point ||
			s.TimeUnixNs != at || s.Section != "commandstats" || s.Key != key && !strings.HasPrefix(s.Key, key+"@") {
			continue
		}
		found = true
		for _, kv := range strings.Split(s.Value, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "calls" || k == "rejected_calls" {
				n, _ := strconv.ParseInt(v, 10, 64)
				calls += n
			}
		}
	}
	if !found && point == "before" && sampled {
		return 0, true // a command never run has no commandstats line yet
	}
	return calls, found
}
