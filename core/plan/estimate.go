package plan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// PhaseOverhead is what an estimate adds to each phase for what happens around it:
// opening its connections, the server stats sampled before and after it, writing
// its totals, a pub/sub phase's drain (at most 5 s). A round figure, not a
// measurement; the checks after a load (counting keys, a restart) take longer, and
// grow with the data.
const PhaseOverhead = 3 * time.Second

// Estimate is what one system's phases of a plan take, worked out before they run.
type Estimate struct {
	System string
	// MinWall and MaxWall bound the time the phases take, each phase with
	// PhaseOverhead. MaxWall counts every phase for its duration. A load, or any
	// phase with an op count, ends when its count is done, usually well before its
	// time bound: MinWall counts it for nothing in a closed loop and for count/rate
	// at a fixed rate; it also leaves out the steps of a ladder that may not run
	// (those after its first StopAfterNS, should those not be sustained).
	MinWall, MaxWall time.Duration
	// Ops are the workload's operations in the phases whose number is known: rate ×
	// duration at a fixed rate, the op count where there is one (the lesser of the
	// two for a fixed-rate phase with an op count). The side probe's are not in it.
	Ops int64
	// ClosedLoop names the closed-loop phases without an op count: they do as many
	// operations as the system serves, which Ops leaves out.
	ClosedLoop []string
	// Bytes is the data the phases add to the server, as sent: keys, YCSB field
	// names and values. A load adds its keys or records; a memtier SET adds the keys
	// of its range that nothing wrote before (at most its number of SETs); a YCSB
	// insert adds a record. Overwrites add nothing. The server's own overhead
	// (indexes, per-key headers, replicas) comes on top.
	Bytes int64
	// OpenInserts names the closed-loop phases without an op count that insert YCSB
	// records: what they add (their insert proportion of the operations the system
	// serves) is not in Bytes.
	OpenInserts []string
	// MayStop says that a ladder may stop early: MaxWall and Ops count every step.
	MayStop bool
	// Unmeasured are the operations of the closed-loop phases with an op count
	// whose time is the system's rate, when no rate was measured yet: MinWall
	// counts them as taking no time, MaxWall at their phases' time bounds.
	Unmeasured int64
}

// Measured is what a run has measured so far that puts better numbers on the
// rest of it than the phases' bounds: the rates at which systems served a closed
// loop, and the time phases took around their operations.
type Measured struct {
	// Rates are each system's successful ops/s in its latest closed-loop phase.
	// A closed-loop phase with an op count takes count/rate at its system's
	// rate; at another system's, before its own was measured (the fastest and
	// slowest of them bound it).
	Rates map[string]float64
	// Overhead bounds the time a phase takes around its operations: the median
	// and the mean of the gaps between phases so far (one-off costs, a server's
	// start or the checks after a load, raise the mean alone); PhaseOverhead for
	// both until there are gaps.
	Overhead, MeanOverhead time.Duration
}

func (m Measured) overhead() (least, most time.Duration) {
	least = cmp.Or(m.Overhead, PhaseOverhead)
	return least, max(least, cmp.Or(m.MeanOverhead, least))
}

// rates bounds the closed-loop rate of system: its own, else the range of the
// other systems'.
func (m Measured) rates(system string) (slow, fast float64, ok bool) {
	if r, ok := m.Rates[system]; ok && r > 0 {
		return r, r, true
	}
	for _, r := range m.Rates {
		if r > 0 {
			if !ok {
				slow, fast, ok = r, r, true
			}
			slow, fast = min(slow, r), max(fast, r)
		}
	}
	return slow, fast, ok
}

// wall bounds the time a step takes, its overhead included, and says how many
// of its operations have no measured rate to time them.
func (m Measured) wall(st Step) (least, most time.Duration, unmeasured int64) {
	return m.Left(st, 0, 0)
}

// Estimate works out what the plan's phases for system take: time, operations and
// the data written to the server. It is the same for every system of a plan but for
// the name: the phases are.
func (p *Plan) Estimate(system string) Estimate {
	var steps []Step
	for _, st := range p.Steps {
		if st.System == system {
			steps = append(steps, st)
		}
	}
	e := EstimateSteps(steps)
	e.System = system
	return e
}

// EstimateSteps works out what steps of a plan take, in the order they run: one
// system's (Estimate), or those a run has still to go through (its ETA). System is
// that of the first step. Bytes counts what the steps write as if no step before
// them had written anything.
func EstimateSteps(steps []Step) Estimate { return EstimateMeasured(steps, Measured{}) }

