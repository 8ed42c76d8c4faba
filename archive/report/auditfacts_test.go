package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core"
)

// auditCaptures is testdata/audit: what real servers answered to the captures
// of a run of the ycsb suite, with its restart check (README.md there).
const auditCaptures = "testdata/audit"

// auditArchive writes an archive of the systems named, their captures and
// restart checks those of testdata/audit, through the archive's own writer,
// as a run does.
func auditArchive(t *testing.T, systems ...string) *archive.Archive {
	t.Helper()
	h := archivetest.Header(archivetest.Options{})
	h.Systems = nil
	w, err := archive.Create(t.TempDir(), h, nil)
	if err != nil {
		t.Fatal(err)
	}
	var checks []core.Validation
	b, err := os.ReadFile(filepath.Join(auditCaptures, "validation.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatal(err)
	}
	for _, name := range systems {
		run := core.SystemRun{Name: name, Adapter: "resp", Endpoint: "127.0.0.1:7000", Provisioned: true, Capture: core.Capture{Sections: map[string]string{}}}
		files, _ := filepath.Glob(filepath.Join(auditCaptures, name, "*.txt"))
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			run.Capture.Sections[strings.TrimSuffix(filepath.Base(f), ".txt")] = string(text)
		}
		for _, err := range []error{w.SystemStarted(run), w.SystemEnded(run)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range checks {
			if v.System == name {
				if err := w.Validation(v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	a, err := w.Finish(core.RunComplete, a0end)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// auditRow is a row of the audit's table: each system's value.
func auditRow(t *testing.T, text, setting string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(setting) + ` \| (.*) \|$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no row %q in\n%s", setting, text)
	}
	return strings.Split(m[1], " | ")
}

// The audit of real captures says what each product does, read as that
// product's facts: Pika, Kvrocks and KeyDB on FLASH keep their data in RocksDB
// whatever save and appendonly say, Dragonfly snapshots on a clean stop,
// Aerospike's durability and replication come from its get-config captures,
// and a memory limit reads without a dangling comma. The whole audit is golden
// (testdata/audit.golden.md, go test -update).
func TestAuditOfRealCaptures(t *testing.T) {
	systems := []string{"redis", "redis-aof", "valkey", "keydb", "keydb-flash", "kvrocks", "pika", "dragonfly", "aerospike"}
	text, _, err := Audit(auditArchive(t, systems...))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "audit.golden.md")
	if *update {
		os.WriteFile(golden, []byte(text), 0o644)
	}
	if want, err := os.ReadFile(golden); err != nil || string(want) != text {
		t.Errorf("the audit differs from %s (go test -update to accept):\n%s", golden, text)
	}
	durability := auditRow(t, text, "durability")
	for i, want := range []string{
		"no persistence: every write lost on a restart", "appendfsync everysec", "no persistence", "no persistence",
		"KeyDB on FLASH: RocksDB, its write-ahead log not synced (storage-cache-mode writethrough", "RocksDB, its write-ahead log not synced (rocksdb.write_options.sync no)",
		"RocksDB, its write-ahead log not synced (Pika's save and appendonly do not apply)", "a snapshot on a clean stop only",
		"storage-engine `device`, commit-to-device false: up to `1000` ms",
	} {
		if !strings.Contains(durability[i], want) {
			t.Errorf("%s's durability %q, want %q in it", systems[i], durability[i], want)
		}
	}
	if r := auditRow(t, text, "replication"); r[8] != "replication-factor `1`" {
		t.Errorf("aerospike's replication %q", r[8])
	}
	memory := auditRow(t, text, "memory limit and eviction")
	for i, m := range memory {
		if m == "—" || strings.HasSuffix(strings.TrimSpace(m), ",") {
			t.Errorf("%s's memory limit %q", systems[i], m)
		}
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

// A cluster's captures carry each node's address: the audit reads the first
// node's, and never takes Aerospike's info answers for INFO.
func TestCaptureFileOfACluster(t *testing.T) {
	for _, tc := range []struct {
		files []string
		names []string
		want  string
	}{
		{[]string{"config.txt", "info.txt"}, []string{"config"}, "config.txt"},
		{[]string{"config-10.0.0.2-7001.txt", "config-10.0.0.1-7000.txt", "cmd-config-get-x.txt"}, []string{"config"}, "config-10.0.0.1-7000.txt"},
		{[]string{"info-build.txt", "info-statistics.txt"}, []string{"info"}, ""},
		{[]string{"info-get-config-context-service@127.0.0.1-3001.txt", "info-get-config-context-service@127.0.0.1-3000.txt"},
			[]string{"info-get-config-context-service", "get-config:context=service"}, "info-get-config-context-service@127.0.0.1-3000.txt"},
		{[]string{"info-get-config-context-namespace-namespace-test.txt"},
			[]string{"info-get-config-context-namespace-namespace-", "info-get-config-context-namespace-id-"}, "info-get-config-context-namespace-namespace-test.txt"},
		{[]string{"get-config:context=service.txt"}, []string{"info-get-config-context-service", "get-config:context=service"}, "get-config:context=service.txt"},
	} {
		if got := captureFile(tc.files, tc.names); got != tc.want {
			t.Errorf("%q of %q: %q, want %q", tc.names, tc.files, got, tc.want)
		}
	}
}

// An unknown fact is never "the same": redis, whose restart check lost every
// key, beside a system whose durability the archive does not tell is not
// "No mismatch found … same durability" but "cannot compare durability:
// unknown for …"; `cmpbench audit` still exits 0 for it (no mismatch proven),
// and lists it.
func TestAuditUnknownIsNeverTheSame(t *testing.T) {
	for _, tc := range []struct {
		name    string
		systems []string
		unfair  bool
		want    []string
		mustNot []string
	}{
		{"redis beside a system the archive does not tell", []string{"redis", "other"}, false,
			[]string{"- cannot compare durability: unknown for other.", "- cannot compare replication: unknown for other.", "- cannot compare memory limit and eviction: unknown for other."},
			[]string{"No mismatch", "same"}},
		{"a mismatch and an unknown", []string{"redis", "redis-aof", "other"}, true,
			[]string{"**Unfair comparison:**", "- durability differs — redis:", "- cannot compare durability: unknown for other."},
			[]string{"No mismatch", "same"}},
		{"alike and known", []string{"redis", "valkey"}, false,
			[]string{"No mismatch found: the systems ran with the same durability"}, []string{"cannot compare"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, unfair, err := Audit(auditArchive(t, tc.systems...))
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

// Aerospike's write blocks are flushed flush-max-ms after their first write: only
// the default second is Redis everysec's class (the review of issue 43).
func TestAerospikeFlushClass(t *testing.T) {
	for _, tc := range []struct{ flush, class string }{{"", "1s"}, {"1000", "1s"}, {"5000", "flush 5000ms"}} {
		ns := map[string]string{"storage-engine": "device", "storage-engine.device[0]": "/dev/x"}
		if tc.flush != "" {
			ns["storage-engine.flush-max-ms"] = tc.flush
		}
		if _, class := aerospikeDurability(captures{asNamespace: ns}); class != tc.class {
			t.Errorf("flush-max-ms %q: class %q, want %q", tc.flush, class, tc.class)
		}
	}
}
