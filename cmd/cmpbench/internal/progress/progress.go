// Package progress shows what a run does, on stderr: on a terminal, live bars of the
// whole run (phases done, ETA) and of the phase under way (ops/s, p99, errors);
// elsewhere (CI logs, a pipe) timestamped lines; with Quiet, only what went wrong.
// It is the runner's Observer: the runner knows nothing of terminals.
package progress

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// Options say how to show a run.
type Options struct {
	// Plan is the run's: its steps are the phases counted, and its estimates give
	// the ETA.
	Plan     *plan.Plan
	Redactor *redact.Redactor
	// Terminal says that the output is a terminal: bars that update in place
	// instead of timestamped lines.
	Terminal bool
	// Quiet shows only warnings, phases that failed or were interrupted, and what
	// the user must do (restart a server by hand).
	Quiet bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// LineEvery is how often, in phase time, the timestamped lines (no terminal) say
// how a phase goes: every 10 s, and every minute in a phase of more than 10
// minutes, so that a long run's log stays readable (an 8-hour run: about 500
// lines). Each phase's start and end have a line of their own.
func LineEvery(phase time.Duration) time.Duration {
	if phase > 10*time.Minute {
		return time.Minute
	}
	return 10 * time.Second
}

// Progress shows a run as it goes. Its Observer methods are called from one
// goroutine; Close ends the display.
type Progress struct {
	w     io.Writer
	red   *redact.Redactor
	now   func() time.Time
	quiet bool
	stamp bool  // timestamped lines
	bars  *bars // live bars on a terminal; nil otherwise

	// mu guards what follows: the bars' decorators read it while they render.
	// Never held while calling into the bars (which wait for their renderer).
	mu     sync.Mutex
	steps  []plan.Step // in the order the runner goes through them
	pos    map[stepKey]int
	start  time.Time
	done   int    // steps the run is through: ended, or passed over
	cur    *phase // the phase under way, nil between phases
	closed bool
	// measured is what the ETA uses once phases have run: each system's
	// closed-loop rate, and the time a phase takes around its operations, from
	// the gaps between phases.
	measured plan.Measured
	gaps     []time.Duration // between phases of a system
	gapSum   time.Duration   // every gap before a phase, and their number
	gapCount int
	// systemFirst says that the next phase is a system's first: the gap before
	// it holds the start of the system's servers.
	systemFirst bool
	lastEnd     time.Time // when the last phase ended, or the run started
}

type stepKey struct {
	system            string
	index, repetition int
}

// phase is the phase under way, as its intervals tell.
type phase struct {
	step  plan.Step
	began time.Time     // when it started, by the display's clock
	at    time.Duration // phase time at the end of its last interval
	atNow time.Time     // when that interval arrived
	// issued counts the operations sent (successes and errors), errors those
	// that failed; rate (successful ops/s) and p99 are the last interval's.
	issued, errors int64
	rate           float64
	p99            []opLatency
	said           time.Duration // the phase time of its last progress line
	after          []plan.Step   // the steps after it
}

type opLatency struct {
	op  core.OpKind
	p99 time.Duration
}

// New starts showing a run on w.
func New(w io.Writer, o Options) *Progress {
	p := &Progress{w: w, red: o.Redactor, now: o.Now, quiet: o.Quiet, stamp: !o.Terminal, pos: map[stepKey]int{}, measured: plan.Measured{Rates: map[string]float64{}}}
	if p.now == nil {
		p.now = time.Now
	}
	if p.red == nil {
		p.red = redact.New()
	}
	p.start = p.now()
	p.lastEnd = p.start
	if o.Plan != nil {
		p.steps = o.Plan.Steps
	}
	for i, st := range p.steps {
		p.pos[keyOf(st)] = i
	}
	if o.Terminal && !o.Quiet {
		p.bars = newBars(w, p)
	}
	return p
}

func keyOf(st plan.Step) stepKey { return stepKey{st.System, st.Index, st.Repetition} }

// position is where a step is in the run, or -1 (lock held).
func (p *Progress) position(st plan.Step) int {
	if i, ok := p.pos[keyOf(st)]; ok {
		return i
	}
	return -1
}

// line prints one line of text: above the bars, or timestamped. Every line
// goes through it, so that text from servers and plugins in it (an error, a
// log, a note) never acts on the terminal: its control characters are shown
// (core.Printable).
func (p *Progress) line(text string) {
	text = core.Printable(text)
	if p.bars != nil && p.bars.write(text) {
		return
	}
	if p.stamp {
		text = p.now().UTC().Format(time.RFC3339) + " " + text
	}
	fmt.Fprintln(p.w, text)
}

// SystemStarted says where a system runs; the steps of the systems before it are
// done.
func (p *Progress) SystemStarted(s core.SystemRun, serverPid int) {
	p.mu.Lock()
	for i, st := range p.steps {
		if st.System == s.Name {
			p.done = max(p.done, i)
			break
		}
	}
	p.systemFirst = true
	p.mu.Unlock()
	p.bars.moved()
	if p.quiet {
		return
	}
	what := "endpoint " + s.Endpoint
	if s.Provisioned {
		what = fmt.Sprintf("started %s (pid %d) on %s", s.Binary, serverPid, s.Endpoint)
	}
	p.line(fmt.Sprintf("%s: %s; %s %s", s.Name, what, orDash(s.Capture.Product), orDash(s.Capture.Version)))
}

// PhaseStarted says what a phase does and starts following it.
func (p *Progress) PhaseStarted(st plan.Step, _ int) {
	p.mu.Lock()
	now := p.now()
	c := &phase{step: st, began: now, atNow: now}
	p.overhead(now)
	i := p.position(st)
	if i >= 0 {
		p.done = max(p.done, i)
		c.after = p.steps[i+1:]
	}
	p.cur = c
	where := ""
	if i >= 0 {
		where = fmt.Sprintf("; phase %d of %d, run ETA %s", i+1, len(p.steps), formatETA(p.eta(now)))
	}
	p.mu.Unlock()
	if p.quiet {
		return
	}
	text := fmt.Sprintf("%s: %s (%s; %s; %s)", st.System, st.Spec.Name, core.DescribeWorkload(st.Spec.Workload), plan.Shape(st.Spec), plan.Bound(st.Spec))
	if p.bars == nil {
		text += where // the bars show it
	}
	p.line(text)
	p.bars.phaseStarted(st)
}

// Interval follows the phase under way; without a terminal, every LineEvery of
// phase time it says how the phase goes.
func (p *Progress) Interval(st plan.Step, r core.IntervalReport) {
	p.mu.Lock()
	c := p.cur
	if c == nil || keyOf(c.step) != keyOf(st) {
		p.mu.Unlock()
		return
	}
	c.at, c.atNow = r.End, p.now()
	var ok int64
	c.p99 = c.p99[:0]
	for i := range r.Ops {
		o := &r.Ops[i]
		if o.Op.Issued() {
			ok += o.OK
			c.issued += o.OK + o.ErrorTotal()
		}
		c.errors += o.ErrorTotal()
		if o.Response.Count > 0 {
			c.p99 = append(c.p99, opLatency{o.Op, time.Duration(o.Response.P99)})
		}
	}
	c.rate = 0
	if d := (r.End - r.Start).Seconds(); d > 0 {
		c.rate = float64(ok) / d
	}
	every := LineEvery(st.Spec.Duration)
	say := p.bars == nil && !p.quiet && r.End/every > c.said/every
	var text string
	if say {
		c.said = r.End
		text = fmt.Sprintf("  %s %s: %s, %s; run: %d of %d phases done, ETA %s", st.System, st.Spec.Name, c.howFar(c.at), c.stats(),
			p.done, len(p.steps), formatETA(p.eta(c.atNow)))
	}
	fraction := c.fraction(c.at)
	p.mu.Unlock()
	if say {
		p.line(text)
	}
	p.bars.phaseMoved(fraction)
}

// PhaseEnded says how a phase ended; with Quiet, only one that failed or was
// interrupted.
func (p *Progress) PhaseEnded(st plan.Step, r *core.PhaseRun) {
	p.mu.Lock()
	if i := p.position(st); i >= 0 {
		p.done = max(p.done, i+1)
	}
	p.cur = nil
	p.measure(st, r)
	p.mu.Unlock()
	p.bars.phaseEnded()
	p.bars.moved()
	if p.quiet && r.End.Status != core.StatusFailed && r.End.Status != core.StatusInterrupted {
		return
	}
	p.line(p.red.String(endLine(st, r)))
}

// endLine is the line that says how a phase ended.
func endLine(st plan.Step, r *core.PhaseRun) string {
	if r.End.Elapsed == 0 && r.Intervals == 0 && len(r.Totals) == 0 {
		// It never ran: no numbers to show, only why.
		return fmt.Sprintf("%s: %s %s, did not run: %s", st.System, st.Spec.Name, r.End.Status, r.End.Error)
	}
	var ok, errs int64
	var parts []string
	for _, t := range r.Totals {
		if t.Op.Issued() {
			ok += t.OK
		}
		errs += t.ErrorTotal()
		if t.Response.Count > 0 {
			parts = append(parts, fmt.Sprintf("%s p99 %.3f ms", t.Op, float64(t.Response.P99)/1e6))
		}
	}
	if r.ClientLagged {
		parts = append(parts, "CLIENT-LAGGED: the client's own send delay is a material part of the response time")
	}
	if h := r.Host; h != nil && h.Saturated {
		parts = append(parts, "HOST-SATURATED: "+h.String())
	}
	if r.Unsteady != "" {
		parts = append(parts, "UNSTEADY: "+r.Unsteady)
	}
	line := fmt.Sprintf("%s: %s %s in %s: %s ops ok (%s), %d errors", st.System, st.Spec.Name, r.End.Status,
		r.End.Elapsed.Round(time.Millisecond), plan.FormatCount(ok), achievedRate(r), errs)
	if len(parts) > 0 {
		line += "; " + strings.Join(parts, ", ")
	}
	if r.End.Error != "" {
		line += "; " + r.End.Error
	}
	if len(r.End.ErrorSamples) > 0 {
		line += "; first errors: " + strings.Join(r.End.ErrorSamples, " | ")
	}
	for _, n := range r.End.Notes {
		line += "; " + n
	}
	return line
}

// achievedRate is a phase's successful ops/s; a fixed-rate phase's against its
// target, and NS when it ended ok without sustaining it.
func achievedRate(r *core.PhaseRun) string {
	achieved, sustained := core.Sustained(r)
	s := plan.FormatCount(int64(achieved+0.5)) + " ops/s"
	if r.Spec.Rate <= 0 {
		return s
	}
	s = plan.FormatCount(int64(achieved+0.5)) + " of " + plan.FormatCount(int64(r.Spec.Rate+0.5)) + " ops/s"
	if !sustained && r.End.Status == core.StatusOK {
		s = fmt.Sprintf("NS: %s, below the %.0f%% of its target that counts as sustained", s, core.SustainedFraction*100)
	}
	return s
}

// Note says what happened; not with Quiet.
func (p *Progress) Note(msg string) {
	if !p.quiet {
		p.line(p.red.String(msg))
	}
}

// Warn says what went wrong without failing the run.
func (p *Progress) Warn(msg string) { p.line("warning: " + p.red.String(msg)) }

// Prompt says what the user must do now, even with Quiet.
func (p *Progress) Prompt(msg string) { p.line(p.red.String(msg)) }

// Close ends the display: the bars stop, and what is printed after goes below them.
func (p *Progress) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.cur = nil
	p.mu.Unlock()
	p.bars.close()
}

