package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core/confidence"
)

// sure says whether the archive says how sure its numbers are (format 3): a
// report of an older one shows no interval, as it did.
func (d *data) sure() bool { return d.m.FormatVersion >= 3 }

// plusMinus is a relative half width as the tables show it (section.PlusMinus).
func plusMinus(h float64) string { return section.PlusMinus(h) }

// rateSure is the relative half width of the interval of a cell's throughput
// (section.Cell.RateSure).
func (c cell) rateSure() (float64, bool) { return c.section().RateSure() }

// timedSure is the relative half width of the interval of a cell's timed
// percentile name (section.Cell.TimedSure).
func (c cell) timedSure(name string, q float64) (float64, bool) {
	return c.section().TimedSure(name, q)
}

// opSure is the relative half width of the interval of an op's response-time
// percentile (the columns that are not service time only), where the cell's
// latencies have one (section.Cell.LatenciesSure).
func (c cell) opSure(op string, pick, lo, hi func(archive.SummaryRow) float64) (float64, bool) {
	if !c.section().LatenciesSure() {
		return 0, false
	}
	reps := c.measured()
	var v []float64
	var row archive.SummaryRow
	for _, r := range reps {
		if rw, ok := r.op(op); ok && rw.Count > 0 {
			v = append(v, pick(rw))
			row = rw
		}
	}
	switch {
	case len(reps) > 1:
		return section.AcrossReps(v)
	case len(v) == 1 && hi(row) > 0 && v[0] > 0:
		return confidence.Interval{Lo: lo(row), Hi: hi(row)}.Half(v[0]), true
	}
	return 0, false
}

// opIntervals are the op columns whose response-time interval the summary
// holds, by the column's percentile; the service-time columns of a fixed-rate
// phase have none.
var opIntervals = map[string][2]func(archive.SummaryRow) float64{
	"p50":    {func(r archive.SummaryRow) float64 { return float64(r.RespP50Lo) }, func(r archive.SummaryRow) float64 { return float64(r.RespP50Hi) }},
	"p99":    {func(r archive.SummaryRow) float64 { return float64(r.RespP99Lo) }, func(r archive.SummaryRow) float64 { return float64(r.RespP99Hi) }},
	"p99.9":  {func(r archive.SummaryRow) float64 { return float64(r.RespP999Lo) }, func(r archive.SummaryRow) float64 { return float64(r.RespP999Hi) }},
	"p99.99": {func(r archive.SummaryRow) float64 { return float64(r.RespP9999Lo) }, func(r archive.SummaryRow) float64 { return float64(r.RespP9999Hi) }},
}

// latencySure is the ± of an op's latency column l, when it has one.
func (c cell) latencySure(op string, l latencyColumn) string {
	name := strings.TrimPrefix(l.name, "response ")
	iv, ok := opIntervals[name]
	if !ok || strings.HasPrefix(l.name, "service ") {
		return ""
	}
	pick := func(r archive.SummaryRow) float64 { return float64(l.pick(r)) }
	if h, ok := c.opSure(op, pick, iv[0], iv[1]); ok {
		return plusMinus(h)
	}
	return ""
}

// unsure lists, for a phase's table, what has no interval and why: each
// system's notes, once each.
func (d *data) unsure(ph phaseRef) []string {
	var out []string
	for _, sys := range d.systems {
		reps := d.cell(ph, sys).measured()
		if len(reps) != 1 {
			continue // none, or repetitions: their spread decides
		}
		seen := map[string]bool{}
		var notes []string
		if pc := reps[0].info.Confidence; pc != nil && pc.Note != "" {
			notes, seen[pc.Note] = append(notes, "every op: "+pc.Note), true
		}
		for _, r := range reps[0].rows {
			if r.CINote != "" && !seen[r.CINote] {
				notes, seen[r.CINote] = append(notes, r.Op+": "+r.CINote), true
			}
		}
		if len(notes) > 0 {
			out = append(out, sys+": "+strings.Join(notes, "; "))
		}
	}
	return out
}

