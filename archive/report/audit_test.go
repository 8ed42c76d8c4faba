package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core"
)

func TestFindings(t *testing.T) {
	d := &data{m: archive.Manifest{Systems: []archive.SystemInfo{{Name: "a"}, {Name: "b"}}}}
	rows := []setting{
		{name: "durability", values: []string{"x", "y"}, classes: []string{"none", "1s"}, compare: true},
		{name: "TLS", values: []string{"off", "off"}, classes: []string{"off", "off"}, compare: true},
		{name: "memory", values: []string{"—", "no limit"}, classes: []string{"", "unlimited"}, compare: true}, // unknown is no mismatch
		{name: "threads", values: []string{"io-threads 1", "service-threads 4"}, classes: []string{"1", "4"}},  // not compared
	}
	got := d.findings(rows)
	if len(got) != 1 || got[0] != "durability differs — a: x; b: y." {
		t.Errorf("findings %q", got)
	}
}

// auditArchive is an archive of systems (their captures, facts and plugins as
// given; on the client's host unless said) with checks as their validations.
func auditArchive(t *testing.T, systems []core.SystemRun, checks []core.Validation) *archive.Archive {
	t.Helper()
	for i := range systems {
		if systems[i].Endpoint == "" {
			systems[i].Endpoint, systems[i].Provisioned = "127.0.0.1:7000", true
		}
	}
	a, err := archivetest.WriteSystems(t.TempDir(), systems, checks)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// withFacts is a system of a built-in adapter whose facts the archive keeps.
func withFacts(name string, f core.Facts) core.SystemRun {
	return core.SystemRun{Name: name, Adapter: "resp", Plugin: core.PluginRef{Adapter: "resp", Builtin: true, Path: "/bin/cmpbench"},
		Capture: core.Capture{Sections: map[string]string{"info": "x:1\n"}, Facts: &f}}
}

// loaded are validations of a load of 10,000 keys on each system, and restart
// what each one's restart check saw ("kept", "lost"; "" none).
func loaded(restart map[string]string, systems ...string) []core.Validation {
	var out []core.Validation
	for _, s := range systems {
		out = append(out, core.Validation{System: s, Point: "after load", Expected: 10000, Counted: 10000})
		switch restart[s] {
		case "kept":
			out = append(out, core.Validation{System: s, Point: "after restart", Expected: 10000, Counted: 10000})
		case "lost":
			out = append(out, core.Validation{System: s, Point: "after restart", Expected: 10000,
				Note: "not restart-durable: the server came back empty (it keeps no data across a restart); loaded again"})
		}
	}
	return out
}

// Facts of a Redis in memory, one with an AOF, and one the archive tells
// nothing of.
var (
	inMemory = core.Facts{
		Durability:  core.Fact{Words: "no persistence: every write lost on a restart", Class: core.DurabilityNone},
		Replication: core.Fact{Words: "`master`, no replica", Class: "1"},
		Memory:      core.Fact{Words: "no limit (`noeviction`)", Class: "unlimited"},
		Threads:     core.Fact{Words: "io-threads `1`"},
	}
	withAOF = func() core.Facts {
		f := inMemory
		f.Durability = core.Fact{Words: "appendfsync everysec: up to 1 s of writes lost on power loss", Class: "1s"}
		return f
	}()
)

// auditRow is a row of the audit's table: each system's value.
func auditRow(t *testing.T, text, setting string) []string {
	t.Helper()
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, "| "+setting+" | "); ok {
			return strings.Split(strings.TrimSuffix(strings.TrimSpace(rest), " |"), " | ")
		}
	}
	t.Fatalf("no row %q in\n%s", setting, text)
	return nil
}

// An unknown fact is never "the same": redis, whose restart check lost every
// key, beside a system whose durability the archive does not tell is not
// "No mismatch found … same durability" but "cannot compare durability:
// unknown for …"; `cmpbench audit` still exits 0 for it (no mismatch proven),
// and lists it.
func TestAuditUnknownIsNeverTheSame(t *testing.T) {
	other := core.SystemRun{Name: "other", Adapter: "resp", Capture: core.Capture{Sections: map[string]string{"cmd-ping": "PONG\n"}, Facts: &core.Facts{}}}
	for _, tc := range []struct {
		name    string
		systems []core.SystemRun
		unfair  bool
		want    []string
		mustNot []string
	}{
		{"redis beside a system the archive does not tell", []core.SystemRun{withFacts("redis", inMemory), other}, false,
			[]string{"- cannot compare durability: unknown for other.", "- cannot compare replication: unknown for other.", "- cannot compare memory limit and eviction: unknown for other."},
			[]string{"No mismatch", "same"}},
		{"a mismatch and an unknown", []core.SystemRun{withFacts("redis", inMemory), withFacts("redis-aof", withAOF), other}, true,
			[]string{"**Unfair comparison:**", "- durability differs — redis:", "- cannot compare durability: unknown for other."},
			[]string{"No mismatch", "same"}},
		{"alike and known", []core.SystemRun{withFacts("redis", inMemory), withFacts("valkey", inMemory)}, false,
			[]string{"No mismatch found: the systems ran with the same durability"}, []string{"cannot compare"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			for _, s := range tc.systems {
				names = append(names, s.Name)
			}
			restart := map[string]string{"redis": "lost", "valkey": "lost", "redis-aof": "kept"}
			text, unfair, err := Audit(auditArchive(t, tc.systems, loaded(restart, names...)))
			if err != nil {
				t.Fatal(err)
			}
			if (len(unfair) > 0) != tc.unfair {
				t.Errorf("unfair %q, want %v", unfair, tc.unfair)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("no %q in\n%s", w, text)
				}
			}
			for _, w := range tc.mustNot {
				if strings.Contains(text, w) {
					t.Errorf("%q in\n%s", w, text)
				}
			}
		})
	}
}

