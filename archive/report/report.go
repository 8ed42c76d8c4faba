// Package report renders an archive's report.md, report.html and charts/*.svg from
// the archive alone: the same archive always gives the same bytes, so a published table can be
// regenerated and audited.
package report

import (
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core"
)

// File is one generated file, named relative to the archive.
type File struct {
	Name string
	Data []byte
}

// Generate renders report.md, report.html and the charts report.md shows.
func Generate(a *archive.Archive) ([]File, error) {
	files, _, err := Render(a)
	return files, err
}

// Render draws report.md and its charts, report.html, and the result tables for the
// console, from the archive read once.
func Render(a *archive.Archive) (files []File, console Console, err error) {
	d, err := load(a)
	if err != nil {
		return nil, Console{}, err
	}
	rc := d.reportCharts()
	svgs, err := svgFiles(rc)
	if err != nil {
		return nil, Console{}, fmt.Errorf("charts: %w", err)
	}
	page, err := d.html(rc)
	if err != nil {
		return nil, Console{}, err
	}
	files = append([]File{{archive.ReportFile, d.markdown(rc.all())}, {HTMLFile, page}}, svgs...)
	return files, d.console(), nil
}

// markdown is report.md: the run and its systems, the results in their tables and
// charts, what the server counted, the caveats, and every phase.
func (d *data) markdown(charts []*chart.Chart) []byte {
	var b strings.Builder
	d.runHeader(&b)
	d.systemsSection(&b)
	d.auditSection(&b, d.systemFacts)
	d.resultsIntro(&b)
	d.sideBySide(&b)
	for _, p := range d.methodParts() {
		b.WriteString(p.Markdown)
	}
	d.pubsubSection(&b)
	d.tables(&b)
	d.sureSection(&b)
	d.stallSection(&b)
	chartList(&b, charts)
	d.costTable(&b)
	d.validation(&b)
	d.reconciliation(&b)
	d.caveatSection(&b)
	d.allPhases(&b)
	d.pluginsSection(&b)
	return []byte(b.String())
}

// runHeader writes the report's title and what ran: the run, and where it was
// imported from or when, how and on which host cmpbench ran it.
func (d *data) runHeader(b *strings.Builder) {
	m := d.m
	fmt.Fprintf(b, "# cmpbench report: %s\n\n", m.Suite.Name)
	fmt.Fprintf(b, "- Run: `%s`, status **%s**", m.RunID, m.Status)
	if m.Recovered {
		b.WriteString(" (recovered with `cmpbench recover` from the directory of a run whose cmpbench stopped before finishing)")
	}
	b.WriteString("\n")
	if m.Imported != nil {
		d.importedHeader(b)
		return
	}
	fmt.Fprintf(b, "- Started %s, took %s\n", m.Started.UTC().Format("2006-01-02 15:04:05 MST"), m.Ended.Sub(m.Started).Round(time.Second))
	fmt.Fprintf(b, "- cmpbench %s (commit %s), seed %d, scale %g, each measured phase run %d time(s)\n", m.Cmpbench.Version, core.Shorten(m.Cmpbench.Commit, 12), m.Seed, m.Scale, max(1, m.Repeat))
	h := m.Host
	fmt.Fprintf(b, "- Client host: %s, %s %s, kernel %s, %s × %d CPUs, %s memory\n", h.Hostname, h.Platform, h.PlatformVersion, h.Kernel, h.CPUModel, h.CPUs, core.BytesIEC(h.MemoryBytes))
	b.WriteString(d.shardLine())
	fmt.Fprintf(b, "- Suite `%s` (%s): %s\n\n", m.Suite.Name, m.Suite.Source, strings.TrimSpace(m.Suite.Description))
}

// systemsSection lists the systems compared: what each is and how it ran.
func (d *data) systemsSection(b *strings.Builder) {
	b.WriteString("## Systems\n\n")
	b.WriteString("| system | product | version | how it ran | binary SHA-256 |\n|---|---|---|---|---|\n")
	for _, s := range d.m.Systems {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", s.Name, dash(literal(s.Product)), dash(literal(s.Version)), howRan(s), code(core.Shorten(s.BinarySHA256, 16)))
	}
	b.WriteString("\n")
}

// howRan says how a system ran: at which endpoint or started how, on which nodes,
// over which API and TLS, and why it did not run if it did not.
func howRan(s archive.SystemInfo) string {
	how := "endpoint " + literal(s.Endpoint)
	if s.Endpoint == "" {
		how = "endpoint not recorded" // an imported run whose source does not say
	}
	if s.Provisioned {
		how = "started by cmpbench: " + literal(core.ShellQuote(s.Launch))
	}
	if len(s.Nodes) > 1 {
		how += fmt.Sprintf(" (%d nodes: %s)", len(s.Nodes), literals(s.Nodes, ", "))
	}
	if s.Cluster {
		how += ", cluster API"
	}
	if s.TLS != "" {
		how += ", TLS " + s.TLS
	}
	if s.Error != "" {
		how += " — **not run: " + literal(s.Error) + "**"
	}
	return how
}