// sureNote is what the tables' ± means, said once.
func (d *data) sureNote() string {
	if !d.sure() {
		return ""
	}
	note := "**±** is the 95 % confidence interval of the number before it, relative to it (the larger side of a percentile's, which is not symmetric): "
	if d.m.Repeat > 1 {
		note += fmt.Sprintf("of the mean of its %d repetitions, so it holds the run-to-run variance. ", d.m.Repeat)
	} else {
		note += "from the phase's own intervals (their autocorrelation counted), so it covers the noise within this run only, not from one run to the next (--repeat measures that). "
	}
	return note + fmt.Sprintf("**unsteady** marks a measured phase whose throughput drifted by %.0f %% or more, or a p99 by %.0f %% or more, across its window, more than its scatter explains; the caveats say how. See docs/measuring.md. ", 100*confidence.SteadyRate, 100*confidence.SteadyP99)
}

// spread is how much a cell's number varies from run to run
// (confidence.RunSpread) from its interval's relative half width h, and how
// many repetitions that interval is of; atLeast when it is one run's window
// only, a lower bound.
func (c cell) spread(h float64) (sigma float64, reps int, atLeast bool) {
	reps = max(1, len(c.measured()))
	return confidence.RunSpread(h, reps), reps, reps == 1
}

// runsToTell is how many repetitions of each side it takes to tell a
// difference of confidence.TellApart (confidence.RunsToTell), from the cell's
// interval's relative half width h.
func (c cell) runsToTell(h float64) string {
	sigma, _, atLeast := c.spread(h)
	n := confidence.RunsToTell(sigma, confidence.TellApart)
	switch {
	case n == math.MaxInt:
		return "—"
	case atLeast:
		return fmt.Sprintf("≥ %d", n)
	}
	return fmt.Sprint(n)
}

// smallest is the smallest difference that as many repetitions as the cell
// has, each side, tell from noise (confidence.Detectable), from the cell's
// interval's relative half width h, as the tables say it.
func (c cell) smallest(h float64) string {
	sigma, reps, atLeast := c.spread(h)
	d := confidence.Detectable(sigma, reps)
	switch {
	case d > 1:
		return ">100 %"
	case atLeast:
		return fmt.Sprintf("≥ %.1f %%", 100*d)
	}
	return fmt.Sprintf("%.1f %%", 100*d)
}

// estimate is a cell's throughput, or its timed percentile name (quantile q,
// 0-100) when q > 0, as confidence.Compare takes it.
func (c cell) estimate(name string, q float64) confidence.Estimate {
	reps := c.measured()
	var e confidence.Estimate
	for _, r := range reps {
		v := r.throughput
		if q > 0 {
			h := mergeEncoded(r.timed(), func(row archive.SummaryRow) []byte { return row.RespHDR })
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			v = float64(h.ValueAtQuantile(q))
		}
		e.Reps = append(e.Reps, v)
		// Its window's interval: the repetitions' spread is never taken
		// below what each says of itself (confidence.Estimate).
		var lo, hi float64
		if pc := r.info.Confidence; q == 0 && pc != nil && len(pc.Rate) == 2 {
			lo, hi = pc.Rate[0], pc.Rate[1]
		} else if l, h, ok := pc.RespOf(name); q > 0 && ok {
			lo, hi = float64(l), float64(h)
		}
		e.RepLo, e.RepHi = append(e.RepLo, lo), append(e.RepHi, hi)
	}
	if len(e.Reps) == 0 {
		return e
	}
	e.Value = archive.SpreadOf(e.Reps).Median
	if len(reps) == 1 {
		pc := reps[0].info.Confidence
		if q == 0 && pc != nil && len(pc.Rate) == 2 {
			e.Lo, e.Hi = pc.Rate[0], pc.Rate[1]
		} else if lo, hi, ok := pc.RespOf(name); q > 0 && ok {
			e.Lo, e.Hi = float64(lo), float64(hi)
		}
	}
	return e
}

// versus says how b's throughput and p99 differ from a's, with the change's
// interval and whether it is significant: "ops/s −12 % [−15, −9], p99 +3 %
// [−2, +8] within noise".
func versus(a, b cell) string {
	var parts []string
	for _, m := range []struct {
		label, name string
		q           float64
	}{{"ops/s", "", 0}, {"p99", "p99", 99}} {
		sa, sb := a.section(), b.section()
		if !sa.Sure() || !sb.Sure() || m.q > 0 && (!sa.LatenciesSure() || !sb.LatenciesSure()) {
			continue // a side not vouched for: failed, lagged, not sustained
		}
		ch, err := confidence.Compare(a.estimate(m.name, m.q), b.estimate(m.name, m.q), confidence.Level)
		if err != nil {
			continue
		}
		verdict := "within noise"
		if ch.Significant() {
			verdict = "significant"
		}
		parts = append(parts, fmt.Sprintf("%s %s [%s, %s] %s", m.label, signedPct(ch.Rel), signedPct(ch.Lo), signedPct(ch.Hi), verdict))
	}
	return strings.Join(parts, "; ")
}

