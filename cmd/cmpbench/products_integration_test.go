package main

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// The Redis-protocol stores on disk and KeyDB, as users will first point cmpbench
// at them: the built-in systems (KeyDB in memory, Kvrocks, Dragonfly, Pika)
// through the smoke suite, then YCSB with the restart check on those that keep
// their data (KeyDB with AOF and on FLASH, defined here), each counted exactly,
// its version and product read from its own INFO and its command counts equal to
// what the client sent. An in-memory KeyDB under the keydb-flash profile is
// refused before anything is measured.
func TestProductsIntegration(t *testing.T) {
	for _, b := range []string{"keydb-server", "keydb-flash-server", "kvrocks", "dragonfly", "pika"} {
		provisiontest.Need(t, b)
	}
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", `systems:
  keydb-aof:
    adapter: resp
    profile: keydb
    provision:
      command: [keydb-server, --port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, "",
                --appendonly, "yes", --appendfsync, everysec]
  keydb-flash:
    adapter: resp
    profile: keydb-flash
    provision:
      command: [keydb-flash-server, --port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, "",
                --storage-provider, flash, "{dir}/flash"]
  keydb-not-flash:
    adapter: resp
    profile: keydb-flash
    provision:
      command: [keydb-server, --port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, ""]
`)
	builtins := []string{"keydb", "kvrocks", "dragonfly", "pika"}
	r := realCLI(t, dir, "run", "--systems", strings.Join(builtins, ","), "--suite", "smoke", "--scale", "0.2", "--quiet")
	if r.code != 0 {
		t.Fatalf("smoke: exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	for _, p := range a.Manifest.Phases {
		if p.Status != "ok" {
			t.Errorf("smoke %s %s: %s %s", p.System, p.Name, p.Status, p.Error)
		}
	}
	v := validations(t, a)
	for _, s := range builtins {
		if load := v[s+"/after load"]; !load.OK() || load.Counted != 2000 {
			t.Errorf("smoke %s after load: %+v", s, load)
		}
		if g := rows(a, s, "closed-1:10")["GET"]; g.Count == 0 || g.Errors != 0 {
			t.Errorf("smoke %s GET: %+v", s, g.Counts)
		}
	}
	assertNoServerOf(t, dir)

	ycsb := []string{"keydb-aof", "keydb-flash", "kvrocks", "dragonfly", "pika"}
	r = realCLI(t, dir, "run", "--systems", strings.Join(ycsb, ","), "--suite", "ycsb", "--scale", "0.0001", "--quiet")
	if r.code != 0 {
		t.Fatalf("ycsb: exit %d\n%s", r.code, r.stderr)
	}
	a = archiveOf(t, r)
	// What Pika cannot tell (an UPDATE of every field of a missing record) is
	// among the report's caveats.
	if rep, _ := a.ReadFile(archive.ReportFile); !strings.Contains(string(rep), "- pika: `An UPDATE of every field (write_all_fields) with HMSET cannot tell a missing record") {
		t.Errorf("the report does not say what Pika's UPDATE cannot tell")
	}
	checkRealRun(t, a, 10_000, map[string]struct{ binary, product, version string }{
		"keydb-aof":   {"keydb-server", "keydb", "6.3.4"},
		"keydb-flash": {"keydb-flash-server", "keydb-flash", "6.3.4"},
		"kvrocks":     {"kvrocks", "kvrocks", "2.10.1"},
		"dragonfly":   {"dragonfly", "dragonfly", "df-v1.26.4"},
		"pika":        {"pika", "pika", "4.0.0"},
	})
	assertNoServerOf(t, dir)

	r = realCLI(t, dir, "run", "--systems", "keydb-not-flash", "--suite", "smoke", "--scale", "0.1", "--quiet")
	if r.code != 1 || !strings.Contains(r.stderr, "storage_provider") || !strings.Contains(r.stderr, "profile keydb") {
		t.Errorf("an in-memory KeyDB under the keydb-flash profile: exit %d\n%s", r.code, r.stderr)
	}
	assertNoServerOf(t, dir)
}

