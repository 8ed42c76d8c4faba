package main

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// A rerun runs what the archive records — suite text, seed, scale, repetitions,
// system definitions — so count-bounded phases issue the same op streams: equal
// op counts per phase and op. It ends with the compare of the two archives.
func TestRerunIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	writeFile(t, dir, "s.yaml", `name: counted
defaults:
  memtier: {key_max: 2000, key_prefix: kv_, value_size: 64-512}
phases:
  - {name: load, kind: load, duration: 60s, validate: true, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: mixed, duration: 60s, ops: 3000, connections: 3, memtier: {ratio: "1:3", miss_fraction: 0.2}}
`)
	first := cli(t, dir, nil, "run", "--systems", "redis,redis-aof", "--suite", "s.yaml", "--seed", "7", "--scale", "0.5")
	if first.code != 0 {
		t.Fatalf("run: exit %d\n%s", first.code, first.stderr)
	}
	a := archiveOf(t, first)
	r := cli(t, dir, nil, "rerun", a.Dir, "--systems", "redis")
	if r.code != 0 {
		t.Fatalf("rerun: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	b := archiveOf(t, r)
	if b.Dir == a.Dir || b.Manifest.Seed != 7 || b.Manifest.Scale != 0.5 || b.Manifest.Suite.YAML != a.Manifest.Suite.YAML ||
		b.Manifest.Suite.Source != "rerun of "+a.Manifest.RunID || len(b.Manifest.Systems) != 1 {
		t.Fatalf("rerun manifest: seed %d scale %g source %q systems %d", b.Manifest.Seed, b.Manifest.Scale, b.Manifest.Suite.Source, len(b.Manifest.Systems))
	}
	counts := func(x *archive.Archive) map[string]int64 {
		out := map[string]int64{}
		for _, row := range x.Summary {
			if row.System == "redis" {
				out[row.Phase+" "+row.Op+" ok"] += row.Count
				out[row.Phase+" "+row.Op+" misses"] += row.Misses
			}
		}
		return out
	}
	ca, cb := counts(a), counts(b)
	if len(ca) != 6 || ca["mixed GET ok"]+ca["mixed SET ok"] != 1500 || ca["load SET ok"] != 1000 {
		t.Fatalf("first run's counts %v", ca)
	}
	for k, n := range ca {
		if cb[k] != n {
			t.Errorf("%s: %d in the rerun, %d archived", k, cb[k], n)
		}
	}
	if !strings.Contains(r.stdout, "Compared with the archived run") || !strings.Contains(r.stdout, "redis") || strings.Contains(r.stdout, "redis-aof") {
		t.Errorf("rerun output lacks the compare of redis alone:\n%s", r.stdout)
	}
	if r := cli(t, dir, nil, "rerun", a.Dir, "--systems", "nope"); r.code != 2 || !strings.Contains(r.stderr, "nope is not a system of "+a.Manifest.RunID) {
		t.Errorf("unknown system: exit %d %s", r.code, r.stderr)
	}
}