// factsAdapter is a built-in adapter, registered for the tests, that reads its
// facts from a section "threads".
type factsAdapter struct{ core.Adapter }

func (factsAdapter) Facts(sections map[string]string) core.Facts {
	if n, ok := sections["threads"]; ok {
		return core.Facts{Threads: core.Fact{Words: "threads " + strings.TrimSpace(n)}}
	}
	return core.Facts{}
}

func init() {
	core.RegisterAdapter("facts-test", func() core.Adapter { return factsAdapter{} })
	core.RegisterAdapter("no-facts-test", func() core.Adapter { return struct{ core.Adapter }{} })
}

// The audit compares the facts the archive keeps; of an archive written
// before facts were kept, those the built-in adapter that captured a system
// reads of its archived sections; else none: never a third-party plugin's
// sections read by a built-in adapter of the same name.
func TestAuditFactsFromTheArchiveOrTheAdapter(t *testing.T) {
	sections := map[string]string{"threads": "4\n"}
	kept := core.Facts{Threads: core.Fact{Words: "threads 2 (kept)"}}
	for _, tc := range []struct {
		name string
		run  core.SystemRun
		want string
	}{
		{"kept in the archive", core.SystemRun{Adapter: "facts-test", Capture: core.Capture{Sections: sections, Facts: &kept}}, "threads 2 (kept)"},
		{"an archive of the format before", core.SystemRun{Adapter: "facts-test", Capture: core.Capture{Sections: sections}}, "threads 4"},
		{"a third-party plugin", core.SystemRun{Adapter: "facts-test", Plugin: core.PluginRef{Adapter: "facts-test", Path: "/plugins/cmpbench-adapter-facts-test"},
			Capture: core.Capture{Sections: sections}}, "—"},
		{"an adapter that reads no facts", core.SystemRun{Adapter: "no-facts-test", Capture: core.Capture{Sections: sections}}, "—"},
		{"an adapter not built in", core.SystemRun{Adapter: "elsewhere", Capture: core.Capture{Sections: sections}}, "—"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run.Name = "s"
			text, _, err := Audit(auditArchive(t, []core.SystemRun{tc.run}, nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := auditRow(t, text, "threads"); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("threads %q, want %q", got, tc.want)
			}
		})
	}
}

// A fact's words are the adapter's text (a third-party plugin's, untrusted):
// the audit writes them through factText, in its table and in its findings.
func TestAuditEscapesFacts(t *testing.T) {
	hostile := inMemory
	words := "no limit (" + core.Quoted("**bold** `tick` a|b <b>x</b>") + ")\n**second** line"
	hostile.Memory = core.Fact{Words: words, Class: "unlimited evil"}
	text, _, err := Audit(auditArchive(t, []core.SystemRun{withFacts("a", inMemory), withFacts("b", hostile)}, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := factText(words)
	if got := auditRow(t, text, "memory limit and eviction"); len(got) != 2 || got[1] != want {
		t.Errorf("memory row %q, want %q", got, want)
	}
	if !strings.Contains(text, "- memory limit and eviction differs — a: no limit (`noeviction`); b: "+want+".") {
		t.Errorf("findings:\n%s", text)
	}
}

// What the restart check saw wins over what a configuration reads as: a
// system whose configuration says no persistence but that kept every key
// across the restart is not "every write lost", and one that reads as
// durable but came back empty is.
func TestAuditEvidenceWins(t *testing.T) {
	for _, tc := range []struct {
		name, words, class, restart string
		wantClass, wantWords        string
	}{
		{"kept, reads as none", "no persistence: every write lost on a restart", "none", "kept", "kept", "the restart check kept every key"},
		{"kept, unknown", "—", "", "kept", "kept", "the restart check kept every key; what a crash loses is unknown"},
		{"kept, durable", "appendfsync everysec: up to 1 s of writes lost on power loss", "1s", "kept", "1s", "appendfsync everysec"},
		{"lost, reads as durable", "appendfsync everysec: up to 1 s of writes lost on power loss", "1s", "lost", "none", "the restart check lost every key"},
		{"lost, unknown", "—", "", "lost", "none", "every write lost on a restart"},
		{"no check", "—", "", "", "", "—"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			words, class := withEvidence(tc.words, tc.class, tc.restart)
			if class != tc.wantClass || !strings.Contains(words, tc.wantWords) {
				t.Errorf("%q (%s), want %q in it (%s)", words, class, tc.wantWords, tc.wantClass)
			}
			if tc.restart == "kept" && strings.Contains(words, "every write lost") && !strings.Contains(words, "reads as") {
				t.Errorf("kept every key, yet %q", words)
			}
		})
	}
}

// Only a durability that keeps nothing is provably other than one known only
// to survive a restart; unknown classes are never "the same".
func TestCompareClasses(t *testing.T) {
	for _, tc := range []struct {
		classes []string
		differs bool
		unknown []int
	}{
		{[]string{"none", "none"}, false, nil},
		{[]string{"none", "1s"}, true, nil},
		{[]string{"none", ""}, false, []int{1}},
		{[]string{"", "", "os"}, false, []int{0, 1}},
		{[]string{"none", "kept"}, true, nil},
		{[]string{"1s", "kept"}, false, []int{1}},
		{[]string{"kept", "kept"}, false, []int{0, 1}}, // what a crash loses of either is unknown
		{[]string{"none", "1s", ""}, true, []int{2}},
	} {
		differs, unknown := compareClasses(tc.classes)
		if differs != tc.differs || !slices.Equal(unknown, tc.unknown) {
			t.Errorf("%q: differs %v, unknown %v; want %v, %v", tc.classes, differs, unknown, tc.differs, tc.unknown)
		}
	}
}