// resultsIntro opens the results: what the latencies are, and what each mark on a
// phase means.
func (d *data) resultsIntro(b *strings.Builder) {
	b.WriteString("## Results\n\n")
	b.WriteString("Latencies are in milliseconds, of successful operations only; errors are counted, never timed or counted as throughput. ")
	fmt.Fprintf(b, "**failed** (or another status) marks a phase that did not end ok: its numbers are kept, marked, and the caveats say why. **NS** marks a fixed-rate phase that achieved less than %.0f%% of its target rate: its latencies describe an overloaded system and are not comparable. ", archive.SustainedFraction*100)
	fmt.Fprintf(b, "**client-bound** marks a phase whose load generator used more than %.0f%% of the cores it may use: its numbers describe the client. ", core.ClientBoundFraction*100)
	fmt.Fprintf(b, "**host-saturated** marks a phase during which the CPUs of the machine the client ran on were more than %.0f%% busy, counting every process on it (the servers under test, on loopback, among them): the client and the servers waited for CPUs, and the numbers describe the shared machine as much as the system; the caveats name the busiest processes. ", core.HostSaturatedFraction*100)
	fmt.Fprintf(b, "**client-lagged** marks a fixed-rate phase where the client's own send lag (from the moment it could send to the moment it did) has a p99 above both the service-time p99 and %s ms: its response-time tail describes the client as much as the server. ", ms(int64(core.LagFloor)))
	fmt.Fprintf(b, "**client-stalled** marks a phase during which the client process itself was not running (stopped, or starved of CPU) for %s or more at a time; a measured phase in which it stood still for %.0f%% of the phase and at least %s failed.", threshold(core.StallGap), core.ClientStalledFraction*100, threshold(core.StallFailFloor))
	if d.m.Repeat > 1 {
		fmt.Fprintf(b, " Each value is the median of %d repetitions; the spread column gives their range and coefficient of variation.", d.m.Repeat)
	}
	if note := d.sureNote(); note != "" {
		b.WriteString(" " + strings.TrimSpace(note))
	}
	b.WriteString("\n\n" + tablesNote)
}

// chartList shows the charts, if any, each with its caption.
func chartList(b *strings.Builder, charts []*chart.Chart) {
	if len(charts) == 0 {
		return
	}
	b.WriteString("## Charts\n\n")
	for _, c := range charts {
		fmt.Fprintf(b, "![%s](%s)\n\n", c.Title, c.File)
		if c.Caption != "" {
			fmt.Fprintf(b, "%s\n\n", c.Caption)
		}
	}
}

// caveatSection lists the caveats, if any.
func (d *data) caveatSection(b *strings.Builder) {
	cv := d.caveats()
	if len(cv) == 0 {
		return
	}
	b.WriteString("## Caveats\n\n")
	for _, c := range cv {
		fmt.Fprintf(b, "- %s\n", c)
	}
	b.WriteString("\n")
}

// allPhases lists every phase of the run, measured or not, with how it ended, what
// it did and the connections the server saw.
func (d *data) allPhases(b *strings.Builder) {
	b.WriteString("## All phases\n\n")
	b.WriteString("Server connections are the most client connections the server had open (over its nodes, cmpbench's own among them) in the stats samples taken while the phase ran (the first once its first interval is measured; — when none was): pooling clients may hold more than the phase's connections, and every node of a cluster has its own.\n\n")
	b.WriteString("| system | # | phase | rep | kind | shape | status | elapsed | ops ok | errors | client cores (of) | server connections | note |\n|---|--:|---|--:|---|---|---|--:|--:|--:|--:|--:|---|\n")
	for _, p := range d.m.Phases {
		ok, errs := d.phaseTotals(p)
		cores := fmt.Sprintf("%.2f (%d)", p.ClientCores, p.CoresAllowed)
		if p.ClientCores == 0 {
			cores = fmt.Sprintf("— (%d)", p.CoresAllowed) // not measured: the phase did not run or was too short to sample
		}
		conns := "—"
		if n, ok := d.serverConns(p.System, p.Index, p.Repetition); ok {
			conns = thousands(n)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.System, p.Index, p.Name, p.Repetition, p.Kind, p.Shape, p.Status,
			time.Duration(p.ElapsedNs).Round(time.Millisecond), thousands(ok), thousands(errs), cores, conns, literals(append([]string{p.Error}, p.Notes...), "; "))
	}
	b.WriteString("\n")
}

// pluginsSection lists the adapters that drove the systems, if any are recorded.
func (d *data) pluginsSection(b *strings.Builder) {
	if len(d.m.Plugins) == 0 {
		return
	}
	b.WriteString("## Plugins\n\n| system | adapter | binary | SHA-256 | adapter version | built with | protocol |\n|---|---|---|---|---|---|--:|\n")
	for _, p := range d.m.Plugins {
		kind := "third-party"
		if p.Builtin {
			kind = "built in"
		}
		fmt.Fprintf(b, "| %s | %s (%s) | %s | %s | %s | cmpbench %s | %d |\n", p.System, p.Adapter, kind, literal(p.Path), code(core.Shorten(p.SHA256, 16)), literal(p.Version), literal(p.SDKVersion), p.Protocol)
	}
	b.WriteString("\n")
}

