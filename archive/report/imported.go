package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// importedHeader opens the report of a run imported from another tool's output
// (`cmpbench import`): where its numbers come from instead of the client host,
// seed and suite of a cmpbench run. The import's caveats are among the others.
func (d *data) importedHeader(b *strings.Builder) {
	m, imp := d.m, d.m.Imported
	tool := imp.Tool
	if imp.Version != "" {
		tool += " " + literal(imp.Version) // as the tool's output says
	}
	fmt.Fprintf(b, "- Imported from %s's output %s (SHA-256 `%s`)", tool, literal(imp.Source), core.Shorten(imp.SourceSHA256, 16))
	if len(imp.Files) > 0 {
		var names []string
		for _, f := range imp.Files {
			names = append(names, literal(f.Name))
		}
		fmt.Fprintf(b, " and %s", strings.Join(names, ", "))
	}
	fmt.Fprintf(b, " by cmpbench %s (commit %s): %s measured these numbers, not cmpbench\n", m.Cmpbench.Version, core.Shorten(m.Cmpbench.Commit, 12), imp.Tool)
	if m.Started.IsZero() {
		b.WriteString("- When it ran: not in the source\n")
	} else {
		fmt.Fprintf(b, "- Started %s", m.Started.UTC().Format("2006-01-02 15:04:05 MST"))
		if !m.Ended.IsZero() {
			fmt.Fprintf(b, ", took %s", m.Ended.Sub(m.Started).Round(time.Second))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "- Response time: %s\n\n", imp.ResponseTime)
}

// latencyCell prints a latency in ms. Zero is no measurement — a percentile an
// imported source did not give, or the response time of a tool that measures
// service time only — and shows as —.
func latencyCell(ns int64) string {
	if ns == 0 {
		return "—"
	}
	return ms(ns)
}
