package report

import (
	"strings"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// The facts the fairness audit compares of each system — durability,
// replication, memory limit and eviction, threads — are its adapter's reading
// of its captures (core.Facts): kept in the archive (facts.json) since the
// adapters read them; for an archive written before, read from the archived
// sections by the built-in adapter that captured them (core.FactReader, through
// core's registry); unknown otherwise. The report keeps only what the run
// itself tells: what the restart check saw wins over what a configuration
// reads as (restartEvidence).

// readFacts reads each system's facts; a system whose facts nothing tells has
// none (nil).
func readFacts(a *archive.Archive) (map[string]*core.Facts, error) {
	out := map[string]*core.Facts{}
	for _, s := range a.Manifest.Systems {
		f, err := a.Facts(s)
		if err != nil {
			return nil, err
		}
		if f == nil {
			if f, err = builtinFacts(a, s); err != nil {
				return nil, err
			}
		}
		out[s.Name] = f
	}
	return out, nil
}

// builtinFacts are a system's facts as the built-in adapter that captured it
// reads its archived sections (systems/<name>/<section>.txt): nil when a
// third-party plugin captured it, or no built-in adapter of its name reads
// facts.
func builtinFacts(a *archive.Archive, s archive.SystemInfo) (*core.Facts, error) {
	for _, p := range a.Manifest.Plugins {
		if p.System == s.Name && !p.Builtin {
			return nil, nil
		}
	}
	adapter, ok := core.BuiltinAdapter(s.Adapter)
	if !ok {
		return nil, nil
	}
	r, ok := adapter.(core.FactReader)
	if !ok {
		return nil, nil
	}
	sections := map[string]string{}
	for _, f := range s.Files {
		if name, ok := strings.CutSuffix(f, ".txt"); ok {
			b, err := a.ReadFile(archive.SystemsDir + "/" + s.Name + "/" + f)
			if err != nil {
				return nil, err
			}
			sections[name] = string(b)
		}
	}
	f := r.Facts(sections)
	return &f, nil
}

// factCell is a fact as the audit's table says it: its words, the adapter's
// text, escaped (factText), and its class; "—" and no class when unknown.
func factCell(f core.Fact) (words, class string) {
	if !f.Known() {
		return "—", ""
	}
	return factText(f.Words), f.Class
}

// restartEvidence is what the restart check saw of a system: "kept" when it
// counted every key loaded after the server's restart, "lost" when the server
// came back empty, "" when it did not run or found otherwise.
func (d *data) restartEvidence(system string) string {
	for _, v := range d.validations {
		if v.System != system || v.Point != "after restart" {
			continue
		}
		switch {
		case strings.HasPrefix(v.Note, "not restart-durable"):
			return "lost"
		case v.OK() && v.Expected > 0 && v.Counted == v.Expected:
			return "kept"
		}
	}
	return ""
}

// withEvidence is a system's durability as the restart check corrects it: a
// check that kept every key is never "every write lost", one that lost every
// key is never a durable configuration.
func withEvidence(words, class, restart string) (string, string) {
	switch {
	case restart == "kept" && class == core.DurabilityNone:
		return "the restart check kept every key, though the configuration reads as: " + words + "; what a crash loses is unknown", core.DurabilityKept
	case restart == "kept" && class == "":
		return "the restart check kept every key; what a crash loses is unknown", core.DurabilityKept
	case restart == "lost" && class == "":
		return "the restart check lost every key: every write lost on a restart", core.DurabilityNone
	case restart == "lost" && class != core.DurabilityNone:
		return "the restart check lost every key, though the configuration reads as: " + words, core.DurabilityNone
	}
	return words, class
}