// measure keeps what an ended phase tells of the rest of the run (lock held):
// its system's closed-loop rate, and when it ended.
func (p *Progress) measure(st plan.Step, r *core.PhaseRun) {
	if rate := issuedRate(r.Spec, totalIssued(r.Totals), r.End.Elapsed); rate > 0 && r.End.Status == core.StatusOK {
		p.measured.Rates[st.System] = rate
	}
	p.lastEnd = p.now()
}

// overhead measures, as a phase starts, the time a phase takes around its
// operations (lock held), from the gaps before phases: their median over the
// gaps between a system's phases (sampling stats, checks after a load) for the
// lower bound, their mean over every gap, those before a system's first phase
// (starting its servers) too, for the upper. Until a phase has ended,
// PhaseOverhead stands.
func (p *Progress) overhead(now time.Time) {
	gap := max(time.Millisecond, now.Sub(p.lastEnd))
	p.gapSum, p.gapCount = p.gapSum+gap, p.gapCount+1
	if !p.systemFirst {
		p.gaps = append(p.gaps, gap)
	}
	p.systemFirst = false
	if p.gapCount < 2 {
		return
	}
	p.measured.MeanOverhead = p.gapSum / time.Duration(p.gapCount)
	p.measured.Overhead = p.measured.MeanOverhead
	if len(p.gaps) > 0 {
		sorted := slices.Sorted(slices.Values(p.gaps))
		p.measured.Overhead = sorted[(len(sorted)-1)/2]
	}
}