// sideBySide is the published comparisons' table shape: a row for each measured
// phase's total throughput and one per op with its throughput, p99 and p99.9 (ms),
// a column per system.
func (d *data) sideBySide(b *strings.Builder) {
	if len(d.measured) == 0 {
		return
	}
	b.WriteString("### Side by side\n\nCells are ops/s, and for each op its p99 / p99.9 in ms; for a fixed-rate phase both the response time (from the intended send) and the service time (from the actual send, as YCSB and memtier publish).\n\n")
	tableHead(b, "| phase | metric |", "|---|---|", d.systems)
	for _, ph := range d.measured {
		cells := make([]cell, len(d.systems))
		for i, sys := range d.systems {
			cells[i] = d.cell(ph, sys)
		}
		fmt.Fprintf(b, "| %s | total ops/s |", ph.name)
		for _, c := range cells {
			tp := c.throughput()
			v := "—"
			if tp.N > 0 {
				v = thousands(int64(math.Round(tp.Median)))
				for _, r := range c.measured() {
					if !r.sustained() {
						v = "**NS** " + v
						break
					}
				}
				// A phase that did not end ok keeps its numbers, marked: the caveats say why.
				for _, r := range c.measured() {
					if r.info.Status != core.StatusOK {
						v = fmt.Sprintf("**%s** %s", r.info.Status, v)
						break
					}
				}
			}
			fmt.Fprintf(b, " %s |", v)
		}
		b.WriteString("\n")
		for _, op := range d.ops(ph) {
			fmt.Fprintf(b, "| %s | %s |", ph.name, op)
			for _, c := range cells {
				var v []float64
				for _, r := range c.measured() {
					if row, ok := r.op(op); ok {
						v = append(v, row.Throughput)
					}
				}
				p99, ok99 := c.latency(op, func(r archive.SummaryRow) int64 { return r.SvcP99 })
				p999, ok999 := c.latency(op, func(r archive.SummaryRow) int64 { return r.SvcP999 })
				if len(v) == 0 || !ok99 || !ok999 {
					b.WriteString(" — |")
					continue
				}
				tp := thousands(int64(math.Round(archive.SpreadOf(v).Median)))
				if ph.info.Rate <= 0 {
					fmt.Fprintf(b, " %s; %s / %s |", tp, latencyCell(p99), latencyCell(p999))
					continue
				}
				r99, _ := c.latency(op, func(r archive.SummaryRow) int64 { return r.RespP99 })
				r999, _ := c.latency(op, func(r archive.SummaryRow) int64 { return r.RespP999 })
				fmt.Fprintf(b, " %s; response %s / %s; service %s / %s |", tp, latencyCell(r99), latencyCell(r999), latencyCell(p99), latencyCell(p999))
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
}

// validation lists the checks of loaded data.
func (d *data) validation(b *strings.Builder) {
	if len(d.validations) == 0 {
		return
	}
	b.WriteString("## Validation\n\nAfter the load the server's key count is set against the successful inserts; after a YCSB load, sample records are also read back and compared field by field with what the load wrote (SHA-256 of all fields). With a restart check, systems cmpbench starts are then stopped cleanly, started again on the same data and checked again.\n\n")
	b.WriteString("| system | check | inserted | counted | samples checked | result |\n|---|---|--:|--:|--:|---|\n")
	for _, v := range d.validations {
		counted := thousands(v.Counted)
		if v.Counted < 0 {
			counted = "—"
		}
		result := "ok"
		if !v.OK() {
			result = "**" + literals(v.Problems, "; ") + "**"
		}
		if v.Note != "" {
			result += " — " + literal(v.Note)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s |\n", v.System, v.Point, thousands(v.Expected), counted, len(v.Samples), result)
	}
	b.WriteString("\n")
}

func (d *data) phaseTotals(p archive.PhaseInfo) (ok, errs int64) {
	for _, r := range d.summary {
		if r.System == p.System && r.PhaseIndex == p.Index && r.Repetition == p.Repetition {
			if op, err := core.ParseOpKind(r.Op); err == nil && !op.Issued() {
				continue // deliveries are not operations the client sent
			}
			ok += r.Count
			errs += r.Errors
		}
	}
	return ok, errs
}

// ops lists the op kinds measured in a phase, sorted.
func (d *data) ops(ph phaseRef) []string {
	var ops []string
	for _, r := range d.summary {
		if r.PhaseIndex == ph.index && !slices.Contains(ops, r.Op) {
			ops = append(ops, r.Op)
		}
	}
	sort.Strings(ops)
	return ops
}

// tables writes each measured phase's table: a row per system with its throughput,
// every op's latency percentiles, hits, misses, errors and status; for a fixed-rate
// phase, where the response time came from.
func (d *data) tables(b *strings.Builder) {
	for _, ph := range d.measured {
		d.phaseTable(b, ph)
	}
}

// phaseTable writes one measured phase's table and, for a fixed-rate phase, where
// its response time came from.
func (d *data) phaseTable(b *strings.Builder, ph phaseRef) {
	t := resultTable{ph: ph, ops: d.ops(ph), spread: d.m.Repeat > 1, open: ph.info.Rate > 0, sure: d.sure(), latencies: closedLoopLatencies}
	if t.open {
		t.latencies = openLoopLatencies
	}
	t.head(b)
	for _, sys := range d.systems {
		t.row(b, sys, d.cell(ph, sys))
	}
	b.WriteString("\n")
	if t.sure {
		if notes := d.unsure(ph); len(notes) > 0 {
			fmt.Fprintf(b, "No interval: %s.\n\n", literals(notes, "; "))
		}
	}
	if t.open {
		d.lagTable(b, ph, t.ops)
	}
}

// tablesNote explains, once, what the phase tables show.
const tablesNote = "In the phase tables, a fixed-rate phase shows each percentile twice, side by side: response time, measured from each operation's intended send time (the schedule), so queueing behind a slow server counts, and service time, from its actual send, as YCSB and memtier measure the latencies they publish; the table under it says where the response time comes from (ms): service time is the server's (from the send to the reply), send lag the client's own delay before sending, and the rest is queueing behind a connection's previous request. Closed loop: each request is sent when the previous one returns, so its intended and actual send are the same moment; response time equals service time, and one set is shown.\n\n"

// resultTable is one measured phase's table: its ops, whether it shows the spread
// of repetitions, whether the phase ran at a fixed rate (open loop), and its
// latency columns for each op.
type resultTable struct {
	ph        phaseRef
	ops       []string
	spread    bool
	open      bool
	sure      bool // show each number's interval (format 3)
	latencies []latencyColumn
}

// head writes the phase's heading, what a fixed rate means, and the table's header.
func (t resultTable) head(b *strings.Builder) {
	info := t.ph.info
	fmt.Fprintf(b, "### %s\n\n%s; %s; %s\n\n", t.ph.name, info.Workload, info.Shape, time.Duration(info.DurationNs))
	b.WriteString("| system | ops/s |")
	sep := "|---|--:|"
	if t.spread {
		b.WriteString(" spread |")
		sep += "---|"
	}
	for _, op := range t.ops {
		for _, l := range t.latencies {
			fmt.Fprintf(b, " %s %s |", op, l.name)
			sep += "--:|"
		}
	}
	b.WriteString(" hits | misses | errors | status |\n" + sep + "--:|--:|---|---|\n")
}

// row writes system sys's row, c its cell: dashes where it measured nothing.
func (t resultTable) row(b *strings.Builder, sys string, c cell) {
	reps := c.measured()
	status := statusOf(c)
	if len(reps) == 0 {
		fmt.Fprintf(b, "| %s | — |%s%s — | — | — | %s |\n", sys, ifStr(t.spread, " — |"), strings.Repeat(" — |", len(t.latencies)*len(t.ops)), status)
		return
	}
	tp := c.throughput()
	pm := ""
	if h, ok := c.rateSure(); ok && t.sure {
		pm = plusMinus(h)
	}
	fmt.Fprintf(b, "| %s | %s |", sys, rateCell(tp, reps, pm))
	if t.spread {
		fmt.Fprintf(b, " %s–%s, CV %.1f%% |", thousands(int64(math.Round(tp.Min))), thousands(int64(math.Round(tp.Max))), tp.CV*100)
	}
	for _, op := range t.ops {
		for _, l := range t.latencies {
			if v, ok := c.latency(op, l.pick); ok {
				pm := ""
				if t.sure {
					pm = c.latencySure(op, l)
				}
				fmt.Fprintf(b, " %s%s |", latencyCell(v), pm)
			} else {
				b.WriteString(" — |")
			}
		}
	}
	hits, misses, errs := outcomes(reps)
	fmt.Fprintf(b, " %s | %s | %s | %s |\n", thousands(hits), thousands(misses), errorSummary(errs), status)
}

// phaseFlags are the marks a rate cell carries when any repetition has the flag.
var phaseFlags = []struct {
	set  func(archive.PhaseInfo) bool
	mark string
}{
	{func(p archive.PhaseInfo) bool { return p.ClientBound }, " (client-bound)"},
	{func(p archive.PhaseInfo) bool { return p.ClientLagged }, " (client-lagged)"},
	{func(p archive.PhaseInfo) bool { return p.ClientStalledNs > 0 }, " (client-stalled)"},
	{func(p archive.PhaseInfo) bool { return p.HostSaturated }, " (host-saturated)"},
	{func(p archive.PhaseInfo) bool { return p.Unsteady != nil }, " (unsteady)"},
}

// rateCell is a phase's median throughput tp over its repetitions reps, with the
// target rate, NS when a repetition did not sustain it, its interval pm (" ±1
// %", or none) and the phase's flags.
func rateCell(tp archive.Spread, reps []rep, pm string) string {
	rate, ns, flags := rateParts(tp, reps)
	if ns {
		rate = "**NS** " + rate
	}
	return rate + pm + flags
}

// rateParts are a rate cell's parts: the median rate (of the target, if any),
// whether a repetition did not sustain its target, and the phase's flags.
func rateParts(tp archive.Spread, reps []rep) (rate string, ns bool, flags string) {
	rate = thousands(int64(math.Round(tp.Median)))
	if t := reps[0].rows[0].TargetRate; t > 0 {
		rate += " of " + thousands(int64(t))
	}
	for _, f := range phaseFlags {
		if slices.ContainsFunc(reps, func(r rep) bool { return f.set(r.info) }) {
			flags += f.mark
		}
	}
	return rate, slices.ContainsFunc(reps, func(r rep) bool { return !r.sustained() }), flags
}

// outcomes sums the hits, misses and errors (by kind, as errorSummary names them)
// of every op over the repetitions.
func outcomes(reps []rep) (hits, misses int64, errs map[string]int64) {
	errs = map[string]int64{}
	for _, r := range reps {
		for _, row := range r.rows {
			hits += row.Hits
			misses += row.Misses
			errs["oom"] += row.ErrOOM
			errs["timeout"] += row.ErrTimeout
			errs["connection"] += row.ErrConn
			errs["protocol"] += row.ErrProtocol
			errs["other"] += row.ErrOther
			errs["not_found"] += row.ErrNotFound
			errs["exists"] += row.ErrExists
			errs["overload"] += row.ErrOverload
			errs["in_doubt"] += row.ErrInDoubt
		}
	}
	return hits, misses, errs
}

// latencyColumn is one latency column of a phase's table.
type latencyColumn struct {
	name string
	pick func(archive.SummaryRow) int64
}

// closedLoopLatencies are the columns of a closed-loop phase, where response and
// service time are the same; openLoopLatencies those of a fixed-rate phase, each
// percentile from the intended send (response) next to the same from the actual
// send (service).
var (
	closedLoopLatencies = []latencyColumn{
		{"p50", func(r archive.SummaryRow) int64 { return r.SvcP50 }},
		{"p99", func(r archive.SummaryRow) int64 { return r.SvcP99 }},
		{"p99.9", func(r archive.SummaryRow) int64 { return r.SvcP999 }},
		{"p99.99", func(r archive.SummaryRow) int64 { return r.SvcP9999 }},
	}
	openLoopLatencies = []latencyColumn{
		{"response p50", func(r archive.SummaryRow) int64 { return r.RespP50 }},
		{"service p50", func(r archive.SummaryRow) int64 { return r.SvcP50 }},
		{"response p99", func(r archive.SummaryRow) int64 { return r.RespP99 }},
		{"service p99", func(r archive.SummaryRow) int64 { return r.SvcP99 }},
		{"response p99.9", func(r archive.SummaryRow) int64 { return r.RespP999 }},
		{"service p99.9", func(r archive.SummaryRow) int64 { return r.SvcP999 }},
		{"response p99.99", func(r archive.SummaryRow) int64 { return r.RespP9999 }},
		{"service p99.99", func(r archive.SummaryRow) int64 { return r.SvcP9999 }},
	}
)

// lagTable splits a fixed-rate phase's response time: the server's service time,
// the client's send lag, and (the rest) queueing behind the previous request on a
// connection.
func (d *data) lagTable(b *strings.Builder, ph phaseRef, ops []string) {
	type line struct {
		sys, op   string
		resp, svc int64
		lag       [3]int64
	}
	var lines []line
	for _, sys := range d.systems {
		c := d.cell(ph, sys)
		for _, op := range ops {
			l := line{sys: sys, op: op}
			var ok bool
			pick := func(f func(archive.SummaryRow) int64) int64 {
				v, found := c.latency(op, f)
				ok = ok || found
				return v
			}
			l.resp = pick(func(r archive.SummaryRow) int64 { return r.RespP99 })
			l.svc = pick(func(r archive.SummaryRow) int64 { return r.SvcP99 })
			l.lag[0] = pick(func(r archive.SummaryRow) int64 { return r.LagP50 })
			l.lag[1] = pick(func(r archive.SummaryRow) int64 { return r.LagP99 })
			l.lag[2] = pick(func(r archive.SummaryRow) int64 { return r.LagP999 })
			if ok && l.lag[1] > 0 {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("Where the response time comes from (ms):\n\n")
	b.WriteString("| system | op | response p99 | service p99 | send lag p50 | send lag p99 | send lag p99.9 |\n|---|---|--:|--:|--:|--:|--:|\n")
	for _, l := range lines {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", l.sys, l.op, ms(l.resp), ms(l.svc), ms(l.lag[0]), ms(l.lag[1]), ms(l.lag[2]))
	}
	b.WriteString("\n")
}

// statusOf is "ok", or each status that is not ok with its count.
func statusOf(c cell) string {
	if len(c.reps) == 0 {
		return "not run"
	}
	counts := map[core.PhaseStatus]int{}
	for _, r := range c.reps {
		counts[r.info.Status]++
	}
	if counts[core.StatusOK] == len(c.reps) {
		return "ok"
	}
	var parts []string
	for _, s := range []core.PhaseStatus{core.StatusOK, core.StatusFailed, core.StatusInterrupted, core.StatusSkipped} {
		if n := counts[s]; n > 0 {
			if len(c.reps) == 1 {
				parts = append(parts, string(s))
			} else {
				parts = append(parts, fmt.Sprintf("%s ×%d", s, n))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// costTable relates throughput to what each system costs, when systems declare it.
func (d *data) costTable(b *strings.Builder) {
	costs := map[string]float64{}
	cheapest := math.Inf(1)
	for _, s := range d.m.Systems {
		if s.CostPerMonth > 0 {
			costs[s.Name] = s.CostPerMonth
			cheapest = min(cheapest, s.CostPerMonth)
		}
	}
	if len(costs) == 0 || len(d.measured) == 0 {
		return
	}
	b.WriteString("## Cost\n\nops/s per dollar = median throughput / USD per month; the cost multiple is relative to the cheapest system.\n\n")
	var perDollar []string
	for _, ph := range d.measured {
		perDollar = append(perDollar, ph.name+" ops/s per $")
	}
	tableHead(b, "| system | USD/month | cost multiple |", "|---|--:|--:|", perDollar)
	for _, sys := range d.systems {
		usd, ok := costs[sys]
		if !ok {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %.2f× |", sys, thousands(int64(math.Round(usd))), usd/cheapest)
		for _, ph := range d.measured {
			if tp := d.cell(ph, sys).throughput(); tp.N > 0 {
				fmt.Fprintf(b, " %.2f |", tp.Median/usd)
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// reconciliation sets the server's own count of each command (INFO commandstats,
// executed plus rejected calls, after minus before the phase) against what the client
// sent: successes, errors and the side probe's requests.
func (d *data) reconciliation(b *strings.Builder) {
	lines := d.reconLines()
	if len(lines) == 0 {
		return
	}
	b.WriteString("## Server-side counts\n\nRequests the client sent (successes, errors and side-probe requests) against the requests the server counted between the samples taken just before and just after the phase, per op kind or per group of op kinds the server does not tell apart (op kinds that share a command, reads and writes). Where each system's counts come from:\n\n")
	d.reconSources(b, lines)
	b.WriteString("| system | phase | rep | op | client requests | server calls | difference |\n|---|---|--:|---|--:|--:|---|\n")
	for _, l := range lines {
		l.row(b)
	}
	b.WriteString("\n")
}

// reconLine is one op kind (or group of them) of one repetition: the requests the
// client sent and the calls the server counted.
type reconLine struct {
	sys, phase     string
	rep            int
	op             string
	client, server int64
	lost           int64  // connection errors and timeouts: may not have reached the server
	restarted      string // the server restarted during the phase: its counts started over
}

// reconLines are the lines of every repetition of every measured phase whose
// server counted its calls before and after.
func (d *data) reconLines() []reconLine {
	var lines []reconLine
	for _, ph := range d.measured {
		for _, sys := range d.systems {
			for _, r := range d.cell(ph, sys).measured() {
				// What the adapter counted per op kind (core.StatCalls); archives
				// written before the resp adapter did have INFO commandstats only,
				// read here by command name.
				if counted, ok := d.countedLines(ph, sys, r); ok {
					lines = append(lines, counted...)
				} else {
					lines = append(lines, d.commandLines(ph, sys, r)...)
				}
			}
		}
	}
	return lines
}

// countedLines are a repetition's lines from the calls its adapter counted per op
// kind or group (core.StatCalls); ok is false when the adapter counted none.
func (d *data) countedLines(ph phaseRef, sys string, r rep) (lines []reconLine, ok bool) {
	before := d.serverCalls(sys, ph.index, r.info.Repetition, "before")
	after := d.serverCalls(sys, ph.index, r.info.Repetition, "after")
	if len(after) == 0 {
		return nil, false
	}
	for _, group := range slices.Sorted(maps.Keys(after)) {
		b, ok := before[group]
		if !ok {
			continue
		}
		var client, lost int64
		sent := false
		for _, op := range strings.Split(group, "+") {
			if row, ok := r.op(op); ok {
				client += row.Count + row.Errors
				lost += row.ErrConn + row.ErrTimeout + row.ErrInDoubt
				sent = true
			}
			client += d.probeRequests[probeKey{sys, ph.index, r.info.Repetition, op}]
		}
		if sent {
			lines = append(lines, reconLine{sys, ph.name, r.info.Repetition, group, client, after[group] - b, lost, d.restarted(sys, ph.index, r.info.Repetition)})
		}
	}
	return lines, true
}

// commandLines are a repetition's lines from INFO commandstats, by command name,
// for archives written before adapters counted their calls.
func (d *data) commandLines(ph phaseRef, sys string, r rep) []reconLine {
	var lines []reconLine
	for _, row := range r.rows {
		before, ok1 := d.commandCalls(sys, ph.index, r.info.Repetition, row.Op, "before")
		after, ok2 := d.commandCalls(sys, ph.index, r.info.Repetition, row.Op, "after")
		if !ok1 || !ok2 {
			continue
		}
		client := row.Count + row.Errors + d.probeRequests[probeKey{sys, ph.index, r.info.Repetition, row.Op}]
		lines = append(lines, reconLine{sys, ph.name, r.info.Repetition, row.Op, client, after - before, row.ErrConn + row.ErrTimeout,
			d.restarted(sys, ph.index, r.info.Repetition)})
	}
	return lines
}

// reconSources says where each system's server counts come from.
func (d *data) reconSources(b *strings.Builder, lines []reconLine) {
	for _, sys := range d.systems {
		src := literal(d.callsSource[sys]) // the adapter's words
		if src == "" && slices.ContainsFunc(lines, func(l reconLine) bool { return l.sys == sys }) {
			src = "INFO commandstats, by command name (an archive written before adapters said)"
		}
		if src != "" {
			fmt.Fprintf(b, "- %s: %s\n", sys, src)
		}
	}
	b.WriteString("\n")
}

// row writes the line's table row: the difference in bold where connection errors
// and timeouts do not account for it, and no comparison across a restart.
func (l reconLine) row(b *strings.Builder) {
	if l.restarted != "" {
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | — | not comparable: the server restarted during the phase (%s) |\n", l.sys, l.phase, l.rep, opGroup(l.op), thousands(l.client), literal(l.restarted))
		return
	}
	diff := thousands(l.server - l.client)
	if l.server != l.client {
		if abs(l.server-l.client) > l.lost {
			diff = "**" + diff + "**"
		} else {
			diff += " (within connection errors and timeouts)"
		}
	}
	fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s |\n", l.sys, l.phase, l.rep, opGroup(l.op), thousands(l.client), thousands(l.server), diff)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// ranOp reports whether any phase of system issued op.
func (d *data) ranOp(system string, op core.OpKind) bool {
	for _, r := range d.summary {
		if r.System == system && r.Op == op.String() && r.Count+r.Errors > 0 {
			return true
		}
	}
	return false
}

// caveats lists what a reader must know before comparing the numbers.
func (d *data) caveats() []string {
	var out []string
	out = append(out, d.systemCaveats()...)
	out = append(out, d.placementCaveats()...)
	out = append(out, d.validationCaveats()...)
	for _, ph := range d.measured {
		for _, sys := range d.systems {
			out = append(out, d.cellCaveats(ph, sys)...)
		}
	}
	out = append(out, d.stallCaveats()...)
	out = append(out, d.pubsubCaveats()...)
	out = append(out, d.shardCaveats()...)
	out = append(out, d.processesCaveats()...)
	if d.m.Live {
		out = append(out, "The run was served live (run --live): the host's work for the page and its metrics ran on the client's machine beside the load, which on a machine without cores to spare can raise the send lag (bench/live.sh measures it).")
	}
	if imp := d.m.Imported; imp != nil {
		for _, c := range imp.Caveats {
			out = append(out, prose(c)) // the importer's words, with what its source said
		}
	}
	return out
}

// systemCaveats are each system's: TLS without verification, an incomplete
// capture, and what its capture says to mind where the system ran updates.
func (d *data) systemCaveats() []string {
	var out []string
	for _, s := range d.m.Systems {
		if strings.HasPrefix(s.TLS, "NOT VERIFIED") {
			out = append(out, fmt.Sprintf("%s was reached over TLS without verifying its certificate (insecure_skip_verify): the connection was encrypted but the server not authenticated.", s.Name))
		}
		if len(s.Refused) > 0 {
			out = append(out, fmt.Sprintf("%s's capture is incomplete: %s.", s.Name, literals(s.Refused, "; ")))
		}
		if c := d.captureCaveats[s.Name]; c != "" && d.ranOp(s.Name, core.OpUpdate) {
			out = append(out, fmt.Sprintf("%s: %s", s.Name, literal(c)))
		}
	}
	return out
}

// placementCaveats say where the systems ran, when that differs between them or
// they shared the client's host.
func (d *data) placementCaveats() []string {
	var out []string
	hosts := map[string][]string{}
	var local, external []string
	for _, s := range d.m.Systems {
		host, _, err := net.SplitHostPort(s.Endpoint)
		if err != nil {
			continue
		}
		hosts[host] = append(hosts[host], s.Name)
		if ip := net.ParseIP(host); s.Provisioned || host == "localhost" || ip != nil && ip.IsLoopback() {
			local = append(local, s.Name)
		} else {
			external = append(external, s.Name)
		}
	}
	if len(local) > 0 {
		cpus := fmt.Sprintf("its %d CPUs", d.m.Host.CPUs)
		if d.m.Host.CPUs == 0 {
			cpus = "its CPUs" // not recorded (an imported run)
		}
		out = append(out, fmt.Sprintf("%s ran on the client host itself: server and load generator shared %s.", strings.Join(local, ", "), cpus))
	}
	if len(local) > 0 && len(external) > 0 {
		out = append(out, fmt.Sprintf("%s were reached over the network while %s ran locally: the network path differs between systems.", strings.Join(external, ", "), strings.Join(local, ", ")))
	} else if len(hosts) > 1 && len(local) == 0 {
		hs := slices.Sorted(maps.Keys(hosts))
		out = append(out, fmt.Sprintf("The systems ran on different hosts (%s): hardware and network paths may differ, and a managed service's host is not under the tester's control.", strings.Join(hs, ", ")))
	}
	return out
}

// validationCaveats name the failed checks of loaded data and the systems that
// lost their data across a restart.
func (d *data) validationCaveats() []string {
	var out []string
	for _, v := range d.validations {
		if !v.OK() {
			out = append(out, fmt.Sprintf("%s failed validation %s: %s", v.System, v.Point, literal(v.Problems[0])))
		}
		if strings.HasPrefix(v.Note, "not restart-durable") {
			out = append(out, fmt.Sprintf("%s is not restart-durable: it lost its data across a clean restart.", v.System))
		}
	}
	return out
}

// cellCaveats are those of one system in one measured phase: each repetition's,
// and the phase's when its repetitions disagree.
func (d *data) cellCaveats(ph phaseRef, sys string) []string {
	var out []string
	c := d.cell(ph, sys)
	if len(c.reps) > 0 && c.reps[0].info.Workload != ph.info.Workload {
		// As the system's adapter could express it (core.Fitting: a trace's
		// requests of a kind it lacks skipped, its TTLs dropped), or an imported
		// system's own.
		out = append(out, fmt.Sprintf("%s, %s ran a workload other than the heading's: %s.", sys, ph.name, literal(c.reps[0].info.Workload)))
	}
	for _, r := range c.reps {
		where := fmt.Sprintf("%s, %s", sys, ph.name)
		if len(c.reps) > 1 {
			where += fmt.Sprintf(" (repetition %d)", r.info.Repetition)
		}
		out = append(out, repCaveats(where, r)...)
	}
	if tp := c.throughput(); tp.N > 1 && tp.CV > 0.10 {
		out = append(out, fmt.Sprintf("%s, %s is unstable: throughput varied by CV %.1f%% over %d repetitions.", sys, ph.name, tp.CV*100, tp.N))
	}
	return out
}

// repCaveats are one repetition's, where names it: how it ended, a target not
// sustained, a client bound or lagging, a saturated host, a recovered cut, errors.
func repCaveats(where string, r rep) []string {
	var out []string
	if r.info.Status != core.StatusOK {
		out = append(out, fmt.Sprintf("%s ended %s: %s", where, r.info.Status, literal(r.info.Error)))
	}
	if u := r.info.Unsteady; u != nil {
		out = append(out, fmt.Sprintf("%s is unsteady: %s; its numbers average a moving target.", where, u.Sentence()))
	}
	if d := r.info.Pipeline; d > 1 && r.info.Repetition == 0 {
		out = append(out, fmt.Sprintf("%s kept %d requests in flight per connection (pipeline %d): each request's latency includes its wait behind the connection's others, so it is not one request's round trip.", where, d, d))
	}
	if !r.sustained() && len(r.rows) > 0 {
		out = append(out, fmt.Sprintf("%s did not sustain its target (%s of %s ops/s): reported as NS.", where,
			thousands(int64(math.Round(r.throughput))), thousands(int64(r.rows[0].TargetRate))))
	}
	if r.info.ClientBound {
		out = append(out, fmt.Sprintf("%s was client-bound: the load generator used %.2f of %d cores.", where, r.info.ClientCores, r.info.CoresAllowed))
	}
	if r.info.ClientLagged {
		var lag, svc int64
		for _, row := range r.rows {
			if row.LagP99-row.SvcP99 > lag-svc {
				lag, svc = row.LagP99, row.SvcP99
			}
		}
		out = append(out, fmt.Sprintf("%s was client-lagged: the client's send lag p99 (%s ms) exceeded the service time p99 (%s ms); its response times describe the client as much as the server.", where, ms(lag), ms(svc)))
	}
	if r.info.ClientStalledNs > 0 {
		out = append(out, fmt.Sprintf("%s was client-stalled: the client process was not running for %s of its %s (%s); the side probe's stalls then were the client's, and a closed loop's rates count the time it ran.",
			where, seconds(r.info.ClientStalledNs), seconds(r.info.ElapsedNs), core.DescribeStalls(r.info.ClientStalls)))
	}
	switch h := r.info.Host; {
	case r.info.HostSaturated && h != nil:
		out = append(out, fmt.Sprintf("%s ran on a saturated host: %s. The client itself used %.2f cores.", where, h.Format(literal), r.info.ClientCores+float64(r.info.HostCPUNs)/float64(max(r.info.ElapsedNs, 1))))
	case r.info.HostSaturated:
		out = append(out, fmt.Sprintf("%s ran on a saturated host (of a shard, whose caveat says how busy it was, or recorded only as a flag).", where))
	}
	if r.info.Partial {
		out = append(out, fmt.Sprintf("%s was cut short when cmpbench stopped, and recovered: it covers the %d intervals that reached the disk.", where, r.info.Intervals))
	}
	if line := errorCaveat(where, r); line != "" {
		out = append(out, line)
	}
	return out
}

// errorCaveat says how many errors a repetition had and the first of them, "" when
// it had none.
func errorCaveat(where string, r rep) string {
	var errs int64
	for _, row := range r.rows {
		errs += row.Errors
	}
	if errs <= 0 {
		return ""
	}
	if len(r.info.ErrorSamples) > 0 {
		return fmt.Sprintf("%s had %s errors, first: %s.", where, thousands(errs), literals(r.info.ErrorSamples, "; "))
	}
	return fmt.Sprintf("%s had %s errors.", where, thousands(errs))
}

// tableHead writes a table's header (section.TableHead).
func tableHead(b *strings.Builder, lead, sep string, cols []string) {
	section.TableHead(b, lead, sep, cols)
}

func errorSummary(errs map[string]int64) string {
	var parts []string
	for _, k := range []string{"oom", "timeout", "connection", "protocol", "not_found", "exists", "overload", "in_doubt", "other"} {
		if n := errs[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", k, thousands(n)))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

func ms(ns int64) string { return section.Ms(ns) }

func thousands(n int64) string { return section.Thousands(n) }

func code(s string) string {
	if s == "" {
		return "—"
	}
	return "`" + s + "`"
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func ifStr(c bool, s string) string {
	if c {
		return s
	}
	return ""
}
