package core

import (
	"errors"
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// What a plugin sends is checked where it arrives: a number no engine can
// produce (a negative count, a histogram that does not hold the operations it is
// said to time, a percentile outside it) fails the phase, never reaches the
// archive and never reaches a table beside "ok".

// Check says what is impossible in one op's counts and latencies: nil when
// nothing is.
func (o *OpInterval) Check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for _, c := range []struct {
		name string
		n    int64
	}{{"ok", o.OK}, {"hits", o.Hits}, {"misses", o.Misses}, {"bytes", o.Bytes}} {
		if c.n < 0 {
			bad("%s %d is negative", c.name, c.n)
		}
	}
	for c, n := range o.Errors {
		if n < 0 {
			bad("%s errors %d is negative", ErrorClass(c), n)
		}
	}
	// A successful read found its value or did not; nothing else has either.
	switch {
	case o.Op.CanMiss() && o.Hits+o.Misses != o.OK:
		bad("hits %d and misses %d do not add up to its %d successes", o.Hits, o.Misses, o.OK)
	case !o.Op.CanMiss() && (o.Hits != 0 || o.Misses != 0):
		bad("%s is neither a read nor a delete, but has hits %d and misses %d", o.Op, o.Hits, o.Misses)
	}
	// Only successes are timed, each once: in a closed loop there is no lag.
	for _, l := range []struct {
		name string
		l    Latency
		may  bool // may be empty although there were successes
	}{{"response time", o.Response, false}, {"service time", o.Service, false}, {"send lag", o.Lag, true}} {
		if err := l.l.check(o.OK, l.may); err != nil {
			bad("%s: %v", l.name, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", o.Op, err)
	}
	return nil
}

// check says what is impossible in a distribution of n timed operations (or of
// none, when mayBeEmpty): a count that is not n, percentiles out of order or out
// of the histogram's range, or a histogram that does not say what its count and
// percentiles say.
func (l Latency) check(n int64, mayBeEmpty bool) error {
	if l.Count == 0 && len(l.HDR) == 0 {
		if n > 0 && !mayBeEmpty {
			return fmt.Errorf("no distribution, but %d successes were timed", n)
		}
		if max(l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max) != 0 || min(l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max) != 0 {
			return fmt.Errorf("percentiles of an empty distribution")
		}
		return nil
	}
	if l.Count != n {
		return fmt.Errorf("count %d, but %d successes", l.Count, n)
	}
	ps := []int64{l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max}
	for i, p := range ps {
		if p < HistMin || p > histTop {
			return fmt.Errorf("%s %d ns is outside the histogram's range (%d ns to %s)", percentileNames[i], p, HistMin, time.Duration(histTop))
		}
		if i > 0 && p < ps[i-1] {
			return fmt.Errorf("%s %d ns is below %s %d ns", percentileNames[i], p, percentileNames[i-1], ps[i-1])
		}
	}
	h, err := hdrhistogram.DecodePacked(l.HDR)
	if err != nil {
		return fmt.Errorf("its histogram does not decode: %v", err)
	}
	if h.TotalCount() != l.Count {
		return fmt.Errorf("its histogram holds %d operations, its count says %d", h.TotalCount(), l.Count)
	}
	read := []int64{h.ValueAtPercentile(50), h.ValueAtPercentile(90), h.ValueAtPercentile(99),
		h.ValueAtPercentile(99.9), h.ValueAtPercentile(99.99), h.Max()}
	for i := range ps {
		if ps[i] != read[i] {
			return fmt.Errorf("%s %d ns, but its histogram says %d ns", percentileNames[i], ps[i], read[i])
		}
	}
	return nil
}

var percentileNames = []string{"p50", "p90", "p99", "p99.9", "p99.99", "max"}

// histTop is the largest value a histogram reports: the top of the bucket that
// holds HistMax (an engine clamps a latency of a minute and more to HistMax, and
// a percentile is the top of its bucket), a little above HistMax itself.
var histTop = func() int64 {
	h := NewHistogram()
	_ = h.RecordValue(HistMax)
	return h.Max()
}()

// Check says what is impossible in an interval as a plugin sent it: times out
// of order, an op kind twice, impossible counts or latencies, side-probe records
// that end before they start.
func (r *IntervalReport) Check() error {
	if r.Index < 0 || r.Start < 0 || r.End < r.Start {
		return fmt.Errorf("interval %d from %s to %s", r.Index, r.Start, r.End)
	}
	var seen [NumOpKinds]bool
	for i := range r.Ops {
		o := &r.Ops[i]
		if o.Op >= NumOpKinds {
			return fmt.Errorf("interval %d: unknown op kind %d", r.Index, o.Op)
		}
		if seen[o.Op] {
			return fmt.Errorf("interval %d: %s twice", r.Index, o.Op)
		}
		seen[o.Op] = true
		if err := o.Check(); err != nil {
			return fmt.Errorf("interval %d: %w", r.Index, err)
		}
	}
	if c := r.Conns; c != nil && (c.Open < 0 || c.Opened < 0 || c.Lost < 0) {
		return fmt.Errorf("interval %d: connections %+v", r.Index, *c)
	}
	for _, p := range r.Probe {
		if p.Start < 0 || p.Intended < 0 || p.End < p.Start || p.End < p.Intended || p.Op >= NumOpKinds ||
			p.Outcome > OutcomeError || p.Class >= NumErrorClasses {
			return fmt.Errorf("interval %d: side-probe request %+v", r.Index, p)
		}
	}
	return nil
}

// Check says what is impossible in how a phase ended as a plugin said it: a
// status no engine gives, negative times, stalls outside the phase, totals that
// are not the sums of the intervals received (sums, one per op kind, from
// AddCounts; nil when none arrived).
func (e *PhaseEnd) Check(sums map[OpKind]*OpInterval) error {
	switch e.Status {
	case StatusOK, StatusFailed, StatusInterrupted:
	default:
		return fmt.Errorf("status %q", e.Status)
	}
	if e.Elapsed < 0 || e.CPUUser < 0 || e.CPUSystem < 0 {
		return fmt.Errorf("elapsed %s, CPU %s user and %s system", e.Elapsed, e.CPUUser, e.CPUSystem)
	}
	if e.Stalled < 0 || e.Stalled > e.Elapsed {
		return fmt.Errorf("stalled %s of its %s", e.Stalled, e.Elapsed)
	}
	var spans time.Duration
	for _, s := range e.Stalls {
		if s.Start < 0 || s.End <= s.Start || s.End > e.Elapsed {
			return fmt.Errorf("a stall from %s to %s in a phase of %s", s.Start, s.End, e.Elapsed)
		}
		spans += s.End - s.Start
	}
	if spans > e.Stalled {
		return fmt.Errorf("stalls of %s in all, but stalled %s", spans, e.Stalled)
	}
	if ps := e.PubSub; ps != nil && min(ps.Published, ps.Expected, ps.Delivered, ps.Lost, ps.Duplicates, ps.Foreign, int64(ps.Drain)) < 0 {
		return fmt.Errorf("pub/sub counts %+v", *ps)
	}
	return e.checkTotals(sums)
}

// checkTotals says where a phase's totals differ from the sums of its intervals.
func (e *PhaseEnd) checkTotals(sums map[OpKind]*OpInterval) error {
	if len(e.Totals) == 0 {
		return nil
	}
	var seen [NumOpKinds]bool
	for i := range e.Totals {
		t := &e.Totals[i]
		if t.Op >= NumOpKinds || seen[t.Op] {
			return fmt.Errorf("totals: op kind %d unknown or twice", t.Op)
		}
		seen[t.Op] = true
		if err := t.Check(); err != nil {
			return fmt.Errorf("totals: %w", err)
		}
		s := sums[t.Op]
		if s == nil {
			s = &OpInterval{Op: t.Op}
		}
		if s.OK != t.OK || s.Hits != t.Hits || s.Misses != t.Misses || s.Bytes != t.Bytes || s.Errors != t.Errors {
			return fmt.Errorf("totals: %s ok %d, hits %d, misses %d, bytes %d, errors %v, but its intervals sum to ok %d, hits %d, misses %d, bytes %d, errors %v",
				t.Op, t.OK, t.Hits, t.Misses, t.Bytes, t.Errors, s.OK, s.Hits, s.Misses, s.Bytes, s.Errors)
		}
	}
	for k, s := range sums {
		if !seen[k] && (s.OK != 0 || s.ErrorTotal() != 0) {
			return fmt.Errorf("totals: no %s, but its intervals hold %d successes and %d errors", k, s.OK, s.ErrorTotal())
		}
	}
	return nil
}
