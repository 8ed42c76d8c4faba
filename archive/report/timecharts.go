package report

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
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
			if !contains(s.listed, k) {
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// overTimeCharts draws, for a measured phase long enough to show a course (more
// than one stallWindow), the slowest probe request of each window and the
// server's timeline fields over the phase.
func (d *data) overTimeCharts(ph phaseRef) ([]chartFile, error) {
	var out []chartFile
	name := namePart(ph.name)
	if svg, err := d.windowChart(ph); err != nil {
		return nil, err
	} else if svg != nil {
		out = append(out, chartFile{fmt.Sprintf("%sprobe-max-%d-%s.svg", chartsDir, ph.index, name), "Slowest probe request per 10 s: " + ph.name, "", svg})
	}
	if svg, err := d.statsChart(ph); err != nil {
		return nil, err
	} else if svg != nil {
		out = append(out, chartFile{fmt.Sprintf("%sserver-%d-%s.svg", chartsDir, ph.index, name), "Server stats over time: " + ph.name, "", svg})
	}
	return out, nil
}

// windowChart draws each system's slowest probe request of every 10 s window of
// the phase's first repetition, and the stall threshold.
func (d *data) windowChart(ph phaseRef) ([]byte, error) {
	long := false
	for _, sys := range d.systems {
		long = long || len(d.over.windows[chartKey{sys, ph.index}]) > 1
	}
	if !long {
		return nil, nil
	}
	p := newChart(fmt.Sprintf("Slowest side-probe request per %s window: %s (first repetition)\neach point: the slowest probe request sent in the %s from there", threshold(stallWindow), ph.name, threshold(stallWindow)),
		"seconds since the phase started", "response time, ms (log scale)")
	latencyAxis(p)
	var highest, lowest, right float64
	lowest = math.Inf(1)
	for i, sys := range d.systems {
		var pts plotter.XYs
		for j, ns := range d.over.windows[chartKey{sys, ph.index}] {
			if ns > 0 {
				pts = append(pts, plotter.XY{X: float64(j) * stallWindow.Seconds(), Y: float64(ns) / 1e6})
			}
		}
		if len(pts) == 0 {
			continue
		}
		for _, xy := range pts {
			highest, lowest, right = max(highest, xy.Y), min(lowest, xy.Y), max(right, xy.X)
		}
		if err := addLinePoints(p, sys, pts, systemStyle(i, vg.Points(2))); err != nil {
			return nil, err
		}
	}
	thr := float64(ph.info.StallThreshold()) / 1e6
	dashed := style{color: plotutil.DarkColors[len(plotutil.DarkColors)-1], dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	if err := addLine(p, "stall threshold "+threshold(ph.info.StallThreshold()), plotter.XYs{{X: 0, Y: thr}, {X: right + stallWindow.Seconds(), Y: thr}}, dashed); err != nil {
		return nil, err
	}
	p.Y.Min = min(lowest, thr) / 2
	p.Y.Max = logHeadroom(max(highest, thr))
	return render(p)
}

// statsChart draws the server's timeline fields (core.StatTimeline) over the
// phase's first repetition: one panel per field, a line per system.
func (d *data) statsChart(ph phaseRef) ([]byte, error) {
	var fields []string
	long := false
	for _, sys := range d.systems {
		fs := d.over.stats.series[chartKey{sys, ph.index}]
		if fs == nil {
			continue
		}
		for _, f := range fs.order {
			if !contains(fields, f) && len(fields) < maxTimelineFields {
				fields = append(fields, f)
			}
			long = long || len(fs.xy[f]) > 1
		}
	}
	if !long || d.phaseSeconds(ph) <= stallWindow.Seconds() {
		return nil, nil
	}
	plots := make([][]*plot.Plot, len(fields))
	for j, f := range fields {
		p := plot.New()
		p.Title.Text = core.Printable(f) // the adapter's name of the field
		if j == 0 {
			p.Title.Text = fmt.Sprintf("Server stats over time: %s (first repetition)\nsamples taken during the phase, a cluster's nodes summed\n%s", ph.name, p.Title.Text)
		}
		if j == len(fields)-1 {
			p.X.Label.Text = "seconds since the phase started"
		}
		p.X.Min, p.X.Max = 0, d.phaseSeconds(ph)
		p.Y.Tick.Marker = siTicks{}
		var lo, hi float64 = math.Inf(1), math.Inf(-1)
		for i, sys := range d.systems {
			fs := d.over.stats.series[chartKey{sys, ph.index}]
			if fs == nil || len(fs.xy[f]) == 0 {
				continue
			}
			if err := addLinePoints(p, sys, plotXYs(fs.xy[f]), systemStyle(i, vg.Points(1.5))); err != nil {
				return nil, err
			}
			for _, xy := range fs.xy[f] {
				lo, hi = min(lo, xy.Y), max(hi, xy.Y)
			}
		}
		span := max(hi-lo, math.Abs(hi)*0.01, 1)
		p.Y.Min, p.Y.Max = lo-span*0.05, hi+span*0.08
		plots[j] = []*plot.Plot{p}
	}
	w, h := chartWidth, vg.Length(len(fields))*2.4*vg.Inch+0.3*vg.Inch
	c, err := draw.NewFormattedCanvas(w, h, "svg")
	if err != nil {
		return nil, err
	}
	// One legend for the panels, at their right.
	leg, err := d.systemsLegend(func(sys string) bool { return d.over.stats.series[chartKey{sys, ph.index}] != nil })
	if err != nil {
		return nil, err
	}
	area, band, ok := layout(draw.New(c), plots[0][0], leg)
	canvases := plot.Align(plots, draw.Tiles{Rows: len(fields), Cols: 1, PadX: vg.Points(4), PadY: vg.Points(10)}, area)
	for j := range plots {
		plots[j][0].Legend = plot.NewLegend() // the panels share leg
		plots[j][0].Draw(canvases[j][0])
	}
	if ok {
		leg.Top, leg.Left = true, true
		leg.Draw(band)
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// systemsLegend is a legend of the systems that drew, each as its lines and
// points look.
func (d *data) systemsLegend(drew func(system string) bool) (plot.Legend, error) {
	leg := plot.NewLegend()
	for i, sys := range d.systems {
		if !drew(sys) {
			continue
		}
		l, sc, err := plotter.NewLinePoints(plotter.XYs{{}})
		if err != nil {
			return leg, err
		}
		st := systemStyle(i, vg.Points(1.5))
		st.setLine(&l.LineStyle)
		st.setPoints(&sc.GlyphStyle)
		leg.Add(sys, l, sc)
	}
	return leg, nil
}

// siTicks labels large values with SI prefixes: 2.8M rather than 2800000.
type siTicks struct{}

func (siTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label == "" {
			continue
		}
		v, unit := t.Value, ""
		for _, u := range []struct {
			f float64
			s string
		}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
			if math.Abs(t.Value) >= u.f {
				v, unit = t.Value/u.f, u.s
				break
			}
		}
		ticks[i].Label = strconv.FormatFloat(v, 'g', 4, 64) + unit
	}
	return ticks
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
