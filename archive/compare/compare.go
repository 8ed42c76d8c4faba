// Package compare sets two archives side by side: per measured phase and op, the
// change in throughput and latency percentiles with its confidence interval,
// judged significant or within noise (by fixed bands where an archive holds no
// intervals), and flagged UNSTABLE where repetitions disagree.
package compare

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/confidence"
)

// Options are the judgement thresholds, as fractions.
type Options struct {
	Threshold float64 // beyond this change: regression or improvement (default 0.05)
	Noise     float64 // without an interval, within this change: unchanged (default 0.03)
	Unstable  float64 // repetitions' coefficient of variation above this: UNSTABLE (default 0.10)
	// Confidence is the level at which a change must be significant to be a
	// regression or improvement (default 0.95; 0 is the default).
	Confidence float64
}

// Defaults for Options.
var Defaults = Options{Threshold: 0.05, Noise: 0.03, Unstable: 0.10, Confidence: confidence.Level}

// Resolution is the smallest relative change compare tells from none, whatever the
// noise band: latencies come from HdrHistograms with 3 significant digits, whose
// buckets are up to 0.1% of their value wide, and changes are printed to 0.1%. A
// smaller change is unchanged, so that nothing printed as ±0.0% is ever judged.
const Resolution = 0.001

// Verdicts. A phase that did not end ok on a side is not compared: its verdict is
// its status there (failed, interrupted or skipped; B's when both did not end ok).
const (
	Unchanged     = "unchanged"    // no interval: within the noise band
	Minor         = "minor"        // no interval: beyond the noise band, within the threshold
	WithinNoise   = "within noise" // not significant, or within the threshold
	Improvement   = "improvement"  // beyond the threshold (and significant), for the better
	Regression    = "regression"   // beyond the threshold (and significant), for the worse
	Unstable      = "UNSTABLE"     // repetitions vary too much to judge without their interval
	NotComparable = "NS"           // a fixed-rate step not sustained on one side: latencies not judged
	Missing       = "missing"      // the phase or op is in one archive only
	Absent        = "absent"       // no value on a side: no operation of the op succeeded, so none was timed
)

// Row is one metric of one op of one phase of one system.
type Row struct {
	System, Phase, Op, Metric string
	// A and B are medians over repetitions, where HasA and HasB say there is a value.
	A, B       float64
	HasA, HasB bool
	// StatusA and StatusB are how the phase ended in each archive ("ok", "failed",
	// "interrupted", "skipped"); empty where the archive does not have it.
	StatusA, StatusB string
	Change           float64 // (B - A) / A, when both have a value; ±Inf from a zero A
	// Lo and Hi bound Change at Options.Confidence where Basis says what they
	// come from; Basis is empty where a side has no interval (an archive before
	// format 3, a window too short): then the fixed bands judged.
	Lo, Hi  float64
	Basis   string
	Verdict string
}

// Compared reports whether the row's numbers were set against each other.
func (r Row) Compared() bool {
	switch r.Verdict {
	case Unchanged, Minor, WithinNoise, Improvement, Regression, Unstable, NotComparable:
		return true
	}
	return false
}

// NotOK reports whether the phase did not end ok on a side (and so was not compared).
func (r Row) NotOK() bool { return notOK(r.StatusA) || notOK(r.StatusB) }

func notOK(status string) bool { return status != "" && status != string(core.StatusOK) }

type key struct{ system, phase, op string }

type phaseKey struct{ system, phase string }

// metric reads one number from a summary row, and its 95 % interval (zero
// where there is none); lowerIsBetter for latencies, which only rows with
// successful operations have.
type metric struct {
	name          string
	lowerIsBetter bool
	value         func(archive.SummaryRow) float64
	interval      func(archive.SummaryRow) (lo, hi float64)
}

