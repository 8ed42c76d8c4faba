// Package compare sets two archives side by side: per measured phase and op, the
// change in throughput and latency percentiles, judged against a noise band and a
// regression threshold, and flagged UNSTABLE where repetitions disagree.
package compare

import (
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"

	"github.com/cmpbench/cmpbench/archive"
)

// Options are the judgement thresholds, as fractions.
type Options struct {
	Threshold float64 // beyond this change: regression or improvement (default 0.05)
	Noise     float64 // within this change: unchanged (default 0.03)
	Unstable  float64 // repetitions' coefficient of variation above this: UNSTABLE (default 0.10)
}

// Defaults for Options.
var Defaults = Options{Threshold: 0.05, Noise: 0.03, Unstable: 0.10}

// Verdicts.
const (
	Unchanged     = "unchanged"
	Minor         = "minor"       // beyond the noise band, within the threshold
	Improvement   = "improvement" // beyond the threshold, for the better
	Regression    = "regression"  // beyond the threshold, for the worse
	Unstable      = "UNSTABLE"    // repetitions vary too much to judge
	NotComparable = "NS"          // a fixed-rate step not sustained on one side
	Missing       = "missing"     // on one side only
)

// Row is one metric of one op of one phase of one system.
type Row struct {
	System, Phase, Op, Metric string
	A, B                      float64
	Change                    float64 // (B - A) / A
	Verdict                   string
}

type key struct{ system, phase, op string }

// metric reads one number from a summary row; lowerIsBetter for latencies.
type metric struct {
	name          string
	lowerIsBetter bool
	value         func(archive.SummaryRow) float64
}

var metrics = []metric{
	{"ops/s", false, func(r archive.SummaryRow) float64 { return r.Throughput }},
	{"p50 ms", true, func(r archive.SummaryRow) float64 { return float64(r.RespP50) / 1e6 }},
	{"p99 ms", true, func(r archive.SummaryRow) float64 { return float64(r.RespP99) / 1e6 }},
	{"p99.9 ms", true, func(r archive.SummaryRow) float64 { return float64(r.RespP999) / 1e6 }},
}

// side is one archive's measured rows, grouped over repetitions.
type side map[key][]archive.SummaryRow

func group(a *archive.Archive) side {
	s := side{}
	for _, r := range a.Summary {
		if r.Kind == "measured" {
			k := key{r.System, r.Phase, r.Op}
			s[k] = append(s[k], r)
		}
	}
	return s
}

// Compare lists every metric of every measured phase x op found in either archive.
func Compare(a, b *archive.Archive, o Options) []Row {
	sa, sb := group(a), group(b)
	keys := map[key]bool{}
	for k := range sa {
		keys[k] = true
	}
	for k := range sb {
		keys[k] = true
	}
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
			return phaseOrder(sa, sb, x) < phaseOrder(sa, sb, y)
		}
		return x.op < y.op
	})
	var rows []Row
	for _, k := range sorted {
		ra, rb := sa[k], sb[k]
		for _, m := range metrics {
			row := Row{System: k.system, Phase: k.phase, Op: k.op, Metric: m.name}
			if len(ra) == 0 || len(rb) == 0 {
				row.Verdict = Missing
				if len(ra) > 0 {
					row.A = spread(ra, m).Median
				} else {
					row.B = spread(rb, m).Median
				}
				rows = append(rows, row)
				continue
			}
			pa, pb := spread(ra, m), spread(rb, m)
			row.A, row.B = pa.Median, pb.Median
			if row.A != 0 {
				row.Change = (row.B - row.A) / row.A
			}
			row.Verdict = judge(row.Change, m.lowerIsBetter, o)
			switch {
			case sustainedAll(ra) && !sustainedAll(rb) && m.name == "ops/s":
				row.Verdict = Regression
			case !sustainedAll(ra) && sustainedAll(rb) && m.name == "ops/s":
				row.Verdict = Improvement
			case !sustainedAll(ra) || !sustainedAll(rb):
				if m.lowerIsBetter {
					row.Verdict = NotComparable
				}
			case pa.N > 1 && pa.CV > o.Unstable || pb.N > 1 && pb.CV > o.Unstable:
				row.Verdict = Unstable
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func phaseOrder(sa, sb side, k key) int {
	if r := sa[k]; len(r) > 0 {
		return r[0].PhaseIndex
	}
	return sb[k][0].PhaseIndex
}

func spread(rows []archive.SummaryRow, m metric) archive.Spread {
	v := make([]float64, len(rows))
	for i, r := range rows {
		v[i] = m.value(r)
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

func judge(change float64, lowerIsBetter bool, o Options) string {
	c := math.Abs(change)
	switch {
	case c <= o.Noise:
		return Unchanged
	case c <= o.Threshold:
		return Minor
	case (change < 0) == lowerIsBetter:
		return Improvement
	default:
		return Regression
	}
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

// Write prints the rows as a table.
func Write(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SYSTEM\tPHASE\tOP\tMETRIC\tA\tB\tCHANGE\tVERDICT\t")
	for _, r := range rows {
		change := "—"
		if r.Verdict != Missing && r.A != 0 {
			change = fmt.Sprintf("%+.1f%%", r.Change*100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.System, r.Phase, r.Op, r.Metric, num(r.A), num(r.B), change, r.Verdict)
	}
	return tw.Flush()
}

func num(v float64) string {
	switch {
	case v == 0:
		return "—"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}
