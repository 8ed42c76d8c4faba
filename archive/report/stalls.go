package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
)

// A stall is a stretch of a phase in which the side probe waited longer than the
// phase's threshold for its answers: a probe request whose response time (from its
// intended send to its answer or its error) exceeds the threshold, merged with the
// slow requests that follow it directly or overlap it. The probe has one request in
// flight on one connection and sends on a fixed schedule, so a server that stops
// answering for 5 s shows as one stall of about 5 s: the first request sent into
// it waits the whole time, those scheduled behind it wait less.
type stall struct {
	start, end int64 // ns from the phase start: the first slow request's intended send, the last one's answer
	requests   int   // probe requests above the threshold
	failed     int   // of them, the ones that ended in an error (a timeout, a lost connection)
	// client is how long of the stall the client process itself was not running
	// (PhaseInfo.ClientStalls): the probe waited for its own process, not for
	// the server.
	client int64
}

// clients says whose a stall was: the client's own when its process was not
// running for most of it. A server stall that a short client stop touched stays
// the server's.
func (s stall) clients() bool { return 2*s.client >= s.duration() }

func (s stall) duration() int64 { return s.end - s.start }

// stallDetector finds the stalls of one phase of one system (one repetition) from
// its probe requests, in the order the probe sent them (the order of
// probe.parquet).
type stallDetector struct {
	threshold int64
	stalls    []stall
	open      bool // the last stall may still grow
	prevSlow  bool // the previous request was above the threshold
	requests  int64
	slowest   int64 // the largest response time of any request, ns
}

func (d *stallDetector) add(intended, end int64, failed bool) {
	d.requests++
	resp := end - intended
	d.slowest = max(d.slowest, resp)
	if resp <= d.threshold {
		d.prevSlow = false
		return
	}
	if n := len(d.stalls); d.open && (d.prevSlow || intended <= d.stalls[n-1].end) {
		s := &d.stalls[n-1]
		s.start, s.end = min(s.start, intended), max(s.end, end)
		s.requests++
		s.failed += btoi(failed)
	} else {
		d.stalls = append(d.stalls, stall{start: intended, end: end, requests: 1, failed: btoi(failed)})
		d.open = true
	}
	d.prevSlow = true
}

