package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
	"github.com/cmpbench/cmpbench/workloads/trace"
)

// Issue 48: a trace of 1,000,000 requests (100,000 under -short) made by
// `trace synth`, gets, sets with a TTL, deletes, incrs and decrs, warmed up
// and replayed in order against a real redis-server: every request sent
// exactly once per op kind as the trace's facts say (deletes as DEL, incr and
// decr as INCRBY), none an error, the TTLs kept, the server counted what the
// client sent, the archive holds the trace's facts and verifies, and a rerun
// with the trace changed is refused before anything runs.
func TestTraceReplayIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	port, _ := redisAt(t, 0)
	dir := t.TempDir()
	writeRedisSystem(t, dir, port)
	requests := "1000000"
	if testing.Short() {
		requests = "100000"
	}
	synth := []string{"trace", "synth", "t.csv.zst", "--requests", requests, "--keys", "50000", "--rate", "20000", "--value-median", "64",
		"--mix", "get:85,set:9,delete:3,incr:2,decr:1", "--ttl", "1h"}
	if r := cli(t, dir, nil, synth...); r.code != 0 {
		t.Fatalf("trace synth: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "s.yaml", `name: replay
defaults: {connections: 16}
phases:
  - {name: warm, kind: warmup, duration: 5m, trace: {file: t.csv.zst, replay: warm}}
  - {name: all, duration: 5m, trace: {file: t.csv.zst, replay: ordered}}
`)
	r := cli(t, dir, nil, "run", "--systems", "r", "--suite", "s.yaml")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	p := phaseInfo(t, a, "r", "all")
	spec, ok := p.Spec.(trace.Spec)
	if !ok || p.Status != "ok" {
		t.Fatalf("phase all: %s %s, workload %T", p.Status, p.Error, p.Spec)
	}
	f := spec.Facts
	if f.Requests != int64(atoiT(t, requests)) || len(f.SHA256) != 64 || f.Compression != trace.CompressionZstd || f.Size == 0 || f.SpanNs() <= 0 {
		t.Errorf("the archive's facts of the trace: %+v", f)
	}
	if f.Skipped() != 0 || f.TTLs != f.Replayed("SET") || len(spec.Skip) != 0 || spec.DropTTL {
		t.Errorf("skipped %d, TTLs %d of %d SETs, skip %v, drop TTL %v: redis replays all, TTLs kept (%s)",
			f.Skipped(), f.TTLs, f.Replayed("SET"), spec.Skip, spec.DropTTL, f.Mix())
	}
	sent := map[string]int64{}
	for _, row := range a.Summary {
		if row.Phase == "all" {
			sent[row.Op] = row.Count + row.Errors
			if row.Errors != 0 {
				t.Errorf("%s: %d errors", row.Op, row.Errors)
			}
		}
	}
	for _, op := range []string{"GET", "SET", "DELETE", "INCR"} {
		if sent[op] != f.Replayed(op) || sent[op] == 0 {
			t.Errorf("%s: sent %d, the trace replays %d", op, sent[op], f.Replayed(op))
		}
	}
	if len(serverCounts(t, a, "r", "all")) != 4 {
		t.Errorf("server-side counts of %v, want GET, SET, DELETE and INCR", serverCounts(t, a, "r", "all"))
	}
	// The SETs' TTLs reached the server: the keys they wrote expire within
	// the hour, the counters (c keys, never SET) do not.
	// (How many keys matching ARGV[1] expire within the hour.)
	const expiring = `EVAL "local n = 0 for _, k in ipairs(redis.call('keys', ARGV[1])) do local t = redis.call('ttl', k) if t > 3000 and t <= 3600 then n = n + 1 end end return n" 0 `
	if n := redisDo(t, port, expiring+"trace:k*"); len(n) != 1 || n[0] == ":0" || !strings.HasPrefix(n[0], ":") {
		t.Errorf("keys of the trace's SETs expiring within the hour: %q, want some", n)
	}
	if n := redisDo(t, port, expiring+"trace:c*"); len(n) != 1 || n[0] != ":0" {
		t.Errorf("counters expiring: %q, want none", n)
	}
	for op, c := range serverCounts(t, a, "r", "all") {
		if c[0] != c[1] || c[0] != sent[op] {
			t.Errorf("%s: the client sent %d (summary %d), the server counted %d", op, c[0], sent[op], c[1])
		}
	}
	if w := phaseInfo(t, a, "r", "warm"); w.Status != "ok" {
		t.Errorf("warm-up: %s %s", w.Status, w.Error)
	}
	if v := cli(t, dir, nil, "verify", a.Dir); v.code != 0 {
		t.Errorf("verify: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	// The same file name, other requests: a rerun refuses it.
	if r := cli(t, dir, nil, append(synth, "--seed", "2")...); r.code != 0 {
		t.Fatalf("trace synth: exit %d\n%s", r.code, r.stderr)
	}
	again := cli(t, dir, nil, "rerun", a.Dir)
	if again.code != 2 || !strings.Contains(again.stderr, "phase all reads trace") || !strings.Contains(again.stderr, "not what the archived run read") ||
		!strings.Contains(again.stderr, f.SHA256) {
		t.Errorf("rerun with the trace changed: exit %d\n%s", again.code, again.stderr)
	}
	verifyKnowsTheTrace(t, dir, a.Dir, sent["GET"])
}

// verifyKnowsTheTrace: verify of the archive in dir fails once its trace's
// facts hold one more GET than the phase all, which ran to its end, sent.
func verifyKnowsTheTrace(t *testing.T, dir, archiveDir string, gets int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(archiveDir, archive.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Phases []map[string]any }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, ph := range m.Phases {
		if ph["name"] != "all" {
			continue
		}
		for _, o := range ph["trace"].(map[string]any)["facts"].(map[string]any)["ops"].([]any) {
			if op := o.(map[string]any); op["as"] == "GET" {
				op["count"] = op["count"].(float64) + 1
			}
		}
	}
	editManifest(t, archiveDir, "phases", m.Phases)
	want := fmt.Sprintf("%d GET requests sent, but the phase ran to its end and its workload holds %d", gets, gets+1)
	if v := cli(t, dir, nil, "verify", archiveDir); v.code != 1 || !strings.Contains(v.stdout+v.stderr, want) {
		t.Errorf("verify of a trace's facts edited: exit %d, want %q\n%s%s", v.code, want, v.stdout, v.stderr)
	}
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	var n int
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue 48: a trace replayed at its recorded times against a server stalled
// by DEBUG SLEEP shows the stall in its response time, counted from each
// request's recorded time: the requests due while the server slept waited.
func TestTraceStallShowsIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	port, _ := redisAt(t, 0, "--enable-debug-command", "yes")
	dir := t.TempDir()
	writeRedisSystem(t, dir, port)
	if r := cli(t, dir, nil, "trace", "synth", "t.csv", "--requests", "10000", "--rate", "2000", "--keys", "1000"); r.code != 0 {
		t.Fatalf("trace synth: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "s.yaml", `name: s
phases:
  - {name: stalled, connections: 4, trace: {file: t.csv}}
`)
	run := startCLI(t, dir, nil, "r: stalled (", "run", "--systems", "r", "--suite", "s.yaml")
	time.Sleep(1500 * time.Millisecond)
	if got := redisDo(t, port, "DEBUG SLEEP 0.5"); len(got) != 1 || got[0] != "+OK" {
		t.Fatalf("DEBUG SLEEP: %q", got)
	}
	r := run.wait(t)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	if p := phaseInfo(t, a, "r", "stalled"); p.Rate < 1500 || p.Rate > 2500 || time.Duration(p.ElapsedNs) > 7*time.Second {
		t.Errorf("a recorded replay of 5 s at 2,000/s: rate %g, ran %s", p.Rate, time.Duration(p.ElapsedNs))
	}
	for _, row := range a.Summary {
		if row.Phase != "stalled" || row.Op != "GET" {
			continue
		}
		if max := time.Duration(row.RespMax); max < 400*time.Millisecond {
			t.Errorf("GET response max %s with the server asleep for 500 ms", max)
		}
		if row.RespP99 <= row.SvcP99 {
			t.Errorf("GET response p99 %s, service p99 %s: the requests due during the stall must count their wait",
				time.Duration(row.RespP99), time.Duration(row.SvcP99))
		}
		return
	}
	t.Fatalf("no GET row of the stalled phase")
}

// Issue 48: a trace replayed by two plugin processes (run --processes 2, the
// split a sharded run makes: by key hash over the phase's connections), in
// order and at its recorded times: the processes' shares add up to exactly
// the trace's requests of each op kind, and the server counted them.
func TestTraceSplitIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	port, _ := redisAt(t, 0)
	dir := t.TempDir()
	writeRedisSystem(t, dir, port)
	if r := cli(t, dir, nil, "trace", "synth", "t.csv.gz", "--requests", "20000", "--rate", "10000", "--keys", "2000"); r.code != 0 {
		t.Fatalf("trace synth: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "s.yaml", `name: split
defaults: {connections: 8}
phases:
  - {name: ordered, duration: 1m, trace: {file: t.csv.gz, replay: ordered}}
  - {name: recorded, trace: {file: t.csv.gz, speed: 2}}
`)
	r := cli(t, dir, nil, "run", "--systems", "r", "--suite", "s.yaml", "--processes", "2")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	for _, ph := range []string{"ordered", "recorded"} {
		f := phaseInfo(t, a, "r", ph).Spec.(trace.Spec).Facts
		sent := map[string]int64{}
		for _, row := range a.Summary {
			if row.Phase == ph {
				sent[row.Op] = row.Count + row.Errors
			}
		}
		for _, op := range []string{"GET", "SET"} {
			if sent[op] != f.Replayed(op) || sent[op] == 0 {
				t.Errorf("%s %s: two processes sent %d, the trace replays %d", ph, op, sent[op], f.Replayed(op))
			}
		}
		for op, c := range serverCounts(t, a, "r", ph) {
			if c[0] != c[1] {
				t.Errorf("%s %s: the client sent %d, the server counted %d", ph, op, c[0], c[1])
			}
		}
	}
}

// Issue 48: one trace of gets, sets with a TTL, deletes and incrs replayed on
// two systems in one run: a real redis-server, whose adapter has all of them,
// and a real memcached through the example third-party plugin, whose adapter
// has GET and SET alone. On memcached the deletes and incrs are skipped and
// counted by kind (the archive's spec says which), its SETs go without their
// TTL, and the report says both; it sends exactly the trace's GETs and SETs,
// at the rate of what it sends. Redis sends every request.
func TestTraceOnAnAdapterWithoutIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	provisiontest.Need(t, "memcached")
	port, _ := redisAt(t, 0)
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf(`systems:
  r: {adapter: resp, endpoint: 127.0.0.1:%d, disposable: true}
  mc:
    adapter: memcached
    provision:
      command: [memcached, -p, "{port}", -l, 127.0.0.1, -U, "0", -m, "64", -u, nobody]
`, port))
	if r := cli(t, dir, nil, "trace", "synth", "t.csv", "--requests", "6000", "--rate", "3000", "--keys", "500",
		"--mix", "get:80,set:10,delete:6,incr:4", "--ttl", "10m"); r.code != 0 {
		t.Fatalf("trace synth: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, dir, "s.yaml", `name: s
phases:
  - {name: day, connections: 4, trace: {file: t.csv}}
`)
	r := cli(t, dir, nil, "--plugin-dir", pluginDir, "run", "--systems", "r,mc", "--suite", "s.yaml")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	a := archiveOf(t, r)
	pr, pm := phaseInfo(t, a, "r", "day"), phaseInfo(t, a, "mc", "day")
	sr, sm := pr.Spec.(trace.Spec), pm.Spec.(trace.Spec)
	f := sr.Facts
	if len(sr.Skip) != 0 || sr.DropTTL || strings.Join(sm.Skip, ",") != "DELETE,INCR" || !sm.DropTTL || f.TTLs == 0 {
		t.Errorf("archived: redis skip %v drop TTL %v; memcached skip %v drop TTL %v; TTLs %d", sr.Skip, sr.DropTTL, sm.Skip, sm.DropTTL, f.TTLs)
	}
	want := map[string]map[string]int64{
		"r":  {"GET": f.Replayed("GET"), "SET": f.Replayed("SET"), "DELETE": f.Replayed("DELETE"), "INCR": f.Replayed("INCR")},
		"mc": {"GET": f.Replayed("GET"), "SET": f.Replayed("SET")},
	}
	for sys, ops := range want {
		got := map[string]int64{}
		for op, row := range rows(a, sys, "day") {
			got[op] = row.Count + row.Errors
		}
		if fmt.Sprint(got) != fmt.Sprint(ops) || ops["GET"] == 0 {
			t.Errorf("%s sent %v, want %v", sys, got, ops)
		}
	}
	// The rate held against each is the trace's mean of what it sends.
	span := float64(f.SpanNs()) / 1e9
	for _, tc := range []struct {
		p    archive.PhaseInfo
		sent int64
	}{{pr, f.Replayed("")}, {pm, f.Replayed("GET") + f.Replayed("SET")}} {
		if w := float64(tc.sent) / span; tc.p.Rate < w*0.99 || tc.p.Rate > w*1.01 {
			t.Errorf("%s: target rate %g, want %g (%d requests over %.2fs)", tc.p.System, tc.p.Rate, w, tc.sent, span)
		}
	}
	rep, err := a.ReadFile(archive.ReportFile)
	if err != nil {
		t.Fatal(err)
	}
	if v := cli(t, dir, nil, "verify", a.Dir); v.code != 0 {
		t.Errorf("verify: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	skipped := f.Replayed("DELETE") + f.Replayed("INCR")
	for _, w := range []string{fmt.Sprintf("%d skipped (DELETE, INCR among them: the adapter has none)", skipped), fmt.Sprintf("%d TTLs not kept", f.TTLs)} {
		if !strings.Contains(string(rep), w) {
			t.Errorf("the report does not say %q", w)
		}
	}
}