// The issue 44 comparison: Valkey, Dragonfly and Kvrocks started by cmpbench
// through the smoke suite, then `cmpbench audit` of the archive. Each adapter's
// facts are kept in the archive (facts.json), and the audit fills every row
// for each product: its durability, replication, memory limit and threads as
// the product has them, never "—" where the capture has the fact.
func TestAuditOfValkeyDragonflyKvrocksIntegration(t *testing.T) {
	for _, b := range []string{"valkey-server", "dragonfly", "kvrocks"} {
		provisiontest.Need(t, b)
	}
	dir := t.TempDir()
	systems := []string{"valkey", "dragonfly", "kvrocks"}
	r := realCLI(t, dir, "run", "--systems", strings.Join(systems, ","), "--suite", "smoke", "--scale", "0.1", "--quiet")
	if r.code != 0 {
		t.Fatalf("smoke: exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	for _, s := range a.Manifest.Systems {
		if f, err := a.Facts(s); err != nil || f == nil {
			t.Errorf("%s: no facts kept: %v", s.Name, err)
		}
	}
	audit := cli(t, dir, nil, "audit", a.Dir)
	if audit.stderr != "" {
		t.Fatalf("audit: exit %d\n%s", audit.code, audit.stderr)
	}
	rows := map[string][]string{}
	for line := range strings.Lines(audit.stdout) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
		if len(cells) == len(systems)+1 && strings.HasPrefix(line, "| ") {
			rows[strings.TrimSpace(cells[0])] = cells[1:]
		}
	}
	for _, setting := range []string{"durability", "replication", "memory limit and eviction", "threads", "CPU placement", "warm-up", "data size", "TLS"} {
		for i, v := range rows[setting] {
			if strings.TrimSpace(v) == "—" {
				t.Errorf("%s of %s: —", setting, systems[i])
			}
		}
		if len(rows[setting]) != len(systems) {
			t.Errorf("no row %q in\n%s", setting, audit.stdout)
		}
	}
	for i, want := range map[int][]string{
		0: {"no persistence", "`master`, no replica", "no limit", "io-threads `1`"},
		1: {"a snapshot on a clean stop only", "`master`, no replica", "cache_mode store", "thread_count"},
		2: {"RocksDB, its write-ahead log not synced", "`master`, no replica", "data on disk (RocksDB)", "workers"},
	} {
		for j, setting := range []string{"durability", "replication", "memory limit and eviction", "threads"} {
			if got := rows[setting]; len(got) == len(systems) && !strings.Contains(got[i], want[j]) {
				t.Errorf("%s of %s: %q, want %q in it", setting, systems[i], got[i], want[j])
			}
		}
	}
	assertNoServerOf(t, dir)
}

// Tendis as a user first runs it (issue 49): the built-in system tendis, with
// nothing configured but tendisplus on PATH (cmpbench writes its configuration
// file), through the smoke suite, then YCSB with the restart check — every
// phase ok, the load counted exactly by DBSIZE (its INFO keyspace says 0 keys
// whatever is stored) and kept across the restart, the server's commandstats
// equal to what the client sent, the manifest naming tendisplus's own path,
// SHA-256 and version, and the audit's durability and memory read from its
// capture.
func TestTendisIntegration(t *testing.T) {
	provisiontest.Need(t, "tendisplus")
	dir := t.TempDir()
	r := realCLI(t, dir, "run", "--systems", "tendis", "--suite", "smoke", "--scale", "0.1", "--quiet")
	if r.code != 0 {
		t.Fatalf("smoke: exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	for _, p := range a.Manifest.Phases {
		if p.Status != "ok" {
			t.Errorf("smoke %s %s: %s %s", p.System, p.Name, p.Status, p.Error)
		}
	}
	if load := validations(t, a)["tendis/after load"]; !load.OK() || load.Counted != 1000 {
		t.Errorf("smoke after load: %+v", load)
	}
	if g := rows(a, "tendis", "closed-1:10")["GET"]; g.Count == 0 || g.Errors != 0 {
		t.Errorf("smoke GET: %+v", g.Counts)
	}
	assertNoServerOf(t, dir)

	r = realCLI(t, dir, "run", "--systems", "tendis", "--suite", "ycsb", "--scale", "0.0005", "--quiet")
	if r.code != 0 {
		t.Fatalf("ycsb: exit %d\n%s", r.code, r.stderr)
	}
	a = archiveOf(t, r)
	checkRealRun(t, a, 50_000, map[string]struct{ binary, product, version string }{
		"tendis": {"tendisplus", "tendis", "2.7.0-rocksdb-v8.5.3"},
	})
	audit := cli(t, dir, nil, "audit", a.Dir)
	if audit.stderr != "" {
		t.Fatalf("audit: exit %d\n%s", audit.code, audit.stderr)
	}
	for setting, want := range map[string]string{
		"durability":                "| RocksDB, its write-ahead log not synced (rocks.flush_log_at_trx_commit no)",
		"memory limit and eviction": "| data on disk (RocksDB, block cache rocks.blockcachemb `4096` MB), not bounded by memory",
		"threads":                   "| executorthreadnum `",
	} {
		if !strings.Contains(audit.stdout, "| "+setting+" "+want) {
			t.Errorf("the audit's %s of tendis is not %q:\n%s", setting, want, audit.stdout)
		}
	}
	assertNoServerOf(t, dir)
}