// issuedRate is a closed-loop phase's rate of operations issued; 0 for a
// fixed-rate phase (its rate is its target's) or one too short to tell.
func issuedRate(s core.PhaseSpec, issued int64, elapsed time.Duration) float64 {
	if s.OpenLoop() || issued == 0 || elapsed < 10*time.Millisecond {
		return 0
	}
	return float64(issued) / elapsed.Seconds()
}

func totalIssued(totals []core.OpInterval) int64 {
	var n int64
	for _, t := range totals {
		if t.Op.Issued() {
			n += t.OK + t.ErrorTotal()
		}
	}
	return n
}

// eta bounds the time the run still takes, as at now (lock held): what is left of
// the phase under way and the estimate of the steps after it, from what the run
// measured so far, the phase under way's rate among it.
func (p *Progress) eta(now time.Time) plan.Estimate {
	c := p.cur
	if c == nil {
		return plan.EstimateMeasured(p.steps[min(p.done, len(p.steps)):], p.measured)
	}
	m := p.measured
	elapsed := c.elapsed(now)
	if rate := issuedRate(c.step.Spec, c.issued, elapsed); rate > 0 && elapsed >= time.Second {
		m.Rates = maps.Clone(m.Rates)
		m.Rates[c.step.System] = rate
	}
	e := plan.EstimateMeasured(c.after, m)
	l, most, unmeasured := m.Left(c.step, elapsed, c.issued)
	e.MinWall += l
	e.MaxWall += most
	e.Unmeasured += unmeasured
	return e
}

