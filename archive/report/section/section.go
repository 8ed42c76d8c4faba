// Package section is what a method's part of the report sees of an archive,
// and what it gives back: a method of measuring (core.Method) that implements
// Method writes, for each phase written with it, its section of report.md and
// its charts (chart.Chart), which report.md and report.html then show — from
// the archive alone, so that the same archive always gives the same bytes.
// The report (archive/report) builds each Group and asks the registered
// methods; a method's package imports this one, never the report.
package section

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
)

// Method is a method's part in the report: its section for one phase written
// with it.
type Method interface {
	Section(g Group) Part
}

// Part is a method's section for one phase written with it.
type Part struct {
	// Title names the section ("Ladder get"); Anchor is its id on the page
	// ("ladder-get", NamePart of the phase's name).
	Title, Anchor string
	// Markdown is the section in report.md, from its "### " heading on.
	Markdown string
	// Charts are its charts, each with its ID and its File under ChartsDir.
	Charts []*chart.Chart
}

// Group is one phase written with a method, as the archive holds it: its
// steps in suite order, every system of the run in run order, and every
// phase the archive holds (for what the steps' first repetitions do not say:
// how many repetitions ran).
type Group struct {
	Of      string
	Steps   []Step
	Systems []string
	Phases  []archive.PhaseInfo
}

// Step is one step of the phase: a measured phase of the suite.
type Step struct {
	// Info is its first repetition on the first system that ran it.
	Info archive.PhaseInfo
	// Cells are each system's repetitions of it, by system.
	Cells map[string]Cell
}

// Cell is one system in one step, over its repetitions (in order).
type Cell struct {
	Reps []Rep
}

// Measured are the repetitions that produced numbers.
func (c Cell) Measured() []Rep {
	var out []Rep
	for _, r := range c.Reps {
		if len(r.Rows) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// Rep is one repetition of one step on one system.
type Rep struct {
	Info       archive.PhaseInfo
	Rows       []archive.SummaryRow // one per op, sorted by op
	Throughput float64              // successful ops/s, all ops
}

// Sustained says whether the repetition held its target rate (a closed loop's
// always does).
func (r Rep) Sustained() bool {
	return len(r.Rows) == 0 || r.Rows[0].Sustained == nil || *r.Rows[0].Sustained
}

// Op is the repetition's row of op.
func (r Rep) Op(name string) (archive.SummaryRow, bool) {
	for _, row := range r.Rows {
		if row.Op == name {
			return row, true
		}
	}
	return archive.SummaryRow{}, false
}

// DeliverOp names the op whose latencies describe a pub/sub phase.
var DeliverOp = core.OpDeliver.String()

// Timed are the rows whose latencies describe the repetition: its deliveries
// in a pub/sub phase (the publishes' own round trips say little), else every
// op.
func (r Rep) Timed() []archive.SummaryRow { return archive.TimedRows(&r.Info, r.Rows) }

// ChartsDir holds an archive's chart files.
const ChartsDir = "charts/"

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// maxNamePart bounds the part of a file name or anchor made from a name in an
// archive (a phase's, a ladder's): the archive may come from anywhere.
const maxNamePart = 64

// NamePart makes a name of the archive's safe in a file name or an anchor: its
// characters outside [A-Za-z0-9._-] become _, and a longer one is cut, with a
// hash of the whole so that two long names stay apart.
func NamePart(name string) string {
	s := unsafeName.ReplaceAllString(name, "_")
	if len(s) <= maxNamePart {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	return s[:maxNamePart-9] + "-" + hex.EncodeToString(sum[:4])
}

// TableHead writes a table's header: lead (its first cells, as they are), a
// right-aligned column for each of cols, and the separator line, sep (the lead
// cells' alignment) followed by the columns'.
func TableHead(b *strings.Builder, lead, sep string, cols []string) {
	b.WriteString(lead)
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n" + sep + strings.Repeat("--:|", len(cols)) + "\n")
}

// Ms writes nanoseconds as milliseconds, to the microsecond.
func Ms(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }

// Thousands writes n with a comma between each group of three digits.
func Thousands(n int64) string {
	s := fmt.Sprintf("%d", n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// MergeHistograms merges the histograms enc encodes of each of rows; nil when
// none decodes.
func MergeHistograms[T any](rows []T, enc func(T) []byte) *hdrhistogram.Histogram {
	var out *hdrhistogram.Histogram
	for _, r := range rows {
		h, err := core.DecodeHist(enc(r))
		if err != nil || h == nil {
			continue
		}
		if out == nil {
			out = core.NewHistogram()
		}
		out.Merge(h)
	}
	return out
}
