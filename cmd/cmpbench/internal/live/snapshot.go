package live

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// maxPoints bounds the points of a series the page is sent: a phase of hours
// is drawn from its intervals taken together.
const maxPoints = 1200

// snapshot is the run as the page shows it, sent whole with every change.
type snapshot struct {
	Run    runView         `json:"run"`
	Phases []phaseView     `json:"phases"`
	Of     string          `json:"charts_of"` // the phase the charts draw
	Charts json.RawMessage `json:"charts"`    // their specs, as report.html's
	// Captions are the charts' captions, in their order.
	Captions []string `json:"captions"`
	Notes    []string `json:"notes"`
}

type runView struct {
	ID      string `json:"id"`
	Suite   string `json:"suite"`
	State   string `json:"state"`
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Elapsed string `json:"elapsed"`
	ETA     string `json:"eta,omitempty"`
	CPU     string `json:"cpu,omitempty"`
	Report  string `json:"report,omitempty"`
}

type phaseView struct {
	Key    string   `json:"key"` // system/index/repetition
	System string   `json:"system"`
	Phase  string   `json:"phase"`
	Kind   string   `json:"kind"`
	Shape  string   `json:"shape"`
	State  string   `json:"state"`
	OK     int64    `json:"ok"` // successful operations so far, every op
	Errors int64    `json:"errors"`
	Rate   float64  `json:"rate"`             // the last interval's successful ops/s; the phase's once it ended
	P99    []string `json:"p99,omitempty"`    // per op, the phase's so far (repetitions pooled)
	Flags  []string `json:"flags,omitempty"`  // client-lagged, NS and the like
	Stalls int      `json:"stalls,omitempty"` // of the side probe
	Error  string   `json:"error,omitempty"`
}