// elapsed is the phase time at now: its last interval's end and the time since it
// arrived.
func (c *phase) elapsed(now time.Time) time.Duration {
	return c.at + max(0, now.Sub(c.atNow))
}

// fraction is how much of the phase is done: of its duration, or of its op count
// when that is further.
func (c *phase) fraction(elapsed time.Duration) float64 {
	s := c.step.Spec
	f := 0.0
	if s.Duration > 0 {
		f = float64(elapsed) / float64(s.Duration)
	}
	if s.Ops > 0 {
		f = max(f, float64(c.issued)/float64(s.Ops))
	}
	return min(f, 1)
}

// howFar is how far the phase is: "10s of 1m0s", and "4,000 of 10,000 ops" for
// one with an op count.
func (c *phase) howFar(elapsed time.Duration) string {
	s := c.step.Spec
	if s.Duration > 0 {
		elapsed = min(elapsed, s.Duration)
	}
	t := fmt.Sprintf("%s of %s", elapsed.Round(time.Second), s.Duration)
	if s.Ops > 0 {
		t = fmt.Sprintf("%s of %s ops, %s", plan.FormatCount(c.issued), plan.FormatCount(s.Ops), t)
	}
	return t
}

// stats are the last interval's throughput and p99 per op, and the phase's errors
// so far.
func (c *phase) stats() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s ops/s", plan.FormatCount(int64(c.rate+0.5)))
	if len(c.p99) > 0 {
		b.WriteString(", p99")
		for i, l := range c.p99 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %.3f ms", l.op, float64(l.p99)/1e6)
		}
	}
	fmt.Fprintf(&b, ", %s errors", plan.FormatCount(c.errors))
	return b.String()
}

// ETA is how long the run still takes, as the bars say it: what is left of
// the phase under way and the estimate of the phases after it, from what the
// run measured so far.
func (p *Progress) ETA() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return formatETA(p.eta(p.now()))
}

// formatETA is "1m2s", "40s to 1m30s" when the bounds differ, or "25s + 100,000
// ops at rates not yet measured (at most 6h0m25s)" before any closed-loop rate.
func formatETA(e plan.Estimate) string { return e.Time("rates not yet measured") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
