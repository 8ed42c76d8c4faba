package live

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// The latencies kept of every op: response time (from the intended send),
// service time (from the actual send) and send lag (fixed rate only).
const (
	kindResponse = iota
	kindService
	kindLag
	numKinds
)

// Phase states besides a phase's status once it ended (core.PhaseStatus).
const (
	statePending = "pending"
	stateRunning = "running"
)

type stepKey struct {
	system            string
	index, repetition int
}

func keyOf(st plan.Step) stepKey { return stepKey{st.System, st.Index, st.Repetition} }

type poolKey struct {
	system string
	index  int
}

// stepState is one phase of one system (one repetition) as its intervals told.
type stepState struct {
	step  plan.Step
	pos   int    // its place in the run
	color int    // its system's place in the run
	label string // its phase's name in the metrics (unique in the run)
	state string // pending, running, or its status once it ended
	// anchor is when the phase clock started, by the host's clock: the first
	// interval's arrival less its end.
	anchor time.Time
	at     time.Duration // the phase time its intervals cover
	counts [core.NumOpKinds]core.OpInterval
	seen   [core.NumOpKinds]bool
	// lastRate is the last interval's successful ops/s, and the phase's own once
	// it ended.
	lastRate            float64
	rate, p99, svc, lag []chart.XY
	probe               []chart.XY // each interval's fastest and slowest probe request
	stalls              *report.StallFinder
	flags               []string // raised when it ended
	err                 string
}

// pool is what the metrics and the percentile spectrum read of one phase of
// one system: its repetitions pooled, as the report pools them.
type pool struct {
	system, phase string // their labels
	target        float64
	ops           [core.NumOpKinds]*opPool
	// at is the end of the latest interval, by the host's clock; running says
	// that the phase is under way (its samples carry that time).
	at       time.Time
	running  bool
	endedAt  time.Time // when the latest repetition ended
	achieved float64
	// open is how many connections the latest interval of the latest
	// repetition said its engine held, and 0 once it ended; known says it
	// said (a plugin built before engine.conns does not, nor does a phase
	// before its first interval). opened and lost add up over the intervals
	// and repetitions that said; counted says one did.
	open         int
	known        bool
	opened, lost int64
	counted      bool
}

type opPool struct {
	counts core.OpInterval
	hists  [numKinds]*hdrhistogram.PackedHistogram
}

func newPacked() *hdrhistogram.PackedHistogram {
	return hdrhistogram.NewPacked(core.HistMin, core.HistMax, core.HistDigits)
}

// add merges one op's interval into the pool, and its latencies into merged
// (the interval's, every op together).
func (p *pool) add(o *core.OpInterval, open bool, merged *[numKinds]*hdrhistogram.PackedHistogram) error {
	op := p.ops[o.Op]
	if op == nil {
		op = &opPool{counts: core.OpInterval{Op: o.Op}}
		p.ops[o.Op] = op
	}
	op.counts.AddCounts(o)
	encoded := [numKinds][]byte{o.Response.HDR, o.Service.HDR, o.Lag.HDR}
	if !open {
		// A closed loop's response time is its service time, sent twice.
		encoded[kindService], encoded[kindLag] = o.Response.HDR, nil
	}
	for k, b := range encoded {
		if len(b) == 0 {
			continue
		}
		h, err := hdrhistogram.DecodePacked(b)
		if err != nil {
			return fmt.Errorf("%s %s: %w", o.Op, kindNames[k], err)
		}
		if op.hists[k] == nil {
			op.hists[k] = newPacked()
		}
		op.hists[k].Merge(h)
		if merged[k] == nil {
			merged[k] = newPacked()
		}
		merged[k].Merge(h)
	}
	return nil
}

var kindNames = [numKinds]string{"response time", "service time", "send lag"}

// addInterval follows the phase through one interval: its counts, and the
// points its charts draw. merged holds the interval's latencies, every op
// together.
func (s *stepState) addInterval(r *core.IntervalReport, merged [numKinds]*hdrhistogram.PackedHistogram) {
	s.at = r.End
	var ok int64
	for i := range r.Ops {
		o := &r.Ops[i]
		if o.Op >= core.NumOpKinds {
			continue
		}
		s.counts[o.Op].Op = o.Op
		s.counts[o.Op].AddCounts(o)
		s.seen[o.Op] = true
		if o.Op.Issued() {
			ok += o.OK
		}
	}
	s.addProbe(r.Probe)
	span := r.End - r.Start
	interval := s.step.Spec.Interval
	if interval <= 0 {
		interval = core.DefaultInterval
	}
	if span <= 0 || span < interval/2 {
		return // the phase's short last interval: too few requests for a rate or a p99
	}
	x := r.End.Seconds()
	s.lastRate = float64(ok) / span.Seconds()
	s.rate = append(s.rate, chart.XY{X: x, Y: s.lastRate})
	for k, into := range []*[]chart.XY{&s.p99, &s.svc, &s.lag} {
		if h := merged[k]; h != nil && h.TotalCount() > 0 {
			*into = append(*into, chart.XY{X: x, Y: ms(h.ValueAtPercentile(99))})
		}
	}
}

// addProbe keeps the interval's fastest and slowest probe request that was
// answered, and finds the stalls among all of them.
func (s *stepState) addProbe(recs []core.ProbeRecord) {
	var fast, slow *core.ProbeRecord
	for i := range recs {
		r := &recs[i]
		s.stalls.Add(r.Intended, r.End, r.Outcome == core.OutcomeError)
		if r.Outcome == core.OutcomeError {
			continue
		}
		if fast == nil || r.End-r.Intended < fast.End-fast.Intended {
			fast = r
		}
		if slow == nil || r.End-r.Intended > slow.End-slow.Intended {
			slow = r
		}
	}
	for _, r := range []*core.ProbeRecord{fast, slow} {
		if r != nil && (r != slow || slow != fast) {
			s.probe = append(s.probe, chart.XY{X: r.Intended.Seconds(), Y: ms(int64(max(r.End-r.Intended, 1)))})
		}
	}
}

// ended keeps how the phase ended, and the flags raised.
func (s *stepState) ended(r *core.PhaseRun) {
	s.state = string(r.End.Status)
	s.err = r.End.Error
	achieved, sustained := core.Sustained(r)
	if r.End.Elapsed > 0 {
		s.lastRate = achieved
	}
	s.flags = nil
	add := func(on bool, flag string) {
		if on {
			s.flags = append(s.flags, flag)
		}
	}
	add(r.Spec.Rate > 0 && !sustained && r.End.Status == core.StatusOK, "NS")
	add(r.ClientLagged, "client-lagged")
	add(r.ClientBound, "client-bound")
	add(r.Host != nil && r.Host.Saturated, "host-saturated")
	add(r.Unsteady != "", "unsteady")
	add(r.End.Stalled > 0, "client-stalled")
}

// soFar are the flags a running phase has raised so far: its target not kept
// up with, its client's send lag.
func (s *stepState) soFar() []string {
	if s.state != stateRunning {
		return s.flags
	}
	var out []string
	if spec := s.step.Spec; spec.Rate > 0 && s.at > 0 && s.issued() < int64(core.SustainedFraction*spec.Rate*s.at.Seconds()) {
		out = append(out, "NS so far")
	}
	return out
}

// issued counts the operations sent so far: successes and errors.
func (s *stepState) issued() int64 {
	var n int64
	for _, c := range s.counts {
		if c.Op.Issued() {
			n += c.OK + c.ErrorTotal()
		}
	}
	return n
}

func ms(ns int64) float64 { return float64(max(ns, core.HistMin)) / 1e6 }
