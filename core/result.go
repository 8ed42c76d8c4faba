package core

import (
	"cmp"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// MaxErrorSamples bounds PhaseEnd.ErrorSamples, and MaxErrorSampleBytes each
// of them: a client library's error can chain an entry per retry (the Aerospike
// client's run to tens of KB).
const (
	MaxErrorSamples     = 5
	MaxErrorSampleBytes = 1024
)

// CutErrorSample cuts an error sample to MaxErrorSampleBytes, at a rune, saying
// how much was left out.
func CutErrorSample(msg string) string {
	if len(msg) <= MaxErrorSampleBytes {
		return msg
	}
	cut := MaxErrorSampleBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes more)", msg[:cut], len(msg)-cut)
}

// Shorten cuts s to at most n bytes, at a rune, marking the cut with "…".
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// OpInterval is what one op kind did in one interval (or a whole phase).
type OpInterval struct {
	Op     OpKind
	OK     int64 // successful operations, hits and misses included; errors never
	Hits   int64 // reads that found a value
	Misses int64 // reads that found none
	Bytes  int64 // value bytes written, or payload bytes read
	Errors [NumErrorClasses]int64
	// Response is measured from the intended send time (open loop) and Service from
	// the actual send; in closed loop both are the same. Lag is the client's own
	// delay in open loop: from the moment it could have sent (the later of the
	// intended time and the moment its connection became free) to the actual send;
	// empty in closed loop. Only successes are timed.
	Response, Service, Lag Latency
}

// ErrorTotal sums the errors of every class.
func (o *OpInterval) ErrorTotal() int64 {
	var n int64
	for _, e := range o.Errors {
		n += e
	}
	return n
}

// AddCounts adds other's counters, not its latencies, into o.
func (o *OpInterval) AddCounts(other *OpInterval) {
	o.OK += other.OK
	o.Hits += other.Hits
	o.Misses += other.Misses
	o.Bytes += other.Bytes
	for i := range o.Errors {
		o.Errors[i] += other.Errors[i]
	}
}

// IntervalReport is one reporting interval of a phase: the unit that crosses the plugin
// boundary. Start and End are offsets from the phase start.
type IntervalReport struct {
	Index      int
	Start, End time.Duration
	Ops        []OpInterval // one per op kind of the workload, in OpKind order
	// Probe holds the side probe's requests that completed in the interval.
	Probe []ProbeRecord
	// Conns is what the phase's connections did; nil when the engine did not
	// say (a plugin built before capability engine.conns).
	Conns *Conns
}

// Conns is what a phase's connections did in one interval, as the engine that
// holds them counts them: when one opens or is lost, never per request. The
// side probe's connection and a pub/sub phase's subscribers are among them;
// the connections of several processes or shards add up.
type Conns struct {
	// Open is how many were open at the interval's end (read within the
	// engine's collector tick of it): opened and not lost. The engine closes
	// them all once the phase has ended, after its last interval.
	Open int
	// Opened counts those opened in the interval: reopened after a loss, or
	// opened late; the first interval's include those opened before the phase
	// clock started. Lost counts those lost in it: failed, closed by the
	// server, or closed by the engine because their stream could no longer be
	// trusted (a timeout, an unreadable reply) or the cluster changed. So
	// Open is the sum of Opened less the sum of Lost, interval by interval.
	Opened, Lost int
}

// Add adds other's connections into c: another process's or shard's.
func (c *Conns) Add(other Conns) {
	c.Open += other.Open
	c.Opened += other.Opened
	c.Lost += other.Lost
}

// Outcome is how one recorded request ended.
type Outcome uint8

// Outcomes; an error also has an ErrorClass.
const (
	OutcomeOK    Outcome = iota // a write succeeded, or a read found its value
	OutcomeMiss                 // a read found nothing
	OutcomeError                // see the record's Class
)

// ProbeRecord is one side-probe request; times are offsets from the phase start.
type ProbeRecord struct {
	Intended, Start, End time.Duration
	Op                   OpKind
	Outcome              Outcome
	Class                ErrorClass // when Outcome is OutcomeError
}

// OutcomeName is "hit" or "ok", "miss", or the error class.
func (r ProbeRecord) OutcomeName() string {
	switch r.Outcome {
	case OutcomeOK:
		if r.Op.CanMiss() {
			return "hit"
		}
		return "ok"
	case OutcomeMiss:
		return "miss"
	default:
		return r.Class.String()
	}
}

