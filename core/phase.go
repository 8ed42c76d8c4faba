package core

import (
	"fmt"
	"strings"
	"time"
	"unicode"
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
	Workload Workload
	// Probe, when set, adds one more open-loop connection that records every request.
	Probe *ProbeSpec
	// ConnBase and ConnTotal place a shard's connections in the whole phase
	// (cmpbench run --shard): this process runs connections ConnBase to
	// ConnBase+Connections-1 of ConnTotal, each with the key range, seed and send
	// offsets it has in the whole phase, so that the shards together issue the
	// operations of the unsharded phase. Rate and Ops are the shard's share. Zero
	// ConnTotal: the phase is not sharded.
	ConnBase, ConnTotal int
	// Pipeline is how many requests each connection keeps in flight (0 or 1:
	// one at a time). Closed loop: a connection sends its next request as soon
	// as one of its replies arrives. Fixed rate: requests are sent at their
	// intended times while fewer are in flight; one due while all are waits,
	// and its response time counts from when it was due.
	Pipeline int
	// StartAt, when set, is the wall-clock time at which the phase clock starts;
	// connections are opened before it. The shards of a run start each phase
	// together this way.
	StartAt time.Time
}

// Depth is how many requests each connection keeps in flight: Pipeline, one
// when it is not set.
func (p PhaseSpec) Depth() int { return max(1, p.Pipeline) }

// AllConnections is the phase's connections across all its shards.
func (p PhaseSpec) AllConnections() int {
	if p.ConnTotal > 0 {
		return p.ConnTotal
	}
	return p.Connections
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
	if p.Probe != nil && p.Probe.Op.Stores() {
		return true
	}
	if p.Workload == nil {
		return false
	}
	for _, k := range p.Workload.OpKinds() {
		if k.Stores() {
			return true
		}
	}
	return false
}

// The bounds of a phase. Beyond them a number is a mistake in a suite (1e300 for
// 100,000), and would overflow the schedule, the names made from it (a ladder's
// step "<name>@<rate>" names files of the report) or the client's memory.
const (
	MaxRate        = 1e9 // requests/s: beyond any client
	MaxConnections = 1_000_000
	MaxOps         = int64(1e12)
	MaxDuration    = 7 * 24 * time.Hour
	MinInterval    = 10 * time.Millisecond
	MaxInterval    = time.Hour
	MaxPhaseName   = 100 // bytes
	// MaxPipeline bounds the requests a connection keeps in flight:
	// memtier_benchmark's and valkey-benchmark's published runs use up to a few
	// hundred; each is a slot of the connection's memory.
	MaxPipeline = 1024
)

// Validate reports every problem with the phase at once.
func (p PhaseSpec) Validate() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch p.Kind {
	case PhaseLoad, PhaseWarmup, PhaseMeasured:
	default:
		add("kind %q is not one of load, warmup, measured", p.Kind)
	}
	if len(p.Name) > MaxPhaseName || strings.ContainsFunc(p.Name, unicode.IsControl) {
		add("name %q must be at most %d bytes, without control characters", Shorten(p.Name, 40), MaxPhaseName)
	}
	if p.Connections < 1 || p.Connections > MaxConnections {
		add("connections must be between 1 and %d, got %d", MaxConnections, p.Connections)
	}
	if p.ConnTotal != 0 && (p.ConnBase < 0 || p.ConnBase+p.Connections > p.ConnTotal) {
		add("shard connections %d to %d are outside the phase's %d", p.ConnBase, p.ConnBase+p.Connections-1, p.ConnTotal)
	}
	if !(p.Rate >= 0 && p.Rate <= MaxRate) {
		add("rate must be a number of requests/s from 0 to %g, got %g", MaxRate, p.Rate)
	}
	if p.Duration <= 0 || p.Duration > MaxDuration {
		add("duration must be positive and at most %s (every phase is bounded in time), got %s", MaxDuration, p.Duration)
	}
	if p.Ops < 0 || p.Ops > MaxOps {
		add("ops must be from 0 to %d, got %d", MaxOps, p.Ops)
	}
	if p.Kind == PhaseLoad && p.Ops == 0 {
		add("a load phase needs an op count")
	}
	if p.Interval != 0 && (p.Interval < MinInterval || p.Interval > MaxInterval) {
		add("interval must be from %s to %s, got %s", MinInterval, MaxInterval, p.Interval)
	}
	if p.Pipeline < 0 || p.Pipeline > MaxPipeline {
		add("pipeline must be from 1 to %d requests in flight per connection, got %d", MaxPipeline, p.Pipeline)
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
	if _, ok := p.Workload.(PubSubSpec); ok {
		if p.Kind == PhaseLoad {
			add("a pub/sub phase cannot be a load: it stores nothing")
		}
		if p.Rate <= 0 {
			add("a pub/sub phase needs a rate: publishing is open loop, so that delivery latency is not hidden by a publisher waiting")
		}
		if p.Depth() > 1 {
			add("a pub/sub phase publishes one message at a time per connection: pipeline %d is not supported", p.Pipeline)
		}
	}
	if p.Workload == nil {
		return append(errs, fmt.Errorf("no workload (one of %s)", strings.Join(WorkloadKinds(), ", ")))
	}
	if p.Probe != nil {
		if err := ProbeError(p.Workload); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, p.Workload.Validate(p.AllConnections())...)
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

// SustainedFraction is the share of its target rate a fixed-rate phase must achieve
// to count; below it the phase is reported as NS (not sustained).
const SustainedFraction = 0.97

// Sustained says whether a fixed-rate phase that ended ok achieved its target rate
// (at least SustainedFraction of it), and the rate it achieved: its successful
// operations (issued ones: not deliveries) over its RateWindow. A closed-loop phase that ended ok is sustained.
func Sustained(p *PhaseRun) (achieved float64, ok bool) {
	var n int64
	for _, t := range p.Totals {
		if t.Op.Issued() {
			n += t.OK
		}
	}
	if secs := RateWindow(p.End.Elapsed, p.End.Stalled, p.Spec.OpenLoop()).Seconds(); secs > 0 {
		achieved = float64(n) / secs
	}
	if p.End.Status != StatusOK {
		return achieved, false
	}
	return achieved, p.Spec.Rate <= 0 || achieved >= SustainedFraction*p.Spec.Rate
}
