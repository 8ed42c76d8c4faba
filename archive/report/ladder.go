package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
)

// ladders writes, for each fixed-rate ladder of the suite, the table the published
// ladders use: a row per target rate, a column per system with p50 / p99 in ms of
// every op of the step; NS (achieved rate) for a step not sustained; — once a
// system's ladder had stopped. Rows are the steps any system ran. Repetitions are pooled: their histograms merged,
// which is exact (the published tables averaged two runs' percentiles instead).
func (d *data) ladders(b *strings.Builder) {
	var names []string
	steps := map[string][]phaseRef{}
	for _, ph := range d.measured {
		if l := ph.info.Ladder; l != "" {
			if _, seen := steps[l]; !seen {
				names = append(names, l)
			}
			steps[l] = append(steps[l], ph)
		}
	}
	for _, name := range names {
		slices.SortStableFunc(steps[name], func(a, b phaseRef) int { return cmp.Compare(a.info.Rate, b.info.Rate) })
		first := steps[name][0].info
		fmt.Fprintf(b, "### Ladder %s\n\n%s; %d connections; each step %s.\n\n", name, first.Workload, first.Connections, time.Duration(first.DurationNs))
		for _, t := range []struct {
			what string
			hdr  func(archive.SummaryRow) []byte
		}{
			{"Response time (from each operation's intended send: queueing counts)", func(r archive.SummaryRow) []byte { return r.RespHDR }},
			{"Service time (from the actual send, as memtier and YCSB publish)", func(r archive.SummaryRow) []byte { return r.SvcHDR }},
		} {
			fmt.Fprintf(b, "%s: each cell is p50 / p99 in ms over every op of the step, repetitions pooled (histograms merged). **NS** marks a step not sustained (below %.0f%% of its target), with the rate achieved; — a step not run because the system's ladder had stopped.\n\n", t.what, archive.SustainedFraction*100)
			b.WriteString("| target ops/s |")
			sep := "|--:|"
			for _, sys := range d.systems {
				fmt.Fprintf(b, " %s |", sys)
				sep += "--:|"
			}
			b.WriteString("\n" + sep + "\n")
			for _, ph := range steps[name] {
				fmt.Fprintf(b, "| %s |", thousands(int64(math.Round(ph.info.Rate))))
				for _, sys := range d.systems {
					fmt.Fprintf(b, " %s |", d.ladderCell(d.cell(ph, sys), t.hdr))
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
	}
}

func (d *data) ladderCell(c cell, hdr func(archive.SummaryRow) []byte) string {
	reps := c.measured()
	if len(reps) == 0 {
		for _, r := range c.reps {
			if r.info.Status != "skipped" {
				return string(r.info.Status)
			}
		}
		return "—"
	}
	var achieved float64
	sustained := true
	var rows []archive.SummaryRow
	for _, r := range reps {
		if r.info.Status != "ok" {
			return string(r.info.Status)
		}
		achieved += r.throughput / float64(len(reps))
		sustained = sustained && r.sustained()
		rows = append(rows, r.rows...)
	}
	if !sustained {
		return fmt.Sprintf("NS (%s)", thousands(int64(math.Round(achieved))))
	}
	h := mergeEncoded(rows, hdr)
	if h == nil || h.TotalCount() == 0 {
		return "—"
	}
	return fmt.Sprintf("%s / %s", ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(99)))
}