// PhaseStatus is how a phase ended.
type PhaseStatus string

// Phase statuses.
const (
	StatusOK          PhaseStatus = "ok"
	StatusFailed      PhaseStatus = "failed"
	StatusInterrupted PhaseStatus = "interrupted"
	StatusSkipped     PhaseStatus = "skipped"
	// StatusRunning is the status of a phase in the archive while it runs; a
	// finished archive never holds it.
	StatusRunning PhaseStatus = "running"
)

// PhaseEnd is how a phase ended, as the engine saw it.
type PhaseEnd struct {
	Status PhaseStatus
	Error  string
	// ErrorSamples are the first distinct operation errors, "class: message", at
	// most MaxErrorSamples: counts say how many, these say what.
	ErrorSamples []string
	// Started and Ended are wall-clock times; Elapsed is measured on the monotonic clock
	// from the phase start to the last completed operation.
	Started, Ended time.Time
	Elapsed        time.Duration
	// CPU used by the process that generated the load, during the phase.
	CPUUser, CPUSystem time.Duration
	// Notes are facts about the phase worth a line, e.g. the open-file limit.
	Notes []string
	// Totals holds one OpInterval per op kind of the workload: every interval
	// merged. Plugins built before engine.lag do not send it.
	Totals []OpInterval
	// PubSub is what a pub/sub phase's messages did; nil for other workloads.
	PubSub *PubSubCounts
	// Stalls are the spans of the phase in which the client process was not
	// running (stopped, or starved of CPU), as offsets from its start: the longest
	// MaxStallSpans. Stalled is their total, every one counted, within Elapsed.
	// Plugins built before capability engine.stalls do not say (see StallsKnown).
	Stalls  []Span
	Stalled time.Duration
}

// CutTo shortens the phase to d (what its intervals cover, when its plugin died),
// and its stalls with it.
func (e *PhaseEnd) CutTo(d time.Duration) {
	unlisted := max(0, e.Stalled-spanTotal(e.Stalls)) // beyond the spans kept
	var kept []Span
	for _, s := range e.Stalls {
		if s.End = min(s.End, d); s.End > s.Start {
			kept = append(kept, s)
		}
	}
	e.Elapsed, e.Stalls = d, kept
	e.Stalled = min(d, spanTotal(kept)+unlisted)
}

func spanTotal(spans []Span) time.Duration {
	var t time.Duration
	for _, s := range spans {
		t += s.End - s.Start
	}
	return t
}

// Span is a stretch of a phase, as offsets from its start.
type Span struct {
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
}

// MaxStallSpans bounds PhaseEnd.Stalls.
const MaxStallSpans = 100

// CombinedStalls is the stalls of a phase whose load several processes (or
// shards) generated, from each one's total and spans: their mean, the share of
// the client that stood still (in a closed loop, where each sends at the same
// pace, the ops of all over the window less it are the rate of all), and the
// spans merged where they overlap, the longest MaxStallSpans kept. One process
// stopped for half the window of four makes an eighth: the phase still fails
// (ClientStalled), and its rate is not inflated fourfold.
func CombinedStalls(stalled []time.Duration, spans [][]Span) (time.Duration, []Span) {
	var sum time.Duration
	for _, s := range stalled {
		sum += s
	}
	var all []Span
	for _, s := range spans {
		all = append(all, s...)
	}
	slices.SortFunc(all, func(a, b Span) int { return cmp.Compare(a.Start, b.Start) })
	var merged []Span
	for _, s := range all {
		if n := len(merged); n > 0 && s.Start <= merged[n-1].End {
			merged[n-1].End = max(merged[n-1].End, s.End)
			continue
		}
		merged = append(merged, s)
	}
	if len(stalled) == 0 {
		return 0, nil
	}
	return sum / time.Duration(len(stalled)), LongestSpans(merged, MaxStallSpans)
}

// LongestSpans is the n longest of spans, in order of their start.
func LongestSpans(spans []Span, n int) []Span {
	if len(spans) > n {
		slices.SortStableFunc(spans, func(a, b Span) int { return cmp.Compare(b.End-b.Start, a.End-a.Start) })
		spans = spans[:n]
	}
	slices.SortStableFunc(spans, func(a, b Span) int { return cmp.Compare(a.Start, b.Start) })
	return spans
}