// EstimateMeasured is EstimateSteps with what a run measured so far: the time
// of a closed-loop phase with an op count from the rates measured, each phase's
// overhead as measured.
func EstimateMeasured(steps []Step, m Measured) Estimate {
	var e Estimate
	if len(steps) > 0 {
		e.System = steps[0].System
	}
	written := keyRanges{}
	type methodOf struct {
		system string
		core.MethodRef
	}
	firstStep := map[methodOf]int{} // the index of each stopping method's first step
	for _, st := range steps {
		s := st.Spec
		least, most, unmeasured := m.wall(st)
		e.MaxWall += most
		mayRun := true
		if sure := sureSteps(st.Method); sure > 0 {
			k := methodOf{st.System, st.Method.Ref()}
			if _, ok := firstStep[k]; !ok {
				firstStep[k] = st.Index
			}
			mayRun = st.Index-firstStep[k] < sure
			e.MayStop = e.MayStop || !mayRun
		}
		if mayRun {
			e.MinWall += least
			e.Unmeasured += unmeasured
		}

		ops, known := phaseOps(s)
		if known {
			e.Ops += ops
		} else {
			e.ClosedLoop = append(e.ClosedLoop, s.Name)
		}
		b, open := newData(s, ops, known, written)
		e.Bytes += b
		if open {
			e.OpenInserts = append(e.OpenInserts, s.Name)
		}
	}
	return e
}

// Wall bounds the time a phase takes, PhaseOverhead included. The most is its
// duration. A load, or any phase with an op count, ends when its count is done,
// usually well before its time bound: the least counts it for nothing in a closed
// loop and for count/rate at a fixed rate.
func Wall(s core.PhaseSpec) (least, most time.Duration) {
	least = s.Duration
	if s.Ops > 0 {
		least = 0
		if s.OpenLoop() {
			least = min(s.Duration, time.Duration(float64(s.Ops)/s.Rate*float64(time.Second)))
		}
	}
	return least + PhaseOverhead, s.Duration + PhaseOverhead
}

// Left bounds the time a running phase still takes, elapsed into it with done of
// its operations issued, PhaseOverhead included as in Wall. A phase without an op
// count runs for its duration. One with an op count ends when its count is done, at
// the latest at its duration: before any operation, as Wall says of what is left;
// after, the rate so far says when, and both bounds are that.
func Left(s core.PhaseSpec, elapsed time.Duration, done int64) (least, most time.Duration) {
	least, most = left(s, elapsed, done)
	return least + PhaseOverhead, most + PhaseOverhead
}

// Left is the package's Left with what the run measured: before a closed-loop
// phase with an op count has done any, its count at the rates measured (or, with
// none, that many operations unmeasured: as Wall, nothing to its time bound);
// and the overhead measured.
func (m Measured) Left(st Step, elapsed time.Duration, done int64) (least, most time.Duration, unmeasured int64) {
	s := st.Spec
	least, most = left(s, elapsed, done)
	if done == 0 && s.Ops > 0 && !s.OpenLoop() {
		if slow, fast, ok := m.rates(st.System); ok {
			at := func(r float64) time.Duration {
				d := s.Duration // the bound, unless the count at r ends first
				if ns := float64(s.Ops) / r * float64(time.Second); ns < float64(d) {
					d = time.Duration(ns)
				}
				return max(0, d-elapsed)
			}
			least, most = at(fast), at(slow)
		} else {
			unmeasured = s.Ops
		}
	}
	lo, hi := m.overhead()
	return least + lo, most + hi, unmeasured
}

func left(s core.PhaseSpec, elapsed time.Duration, done int64) (least, most time.Duration) {
	most = max(0, s.Duration-elapsed)
	switch {
	case s.Ops <= 0:
		return most, most
	case done >= s.Ops:
		return 0, 0
	case done > 0 && elapsed > 0:
		projected := time.Duration(float64(elapsed) * float64(s.Ops-done) / float64(done))
		return min(projected, most), min(projected, most)
	}
	least, _ = Wall(s)
	least = max(0, least-PhaseOverhead-elapsed)
	return min(least, most), most
}

// phaseOps is how many operations a phase's workload does, when that is known.
func phaseOps(s core.PhaseSpec) (int64, bool) {
	if s.OpenLoop() {
		n := int64(math.Round(s.Rate * s.Duration.Seconds()))
		if s.Ops > 0 {
			n = min(n, s.Ops)
		}
		return n, true
	}
	return s.Ops, s.Ops > 0
}

// newData is how many bytes a phase adds to the server (ops of them, when known),
// and whether it inserts an unknown number of records; what its workload says it
// writes (core.Footprint), nothing for kinds that do not say. written holds the
// key ranges earlier phases wrote.
func newData(s core.PhaseSpec, ops int64, known bool, written keyRanges) (int64, bool) {
	f, ok := s.Workload.(core.Footprint)
	if !ok {
		return 0, false
	}
	w := f.Footprint(s.Kind, ops, known)
	if w.Unknown || w.First > w.Last {
		return 0, w.Unknown
	}
	fresh := w.Last - w.First + 1
	if w.Space != "" {
		fresh = written.add(w.Space, w.First, w.Last)
	}
	if w.Bounded {
		fresh = min(fresh, w.Max)
	}
	return int64(math.Round(float64(fresh) * (w.KeyBytes + w.ValueBytes))), false
}