// signedPct is a relative change as a signed percentage: "+12.3 %".
func signedPct(x float64) string { return fmt.Sprintf("%+.1f %%", 100*x) }

// sureSection says how sure the measured phases' numbers are: each system's
// throughput and p99 interval and the smallest difference a run like it could
// tell from noise; with several systems, how each differs from the first, and
// whether significantly.
func (d *data) sureSection(b *strings.Builder) {
	if !d.sure() || len(d.measured) == 0 {
		return
	}
	b.WriteString("## How sure\n\n")
	b.WriteString("Each number's 95 % confidence interval, and the smallest difference a comparison of two runs like this one, as many repetitions each, finds at 95 % confidence 80 % of the time (from how much the number varies from run to run: its repetitions' spread, or for a single run its own noise, then at least that: runs differ more than a run's intervals do). ")
	if d.m.Repeat > 1 {
		fmt.Fprintf(b, "With %d repetitions the intervals are of the repetitions' mean and hold the run-to-run variance. ", d.m.Repeat)
	} else {
		b.WriteString("A single run's interval covers the noise within the run only: run with --repeat 3 or more to measure the run-to-run variance too. ")
	}
	if len(d.systems) > 1 {
		fmt.Fprintf(b, "Against %s: the change of each system's throughput and p99 (every op merged) with its interval; **significant** when the interval leaves out zero.", d.systems[0])
	}
	fmt.Fprintf(b, " Repetitions to tell %.0f %%: how many runs of each side a comparison of throughput needs to find a difference of %.0f %% (at 95 %% confidence, 80 %% of the time), likewise.", 100*confidence.TellApart, 100*confidence.TellApart)
	b.WriteString("\n\n| phase | system | ops/s | smallest difference | repetitions to tell 5 % | p99 | smallest difference |")
	sep := "|---|---|--:|--:|--:|--:|--:|"
	if len(d.systems) > 1 {
		fmt.Fprintf(b, " against %s |", d.systems[0])
		sep += "---|"
	}
	b.WriteString("\n" + sep + "\n")
	for _, ph := range d.measured {
		first := d.cell(ph, d.systems[0])
		for i, sys := range d.systems {
			c := d.cell(ph, sys)
			rate, rateMin, runs, p99, p99Min := "—", "—", "—", "—", "—"
			if h, ok := c.rateSure(); ok {
				rate, rateMin, runs = strings.TrimSpace(plusMinus(h)), c.smallest(h), c.runsToTell(h)
			}
			if h, ok := c.timedSure("p99", 99); ok {
				p99, p99Min = strings.TrimSpace(plusMinus(h)), c.smallest(h)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |", ph.name, sys, rate, rateMin, runs, p99, p99Min)
			if len(d.systems) > 1 {
				vs := "—"
				if i > 0 {
					if v := versus(first, c); v != "" {
						vs = strings.ReplaceAll(v, "significant", "**significant**")
					}
				}
				fmt.Fprintf(b, " %s |", vs)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
}

// Spread is how much a measured phase's throughput varied from run to run on
// one system, as an archive measured it: what a run to come can expect to
// tell apart (confidence.Detectable, confidence.RunsToTell).
type Spread struct {
	Phase, System string
	// Sigma is the relative standard deviation of a run's throughput
	// (confidence.RunSpread), from Reps repetitions; AtLeast when Reps is 1:
	// from that run's window only, a lower bound.
	Sigma   float64
	Reps    int
	AtLeast bool
}

// Spreads are the archive's measured phases' spreads, by phase then system;
// none where a phase has no interval (an archive before format 3, a window
// too short).
func Spreads(a *archive.Archive) ([]Spread, error) {
	d, err := load(a)
	if err != nil {
		return nil, err
	}
	var out []Spread
	if !d.sure() {
		return nil, nil
	}
	for _, ph := range d.measured {
		for _, sys := range d.systems {
			c := d.cell(ph, sys)
			if h, ok := c.rateSure(); ok {
				sigma, reps, atLeast := c.spread(h)
				out = append(out, Spread{Phase: ph.name, System: sys, Sigma: sigma, Reps: reps, AtLeast: atLeast})
			}
		}
	}
	return out, nil
}
