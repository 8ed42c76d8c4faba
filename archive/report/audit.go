package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// The fairness audit puts side by side, per system, the settings that decide a
// comparison — durability, replication, memory limit and eviction, threads, CPU
// placement, warm-up and data size, TLS — read from what the archive captured:
// the facts each system's adapter read of its captures (CONFIG GET *, INFO,
// asinfo: auditfacts.go), and what the run itself tells (the provision, the
// phases, the validations); and it names in words the mismatches that make the
// comparison unfair.

// setting is one row of the audit: its name, each system's value in words, and
// a class per system that must be equal for the comparison to be fair ("" when
// the archive does not tell).
type setting struct {
	name    string
	values  []string
	classes []string
	// compare is whether differing classes make the comparison unfair.
	compare bool
}

// cpus is where a system's server ran: the CPU list it was pinned to, or
// unpinned, and whether it shared the client's host.
func (d *data) cpus(s archive.SystemInfo) (words, class string) {
	prov, _ := s.Definition["provision"].(map[string]any)
	list, _ := prov["cpus"].(string)
	where := "remote host"
	if s.Provisioned || isLocal(s.Endpoint) {
		where = "the client's host"
	}
	if list != "" {
		return "pinned to CPUs " + list + " on " + where, "pinned " + list + " " + where
	}
	if !s.Provisioned && !isLocal(s.Endpoint) {
		return "not started by cmpbench: placement unknown", ""
	}
	return "unpinned, on " + where + " (shares its CPUs with the client)", "unpinned " + where
}

// dataSize is how many records a system's load inserted, as its validation
// after the load counted them; without a validation (a suite that asks none),
// the inserts its loads' first repetitions made, as the load counted them (a
// reload after a restart that lost the data is a repetition after it).
func (d *data) dataSize(system string) (words, class string) {
	for _, v := range d.validations {
		if v.System == system && v.Point == "after load" {
			return thousands(v.Expected) + " records", strconv.FormatInt(v.Expected, 10)
		}
	}
	var inserted int64
	loads := 0
	for _, p := range d.m.Phases {
		if p.System == system && p.Kind == core.PhaseLoad && p.Repetition == 0 && p.Status == core.StatusOK {
			ok, _ := d.phaseTotals(p)
			inserted, loads = inserted+ok, loads+1
		}
	}
	if loads == 0 {
		return "—", ""
	}
	return thousands(inserted) + " records inserted by the load (not validated)", strconv.FormatInt(inserted, 10)
}

// warmup is what a system ran before its measured phases: its warm-up phases'
// operations and time.
func (d *data) warmup(system string) (words, class string) {
	var ops int64
	var took time.Duration
	n := 0
	for _, p := range d.m.Phases {
		if p.System == system && p.Kind == core.PhaseWarmup {
			ok, _ := d.phaseTotals(p)
			ops, took, n = ops+ok, took+time.Duration(p.ElapsedNs), n+1
		}
	}
	if n == 0 {
		return "none", "none"
	}
	return fmt.Sprintf("%d phase(s), %s ops in %s", n, thousands(ops), took.Round(time.Millisecond)), "warm"
}

// auditSettings are the audit's rows, one value per system in run order.
func (d *data) auditSettings(facts map[string]*core.Facts) []setting {
	rows := []setting{{name: "durability", compare: true}, {name: "replication", compare: true}, {name: "memory limit and eviction", compare: true},
		{name: "threads"}, {name: "CPU placement", compare: true}, {name: "warm-up", compare: true}, {name: "data size", compare: true}, {name: "TLS", compare: true}}
	for _, s := range d.m.Systems {
		var f core.Facts
		if facts[s.Name] != nil {
			f = *facts[s.Name]
		}
		durability := func() (string, string) {
			words, class := factCell(f.Durability)
			return withEvidence(words, class, d.restartEvidence(s.Name))
		}
		tls, tlsClass := "off", "off"
		if s.TLS != "" {
			tls, tlsClass = s.TLS, "on"
		}
		vals := [][2]string{}
		for _, f := range []func() (string, string){durability,
			func() (string, string) { return factCell(f.Replication) },
			func() (string, string) { return factCell(f.Memory) },
			func() (string, string) { w, _ := factCell(f.Threads); return w, "" },
			func() (string, string) { return d.cpus(s) },
			func() (string, string) { return d.warmup(s.Name) },
			func() (string, string) { return d.dataSize(s.Name) },
			func() (string, string) { return tls, tlsClass }} {
			w, cl := f()
			vals = append(vals, [2]string{w, cl})
		}
		for i := range rows {
			rows[i].values = append(rows[i].values, vals[i][0])
			rows[i].classes = append(rows[i].classes, vals[i][1])
		}
	}
	return rows
}