// keyRanges are the key ranges written so far, by key space (a prefix), merged.
type keyRanges map[string][][2]int64

// add marks [lo, hi] of space written and returns how many of its keys were not
// before.
func (k keyRanges) add(space string, lo, hi int64) int64 {
	fresh := hi - lo + 1
	for _, r := range k[space] {
		if a, b := max(lo, r[0]), min(hi, r[1]); a <= b {
			fresh -= b - a + 1
		}
	}
	rs := append(k[space], [2]int64{lo, hi})
	slices.SortFunc(rs, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	merged := rs[:1]
	for _, r := range rs[1:] {
		if last := &merged[len(merged)-1]; r[0] <= last[1]+1 {
			last[1] = max(last[1], r[1])
		} else {
			merged = append(merged, r)
		}
	}
	k[space] = merged
	return fresh
}

// String is the estimate in one line, e.g. "time 19s to 1m19s; 35,000 ops + as
// many as the system serves in 1 closed-loop phase; writes 2.6 MB", or "time 25s
// + 100,000 ops at the system's rate (at most 6h0m25s); ..." before that rate is
// measured.
func (e Estimate) String() string {
	var b strings.Builder
	b.WriteString("time " + e.Time("the system's rate") + "; ")
	if e.MayStop {
		b.WriteString("at most ")
	}
	b.WriteString(FormatCount(e.Ops) + " ops")
	if n := len(e.ClosedLoop); n > 0 {
		fmt.Fprintf(&b, " + as many as the system serves in %d closed-loop %s", n, plural(n, "phase", "phases"))
	}
	b.WriteString("; writes " + FormatBytes(e.Bytes))
	if len(e.OpenInserts) > 0 {
		fmt.Fprintf(&b, " + the records %s %s", strings.Join(e.OpenInserts, ", "), plural(len(e.OpenInserts), "inserts", "insert"))
	}
	return b.String()
}

// Time is the time an estimate bounds: "1m2s", "40s to 1m30s", or "25s +
// 100,000 ops at <rate> (at most 6h0m25s)" while some of its operations have no
// measured rate to time them.
func (e Estimate) Time(rate string) string {
	least, most := e.MinWall.Round(time.Second), e.MaxWall.Round(time.Second)
	switch {
	case e.Unmeasured > 0:
		return fmt.Sprintf("%s + %s ops at %s (at most %s)", least, FormatCount(e.Unmeasured), rate, most)
	case least == most:
		return most.String()
	}
	return least.String() + " to " + most.String()
}

// EstimateNotes says, once for all systems, what an Estimate's figures count and
// what they leave out.
func EstimateNotes() []string {
	var stops string
	for _, m := range core.Methods() {
		if s, ok := m.(core.Stopping); ok {
			stops += "; " + s.Stops()
		}
	}
	return []string{
		fmt.Sprintf("time: every phase up to its duration, plus %s for what happens around it; a phase with an op count ends when its count is done: at a fixed rate after count/rate, in a closed loop at the rate the system serves, which only the run measures (its ETA uses it; here '+ N ops at the system's rate', and the time bounds as 'at most')%s; checks after a load (counting keys, a restart) take longer, growing with the data", PhaseOverhead, stops),
		"ops: the workload's, not the side probe's: rate x duration at a fixed rate, or the op count; a closed-loop phase without an op count does as many as the system serves",
		"writes: the data the phases add to the server as sent (keys, field names, values; 1 GB = 10^9 bytes); overwrites add nothing; the server's own overhead (indexes, per-key headers, replicas) comes on top",
	}
}

// FormatBytes is n in decimal units: "512 B", "2.6 MB", "138.5 GB".
func FormatBytes(n int64) string {
	units := []string{"kB", "MB", "GB", "TB", "PB", "EB"}
	if n < 1000 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, i := float64(n)/1000, 0
	for v >= 999.95 && i < len(units)-1 {
		v, i = v/1000, i+1
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// FormatCount is a count with thousands separators: "228,000,000".
func FormatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sureSteps is how many of a method's first steps always run when it may leave
// later ones out (core.Stopping); 0 when every step runs.
func sureSteps(m core.MethodStep) int {
	if method, ok := core.LookupMethod(m.Kind); ok {
		if s, ok := method.(core.Stopping); ok {
			return s.Sure(m.Params)
		}
	}
	return 0
}