// snapshotJSON is the snapshot as the page is sent it, made once per change;
// with it the channel that says the next change, and whether the run ended.
func (l *Live) snapshotJSON() ([]byte, uint64, <-chan struct{}, bool) {
	l.mu.Lock()
	etaOf := l.o.ETA
	l.mu.Unlock()
	eta := ""
	if etaOf != nil {
		eta = etaOf() // the progress display's own lock: never under ours
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ended := l.state != stateRunning
	if l.cached != nil && l.cachedAt == l.version {
		return l.cached, l.version, l.changed, ended
	}
	b, err := json.Marshal(l.snapshot(eta))
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	l.cached, l.cachedAt = b, l.version
	return b, l.version, l.changed, ended
}

// snapshot is the run's state now (lock held).
func (l *Live) snapshot(eta string) snapshot {
	s := snapshot{Run: runView{ID: l.o.RunID, Suite: l.o.Suite, State: l.state, Done: l.done, Total: len(l.steps),
		Elapsed: l.now().Sub(l.started).Round(time.Second).String(), Report: l.report, CPU: l.cpuText()}, Notes: slices.Clone(l.notes)}
	if l.state == stateRunning {
		s.Run.ETA = l.red.String(eta)
	}
	for _, st := range l.steps {
		s.Phases = append(s.Phases, l.phaseView(st))
	}
	s.Charts = []byte("[]")
	if c := l.cur; c != nil {
		s.Of = l.red.String(c.step.System + " " + c.step.Spec.Name)
		charts := l.charts(c)
		if b, err := chart.JSON(charts); err == nil {
			s.Charts = b
			for _, c := range charts {
				s.Captions = append(s.Captions, c.Caption)
			}
		}
	}
	return s
}

func (l *Live) cpuText() string {
	var parts []string
	for _, name := range []string{"cmpbench", "plugin"} {
		if c, ok := l.cores(name); ok {
			parts = append(parts, fmt.Sprintf("%s %.2f cores", name, c))
		}
	}
	return strings.Join(parts, ", ")
}

func (l *Live) phaseView(s *stepState) phaseView {
	v := phaseView{Key: fmt.Sprintf("%s/%d/%d", s.step.System, s.step.Index, s.step.Repetition), System: s.step.System, Phase: s.step.Spec.Name,
		Kind: string(s.step.Spec.Kind), Shape: plan.Shape(s.step.Spec), State: s.state, Rate: s.lastRate, Flags: s.soFar(), Error: s.err}
	for _, c := range s.counts {
		v.OK += c.OK
		v.Errors += c.ErrorTotal()
	}
	if s.stalls != nil {
		v.Stalls = len(s.stalls.Bands("", 0))
	}
	if p := l.pools[poolKey{s.step.System, s.step.Index}]; p != nil && s.state != statePending {
		for _, op := range p.ops {
			if op != nil && op.hists[kindResponse] != nil && op.hists[kindResponse].TotalCount() > 0 {
				v.P99 = append(v.P99, fmt.Sprintf("%s %.3f ms", op.counts.Op, ms(op.hists[kindResponse].ValueAtPercentile(99))))
			}
		}
	}
	for _, t := range []*string{&v.Key, &v.System, &v.Phase, &v.Shape, &v.Error} {
		*t = core.Printable(l.red.String(*t))
	}
	return v
}

// charts are the charts of the phase s, as report.html draws a measured
// phase's: its percentile spectrum (repetitions pooled), its latency and
// throughput over time (this repetition).
func (l *Live) charts(s *stepState) []*chart.Chart {
	spec := s.step.Spec
	stall := core.DefaultStallThreshold
	if spec.Probe != nil {
		stall = spec.Probe.StallThreshold()
	}
	ph := report.ChartPhase{Index: s.step.Index, Name: spec.Name, Rate: spec.Rate, Stall: stall}
	line := report.SystemLine{System: s.step.System, Color: s.color, Rate: thin(s.rate, false), P99: thin(s.p99, true), Probe: thin(s.probe, true)}
	if spec.OpenLoop() {
		line.Service, line.Lag = thin(s.svc, true), thin(s.lag, true)
	}
	if s.stalls != nil {
		line.Stalls = s.stalls.Bands(s.step.System, s.color)
	}
	var spectrum []report.SpectrumLine
	if p := l.pools[poolKey{s.step.System, s.step.Index}]; p != nil {
		for _, op := range p.ops {
			if op == nil {
				continue
			}
			if !spec.OpenLoop() {
				spectrum = append(spectrum, report.SpectrumLine{System: s.step.System, Op: op.counts.Op.String(), Color: s.color, Hist: quantiles(op.hists[kindResponse])})
				continue
			}
			spectrum = append(spectrum,
				report.SpectrumLine{System: s.step.System, Op: op.counts.Op.String(), Kind: " response", Color: s.color, Hist: quantiles(op.hists[kindResponse])},
				report.SpectrumLine{System: s.step.System, Op: op.counts.Op.String(), Kind: " service", Color: s.color, Hist: quantiles(op.hists[kindService])})
		}
	}
	var out []*chart.Chart
	for _, c := range []*chart.Chart{report.SpectrumChart(ph, spectrum), report.LatencyChart(ph, []report.SystemLine{line}), report.RateChart(ph, []report.SystemLine{line})} {
		if c != nil {
			c.Title = l.red.String(c.Title)
			out = append(out, c)
		}
	}
	return out
}

// quantiles is h, or nil (not a nil pointer in an interface) when there is none.
func quantiles(h *hdrhistogram.PackedHistogram) report.Quantiles {
	if h == nil {
		return nil
	}
	return h
}

// thin is at most maxPoints of points: consecutive points taken together, at
// their last x, their largest y (a latency: no spike is lost) or their mean (a
// rate).
func thin(points []chart.XY, largest bool) []chart.XY {
	if len(points) <= maxPoints {
		return points
	}
	k := (len(points) + maxPoints - 1) / maxPoints
	out := make([]chart.XY, 0, maxPoints)
	for i := 0; i < len(points); i += k {
		group := points[i:min(i+k, len(points))]
		y := 0.0
		for _, p := range group {
			if largest {
				y = max(y, p.Y)
			} else {
				y += p.Y / float64(len(group))
			}
		}
		out = append(out, chart.XY{X: group[len(group)-1].X, Y: y})
	}
	return out
}