var metrics = []metric{
	{"ops/s", false, func(r archive.SummaryRow) float64 { return r.Throughput },
		func(r archive.SummaryRow) (float64, float64) { return r.ThroughputLo, r.ThroughputHi }},
	{"p50 ms", true, func(r archive.SummaryRow) float64 { return ms(r.RespP50) },
		func(r archive.SummaryRow) (float64, float64) { return ms(r.RespP50Lo), ms(r.RespP50Hi) }},
	{"p99 ms", true, func(r archive.SummaryRow) float64 { return ms(r.RespP99) },
		func(r archive.SummaryRow) (float64, float64) { return ms(r.RespP99Lo), ms(r.RespP99Hi) }},
	{"p99.9 ms", true, func(r archive.SummaryRow) float64 { return ms(r.RespP999) },
		func(r archive.SummaryRow) (float64, float64) { return ms(r.RespP999Lo), ms(r.RespP999Hi) }},
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// has says whether a row has the metric: latencies exist only when something was
// timed, and a latency of 0 is none measured (an imported source that did not give
// the percentile, or the response time of a tool that measures service time only).
func (m metric) has(r archive.SummaryRow) bool {
	return !m.lowerIsBetter || r.Count > 0 && m.value(r) > 0
}

// side is one archive's measured phases: their rows, grouped over repetitions, and
// how each phase ended; intervals when the archive's rows can hold intervals.
type side struct {
	rows      map[key][]archive.SummaryRow
	status    map[phaseKey]string
	order     map[phaseKey]int
	intervals bool
}

func group(a *archive.Archive) side {
	s := side{rows: map[key][]archive.SummaryRow{}, status: map[phaseKey]string{}, order: map[phaseKey]int{},
		intervals: a.Manifest.FormatVersion >= formatWithIntervals}
	statuses := map[phaseKey][]string{}
	for _, p := range a.Manifest.Phases {
		if p.Kind == core.PhaseMeasured {
			pk := phaseKey{p.System, p.Name}
			statuses[pk] = append(statuses[pk], string(p.Status))
			s.order[pk] = p.Index
		}
	}
	for _, r := range a.Summary {
		if r.Kind == string(core.PhaseMeasured) {
			k := key{r.System, r.Phase, r.Op}
			s.rows[k] = append(s.rows[k], r)
			pk := phaseKey{r.System, r.Phase}
			statuses[pk] = append(statuses[pk], r.Status)
			s.order[pk] = r.PhaseIndex
		}
	}
	for pk, list := range statuses {
		s.status[pk] = worst(list)
	}
	return s
}

// worst is "ok" when every repetition ended ok, else the first of failed,
// interrupted, skipped or any other status found.
func worst(statuses []string) string {
	for _, w := range []core.PhaseStatus{core.StatusFailed, core.StatusInterrupted, core.StatusSkipped} {
		if slices.Contains(statuses, string(w)) {
			return string(w)
		}
	}
	for _, st := range statuses {
		if st != string(core.StatusOK) {
			return st
		}
	}
	return string(core.StatusOK)
}

// Compare lists every metric of every measured phase x op found in either archive;
// a measured phase that has no rows on either side (it failed or was skipped before
// any operation) is listed once, with op and metric "—".
func Compare(a, b *archive.Archive, o Options) []Row {
	p := pair{group(a), group(b)}
	var rows []Row
	for _, k := range p.sortedKeys() {
		rows = append(rows, p.rowsOf(k, o)...)
	}
	return rows
}

// pair is the two archives' sides, A and B.
type pair struct{ a, b side }

// keys is every phase x op with rows on either side, and (op "") every measured
// phase with rows on neither.
func (p pair) keys() map[key]bool {
	keys := map[key]bool{}
	withRows := map[phaseKey]bool{}
	for _, s := range []side{p.a, p.b} {
		for k := range s.rows {
			keys[k] = true
			withRows[phaseKey{k.system, k.phase}] = true
		}
	}
	for _, s := range []side{p.a, p.b} {
		for pk := range s.status {
			if !withRows[pk] {
				keys[key{pk.system, pk.phase, ""}] = true
			}
		}
	}
	return keys
}

// order is the index of k's phase in the suite: A's, else B's.
func (p pair) order(k key) int {
	if i, ok := p.a.order[phaseKey{k.system, k.phase}]; ok {
		return i
	}
	return p.b.order[phaseKey{k.system, k.phase}]
}

// sortedKeys is keys in the order rows are listed: by system, then phase in suite
// order (by name where the order ties), then op.
func (p pair) sortedKeys() []key {
	keys := p.keys()
	sorted := make([]key, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		x, y := sorted[i], sorted[j]
		if x.system != y.system {
			return x.system < y.system
		}
		if x.phase != y.phase {
			if ox, oy := p.order(x), p.order(y); ox != oy {
				return ox < oy
			}
			return x.phase < y.phase
		}
		return x.op < y.op
	})
	return sorted
}

