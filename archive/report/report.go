// Package report renders an archive's report.md from the archive alone: the same
// archive always gives the same bytes, so a published table can be regenerated and
// audited.
package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// Write regenerates the report files of the archive in dir.
func Write(dir string) error {
	a, err := archive.Open(dir)
	if err != nil {
		return err
	}
	return archive.WriteGenerated(dir, archive.ReportFile, Markdown(a))
}

// Markdown renders the report.
func Markdown(a *archive.Archive) []byte {
	var b strings.Builder
	m := a.Manifest
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("# cmpbench report: %s\n\n", m.Suite.Name)
	w("- Run: `%s`, status **%s**\n", m.RunID, m.Status)
	w("- Started %s, took %s\n", m.Started.UTC().Format("2006-01-02 15:04:05 MST"), m.Ended.Sub(m.Started).Round(time.Second))
	w("- cmpbench %s (commit %s), seed %d, scale %g\n", m.Cmpbench.Version, short(m.Cmpbench.Commit, 12), m.Seed, m.Scale)
	h := m.Host
	w("- Client host: %s, %s %s, kernel %s, %s × %d CPUs, %s memory\n", h.Hostname, h.Platform, h.PlatformVersion, h.Kernel, h.CPUModel, h.CPUs, bytesIEC(h.MemoryBytes))
	w("- Suite `%s` (%s): %s\n\n", m.Suite.Name, m.Suite.Source, strings.TrimSpace(m.Suite.Description))

	w("## Systems\n\n")
	w("| system | product | version | how it ran | binary SHA-256 |\n|---|---|---|---|---|\n")
	for _, s := range m.Systems {
		how := "endpoint `" + s.Endpoint + "`"
		if s.Provisioned {
			how = "started by cmpbench: `" + core.ShellQuote(s.Launch) + "`"
		}
		if s.Error != "" {
			how += " — **not run: " + oneLine(s.Error) + "**"
		}
		w("| %s | %s | %s | %s | %s |\n", s.Name, dash(s.Product), dash(s.Version), how, code(short(s.BinarySHA256, 16)))
	}
	w("\n")

	w("## Results\n\n")
	w("Latencies are in milliseconds, of successful operations only; errors are counted, never timed or counted as throughput. ")
	w("Closed-loop phases show service time. Fixed-rate phases show response time, measured from each operation's intended send time, so queueing behind a slow server counts. ")
	w("**NS** marks a fixed-rate phase that achieved less than %.0f%% of its target rate: its latencies describe an overloaded system and are not comparable.\n\n", archive.SustainedFraction*100)
	b.Write(Tables(a))

	w("## All phases\n\n")
	w("| system | # | phase | kind | shape | status | elapsed | ops ok | errors | client CPU-s | note |\n|---|--:|---|---|---|---|--:|--:|--:|--:|---|\n")
	for _, p := range m.Phases {
		ok, errs := phaseTotals(a, p.System, p.Name)
		cpu := float64(p.CPUUserNs+p.CPUSystemNs) / 1e9
		w("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.2f | %s |\n", p.System, p.Index, p.Name, p.Kind, p.Shape, p.Status,
			time.Duration(p.ElapsedNs).Round(time.Millisecond), thousands(ok), thousands(errs), cpu, oneLine(p.Error))
	}
	w("\n")
	if len(m.Plugins) > 0 {
		w("## Plugins\n\n| system | adapter | binary | SHA-256 | adapter version | built with | protocol |\n|---|---|---|---|---|---|--:|\n")
		for _, p := range m.Plugins {
			kind := "third-party"
			if p.Builtin {
				kind = "built in"
			}
			w("| %s | %s (%s) | `%s` | %s | %s | cmpbench %s | %d |\n", p.System, p.Adapter, kind, p.Path, code(short(p.SHA256, 16)), p.Version, p.SDKVersion, p.Protocol)
		}
		w("\n")
	}
	return []byte(b.String())
}

// Tables renders one table per measured phase: systems side by side.
func Tables(a *archive.Archive) []byte {
	var b strings.Builder
	for _, ph := range measuredPhases(a) {
		writePhaseTable(&b, a, ph)
	}
	return []byte(b.String())
}

type phaseKey struct {
	index int
	name  string
}