// findings are the mismatches that make the comparison unfair, in words: for
// each compared setting whose classes differ between systems, what each system
// does.
func (d *data) findings(rows []setting) []string {
	var out []string
	for _, r := range rows {
		if differs, _ := compareClasses(r.classes); !r.compare || !differs {
			continue
		}
		var parts []string
		for i, s := range d.m.Systems {
			parts = append(parts, s.Name+": "+r.values[i])
		}
		out = append(out, fmt.Sprintf("%s differs — %s.", r.name, strings.Join(parts, "; ")))
	}
	return out
}

// compareClasses says whether the classes of a setting, one per system, are
// proven to differ, and which systems' classes are unknown for the comparison:
// "" (the archive does not tell), or "kept" (kept across a restart, what a
// crash loses unknown) against a class other than "none", which it provably
// differs from.
func compareClasses(classes []string) (differs bool, unknown []int) {
	unknownAt := map[int]bool{}
	for i, a := range classes {
		for j := i + 1; j < len(classes); j++ {
			b := classes[j]
			switch {
			case a == "" || b == "":
				unknownAt[i] = unknownAt[i] || a == ""
				unknownAt[j] = unknownAt[j] || b == ""
			case a == "kept" && b == "kept":
				// Both kept their keys across a clean restart; what a crash
				// loses of either is unknown: never the same.
				unknownAt[i], unknownAt[j] = true, true
			case a == b:
			case a == "kept" && b != "none":
				unknownAt[i] = true
			case b == "kept" && a != "none":
				unknownAt[j] = true
			default:
				differs = true
			}
		}
	}
	for i := range classes {
		if unknownAt[i] {
			unknown = append(unknown, i)
		}
	}
	return differs, unknown
}

// unknowns are the compared settings that cannot be compared for want of a
// fact, in words ("cannot compare durability: unknown for aerospike."): an
// unknown fact is never taken as the same.
func (d *data) unknowns(rows []setting) []string {
	var out []string
	for _, r := range rows {
		_, unknown := compareClasses(r.classes)
		if !r.compare || len(unknown) == 0 {
			continue
		}
		var names []string
		for _, i := range unknown {
			names = append(names, d.m.Systems[i].Name)
		}
		who := strings.Join(names, ", ")
		if len(names) == len(d.m.Systems) {
			who = "every system"
		}
		out = append(out, fmt.Sprintf("cannot compare %s: unknown for %s.", r.name, who))
	}
	return out
}

// alike are the compared settings known for every system and alike.
func alike(rows []setting) []string {
	var out []string
	for _, r := range rows {
		if differs, unknown := compareClasses(r.classes); r.compare && !differs && len(unknown) == 0 {
			out = append(out, r.name)
		}
	}
	return out
}

// auditSection writes the audit: the settings side by side, then the
// mismatches and the settings that cannot be compared, or that no mismatch
// was found when every compared setting is known. It returns the mismatches.
func (d *data) auditSection(b *strings.Builder, facts map[string]*core.Facts) []string {
	if len(d.m.Systems) == 0 {
		return nil
	}
	rows := d.auditSettings(facts)
	found, unknown := d.findings(rows), d.unknowns(rows)
	b.WriteString("## Fairness audit\n\nThe settings that decide a comparison, per system, from what the archive captured (CONFIG GET \\*, INFO, asinfo, the provision, the phases and the load's validation); — where it does not tell.\n\n")
	b.WriteString("| setting | " + strings.Join(d.systems, " | ") + " |\n|---|" + strings.Repeat("---|", len(d.systems)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s |", r.name)
		for _, v := range r.values {
			fmt.Fprintf(b, " %s |", v)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if len(found) == 0 && len(unknown) == 0 {
		b.WriteString("No mismatch found: the systems ran with the same durability, replication, memory limit, CPU placement, warm-up, data size and TLS, as far as the archive tells.\n\n")
		return nil
	}
	list := func(head string, lines []string) {
		b.WriteString(head + "\n\n")
		for _, l := range lines {
			fmt.Fprintf(b, "- %s\n", l)
		}
		b.WriteString("\n")
	}
	if len(found) > 0 {
		list("**Unfair comparison:**", found)
	}
	if len(unknown) > 0 {
		list("**Not shown fair:** what the archive does not tell cannot be compared; it is never taken as alike.", unknown)
		if same := alike(rows); len(found) == 0 && len(same) > 0 {
			fmt.Fprintf(b, "Known for every system and alike: %s.\n\n", strings.Join(same, ", "))
		}
	}
	return found
}

// isLocal reports whether an endpoint is on this host's loopback.
func isLocal(endpoint string) bool {
	host := endpoint
	if i := strings.LastIndex(endpoint, ":"); i >= 0 {
		host = strings.Trim(endpoint[:i], "[]")
	}
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
}

// Audit is an archive's fairness audit, as report.md has it, and the mismatches
// that make its comparison unfair (none: fair as far as the archive tells).
func Audit(a *archive.Archive) (text string, unfair []string, err error) {
	d, err := load(a)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	unfair = d.auditSection(&b, d.systemFacts)
	return b.String(), unfair, nil
}
