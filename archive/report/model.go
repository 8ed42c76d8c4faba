package report

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core"
)

// data is what a report is drawn from, read from the archive once. The big tables
// (intervals, probe requests, server stats) are reduced as they stream past, so
// that a report of any run is drawn with bounded memory.
type data struct {
	// parts are the methods' sections, once made (methodParts).
	parts       *[]section.Part
	m           archive.Manifest
	summary     []archive.SummaryRow
	validations []core.Validation
	measured    []phaseRef // measured phases in suite order
	systems     []string   // in run order

	// probeRequests counts the side probe's requests per phase, repetition and op.
	probeRequests map[probeKey]int64
	// lines are what the latency-over-time charts draw, per system and measured
	// phase (first repetition).
	lines map[chartKey]*timeLine
	// cmdstats are the commandstats counters of the samples just before and after
	// each phase; last is the time of the last sample of each point.
	cmdstats []archive.ServerStatRow
	last     map[pointKey]int64
	// identity are the samples' cmpbench.* keys (core.StatInstance, StatUptime):
	// what tells whether the server restarted between two samples.
	identity []archive.ServerStatRow
	// captureCaveats is, per system, what its capture says its adapter cannot
	// tell (core.CaptureCaveats).
	captureCaveats map[string]string
	// callsSource is, per system, where its adapter's request counts come from
	// (core.StatCallsSource).
	callsSource map[string]string
	// conns sums core.StatConnections over a system's nodes per sample taken
	// during a phase; serverConns is its largest.
	conns map[connSample]int64
	// over is what the stalls and the over-time charts are drawn from.
	over *overTime
	// facts are what each system's adapter read of its captures, which the
	// fairness audit compares (nil: unknown).
	systemFacts map[string]*core.Facts
}

type connSample struct {
	system     string
	phase, rep int
	at         int64
}

// phaseRef names one phase of the suite.
type phaseRef struct {
	index int
	name  string
	info  archive.PhaseInfo // of its first repetition on the first system that ran it
}

type probeKey struct {
	system     string
	phase, rep int
	op         string
}

type chartKey struct {
	system string
	phase  int
}

type pointKey struct {
	system     string
	phase, rep int
	point      string
}

// probeBuckets is how many slices of a phase the latency-over-time chart draws
// the side probe in: each slice's fastest and slowest request, which keeps every
// stall visible in a chart of bounded size.
const probeBuckets = 1000

// timeLine is one system's latency over time in one phase.
type timeLine struct {
	width    int64        // ns of the phase per bucket
	fast     []probePoint // per bucket, the fastest and slowest probe request
	slow     []probePoint
	p99      []chart.XY // per interval: p99 of every op, ms
	rate     []chart.XY // per interval: successful ops/s the client sent
	pending  []archive.IntervalRow
	interval int // the interval of pending
}

type probePoint struct {
	at, ns int64
	set    bool
}

