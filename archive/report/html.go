package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
)

// HTMLFile is the name of the report page in an archive, beside report.md.
const HTMLFile = "report.html"

// uplotVersion is the vendored uPlot's (assets/uplot/README.md says why and how
// it is updated).
const uplotVersion = "1.6.32"

//go:embed assets/uplot/uPlot.iife.min.js assets/uplot/uPlot.min.css assets/report.js assets/report.css assets/report.html.tmpl assets/compare.html.tmpl
var assets embed.FS

// pageTemplate holds report.html's template and compare's, which shares its
// charts and marks. html/template escapes every field; the fields that hold
// text from servers and plugins (a system's version, its error, the facts) are
// shown through printable (core.Printable), their control characters made
// visible.
var pageTemplate = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{"printable": core.Printable}).
	ParseFS(assets, "assets/report.html.tmpl", "assets/compare.html.tmpl"))

// markdownToHTML renders the report's own Markdown (its tables among it) for the
// page's sections. It reads headings, lists, tables, emphasis and code spans,
// and nothing that links, loads or passes HTML through: no link, image,
// autolink, link reference or raw HTML, inline or as a block, whatever the
// Markdown holds (text from servers is inert in it already: literal). So the
// page opens offline and holds no element the report did not make.
var markdownToHTML = goldmark.New(goldmark.WithParser(parser.NewParser(
	parser.WithBlockParsers(
		util.Prioritized(parser.NewSetextHeadingParser(), 100),
		util.Prioritized(parser.NewThematicBreakParser(), 200),
		util.Prioritized(parser.NewListParser(), 300),
		util.Prioritized(parser.NewListItemParser(), 400),
		util.Prioritized(parser.NewCodeBlockParser(), 500),
		util.Prioritized(parser.NewATXHeadingParser(), 600),
		util.Prioritized(parser.NewFencedCodeBlockParser(), 700),
		util.Prioritized(parser.NewBlockquoteParser(), 800),
		util.Prioritized(parser.NewParagraphParser(), 1000)),
	parser.WithInlineParsers(
		util.Prioritized(parser.NewCodeSpanParser(), 100),
		util.Prioritized(parser.NewEmphasisParser(), 500)))),
	goldmark.WithExtensions(extension.Table))

// page is what report.html shows: a summary first, then each measured phase with
// a compact table, its full table one click away and its charts, the ladders
// and sweeps, and the report's detail sections.
type page struct {
	Title    string
	Facts    []string
	Systems  []archive.SystemInfo
	Headline headline
	Overview []chartView   // every phase side by side: the bars
	Caveats  template.HTML // report.md's caveats, rendered
	Audit    template.HTML // report.md's fairness audit, rendered
	Unfair   bool
	Phases   []phaseView
	Groups   []groupView
	Details  []detailView
	Charts   template.JS // the charts' specs, JSON
	inlined
}

// inlined is what a page carries instead of fetching it: uPlot, the charts'
// script, and the style.
type inlined struct {
	UPlot, Script template.JS
	UPlotCSS, CSS template.CSS
}

// pageParts is what every page carries besides its own content: its charts'
// specs as JSON, and the inlined assets.
func pageParts(charts []*chart.Chart) (template.JS, inlined, error) {
	js, err := chart.JSON(charts)
	if err != nil {
		return "", inlined{}, err
	}
	in, err := inline()
	return template.JS(js), in, err
}

// inline reads the assets every page inlines.
func inline() (inlined, error) {
	var in inlined
	for _, a := range []struct {
		name string
		set  func(string)
	}{
		{"assets/uplot/uPlot.iife.min.js", func(s string) { in.UPlot = template.JS(s) }},
		{"assets/report.js", func(s string) { in.Script = template.JS(s) }},
		{"assets/uplot/uPlot.min.css", func(s string) { in.UPlotCSS = template.CSS(s) }},
		{"assets/report.css", func(s string) { in.CSS = template.CSS(s) }},
	} {
		b, err := assets.ReadFile(a.name)
		if err != nil {
			return in, err
		}
		a.set(string(b))
	}
	return in, nil
}

// headline is the summary's comparison: a row per measured phase, a cell per
// system with its throughput and tail.
type headline struct {
	Systems []string
	Rows    []headlineRow
}

type headlineRow struct {
	Anchor, Phase, Kind string
	Cells               []rateView
}

// rateView is a throughput and a latency as the page shows them, with the marks
// that change how to read them.
type rateView struct {
	Rate, Latency string
	NS, Bad       bool   // not sustained; a status that is not ok
	Flags, Status string // client-bound and the like; the status when not ok
	Versus        string // in the headline: how it differs from the first system, and whether significantly
}

// phaseView is one measured phase: what it is, its compact table, its full
// table (the report's Markdown table, rendered) and its charts.
type phaseView struct {
	Anchor, Name, About string
	LatencyKind         string // "response time" or "service time"
	Rows                []phaseRow
	Full                template.HTML
	Charts              []chartView
}

type phaseRow struct {
	System                string
	Rate                  rateView
	P50, P99, P999, P9999 string
	Errors                string
}

