package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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

	// Issue 25, bug 2: an archive whose manifest was edited (another endpoint,
	// disposable) fails verify, and rerun refuses it before touching anything —
	// it used to empty the other server.
	other := provisiontest.Redis(t)
	if got := redisDo(t, other.Port(), "SET theirs keep"); got[0] != "+OK" {
		t.Fatalf("SET: %v", got)
	}
	tampered := filepath.Join(dir, "tampered")
	if err := os.CopyFS(tampered, os.DirFS(a.Dir)); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(tampered, "manifest.json")
	var m map[string]any
	b0, err := os.ReadFile(mpath)
	if err != nil || json.Unmarshal(b0, &m) != nil {
		t.Fatal(err)
	}
	for _, sys := range m["systems"].([]any) {
		sys := sys.(map[string]any)
		if sys["name"] == "redis" {
			sys["definition"] = map[string]any{"adapter": "resp", "endpoint": other.Endpoint(), "disposable": true}
		}
	}
	edited, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(mpath, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	r = cli(t, dir, nil, "rerun", tampered, "--systems", "redis")
	if r.code != 1 || !strings.Contains(r.stderr, "does not verify, so it is not run again") || !strings.Contains(r.stderr, "manifest.json") {
		t.Errorf("rerun of an edited archive: exit %d\n%s", r.code, r.stderr)
	}
	if got := redisDo(t, other.Port(), "GET theirs", "DBSIZE"); got[0] != "keep" || got[1] != ":1" {
		t.Errorf("the other server was touched: %v", got)
	}
}

// Issue 43, weak answer: a profile a systems file defined for one system used to
// block `rerun` for every system, the archive not holding it. The archive now
// holds it, so the rerun runs that system too; an archive without it (written
// before) leaves out that system alone, saying which and why, runs the others and
// exits 1; naming that system in --systems is bad input.
func TestRerunWithAFileProfileIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	writeFile(t, dir, "systems.yaml", `systems:
  kv:
    adapter: resp
    profile: mykv
    provision:
      command: [redis-server, --port, "{port}", --bind, 127.0.0.1, --save, ""]
profiles:
  mykv:
    commands: {update: [HMSET]}
    capture:
      - [CONFIG, GET, maxmemory]
`)
	writeFile(t, dir, "s.yaml", `name: tiny
phases:
  - {name: mixed, duration: 60s, ops: 400, connections: 2, memtier: {ratio: "1:1", key_max: 100, key_prefix: kv_, value_size: 64}}
`)
	first := cli(t, dir, nil, "--config", "systems.yaml", "run", "--systems", "redis,kv", "--suite", "s.yaml")
	if first.code != 0 {
		t.Fatalf("run: exit %d\n%s", first.code, first.stderr)
	}
	a := archiveOf(t, first)
	profileOf := func(m archive.Manifest, name string) string {
		for _, s := range m.Systems {
			if s.Name == name {
				return s.Profile
			}
		}
		return "(no system " + name + ")"
	}
	if p := profileOf(a.Manifest, "kv"); !strings.Contains(p, "HMSET") {
		t.Fatalf("the archive holds kv's profile as %q", p)
	}
	r := cli(t, dir, nil, "rerun", a.Dir, "--quiet")
	if r.code != 0 {
		t.Fatalf("rerun: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b := archiveOf(t, r); profileOf(b.Manifest, "kv") != profileOf(a.Manifest, "kv") || len(b.Manifest.Systems) != 2 {
		t.Errorf("the rerun's kv profile %q, systems %d", profileOf(b.Manifest, "kv"), len(b.Manifest.Systems))
	}

	// An archive written before profiles were archived.
	old := filepath.Join(dir, "old")
	if err := os.CopyFS(old, os.DirFS(a.Dir)); err != nil {
		t.Fatal(err)
	}
	systems := slices.Clone(a.Manifest.Systems)
	for i := range systems {
		systems[i].Profile = ""
	}
	editManifest(t, old, "systems", systems)
	why := `system kv (defined in systems.yaml:2, profile mykv) is not run again: the definition of system kv in ` + a.Manifest.RunID + `:4: system "kv": profile "mykv" is neither built in`
	r = cli(t, dir, nil, "rerun", old, "--quiet")
	if r.code != 1 || !strings.Contains(r.stderr, "warning: "+why) || !strings.Contains(r.stderr, "not the whole run: kv not run again") {
		t.Fatalf("rerun of an archive without the profile: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b := archiveOf(t, r); len(b.Manifest.Systems) != 1 || b.Manifest.Systems[0].Name != "redis" || !strings.Contains(r.stdout, "Compared with the archived run") {
		t.Errorf("the others were not run again: %+v\n%s", b.Manifest.Systems, r.stdout)
	}
	if r := cli(t, dir, nil, "rerun", old, "--quiet", "--systems", "redis"); r.code != 0 {
		t.Errorf("rerun --systems redis of an archive without kv's profile: exit %d\n%s", r.code, r.stderr)
	}
	r = cli(t, dir, nil, "rerun", old, "--systems", "kv")
	if r.code != 2 || !strings.Contains(r.stderr, why) || strings.Contains(r.stdout, "Archive:") {
		t.Errorf("rerun --systems kv: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
