package report

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// The fairness audit puts side by side, per system, the settings that decide a
// comparison — durability, replication, memory limit and eviction, threads, CPU
// placement, warm-up and data size, TLS — read from what the archive captured
// (CONFIG GET *, INFO, asinfo, the provision, the phases, the validations), and
// names in words the mismatches that make the comparison unfair.

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

// captures are a system's configuration as its captures say: CONFIG GET *
// (config.txt), INFO (info.txt), and Aerospike's service and namespace
// configuration (get-config), each a map of key to value; a cluster's first node.
type captures struct {
	config, info, asService, asNamespace map[string]string
}

// readCaptures reads the captures the audit needs of every system.
func readCaptures(a *archive.Archive, systems []archive.SystemInfo) (map[string]captures, error) {
	out := map[string]captures{}
	for _, s := range systems {
		var c captures
		for _, f := range s.Files {
			var parse func(string) map[string]string
			var into *map[string]string
			switch {
			case f == "config.txt":
				parse, into = pairs(" "), &c.config
			case f == "info.txt":
				parse, into = pairs(":"), &c.info
			case f == "get-config:context=service.txt":
				parse, into = fields, &c.asService
			case strings.HasPrefix(f, "get-config:context=namespace;") && !strings.Contains(f, "@"):
				parse, into = fields, &c.asNamespace
			default:
				continue
			}
			b, err := a.ReadFile(archive.SystemsDir + "/" + s.Name + "/" + f)
			if err != nil {
				return nil, err
			}
			*into = parse(string(b))
		}
		out[s.Name] = c
	}
	return out, nil
}

// pairs parses lines of "key<sep>value".
func pairs(sep string) func(string) map[string]string {
	return func(text string) map[string]string {
		m := map[string]string{}
		for _, line := range strings.Split(text, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), sep); ok && !strings.HasPrefix(k, "#") {
				m[k] = strings.TrimSpace(v)
			}
		}
		return m
	}
}

// fields parses an info answer of "key=value;key=value".
func fields(text string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSpace(text), ";") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// durability says in words what a system loses on a crash or power loss, and
// its class: "none", "snapshot", "os", "1s", "always" ("" when unknown).
func (c captures) durability() (words, class string) {
	switch {
	case c.config["appendonly"] == "yes":
		switch c.config["appendfsync"] {
		case "always":
			return "appendfsync always: no acknowledged write lost on power loss", "always"
		case "everysec":
			return "appendfsync everysec: up to 1 s of writes lost on power loss", "1s"
		default:
			return "appendfsync no: the OS flushes (about 30 s); writes lost on power loss", "os"
		}
	case c.config["appendonly"] == "no" && c.config["save"] != "":
		return "RDB snapshots only (save " + literal(c.config["save"]) + "): writes since the last snapshot lost on a crash", "snapshot"
	case c.config["appendonly"] == "no":
		return "no persistence: every write lost on a restart", "none"
	}
	ns := c.asNamespace
	if ns == nil {
		return "—", ""
	}
	engine := literal(ns["storage-engine"])
	switch {
	case ns["storage-engine"] == "memory" && ns["storage-engine.file[0]"] == "" && ns["storage-engine.device[0]"] == "":
		return "storage-engine memory: every write lost on a restart", "none"
	case ns["storage-engine.commit-to-device"] == "true":
		return "storage-engine " + engine + ", commit-to-device true: no acknowledged write lost on power loss", "always"
	case engine != "":
		flush := literal(cmp.Or(ns["storage-engine.flush-max-ms"], "1000"))
		return "storage-engine " + engine + ", commit-to-device false: up to " + flush + " ms of writes lost on power loss", "1s"
	}
	return "—", ""
}

// replication says how many copies a system keeps.
func (c captures) replication() (words, class string) {
	if rf := c.asNamespace["replication-factor"]; rf != "" {
		return "replication-factor " + literal(rf), rf
	}
	if role := c.info["role"]; role != "" {
		n := cmp.Or(c.info["connected_slaves"], "0")
		if n == "0" {
			return literal(role) + ", no replica", "1"
		}
		return literal(role) + ", " + literal(n) + " replica(s)", strconv.Itoa(atoi(n) + 1)
	}
	return "—", ""
}

// memory says a system's memory limit and what it does at the limit.
func (c captures) memory() (words, class string) {
	if mm, ok := c.config["maxmemory"]; ok {
		policy := literal(c.config["maxmemory-policy"])
		if mm == "0" {
			return "no limit (" + policy + ")", "unlimited"
		}
		return "maxmemory " + bytesWords(mm) + ", " + policy, "limit " + policy
	}
	for _, k := range []string{"indexes-memory-budget", "storage-engine.data-size", "memory-size"} {
		if v := c.asNamespace[k]; v != "" && v != "0" {
			return k + " " + bytesWords(v) + ", evict at " + dash(literal(cmp.Or(c.asNamespace["evict-used-pct"], c.asNamespace["high-water-memory-pct"]))) + "%", "limit"
		}
	}
	return "—", ""
}

// threads says how many threads a system serves requests with.
func (c captures) threads() string {
	if n := c.config["io-threads"]; n != "" {
		return "io-threads " + literal(n)
	}
	if n := c.config["server-threads"]; n != "" {
		return "server-threads " + literal(n) // KeyDB
	}
	if n := c.asService["service-threads"]; n != "" {
		return "service-threads " + literal(n)
	}
	return "—"
}

func bytesWords(s string) string {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return literal(s)
	}
	return bytesIEC(n)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
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
// after the load counted them.
func (d *data) dataSize(system string) (words, class string) {
	for _, v := range d.validations {
		if v.System == system && v.Point == "after load" {
			return thousands(v.Expected) + " records", strconv.FormatInt(v.Expected, 10)
		}
	}
	return "—", ""
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
func (d *data) auditSettings(caps map[string]captures) []setting {
	rows := []setting{{name: "durability", compare: true}, {name: "replication", compare: true}, {name: "memory limit and eviction", compare: true},
		{name: "threads"}, {name: "CPU placement", compare: true}, {name: "warm-up", compare: true}, {name: "data size", compare: true}, {name: "TLS", compare: true}}
	for _, s := range d.m.Systems {
		c := caps[s.Name]
		tls, tlsClass := "off", "off"
		if s.TLS != "" {
			tls, tlsClass = s.TLS, "on"
		}
		vals := [][2]string{}
		for _, f := range []func() (string, string){c.durability, c.replication, c.memory,
			func() (string, string) { return c.threads(), "" },
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
// each setting whose known classes differ between systems, what each system
// does.
func (d *data) findings(rows []setting) []string {
	var out []string
	for _, r := range rows {
		known := map[string]bool{}
		for _, c := range r.classes {
			if c != "" {
				known[c] = true
			}
		}
		if !r.compare || len(known) < 2 {
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

// auditSection writes the audit: the settings side by side, then the
// mismatches, or that none was found among what the archive records.
func (d *data) auditSection(b *strings.Builder, caps map[string]captures) []string {
	if len(d.m.Systems) == 0 {
		return nil
	}
	rows := d.auditSettings(caps)
	found := d.findings(rows)
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
	if len(found) == 0 {
		b.WriteString("No mismatch found: the systems ran with the same durability, replication, memory limit, CPU placement, warm-up, data size and TLS, as far as the archive tells.\n\n")
		return nil
	}
	b.WriteString("**Unfair comparison:**\n\n")
	for _, f := range found {
		fmt.Fprintf(b, "- %s\n", f)
	}
	b.WriteString("\n")
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
	unfair = d.auditSection(&b, d.caps)
	return b.String(), unfair, nil
}
