package report

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mitchellh/go-wordwrap"

	"github.com/cmpbench/cmpbench/core"
)

// Console is what a run prints when its archive is written: each measured
// phase's table and the stalls, compact (fits 100 columns: every op merged,
// the flags in notes under the table) or wide (report.md's tables: every op
// and percentile, response and service time side by side).
type Console struct {
	Compact, Wide []byte
}

// consoleWidth is the width the compact tables fit.
const consoleWidth = 100

// console draws both forms.
func (d *data) console() Console {
	var wide strings.Builder
	if len(d.measured) > 0 {
		wide.WriteString(tablesNote)
	}
	d.tables(&wide)
	d.stallConsole(&wide)
	var compact strings.Builder
	for _, ph := range d.measured {
		d.compactTable(&compact, ph)
	}
	d.stallConsole(&compact)
	if len(d.measured) > 0 {
		compact.WriteString("Every op and percentile: --wide, report.md and report.html.\n\n")
	}
	// What a terminal shows acts on it: any text from a server shows, its
	// control characters made visible.
	return Console{Compact: []byte(core.Printable(compact.String())), Wide: []byte(core.Printable(wide.String()))}
}

// compactTable is one phase's table as the console shows it by default: per
// system its rate (against the target, NS), the merged ops' p50 to p99.99 in ms,
// its errors and status; the flags and error kinds follow as notes.
func (d *data) compactTable(b *strings.Builder, ph phaseRef) {
	info := ph.info
	kind := "service time"
	if info.Rate > 0 {
		kind = "response time"
	}
	head := fmt.Sprintf("%s: %s; %s; %s. Latencies in ms, %s, every op merged", ph.name, info.Workload, info.Shape, time.Duration(info.DurationNs), kind)
	b.WriteString(wordwrap.WrapString(head, consoleWidth) + "\n")
	// Right-aligned columns; the systems' names padded alike read left-aligned.
	name := len("system")
	for _, sys := range d.systems {
		name = max(name, len(sys))
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tops/s\tp50\tp99\tp99.9\tp99.99\terrors\tstatus\t\n", name, "system")
	var notes []string
	for _, r := range d.phaseRows(ph) {
		rate := r.Rate.Rate
		if r.Rate.NS {
			rate = "NS " + rate
		}
		status := "ok"
		if r.Rate.Bad {
			status = r.Rate.Status
		}
		errs := r.Errors
		if errs != "0" && errs != "—" {
			notes = append(notes, r.System+" errors: "+errs)
			errs = "yes"
		}
		if r.Rate.Flags != "" {
			notes = append(notes, r.System+": "+strings.Trim(strings.ReplaceAll(r.Rate.Flags, ") (", ", "), "()"))
		}
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, r.System, rate, r.P50, r.P99, r.P999, r.P9999, errs, status)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintf(b, "  %s\n", n)
	}
	b.WriteString("\n")
}