// rowsOf is k's rows: one per metric, or for a phase with rows on neither side
// (op "") the one row of its status.
func (p pair) rowsOf(k key, o Options) []Row {
	pk := phaseKey{k.system, k.phase}
	base := Row{System: k.system, Phase: k.phase, Op: k.op, StatusA: p.a.status[pk], StatusB: p.b.status[pk]}
	if k.op == "" {
		base.Verdict = verdictOfStatus(base)
		return []Row{base}
	}
	rows := make([]Row, 0, len(metrics))
	for _, m := range metrics {
		rows = append(rows, p.judgeMetric(base, m, k, o))
	}
	return rows
}

// judgeMetric is base's row for metric m of k, its values from A's and B's rows
// (over repetitions), with its change and verdict.
func (p pair) judgeMetric(base Row, m metric, k key, o Options) Row {
	ra, rb := p.a.rows[k], p.b.rows[k]
	row := base
	row.Metric = m.name
	pa, pb := spread(ra, m), spread(rb, m)
	row.HasA, row.HasB = pa.N > 0, pb.N > 0
	row.A, row.B = pa.Median, pb.Median
	switch {
	case row.StatusA == "" || row.StatusB == "":
		row.Verdict = Missing
	case row.NotOK():
		row.Verdict = verdictOfStatus(row)
	case len(ra) == 0 || len(rb) == 0:
		row.Verdict = Missing
	case !row.HasA || !row.HasB:
		row.Verdict = Absent
	default:
		row.Change = change(row.A, row.B)
		row.Verdict = judge(row.Change, m.lowerIsBetter, o)
		if c, basis, ok := p.interval(m, ra, rb, o); ok {
			// The change its interval is of: with repetitions, of their
			// geometric means (the medians in A and B may differ a little).
			row.Change, row.Lo, row.Hi, row.Basis = c.Rel, c.Lo, c.Hi, basis
			row.Verdict = judgeSignificant(row.Change, c, m.lowerIsBetter, o)
		}
		switch {
		case m.lowerIsBetter && (!sustainedAll(ra) || !sustainedAll(rb)):
			row.Verdict = NotComparable
		case row.Basis == ByRepetitions:
			// The repetitions' spread is in the interval: however much they
			// vary, the change is significant or within noise.
		case pa.N > 1 && pa.CV > o.Unstable || pb.N > 1 && pb.CV > o.Unstable:
			row.Verdict = Unstable
		}
	}
	return row
}

// verdictOfStatus is the status of a phase that did not end ok: B's, else A's.
func verdictOfStatus(r Row) string {
	switch {
	case notOK(r.StatusB):
		return r.StatusB
	case notOK(r.StatusA):
		return r.StatusA
	case r.StatusA == "" || r.StatusB == "":
		return Missing
	}
	return Absent // both ok, and neither has a row
}

// change is (b - a) / a; from zero, any value is an infinite change.
func change(a, b float64) float64 {
	switch {
	case a != 0:
		return (b - a) / a
	case b == 0:
		return 0
	default:
		return math.Copysign(math.Inf(1), b)
	}
}

func spread(rows []archive.SummaryRow, m metric) archive.Spread {
	var v []float64
	for _, r := range rows {
		if m.has(r) {
			v = append(v, m.value(r))
		}
	}
	return archive.SpreadOf(v)
}

func sustainedAll(rows []archive.SummaryRow) bool {
	for _, r := range rows {
		if r.Sustained != nil && !*r.Sustained {
			return false
		}
	}
	return true
}

// judge judges a change without an interval, by the fixed bands.
func judge(change float64, lowerIsBetter bool, o Options) string {
	c := math.Abs(change)
	switch {
	case c < Resolution || c <= o.Noise:
		return Unchanged
	case c <= o.Threshold:
		return Minor
	}
	return direction(change, lowerIsBetter)
}

// direction is the verdict of a change that counts: an improvement or a
// regression.
func direction(change float64, lowerIsBetter bool) string {
	if (change < 0) == lowerIsBetter {
		return Improvement
	}
	return Regression
}

