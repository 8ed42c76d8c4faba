package report

import (
	"fmt"
	"strings"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/section"
)

// The report of pub/sub phases: their delivery latency is the DELIVER op's (in the
// side-by-side, phase and ladder tables like any op: response time from the
// intended publish, service time from the actual one), and what their messages
// did is this section's table.

// timed are the rows whose latencies describe the repetition (section.Rep's
// Timed): its deliveries in a pub/sub phase, else every op.
func (r rep) timed() []archive.SummaryRow { return r.section().Timed() }

// pubsubSection writes a table of every pub/sub phase's messages.
func (d *data) pubsubSection(b *strings.Builder) {
	var lines []string
	for _, ph := range d.measured {
		for _, sys := range d.systems {
			c := d.cell(ph, sys)
			for _, r := range c.reps {
				m := r.info.Messages
				if m == nil {
					continue
				}
				name := ph.name
				if len(c.reps) > 1 {
					name += fmt.Sprintf(" (repetition %d)", r.info.Repetition)
				}
				lat := "—"
				if row, ok := r.op(section.DeliverOp); ok && row.Count > 0 {
					lat = fmt.Sprintf("%s / %s / %s", ms(row.SvcP50), ms(row.SvcP99), ms(row.SvcP999))
					if row.RespP99 > 0 {
						lat += fmt.Sprintf(" (response p99 %s)", ms(row.RespP99))
					}
				}
				lines = append(lines, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", sys, name,
					thousands(m.Published), thousands(m.Expected), thousands(m.Delivered), thousands(m.Lost), thousands(m.Duplicates),
					thousands(m.Foreign), lat, ms(m.Drain)))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("### Pub/sub messages\n\n")
	b.WriteString("Publishers send open loop at the phase's rate; every message carries its publisher, its channel, its number on that channel and when it was due and sent, so each subscriber times it and sees gaps and repeats. " +
		"**published**: publishes the server acknowledged; **expected**: the deliveries they owe (one per subscriber of the channel); **lost**: expected deliveries that had not arrived when the subscribers stopped waiting (every expected one in, or 0.5 s without any, at most 5 s after the last publish: the drain); **duplicates**: delivered again or out of order; **foreign**: messages on the channels cmpbench did not publish. " +
		"Delivery latency is p50 / p99 / p99.9 in ms from the actual publish to the subscriber's read (the DELIVER op's service time); its response time counts from the publish's intended time.\n\n")
	b.WriteString("| system | phase | published | expected | delivered | lost | duplicates | foreign | delivery p50 / p99 / p99.9 | drain (ms) |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
}

// pubsubCaveats names the pub/sub phases that lost or repeated messages.
func (d *data) pubsubCaveats() []string {
	var out []string
	for _, p := range d.m.Phases {
		if m := p.Messages; m != nil && (m.Lost > 0 || m.Duplicates > 0) {
			out = append(out, fmt.Sprintf("%s, %s (repetition %d) lost %s of %s expected deliveries and received %s duplicates: its delivery latency covers only what arrived.",
				p.System, p.Name, p.Repetition, thousands(m.Lost), thousands(m.Expected), thousands(m.Duplicates)))
		}
	}
	return out
}
