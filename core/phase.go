package core

import (
	"fmt"
	"time"
)

// PhaseKind says what a phase is for; only measured phases appear in result tables.
type PhaseKind string

// Phase kinds.
const (
	PhaseLoad     PhaseKind = "load"     // write the data set; any error fails the phase
	PhaseWarmup   PhaseKind = "warmup"   // run the workload, keep the numbers, do not report them
	PhaseMeasured PhaseKind = "measured" // the numbers in the report
)

// PhaseSpec is one phase as the engine runs it. It crosses the plugin boundary.
type PhaseSpec struct {
	Name        string
	Kind        PhaseKind
	Connections int
	// Rate is the total target rate in ops/s across all connections; 0 means closed loop.
	Rate float64
	// Poisson spaces open-loop sends with exponential gaps instead of fixed ones.
	Poisson bool
	// Duration bounds the phase in time; every phase has one.
	Duration time.Duration
	// Ops bounds the phase in operations across all connections; 0 means no count bound.
	Ops int64
	// Interval is the reporting interval (default 1 s).
	Interval time.Duration
	Seed     uint64
	Workload WorkloadSpec
	// Probe, when set, adds one more open-loop connection that records every request.
	Probe *ProbeSpec
}

// ProbeSpec is the side probe: a low-rate open-loop connection of its own whose every
// request is kept, for the latency-over-time picture.
type ProbeSpec struct {
	Rate float64 // requests/s
	Op   OpKind  // GET of loaded keys by default
	// Stall is the response time above which a probe request counts as a stall in
	// the report (DefaultStallThreshold when 0). The host keeps it; the plugin,
	// which only sends and records, never sees it.
	Stall time.Duration
}

// DefaultStallThreshold is the probe response time above which the report counts a
// stall when a suite sets none, as the seeds count "stalls > 1 s".
const DefaultStallThreshold = time.Second

// StallThreshold is the probe's stall threshold, DefaultStallThreshold unless set.
func (p ProbeSpec) StallThreshold() time.Duration {
	if p.Stall > 0 {
		return p.Stall
	}
	return DefaultStallThreshold
}

// DefaultInterval is the reporting interval when a phase sets none.
const DefaultInterval = time.Second

// DefaultProbeRate is the side probe's rate when a suite does not set one.
const DefaultProbeRate = 200

// OpenLoop reports whether the phase sends at a fixed rate.
func (p PhaseSpec) OpenLoop() bool { return p.Rate > 0 }

// Writes reports whether the phase changes data: its workload or its side probe
// writes.
func (p PhaseSpec) Writes() bool {
	if p.Probe != nil && !p.Probe.Op.IsRead() {
		return true
	}
	for _, k := range p.Workload.OpKinds() {
		if !k.IsRead() {
			return true
		}
	}
	return false
}

// Validate reports every problem with the phase at once.
func (p PhaseSpec) Validate() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch p.Kind {
	case PhaseLoad, PhaseWarmup, PhaseMeasured:
	default:
		add("kind %q is not one of load, warmup, measured", p.Kind)
	}
	if p.Connections < 1 {
		add("connections must be at least 1, got %d", p.Connections)
	}
	if p.Rate < 0 {
		add("rate must not be negative, got %g", p.Rate)
	}
	if p.Duration <= 0 {
		add("duration must be positive: every phase is bounded in time")
	}
	if p.Ops < 0 {
		add("ops must not be negative, got %d", p.Ops)
	}
	if p.Kind == PhaseLoad && p.Ops == 0 {
		add("a load phase needs an op count")
	}
	if p.Interval < 0 {
		add("interval must not be negative")
	}
	if pr := p.Probe; pr != nil {
		if pr.Rate <= 0 || pr.Rate > 100_000 {
			add("probe rate %g must be in (0, 100000] requests/s", pr.Rate)
		}
		if pr.Op >= NumOpKinds {
			add("probe op %s is unknown", pr.Op)
		}
		if pr.Stall < 0 {
			add("probe stall threshold %s must be positive", pr.Stall)
		}
	}
	errs = append(errs, p.Workload.Validate(p.Connections)...)
	return errs
}

// Split divides n items into parts nearly equal contiguous shares and returns the
// first item and the count of share k. Shares differ by at most one; together they
// cover [0, n) exactly once.
func Split(n int64, parts, k int) (start, count int64) {
	p := int64(parts)
	q, r := n/p, n%p
	kk := int64(k)
	if kk < r {
		return kk * (q + 1), q + 1
	}
	return r*(q+1) + (kk-r)*q, q
}