// Count returns how many rows have the verdict.
func Count(rows []Row, verdict string) int {
	n := 0
	for _, r := range rows {
		if r.Verdict == verdict {
			n++
		}
	}
	return n
}

// Summary is the comparison's totals in a sentence, a second naming the phases
// that ended ok in A but not in B, when any did, and what judged the changes
// where it was not both sides' repetitions (notes).
func Summary(rows []Row, o Options) []string {
	notOK := 0
	for _, r := range rows {
		if r.NotOK() {
			notOK++
		}
	}
	t := tally(rows)
	counts := fmt.Sprintf("%d regressions, %d improvements, ", Count(rows, Regression), Count(rows, Improvement))
	bands := fmt.Sprintf("threshold %.4g%%", o.Threshold*100)
	if t.withInterval > 0 {
		counts += fmt.Sprintf("%d within noise, ", Count(rows, WithinNoise))
		bands += fmt.Sprintf(", confidence %.4g%%", o.level()*100)
	}
	if t.byBands > 0 {
		bands += fmt.Sprintf(", noise %.4g%%", o.Noise*100)
	}
	out := []string{fmt.Sprintf("%s%d unstable, %d missing, %d absent, %d not compared because a phase did not end ok (%s)",
		counts, Count(rows, Unstable), Count(rows, Missing), Count(rows, Absent), notOK, bands)}
	if failed := FailedInB(rows); len(failed) > 0 {
		out = append(out, "ended ok in A but not in B: "+strings.Join(failed, ", "))
	}
	return append(out, t.notes()...)
}

// FailedInB lists the phases ("system/phase (status)") that ended ok in A and not
// in B: they show no regression only because they were not compared.
func FailedInB(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if r.StatusA == string(core.StatusOK) && notOK(r.StatusB) {
			if s := fmt.Sprintf("%s/%s (%s)", r.System, r.Phase, r.StatusB); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// Comparable returns an error when no metric was compared: when the archives share
// no measured phase (system, phase and op), or every phase they share did not end
// ok on a side or has no values.
func Comparable(rows []Row) error {
	var inA, inB []string
	shared := 0
	for _, r := range rows {
		if r.Compared() {
			return nil
		}
		name := r.System + "/" + r.Phase
		if r.StatusA != "" && !slices.Contains(inA, name) {
			inA = append(inA, name)
		}
		if r.StatusB != "" && !slices.Contains(inB, name) {
			inB = append(inB, name)
		}
		if r.Verdict != Missing {
			shared++
		}
	}
	if shared == 0 {
		return fmt.Errorf("nothing to compare: A and B share no measured phase (system, phase and op); A has %s; B has %s",
			list(inA), list(inB))
	}
	return errors.New("nothing compared: every measured phase A and B share did not end ok on a side, or has no values on one")
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Write prints the rows as a table. A side where the phase did not end ok shows its
// status, a missing value "—"; the change is printed only where values were compared.
func Write(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SYSTEM\tPHASE\tOP\tMETRIC\tA\tB\tCHANGE\tVERDICT\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.System, r.Phase, dash(r.Op), dash(r.Metric),
			cell(r.A, r.HasA, r.StatusA), cell(r.B, r.HasB, r.StatusB), r.ChangeText(), r.Verdict)
	}
	return tw.Flush()
}

// ChangeText is the row's change as compare prints it: "+12.3% [+9.1, +15.6]"
// with its interval (in percent), "+12.3%" without one, "—" where values were
// not compared.
func (r Row) ChangeText() string {
	switch {
	case !r.Compared():
		return "—"
	case r.Basis == "":
		return percent(r.Change)
	}
	return fmt.Sprintf("%s [%+.1f, %+.1f]", percent(r.Change), r.Lo*100, r.Hi*100)
}

func cell(v float64, has bool, status string) string {
	switch {
	case notOK(status):
		return status
	case !has:
		return "—"
	case v >= 100 || v == 0:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func percent(c float64) string {
	if math.IsInf(c, 0) {
		return fmt.Sprintf("%+.0f (from 0)", c) // "+Inf (from 0)"
	}
	return fmt.Sprintf("%+.1f%%", c*100)
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