// result is the phase's stalls in the order they began.
func (d *stallDetector) result() []stall {
	sort.SliceStable(d.stalls, func(i, j int) bool { return d.stalls[i].start < d.stalls[j].start })
	return d.stalls
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// stallWindow is the width of the windows of the chart of the slowest probe
// request over time, as seed 000's GC analysis drew it.
const stallWindow = 10 * time.Second

// maxStallRows bounds each phase's table of stalls: its longest ones.
const maxStallRows = 20

// repKey names one repetition of one phase of one system.
type repKey struct {
	system     string
	phase, rep int
}

// overTime is what the stalls section and the over-time charts are drawn from,
// reduced as the probe and server-stats rows stream past.
type overTime struct {
	phases map[repKey]archive.PhaseInfo
	stalls map[repKey]*stallDetector
	// windows holds, for the first repetition of each measured phase, the slowest
	// probe response of each stallWindow (ns; 0 where no request was sent).
	windows map[chartKey][]int64
	stats   statsTimeline
}

func newOverTime(m *archive.Manifest) *overTime {
	o := &overTime{phases: map[repKey]archive.PhaseInfo{}, stalls: map[repKey]*stallDetector{}, windows: map[chartKey][]int64{}}
	o.stats.init(m)
	for _, p := range m.Phases {
		if p.Kind == core.PhaseMeasured {
			o.phases[repKey{p.System, p.Index, p.Repetition}] = p
		}
	}
	return o
}

func (o *overTime) addProbe(r *archive.ProbeRow) {
	k := repKey{r.System, r.PhaseIndex, r.Repetition}
	info, ok := o.phases[k]
	if !ok {
		return
	}
	d := o.stalls[k]
	if d == nil {
		d = &stallDetector{threshold: int64(info.StallThreshold())}
		o.stalls[k] = d
	}
	// A failed request counts with the time it took to fail: a timeout is a stall,
	// a connection refused at once is an error (in the tables), not a stall.
	d.add(r.IntendedNs, r.EndNs, r.Outcome != "hit" && r.Outcome != "ok" && r.Outcome != "miss")
	if r.Repetition != 0 || r.IntendedNs < 0 {
		return
	}
	ck := chartKey{r.System, r.PhaseIndex}
	w := o.windows[ck]
	i := int(r.IntendedNs / int64(stallWindow))
	for len(w) <= i {
		w = append(w, 0)
	}
	w[i] = max(w[i], r.ResponseNs, 1)
	o.windows[ck] = w
}

// stallsOf is the stalls of one repetition, each with how long of it the client
// was not running, and whether its probe sent anything.
func (d *data) stallsOf(system string, phase, rep int) (*stallDetector, []stall) {
	k := repKey{system, phase, rep}
	det := d.over.stalls[k]
	if det == nil {
		return nil, nil
	}
	stalls := det.result()
	for i := range stalls {
		s := &stalls[i]
		s.client = 0
		for _, c := range d.over.phases[k].ClientStalls {
			s.client += max(0, min(s.end, int64(c.End))-max(s.start, int64(c.Start)))
		}
	}
	return det, stalls
}

// serverStalls is the stalls that were not the client's.
func serverStalls(stalls []stall) []stall {
	var out []stall
	for _, s := range stalls {
		if !s.clients() {
			out = append(out, s)
		}
	}
	return out
}

// stallSection lists, for every measured phase with a side probe, each system's
// stalls in one line, and a table of the longest.
func (d *data) stallSection(b *strings.Builder) {
	if len(d.over.stalls) == 0 {
		return
	}
	b.WriteString("## Stalls\n\n")
	b.WriteString("A stall is a stretch in which the side probe (one connection, one request at a time, sent on a fixed schedule) waited longer than the threshold for an answer: every probe request whose response time — from its intended send to its answer or its error, so a timeout counts — exceeded the threshold, merged with the slow requests that follow it directly or overlap it, from the first one's intended send to the last one's answer. A server that stops answering for 5 s shows as one stall of about 5 s. The threshold is the suite's `probe: {stall: ...}`, 1 s by default. Times are UTC; \"into the phase\" counts from its start, as the charts do.\n\n")
	for _, ph := range d.measured {
		var lines []string
		type row struct {
			system string
			rep    int
			s      stall
			at     time.Time
		}
		var all []row
		for _, sys := range d.systems {
			for _, r := range d.cell(ph, sys).reps {
				det, stalls := d.stallsOf(sys, ph.index, r.info.Repetition)
				if det == nil {
					continue
				}
				where := sys
				if d.m.Repeat > 1 {
					where += fmt.Sprintf(" (repetition %d)", r.info.Repetition)
				}
				lines = append(lines, where+": "+stallLine(det, stalls, r.info))
				for _, s := range stalls {
					all = append(all, row{sys, r.info.Repetition, s, r.info.Started.Add(time.Duration(s.start))})
				}
			}
		}
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(b, "### Stalls: %s\n\n", ph.name)
		for _, l := range lines {
			fmt.Fprintf(b, "- %s\n", l)
		}
		b.WriteString("\n")
		if len(all) == 0 {
			continue
		}
		// The longest ones, listed in the order they happened.
		shown := all
		if len(all) > maxStallRows {
			shown = append([]row(nil), all...)
			sort.SliceStable(shown, func(i, j int) bool { return shown[i].s.duration() > shown[j].s.duration() })
			shown = shown[:maxStallRows]
			sort.SliceStable(shown, func(i, j int) bool {
				if shown[i].system != shown[j].system {
					return d.systemOrder(shown[i].system) < d.systemOrder(shown[j].system)
				}
				if shown[i].rep != shown[j].rep {
					return shown[i].rep < shown[j].rep
				}
				return shown[i].s.start < shown[j].s.start
			})
		}
		repCol, repSep := "", ""
		if d.m.Repeat > 1 {
			repCol, repSep = " rep |", "--:|"
		}
		fmt.Fprintf(b, "| system |%s start (UTC) | into the phase | duration | probe requests | failed | whose |\n|---|%s---|--:|--:|--:|--:|---|\n", repCol, repSep)
		for _, r := range shown {
			rep := ""
			if d.m.Repeat > 1 {
				rep = fmt.Sprintf(" %d |", r.rep)
			}
			fmt.Fprintf(b, "| %s |%s %s | %s | %s | %d | %d | %s |\n", r.system, rep, r.at.UTC().Format("15:04:05.000"),
				seconds(r.s.start), seconds(r.s.duration()), r.s.requests, r.s.failed, whose(r.s))
		}
		if n := len(all) - len(shown); n > 0 {
			fmt.Fprintf(b, "\nThe %d longest of %d stalls; %d shorter ones are not listed.\n", len(shown), len(all), n)
		}
		b.WriteString("\n")
	}
}

// whose says whose a stall was, for the stalls table.
func whose(s stall) string {
	if s.clients() {
		return fmt.Sprintf("the client's: not running for %s of it", seconds(s.client))
	}
	if s.client > 0 {
		return fmt.Sprintf("the server's (the client was not running for %s of it)", seconds(s.client))
	}
	return "the server's"
}

func (d *data) systemOrder(system string) int {
	for i, s := range d.systems {
		if s == system {
			return i
		}
	}
	return len(d.systems)
}

// stallLine is a phase's stalls in one line, as seed 000 wrote them: "12 stalls
// > 1 s, peak 5.00 s, 09:00:05–09:16:40".
func stallLine(det *stallDetector, stalls []stall, info archive.PhaseInfo) string {
	threshold := threshold(info.StallThreshold())
	if len(stalls) == 0 {
		return fmt.Sprintf("no stall > %s (slowest of %s probe requests: %s)", threshold, thousands(det.requests), seconds(det.slowest))
	}
	var peak, first, last int64 = 0, stalls[0].start, 0
	failed := 0
	for _, s := range stalls {
		peak = max(peak, s.duration())
		first, last = min(first, s.start), max(last, s.end)
		failed += s.failed
	}
	at := func(ns int64) string { return info.Started.Add(time.Duration(ns)).UTC().Format("15:04:05") }
	noun := "stalls"
	if len(stalls) == 1 {
		noun = "stall"
	}
	line := fmt.Sprintf("%d %s > %s, peak %s, %s–%s", len(stalls), noun, threshold, seconds(peak), at(first), at(last))
	switch {
	case failed == 1:
		line += " (1 probe request in them failed)"
	case failed > 1:
		line += fmt.Sprintf(" (%d probe requests in them failed)", failed)
	}
	if n := len(stalls) - len(serverStalls(stalls)); n > 0 {
		line += fmt.Sprintf("; %d of them the client's own: its process was not running then (stopped or starved of CPU), so the server did not make those requests wait", n)
	}
	return line
}

// stallCaveats is one caveat per phase with stalls.
func (d *data) stallCaveats() []string {
	var out []string
	for _, ph := range d.measured {
		for _, sys := range d.systems {
			c := d.cell(ph, sys)
			for _, r := range c.reps {
				_, stalls := d.stallsOf(sys, ph.index, r.info.Repetition)
				// The client's own stalls are the client-stalled caveat's.
				stalls = serverStalls(stalls)
				if len(stalls) == 0 {
					continue
				}
				where := fmt.Sprintf("%s, %s", sys, ph.name)
				if len(c.reps) > 1 {
					where += fmt.Sprintf(" (repetition %d)", r.info.Repetition)
				}
				var peak int64
				for _, s := range stalls {
					peak = max(peak, s.duration())
				}
				n := fmt.Sprintf("%d stalls", len(stalls))
				if len(stalls) == 1 {
					n = "1 stall"
				}
				out = append(out, fmt.Sprintf("%s had %s > %s (the longest %s): requests waited that long for an answer, which the percentiles of a long phase can hide; see Stalls.",
					where, n, threshold(r.info.StallThreshold()), seconds(peak)))
			}
		}
	}
	return out
}

// seconds formats a duration in ns: "1.52 s", or "40.0 ms" below a second.
func seconds(ns int64) string {
	if ns >= int64(time.Second) || ns <= -int64(time.Second) {
		return fmt.Sprintf("%.2f s", float64(ns)/1e9)
	}
	return fmt.Sprintf("%.1f ms", float64(ns)/1e6)
}

// threshold formats a stall threshold as a suite would write it: "1 s", "250 ms".
func threshold(d time.Duration) string {
	if d >= time.Second {
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(float64(d)/1e6, 'f', -1, 64) + " ms"
}

// stallConsole is the stall line of every phase with a side probe, for the result
// tables a run prints.
func (d *data) stallConsole(b *strings.Builder) {
	var lines []string
	for _, ph := range d.measured {
		for _, sys := range d.systems {
			for _, r := range d.cell(ph, sys).reps {
				det, stalls := d.stallsOf(sys, ph.index, r.info.Repetition)
				if det == nil {
					continue
				}
				where := fmt.Sprintf("%s, %s", sys, ph.name)
				if d.m.Repeat > 1 {
					where += fmt.Sprintf(" (repetition %d)", r.info.Repetition)
				}
				lines = append(lines, fmt.Sprintf("- %s: %s\n", where, stallLine(det, stalls, r.info)))
			}
		}
	}
	if len(lines) > 0 {
		b.WriteString("### Stalls (side probe)\n\n" + strings.Join(lines, "") + "\n")
	}
}

// StallFinder finds one phase's stalls as its side probe's requests arrive,
// as the report finds them in probe.parquet: for the live page of a run.
type StallFinder struct{ d stallDetector }

// NewStallFinder finds the stalls above threshold.
func NewStallFinder(threshold time.Duration) *StallFinder {
	return &StallFinder{stallDetector{threshold: int64(threshold)}}
}

// Add is one probe request, in the order the probe sent them; times are
// offsets from the phase start.
func (f *StallFinder) Add(intended, end time.Duration, failed bool) {
	f.d.add(int64(intended), int64(end), failed)
}

// Bands are the stalls found so far as the latency chart shades them.
func (f *StallFinder) Bands(system string, color int) []chart.Band {
	var out []chart.Band
	for _, s := range f.d.result() {
		out = append(out, stallBand(system, color, s))
	}
	return out
}

// stallBand is a stall as the latency chart shades it.
func stallBand(system string, color int, s stall) chart.Band {
	return chart.Band{From: float64(s.start) / 1e9, To: float64(s.end) / 1e9, Color: color, Label: system + " stall " + seconds(s.duration())}
}