// measuredPhases lists the measured phases in suite order.
func measuredPhases(a *archive.Archive) []phaseKey {
	seen := map[phaseKey]bool{}
	var out []phaseKey
	for _, p := range a.Manifest.Phases {
		k := phaseKey{p.Index, p.Name}
		if p.Kind == core.PhaseMeasured && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

func phaseTotals(a *archive.Archive, system, phase string) (ok, errs int64) {
	for _, r := range a.Summary {
		if r.System == system && r.Phase == phase {
			ok += r.Count
			errs += r.Errors
		}
	}
	return ok, errs
}

func writePhaseTable(b *strings.Builder, a *archive.Archive, ph phaseKey) {
	var info archive.PhaseInfo
	for _, p := range a.Manifest.Phases {
		if p.Index == ph.index && p.Name == ph.name {
			info = p
			break
		}
	}
	fmt.Fprintf(b, "### %s\n\n%s; %s; %s\n\n", ph.name, info.Workload, info.Shape, time.Duration(info.DurationNs))
	var ops []string
	for _, r := range a.Summary {
		if r.PhaseIndex == ph.index && !slices.Contains(ops, r.Op) {
			ops = append(ops, r.Op)
		}
	}
	sort.Strings(ops)
	b.WriteString("| system | ops/s |")
	sep := "|---|--:|"
	for _, op := range ops {
		for _, q := range []string{"p50", "p99", "p99.9", "p99.99"} {
			fmt.Fprintf(b, " %s %s |", op, q)
			sep += "--:|"
		}
	}
	b.WriteString(" hits | misses | errors | status |\n")
	b.WriteString(sep + "--:|--:|---|---|\n")
	for _, s := range a.Manifest.Systems {
		var rows []archive.SummaryRow
		for _, r := range a.Summary {
			if r.System == s.Name && r.PhaseIndex == ph.index {
				rows = append(rows, r)
			}
		}
		status := string(phaseStatus(a, s.Name, ph))
		if len(rows) == 0 {
			fmt.Fprintf(b, "| %s | — |%s — | — | — | %s |\n", s.Name, strings.Repeat(" — |", 4*len(ops)), status)
			continue
		}
		r0 := rows[0]
		rate := thousands(int64(math.Round(r0.AchievedRate)))
		if r0.TargetRate > 0 {
			rate += " of " + thousands(int64(r0.TargetRate))
			if r0.Sustained != nil && !*r0.Sustained {
				rate = "**NS** " + rate
			}
		}
		fmt.Fprintf(b, "| %s | %s |", s.Name, rate)
		var hits, misses int64
		errs := map[string]int64{}
		for _, op := range ops {
			r, ok := find(rows, op)
			if !ok {
				b.WriteString(strings.Repeat(" — |", 4))
				continue
			}
			p50, p99, p999, p9999 := r.SvcP50, r.SvcP99, r.SvcP999, r.SvcP9999
			if r.TargetRate > 0 {
				p50, p99, p999, p9999 = r.RespP50, r.RespP99, r.RespP999, r.RespP9999
			}
			fmt.Fprintf(b, " %s | %s | %s | %s |", ms(p50), ms(p99), ms(p999), ms(p9999))
			hits += r.Hits
			misses += r.Misses
			errs["oom"] += r.ErrOOM
			errs["timeout"] += r.ErrTimeout
			errs["connection"] += r.ErrConn
			errs["protocol"] += r.ErrProtocol
			errs["other"] += r.ErrOther
		}
		fmt.Fprintf(b, " %s | %s | %s | %s |\n", thousands(hits), thousands(misses), errorSummary(errs), status)
	}
	b.WriteString("\n")
}

func phaseStatus(a *archive.Archive, system string, ph phaseKey) core.PhaseStatus {
	for _, p := range a.Manifest.Phases {
		if p.System == system && p.Index == ph.index {
			return p.Status
		}
	}
	return "not run"
}

func find(rows []archive.SummaryRow, op string) (archive.SummaryRow, bool) {
	for _, r := range rows {
		if r.Op == op {
			return r, true
		}
	}
	return archive.SummaryRow{}, false
}

func errorSummary(errs map[string]int64) string {
	var parts []string
	for _, k := range []string{"oom", "timeout", "connection", "protocol", "other"} {
		if n := errs[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", k, thousands(n)))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

func ms(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }

func thousands(n int64) string {
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

func bytesIEC(n uint64) string {
	const gib = 1 << 30
	if n >= gib {
		return fmt.Sprintf("%.1f GiB", float64(n)/gib)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

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

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", "\\|")
}