type chartView struct{ ID, Caption string }

// groupView is a ladder or a sweep: its charts and its table.
type groupView struct {
	Anchor, Name string
	Charts       []chartView
	Table        template.HTML
}

// detailView is one of the report's sections, folded.
type detailView struct {
	Title string
	Body  template.HTML
}

// html renders report.html.
func (d *data) html(rc reportCharts) ([]byte, error) {
	p, specs, err := d.page(rc)
	if err != nil {
		return nil, err
	}
	if p.Charts, p.inlined, err = pageParts(specs); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("%s: %w", HTMLFile, err)
	}
	return b.Bytes(), nil
}

// page builds the page and the specs of its charts.
func (d *data) page(rc reportCharts) (*page, []*chart.Chart, error) {
	p := &page{Title: "cmpbench report: " + d.m.Suite.Name, Facts: d.facts(), Systems: d.m.Systems, Headline: d.headline()}
	var caveats strings.Builder
	for _, c := range d.caveats() {
		fmt.Fprintf(&caveats, "- %s\n", c)
	}
	var err error
	if p.Caveats, err = renderMarkdown(caveats.String()); err != nil {
		return nil, nil, err
	}
	var audit strings.Builder
	p.Unfair = len(d.auditSection(&audit, d.systemFacts)) > 0
	if p.Audit, err = renderMarkdown(audit.String()); err != nil {
		return nil, nil, err
	}
	var specs []*chart.Chart
	add := func(c *chart.Chart) *chartView {
		if c == nil {
			return nil
		}
		specs = append(specs, c)
		return &chartView{c.ID, c.Caption}
	}
	for _, c := range rc.summary {
		if cv := add(c); cv != nil {
			p.Overview = append(p.Overview, *cv)
		}
	}
	for _, ph := range d.measured {
		v, err := d.phaseView(ph, rc.phases[ph.index], add)
		if err != nil {
			return nil, nil, err
		}
		p.Phases = append(p.Phases, v)
	}
	if p.Groups, err = d.groupViews(rc.groups, add); err != nil {
		return nil, nil, err
	}
	if p.Details, err = d.details(); err != nil {
		return nil, nil, err
	}
	return p, specs, nil
}

// facts are the run's facts as the summary lists them: what ran, where, when,
// with which cmpbench.
func (d *data) facts() []string {
	m := d.m
	out := []string{fmt.Sprintf("Run %s, status %s%s", m.RunID, m.Status, ifStr(m.Recovered, " (recovered with cmpbench recover)"))}
	if m.Imported != nil {
		out = append(out, fmt.Sprintf("Imported from %s output (%s)", m.Imported.Tool, m.Imported.Source))
	} else {
		h := m.Host
		out = append(out,
			fmt.Sprintf("Started %s, took %s", m.Started.UTC().Format("2006-01-02 15:04:05 MST"), m.Ended.Sub(m.Started).Round(time.Second)),
			fmt.Sprintf("cmpbench %s (commit %s), seed %d, scale %g, each measured phase run %d time(s)", m.Cmpbench.Version, core.Shorten(m.Cmpbench.Commit, 12), m.Seed, m.Scale, max(1, m.Repeat)),
			fmt.Sprintf("Client host %s: %s %s, kernel %s, %s × %d CPUs, %s memory", h.Hostname, h.Platform, h.PlatformVersion, h.Kernel, h.CPUModel, h.CPUs, core.BytesIEC(h.MemoryBytes)))
	}
	return append(out, fmt.Sprintf("Suite %s (%s): %s", m.Suite.Name, m.Suite.Source, strings.TrimSpace(m.Suite.Description)))
}

// headline is the summary's comparison of every measured phase.
func (d *data) headline() headline {
	h := headline{Systems: d.systems}
	for _, ph := range d.measured {
		row := headlineRow{Anchor: phaseAnchor(ph), Phase: ph.name, Kind: "closed loop, p99 service time"}
		if ph.info.Rate > 0 {
			row.Kind = "fixed rate, p99 response time"
		}
		for i, sys := range d.systems {
			c := d.cell(ph, sys)
			r := d.rateView(c)
			if v, ok := c.timedQuantile(99); ok {
				r.Latency = ms(v) + " ms"
			}
			if i > 0 && d.sure() {
				if v := versus(d.cell(ph, d.systems[0]), c); v != "" {
					r.Versus = "against " + d.systems[0] + ": " + v
				}
			}
			row.Cells = append(row.Cells, r)
		}
		h.Rows = append(h.Rows, row)
	}
	return h
}

// rateView is a cell's throughput with its marks: "—" when it measured nothing.
func (d *data) rateView(c cell) rateView {
	reps := c.measured()
	v := rateView{Rate: "—", Latency: "—"}
	if status := statusOf(c); status != "ok" {
		v.Bad, v.Status = true, status
	}
	if len(reps) == 0 {
		return v
	}
	v.Rate, v.NS, v.Flags = rateParts(c.throughput(), reps)
	v.Flags = strings.TrimSpace(v.Flags)
	return v
}

