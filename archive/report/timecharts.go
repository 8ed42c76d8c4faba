package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
	"slices"
)

// maxTimelineFields bounds the panels of a phase's server-stats chart.
const maxTimelineFields = 4

// statsTimeline gathers, for the first repetition of each measured phase, the
// fields that each sample taken during the phase names in core.StatTimeline,
// summed over a cluster's nodes. A sample's rows are stored together, so one
// sample at a time is held.
type statsTimeline struct {
	started map[chartKey]time.Time // the phase's start, first repetition
	series  map[chartKey]*fieldSeries

	cur    sampleID
	curSet bool
	values map[string]float64 // the current sample's numbers, by key without a node's suffix
	listed []string           // its core.StatTimeline keys
}

type sampleID struct {
	system     string
	phase, rep int
	point      string
	at         int64
}

// fieldSeries is one system's timeline fields in one phase, in the order the
// samples name them.
type fieldSeries struct {
	order []string
	xy    map[string][]chart.XY // seconds since the phase started, value
}

func (s *statsTimeline) init(m *archive.Manifest) {
	s.started, s.series, s.values = map[chartKey]time.Time{}, map[chartKey]*fieldSeries{}, map[string]float64{}
	for _, p := range m.Phases {
		if p.Kind == core.PhaseMeasured && p.Repetition == 0 {
			s.started[chartKey{p.System, p.Index}] = p.Started
		}
	}
}

func (s *statsTimeline) add(r *archive.ServerStatRow) {
	id := sampleID{r.System, r.PhaseIndex, r.Repetition, r.Point, r.TimeUnixNs}
	if !s.curSet || id != s.cur {
		s.flush()
		s.cur, s.curSet = id, true
	}
	if r.Point != "during" || r.Repetition != 0 {
		return
	}
	if _, ok := s.started[chartKey{r.System, r.PhaseIndex}]; !ok {
		return
	}
	key := r.Key
	if r.Section != "" {
		key = r.Section + "." + r.Key
	}
	key, _, _ = strings.Cut(key, "@") // a cluster node's suffix: summed over the nodes
	if key == core.StatTimeline {
		for _, k := range core.TimelineKeys(r.Value) {
			if !slices.Contains(s.listed, k) {
				s.listed = append(s.listed, k)
			}
		}
		return
	}
	if r.ValueFloat != nil && !math.IsNaN(*r.ValueFloat) && !math.IsInf(*r.ValueFloat, 0) {
		s.values[key] += *r.ValueFloat
	}
}

// flush adds the current sample's timeline fields to its phase's series.
func (s *statsTimeline) flush() {
	defer func() {
		clear(s.values)
		s.listed = s.listed[:0]
	}()
	if len(s.listed) == 0 {
		return
	}
	k := chartKey{s.cur.system, s.cur.phase}
	x := float64(s.cur.at-s.started[k].UnixNano()) / 1e9
	fs := s.series[k]
	for _, f := range s.listed {
		v, ok := s.values[f]
		if !ok {
			continue
		}
		if fs == nil {
			fs = &fieldSeries{xy: map[string][]chart.XY{}}
			s.series[k] = fs
		}
		if _, seen := fs.xy[f]; !seen {
			fs.order = append(fs.order, f)
		}
		fs.xy[f] = append(fs.xy[f], chart.XY{X: x, Y: v})
	}
}