func load(a *archive.Archive) (*data, error) {
	d := &data{m: a.Manifest, summary: a.Summary, probeRequests: map[probeKey]int64{}, lines: map[chartKey]*timeLine{}, last: map[pointKey]int64{}, conns: map[connSample]int64{}, callsSource: map[string]string{}}
	var err error
	if d.validations, err = a.Validations(); err != nil {
		return nil, err
	}
	// What an adapter's capture says it cannot tell (resp's caveats.txt: a
	// profile whose UPDATE cannot see a missing record).
	d.captureCaveats = map[string]string{}
	for _, s := range d.m.Systems {
		if slices.Contains(s.Files, core.CaptureCaveats+".txt") {
			b, err := a.ReadFile(archive.SystemsDir + "/" + s.Name + "/" + core.CaptureCaveats + ".txt")
			if err != nil {
				return nil, err
			}
			d.captureCaveats[s.Name] = strings.TrimSpace(string(b))
		}
	}
	if d.systemFacts, err = readFacts(a); err != nil {
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
	for _, p := range d.m.Phases {
		if p.Kind == core.PhaseMeasured && p.Repetition == 0 {
			d.lines[chartKey{p.System, p.Index}] = &timeLine{width: max(p.ElapsedNs/probeBuckets, int64(time.Millisecond)), interval: -1}
		}
	}
	d.over = newOverTime(&d.m)
	if err := a.EachProbe(d.addProbe); err != nil {
		return nil, err
	}
	if err := a.EachInterval(d.addInterval); err != nil {
		return nil, err
	}
	for k, l := range d.lines {
		l.flush(d.intervalNs(k))
	}
	if err := a.EachServerStat(d.addStat); err != nil {
		return nil, err
	}
	d.over.stats.flush()
	return d, nil
}

func (d *data) addProbe(r *archive.ProbeRow) error {
	d.probeRequests[probeKey{r.System, r.PhaseIndex, r.Repetition, r.Op}]++
	d.over.addProbe(r)
	l := d.lines[chartKey{r.System, r.PhaseIndex}]
	if l == nil || r.Repetition != 0 || (r.Outcome != "hit" && r.Outcome != "ok" && r.Outcome != "miss") {
		return nil
	}
	b := int(min(r.IntendedNs/l.width, probeBuckets-1))
	if b < 0 {
		return nil
	}
	if len(l.fast) == 0 {
		l.fast, l.slow = make([]probePoint, probeBuckets), make([]probePoint, probeBuckets)
	}
	p := probePoint{r.IntendedNs, max(r.ResponseNs, 1), true}
	if f := &l.fast[b]; !f.set || p.ns < f.ns {
		*f = p
	}
	if s := &l.slow[b]; !s.set || p.ns > s.ns {
		*s = p
	}
	return nil
}

// addInterval gathers the rows of one interval (they are stored together) and
// draws the p99 of all its ops when the next interval begins.
func (d *data) addInterval(r *archive.IntervalRow) error {
	k := chartKey{r.System, r.PhaseIndex}
	l := d.lines[k]
	if l == nil || r.Repetition != 0 {
		return nil
	}
	if r.Interval != l.interval {
		l.flush(d.intervalNs(k))
		l.interval = r.Interval
	}
	row := *r
	row.SvcHDR, row.LagHDR = nil, nil
	l.pending = append(l.pending, row)
	return nil
}

func (d *data) intervalNs(k chartKey) int64 {
	for _, p := range d.m.Phases {
		if p.System == k.system && p.Index == k.phase && p.Repetition == 0 {
			return p.IntervalNs
		}
	}
	return 0
}

func (l *timeLine) flush(intervalNs int64) {
	rows := l.pending
	l.pending = l.pending[:0]
	if len(rows) == 0 {
		return
	}
	if intervalNs > 0 && rows[0].EndNs-rows[0].StartNs < intervalNs/2 {
		return // the phase's short last interval: too few requests for a p99
	}
	end := float64(rows[0].EndNs) / 1e9
	var ok int64
	for _, r := range rows {
		if op, err := core.ParseOpKind(r.Op); err == nil && op.Issued() {
			ok += r.Count
		}
	}
	if span := rows[0].EndNs - rows[0].StartNs; span > 0 {
		l.rate = append(l.rate, chart.XY{X: end, Y: float64(ok) * 1e9 / float64(span)})
	}
	h := mergeEncoded(rows, func(r archive.IntervalRow) []byte { return r.RespHDR })
	if h == nil || h.TotalCount() == 0 {
		return
	}
	l.p99 = append(l.p99, chart.XY{X: end, Y: float64(max(h.ValueAtQuantile(99), core.HistMin)) / 1e6})
}

// points are the probe requests the chart draws, in time order.
func (l *timeLine) points() []chart.XY {
	var out []chart.XY
	for b := range l.fast {
		f, s := l.fast[b], l.slow[b]
		if !f.set {
			continue
		}
		first, second := f, s
		if s.at < f.at {
			first, second = s, f
		}
		out = append(out, chart.XY{X: float64(first.at) / 1e9, Y: float64(first.ns) / 1e6})
		if second != first {
			out = append(out, chart.XY{X: float64(second.at) / 1e9, Y: float64(second.ns) / 1e6})
		}
	}
	return out
}

func (d *data) addStat(r *archive.ServerStatRow) error {
	d.over.stats.add(r)
	if r.Section == "cmpbench" && r.Point == "during" &&
		(r.Key == "connections" || strings.HasPrefix(r.Key, "connections@")) {
		n, _ := strconv.ParseInt(r.Value, 10, 64)
		d.conns[connSample{r.System, r.PhaseIndex, r.Repetition, r.TimeUnixNs}] += n
	}
	if r.Point != "before" && r.Point != "after" {
		return nil
	}
	k := pointKey{r.System, r.PhaseIndex, r.Repetition, r.Point}
	d.last[k] = max(d.last[k], r.TimeUnixNs)
	switch r.Section {
	case "commandstats":
		d.cmdstats = append(d.cmdstats, *r)
	case "cmpbench":
		d.identity = append(d.identity, *r)
		if r.Key == strings.TrimPrefix(core.StatCallsSource, "cmpbench.") {
			d.callsSource[r.System] = r.Value
		}
	}
	return nil
}

// serverCalls is, per group of op kinds ("GET+READ"), the requests the system's
// nodes counted (core.StatCalls, summed over nodes) in the sample taken at point
// of a phase.
func (d *data) serverCalls(system string, phase, rep int, point string) map[string]int64 {
	at, ok := d.last[pointKey{system, phase, rep, point}]
	if !ok {
		return nil
	}
	prefix := strings.TrimPrefix(core.StatCalls, "cmpbench.")
	out := map[string]int64{}
	for _, s := range d.identity {
		if s.System != system || s.PhaseIndex != phase || s.Repetition != rep || s.Point != point || s.TimeUnixNs != at {
			continue
		}
		group, ok := strings.CutPrefix(s.Key, prefix)
		if !ok {
			continue
		}
		group, _, _ = strings.Cut(group, "@")
		n, err := strconv.ParseInt(s.Value, 10, 64)
		if err == nil {
			out[group] += n
		}
	}
	return out
}

// serverConns is the most client connections the system's server had open, over
// its nodes, in the samples taken during a phase; false when the adapter does not
// tell (core.StatConnections) or no sample was taken while the phase ran.
func (d *data) serverConns(system string, phase, rep int) (int64, bool) {
	var most int64
	found := false
	for k, n := range d.conns {
		if k.system == system && k.phase == phase && k.rep == rep {
			most, found = max(most, n), true
		}
	}
	return most, found
}

// restarted says which nodes of system restarted between the samples taken just
// before and just after a phase, or "" when none did or the samples do not tell.
func (d *data) restarted(system string, phaseIndex, repetition int) string {
	sample := func(point string) core.StatsSample {
		at := d.last[pointKey{system, phaseIndex, repetition, point}]
		m := map[string]string{}
		for _, s := range d.identity {
			if s.System == system && s.PhaseIndex == phaseIndex && s.Repetition == repetition && s.Point == point && s.TimeUnixNs == at {
				m[s.Section+"."+s.Key] = s.Value
			}
		}
		return core.StatsSample{At: time.Unix(0, at), Stats: m}
	}
	return core.Restarted(sample("before"), sample("after"))
}

// rep is one repetition of one phase on one system.
type rep struct {
	info       archive.PhaseInfo
	rows       []archive.SummaryRow // one per op, sorted by op
	throughput float64              // successful ops/s, all ops
}

// section is the repetition as a method's section sees it, whose rules the
// report's tables follow too.
func (r rep) section() section.Rep {
	return section.Rep{Info: r.info, Rows: r.rows, Throughput: r.throughput}
}

func (r rep) op(name string) (archive.SummaryRow, bool) { return r.section().Op(name) }

func (r rep) sustained() bool { return r.section().Sustained() }

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
	return section.MergeHistograms(rows, enc)
}

// commandCalls reads how many times the server ran op's command from INFO
// commandstats ("calls=N,usec=...,rejected_calls=M"): executed plus rejected, summed
// over a cluster's nodes (keys cmdstat_get@node).
func (d *data) commandCalls(system string, phaseIndex, repetition int, op, point string) (int64, bool) {
	key := "cmdstat_" + strings.ToLower(op)
	at, sampled := d.last[pointKey{system, phaseIndex, repetition, point}]
	var calls int64
	found := false
	for _, s := range d.cmdstats {
		if s.System != system || s.PhaseIndex != phaseIndex || s.Repetition != repetition || s.Point != point ||
			s.TimeUnixNs != at || s.Key != key && !strings.HasPrefix(s.Key, key+"@") {
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