// timedQuantile is the median over repetitions of quantile q (0-100) of the
// timed ops' latencies merged (response time; service time in a closed loop,
// where they are the same).
func (c cell) timedQuantile(q float64) (int64, bool) {
	var v []float64
	for _, r := range c.measured() {
		h := mergeEncoded(r.timed(), func(row archive.SummaryRow) []byte { return row.RespHDR })
		if h != nil && h.TotalCount() > 0 {
			v = append(v, float64(h.ValueAtQuantile(q)))
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	return int64(math.Round(archive.SpreadOf(v).Median)), true
}

func phaseAnchor(ph phaseRef) string {
	return fmt.Sprintf("phase-%d-%s", ph.index, namePart(ph.name))
}

// phaseView is one measured phase's section.
func (d *data) phaseView(ph phaseRef, charts []*chart.Chart, add func(*chart.Chart) *chartView) (phaseView, error) {
	info := ph.info
	v := phaseView{Anchor: phaseAnchor(ph), Name: ph.name, LatencyKind: "service time"}
	v.About = fmt.Sprintf("%s; %s; %s", info.Workload, info.Shape, time.Duration(info.DurationNs))
	if info.Rate > 0 {
		v.LatencyKind = "response time"
	}
	v.Rows = d.phaseRows(ph)
	var md strings.Builder
	d.phaseTable(&md, ph)
	full, err := renderMarkdown(md.String())
	if err != nil {
		return v, err
	}
	v.Full = full
	for _, c := range charts {
		if cv := add(c); cv != nil {
			v.Charts = append(v.Charts, *cv)
		}
	}
	return v, nil
}

// phaseRows are a phase's compact rows: per system its rate with its marks, the
// timed ops' latencies merged (median of the repetitions) and its errors.
func (d *data) phaseRows(ph phaseRef) []phaseRow {
	var rows []phaseRow
	for _, sys := range d.systems {
		c := d.cell(ph, sys)
		row := phaseRow{System: sys, Rate: d.rateView(c), Errors: "—"}
		if h, ok := c.rateSure(); ok && d.sure() {
			row.Rate.Rate += plusMinus(h)
		}
		lat := []*string{&row.P50, &row.P99, &row.P999, &row.P9999}
		for i, q := range []struct {
			name string
			q    float64
		}{{"p50", 50}, {"p99", 99}, {"p99.9", 99.9}, {"p99.99", 99.99}} {
			*lat[i] = "—"
			if n, ok := c.timedQuantile(q.q); ok {
				*lat[i] = ms(n)
				if h, ok := c.timedSure(q.name, q.q); ok && d.sure() {
					*lat[i] += plusMinus(h)
				}
			}
		}
		if reps := c.measured(); len(reps) > 0 {
			_, _, errs := outcomes(reps)
			row.Errors = errorSummary(errs)
		}
		rows = append(rows, row)
	}
	return rows
}

// groupViews are the ladders' and sweeps' sections: each one's charts and table.
func (d *data) groupViews(groups []groupCharts, add func(*chart.Chart) *chartView) ([]groupView, error) {
	var out []groupView
	for _, g := range groups {
		v := groupView{Anchor: g.anchor, Name: g.name}
		for _, c := range g.charts {
			if cv := add(c); cv != nil {
				v.Charts = append(v.Charts, *cv)
			}
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, nil
	}
	// The tables of every method's section, as report.md has them.
	var md strings.Builder
	for _, p := range d.methodParts() {
		md.WriteString(p.Markdown)
	}
	tables, err := renderMarkdown(md.String())
	if err != nil {
		return nil, err
	}
	out[len(out)-1].Table = tables
	return out, nil
}

// details are report.md's sections a reader looks up rather than reads first,
// rendered from the same Markdown.
func (d *data) details() ([]detailView, error) {
	var out []detailView
	for _, s := range []struct {
		title string
		write func(*strings.Builder)
	}{
		{"Side by side, every op", d.sideBySide},
		{"Pub/sub messages", d.pubsubSection},
		{"Stalls", d.stallSection},
		{"Cost", d.costTable},
		{"Validation of loaded data", d.validation},
		{"Server-side counts", d.reconciliation},
		{"All phases", d.allPhases},
		{"Plugins", d.pluginsSection},
	} {
		var md strings.Builder
		s.write(&md)
		if md.Len() == 0 {
			continue
		}
		body, err := renderMarkdown(md.String())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.title, err)
		}
		out = append(out, detailView{s.title, body})
	}
	return out, nil
}

// renderMarkdown renders the report's Markdown to HTML, its headings one level
// down so that they sit under the page's own.
func renderMarkdown(md string) (template.HTML, error) {
	var b bytes.Buffer
	if err := markdownToHTML.Convert([]byte(md), &b); err != nil {
		return "", err
	}
	s := b.String()
	for _, h := range []string{"h4", "h3", "h2"} {
		next := "h" + string(h[1]+1)
		s = strings.ReplaceAll(s, "<"+h+">", "<"+next+">")
		s = strings.ReplaceAll(s, "</"+h+">", "</"+next+">")
	}
	return template.HTML(s), nil // markdownToHTML reads no raw HTML: the Markdown's text is never markup
}