// phaseCharts are a measured phase's charts, in the order report.md lists
// them and report.html shows them: its percentile spectrum, its latency and
// throughput over time and, for a phase long enough to show a course (more
// than one stallWindow), the slowest probe request of each window and the
// server's fields.
func (d *data) phaseCharts(ph phaseRef) []*chart.Chart {
	var out []*chart.Chart
	for _, c := range []*chart.Chart{d.spectrumChart(ph), d.latencyChart(ph), d.rateChart(ph), d.windowChart(ph), d.statsChart(ph)} {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// phaseChart is a chart of a kind over a phase: on the page chart
// <kind>-<index>, in the archive charts/<kind>-<index>-<name>.svg, its
// title the title's start and the phase's name, its x axis the time since
// the phase started.
func phaseChart(kind string, ph ChartPhase, title string) *chart.Chart {
	return &chart.Chart{
		ID:    fmt.Sprintf("%s-%d", kind, ph.Index),
		File:  fmt.Sprintf("%s%s-%d-%s.svg", chartsDir, kind, ph.Index, namePart(ph.Name)),
		Title: title + ph.Name,
		X:     chart.Axis{Label: sinceStart},
	}
}

// sinceStart labels the x axis of a chart over a phase.
const sinceStart = "seconds since the phase started"

// ChartPhase is the phase a chart is drawn of: its position in the suite
// (the page's chart IDs and the archive's chart files carry it), its name, its
// target rate (0: a closed loop) and its side probe's stall threshold.
type ChartPhase struct {
	Index int
	Name  string
	Rate  float64
	Stall time.Duration
}

func (ph phaseRef) chartPhase() ChartPhase {
	return ChartPhase{Index: ph.index, Name: ph.name, Rate: ph.info.Rate, Stall: ph.info.StallThreshold()}
}

// SystemLine is one system's course through a phase as the over-time charts
// draw it, the x values seconds since the phase started: each interval's
// successful ops/s and p99 of every op (response time; the live page adds
// service time and send lag), the side probe's requests drawn, and its stalls.
type SystemLine struct {
	System       string
	Color        int // the system's place in the run
	Rate, P99    []chart.XY
	Service, Lag []chart.XY
	Probe        []chart.XY
	Stalls       []chart.Band
}

// latencyChart is a phase's latency over time (first repetition): per system
// the side probe's fastest and slowest request of each thousandth of the phase
// as points, each interval's p99 as a line, its stalls shaded.
func (d *data) latencyChart(ph phaseRef) *chart.Chart {
	var lines []SystemLine
	for i, sys := range d.systems {
		l := d.lines[chartKey{sys, ph.index}]
		if l == nil {
			continue
		}
		line := SystemLine{System: sys, Color: i, P99: l.p99, Probe: l.points()}
		_, stalls := d.stallsOf(sys, ph.index, 0)
		for _, s := range stalls {
			line.Stalls = append(line.Stalls, stallBand(sys, i, s))
		}
		lines = append(lines, line)
	}
	return LatencyChart(ph.chartPhase(), lines)
}

// LatencyChart is the chart of a phase's latency over time (report.html's and
// the live page's): per system its probe requests as points, each interval's
// p99 as a line (and the service time's and the send lag's, when given), its
// stalls shaded, and the stall threshold where the data reaches it; nil when
// there is nothing to draw.
func LatencyChart(ph ChartPhase, lines []SystemLine) *chart.Chart {
	c := phaseChart("latency", ph, "Latency over time: ")
	c.Y = chart.Axis{Label: "ms (log scale)", Log: true}
	for _, l := range lines {
		if len(l.Probe) > 0 {
			c.Series = append(c.Series, chart.Series{Label: l.System + " probe", Color: l.Color, Dots: chart.SystemDots, Radius: 1.2, XYs: l.Probe})
		}
		if len(l.P99) > 0 {
			c.Series = append(c.Series, chart.Series{Label: l.System + " p99 per interval", Color: l.Color, Line: true, Width: 1.5, XYs: l.P99})
		}
		if len(l.Service) > 0 {
			c.Series = append(c.Series, chart.Series{Label: l.System + " p99 service time", Color: l.Color, Line: true, Dash: 1, Width: 1.2, XYs: l.Service})
		}
		if len(l.Lag) > 0 {
			c.Series = append(c.Series, chart.Series{Label: l.System + " p99 send lag", Color: l.Color, Line: true, Dash: 2, Width: 1, XYs: l.Lag})
		}
		c.Bands = append(c.Bands, l.Stalls...)
	}
	if len(c.Series) == 0 {
		return nil
	}
	if len(c.Bands) > 0 || slices.ContainsFunc(c.Series, func(s chart.Series) bool { return s.Dots != chart.NoDots }) {
		c.Levels = append(c.Levels, chart.Level{Y: float64(ph.Stall) / 1e6, Label: "stall threshold " + threshold(ph.Stall)})
	}
	c.Caption = "Points: the side probe's fastest and slowest request of each thousandth of the phase (one request in flight on its own connection, sent on a fixed schedule, timed from its intended send); lines: each interval's p99 of every op; shaded: stalls, stretches in which the probe waited longer than the threshold (dashed, where the chart reaches it). First repetition."
	return c
}

// rateChart is a phase's throughput over time (first repetition): each
// interval's successful ops/s per system, and a fixed-rate phase's target.
func (d *data) rateChart(ph phaseRef) *chart.Chart {
	var lines []SystemLine
	for i, sys := range d.systems {
		if l := d.lines[chartKey{sys, ph.index}]; l != nil {
			lines = append(lines, SystemLine{System: sys, Color: i, Rate: l.rate})
		}
	}
	return RateChart(ph.chartPhase(), lines)
}

// RateChart is the chart of a phase's throughput over time (report.html's and
// the live page's): each interval's successful ops/s per system (of two
// intervals or more), and a fixed-rate phase's target; nil when there is
// nothing to draw.
func RateChart(ph ChartPhase, lines []SystemLine) *chart.Chart {
	c := phaseChart("rate", ph, "Throughput over time: ")
	c.Y = chart.Axis{Label: "successful ops/s", Format: chart.SI, Zero: true}
	for _, l := range lines {
		if len(l.Rate) > 1 {
			c.Series = append(c.Series, chart.Series{Label: l.System, Color: l.Color, Line: true, Dots: chart.SystemDots, Width: 1.2, Radius: 2, XYs: l.Rate})
		}
	}
	if len(c.Series) == 0 {
		return nil
	}
	c.Caption = "Successful operations per second in each interval, the client's count (errors are never throughput). First repetition."
	if ph.Rate > 0 {
		c.Levels = append(c.Levels, chart.Level{Y: ph.Rate, Label: "target " + thousands(int64(ph.Rate)) + " ops/s", Fit: true})
		c.Caption += " The dashed line is the phase's target rate."
	}
	return c
}

// windowChart is each system's slowest probe request of every stallWindow of
// the phase's first repetition, and the stall threshold.
func (d *data) windowChart(ph phaseRef) *chart.Chart {
	long := false
	for _, sys := range d.systems {
		long = long || len(d.over.windows[chartKey{sys, ph.index}]) > 1
	}
	if !long {
		return nil
	}
	win := threshold(stallWindow)
	c := phaseChart("probe-max", ph.chartPhase(), fmt.Sprintf("Slowest probe request per %s: ", win))
	c.Caption = fmt.Sprintf("Each point: the slowest side-probe request sent in the %s from there (its response time, from its intended send; a failed request counts); the dashed line: the stall threshold. First repetition.", win)
	c.Y = chart.Axis{Label: "response time, ms (log scale)", Log: true}
	var right float64
	for i, sys := range d.systems {
		var pts []chart.XY
		for j, ns := range d.over.windows[chartKey{sys, ph.index}] {
			if ns > 0 {
				pts = append(pts, chart.XY{X: float64(j) * stallWindow.Seconds(), Y: float64(ns) / 1e6})
			}
		}
		if len(pts) > 0 {
			right = max(right, pts[len(pts)-1].X)
			c.Series = append(c.Series, chart.Series{Label: sys, Color: i, Line: true, Dots: chart.SystemDots, Width: 1.2, Radius: 2, XYs: pts})
		}
	}
	if len(c.Series) == 0 {
		return nil
	}
	c.X.From, c.X.To = 0, right+stallWindow.Seconds() // the last window's end
	c.Levels = []chart.Level{{Y: float64(ph.info.StallThreshold()) / 1e6, Label: "stall threshold " + threshold(ph.info.StallThreshold()), Fit: true}}
	return c
}

// statsChart is the server's timeline fields (core.StatTimeline) over the
// phase's first repetition: a panel per field (at most maxTimelineFields), a
// line per system.
func (d *data) statsChart(ph phaseRef) *chart.Chart {
	var fields []string
	long := false
	for _, sys := range d.systems {
		fs := d.over.stats.series[chartKey{sys, ph.index}]
		if fs == nil {
			continue
		}
		for _, f := range fs.order {
			if !slices.Contains(fields, f) && len(fields) < maxTimelineFields {
				fields = append(fields, f)
			}
			long = long || len(fs.xy[f]) > 1
		}
	}
	if !long || d.phaseSeconds(ph) <= stallWindow.Seconds() {
		return nil
	}
	c := phaseChart("server", ph.chartPhase(), "Server stats over time: ")
	c.Caption = "What the server said in the samples taken during the phase, a cluster's nodes summed: a panel per field its adapter names. First repetition."
	c.X.From, c.X.To = 0, d.phaseSeconds(ph)
	for _, f := range fields {
		pn := chart.Panel{Title: core.Printable(f), Y: chart.Axis{Format: chart.SI}} // the adapter's name of the field
		for i, sys := range d.systems {
			if fs := d.over.stats.series[chartKey{sys, ph.index}]; fs != nil && len(fs.xy[f]) > 0 {
				pn.Series = append(pn.Series, chart.Series{Label: sys, Color: i, Line: true, Dots: chart.SystemDots, Width: 1.2, Radius: 1.5, XYs: fs.xy[f]})
			}
		}
		c.Panels = append(c.Panels, pn)
	}
	return c
}

// phaseSeconds is how long the first repetition of a phase ran on the system that
// ran it longest.
func (d *data) phaseSeconds(ph phaseRef) float64 {
	var ns int64
	for _, p := range d.m.Phases {
		if p.Index == ph.index && p.Repetition == 0 {
			ns = max(ns, p.ElapsedNs)
		}
	}
	return float64(ns) / 1e9
}
