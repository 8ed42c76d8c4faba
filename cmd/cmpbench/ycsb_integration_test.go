package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/aerospike/astest"
	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

func validations(t *testing.T, a *archive.Archive) map[string]core.Validation {
	t.Helper()
	vs, err := a.Validations()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]core.Validation{}
	for _, v := range vs {
		out[v.System+"/"+v.Point] = v
	}
	return out
}

func TestYCSBSuiteOnRedisIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	r := cli(t, dir, nil, "run", "--systems", "redis,redis-aof", "--suite", "ycsb", "--scale", "0.0001")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	checkPage(t, a, "ycsb")
	v := validations(t, a)
	for _, sys := range []string{"redis", "redis-aof"} {
		load := v[sys+"/after load"]
		if !load.OK() || load.Counted != 10_000 || load.Expected != 10_000 || len(load.Samples) < 5 {
			t.Errorf("%s after load: %+v", sys, load)
		}
	}
	if aof := v["redis-aof/after restart"]; !aof.OK() || aof.Counted != 10_000 || aof.Note != "" {
		t.Errorf("redis-aof keeps its data across a restart: %+v", aof)
	}
	if mem := v["redis/after restart"]; !mem.OK() || !strings.Contains(mem.Note, "not restart-durable") {
		t.Errorf("redis without persistence must be reported as not restart-durable: %+v", mem)
	}
	if re := v["redis/after reload"]; !re.OK() {
		t.Errorf("reload after the lost restart: %+v", re)
	}
	for _, sys := range []string{"redis", "redis-aof"} {
		for _, ph := range []string{"C-max", "A-max", "B-max", "D-max"} {
			rows := rows(a, sys, ph)
			if rows["READ"].Count == 0 || rows["READ"].Errors != 0 {
				t.Errorf("%s %s READ: %+v", sys, ph, rows["READ"].Counts)
			}
		}
		if u := rows(a, sys, "A-max")["UPDATE"]; u.Count == 0 || u.Errors != 0 {
			t.Errorf("%s A UPDATE: %+v", sys, u.Counts)
		}
		if in := rows(a, sys, "D-max")["INSERT"]; in.Count == 0 || in.Errors != 0 {
			t.Errorf("%s D INSERT: %+v", sys, in.Counts)
		}
	}
	rep, _ := a.ReadFile(archive.ReportFile)
	for _, want := range []string{"### Side by side", "| D-max | READ |", "## Validation", "not restart-durable",
		"READ = hgetall; UPDATE+INSERT = hset"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// YCSB on a RESP server is reconciled with the server's own counts, per op
	// kind, to the request.
	for _, op := range []string{"READ", "UPDATE\\+INSERT"} {
		re := regexp.MustCompile(`\| D-max \| 0 \| ` + op + ` \| [\d,]+ \| [\d,]+ \| 0 \|`)
		if !re.Match(rep) {
			t.Errorf("the report's server-side counts have no line of D-max %s that agrees", op)
		}
	}
}

// The ycsb suite on a cluster as Aerospike runs in production: three nodes,
// replication factor 2, another set in the namespace and stale records of the
// benchmark's set (disposable: flushed first); the restart check restarts every
// node, each cold-starting, while cmpbench waits (restart_wait). Counts must be the
// records loaded, exactly.
func TestYCSBSuiteOnTheAerospikeTestServerIntegration(t *testing.T) {
	c, err := astest.StartCluster("ycsb", astest.ClusterOptions{Nodes: 3, ReplicationFactor: 2, TruncateDelay: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 40 {
		c.Put("other", fmt.Sprintf("theirs%d", i), map[string][]byte{"v": []byte("keep")})
		c.Put("usertable", fmt.Sprintf("stale%d", i), map[string][]byte{"field0": []byte("old")})
	}
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf(`systems:
  aerospike:
    adapter: aerospike
    endpoint: %s
    namespace: ycsb
    disposable: true
    restart_wait: 1m
    options: {cluster_size: "3"}
`, c.Seed()))
	// Uptimes are whole seconds and a restart is seen when a node started later than
	// it had by more than core.StartSlack: let the nodes run a while first.
	time.Sleep(6 * time.Second)
	run := startCLI(t, dir, nil, "restart the server now", "run", "--systems", "aerospike", "--suite", "ycsb", "--scale", "0.0001")
	for i := range c.Nodes() {
		if err := c.Node(i).Restart(300 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	r := run.wait(t)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	v := validations(t, a)
	if load := v["aerospike/after load"]; !load.OK() || load.Counted != 10_000 {
		t.Errorf("after load: %+v", load)
	}
	if rs := v["aerospike/after restart"]; !rs.OK() || rs.Counted != 10_000 || len(rs.Samples) < 5 {
		t.Errorf("after the restart of every node: %+v\n%s", rs, r.stderr)
	}
	if !strings.Contains(r.stderr, "aerospike: emptying 40 keys before the load (disposable: true)") {
		t.Errorf("the stale records were not flushed first:\n%s", r.stderr)
	}
	inserts := int64(0)
	for _, ph := range []string{"D-100k-warmup", "D-100k", "D-max-warmup", "D-max"} {
		in := rows(a, "aerospike", ph)["INSERT"]
		if in.ErrExists != 0 || in.Errors != 0 {
			t.Errorf("%s: inserts collided: %+v", ph, in.Counts)
		}
		inserts += in.Count
	}
	if u := rows(a, "aerospike", "A-max")["UPDATE"]; u.Count == 0 || u.ErrNotFound != 0 {
		t.Errorf("REPLACE_ONLY updates of loaded records: %+v", u.Counts)
	}
	if got, want := int64(c.Records("usertable")), 10_000+inserts; got != want {
		t.Errorf("the cluster holds %d records; load and D inserts make %d", got, want)
	}
	if other := c.Records("other"); other != 40 {
		t.Errorf("the other set holds %d records, not its 40", other)
	}
	if a.Manifest.Systems[0].Product == "" || a.Manifest.Systems[0].Version != astest.Build {
		t.Errorf("capture %+v", a.Manifest.Systems[0])
	}
	// The report gives the connections the nodes had: the suite's 256 (and the
	// probe's) to each of the three nodes.
	rep, _ := a.ReadFile(archive.ReportFile)
	// The nodes' own counts of reads and writes are set against the client's.
	for _, want := range []string{"| aerospike | A-max | 0 | GET+READ | ", "| aerospike | A-max | 0 | SET+UPDATE+INSERT | "} {
		i := strings.Index(string(rep), want)
		if i < 0 {
			t.Errorf("the server-side counts lack %q:\n%s", want, rep)
			continue
		}
		if line, _, _ := strings.Cut(string(rep[i:]), "\n"); !strings.HasSuffix(line, " | 0 |") {
			t.Errorf("the nodes counted otherwise than the client sent: %s", line)
		}
	}
	for _, line := range strings.Split(string(rep), "\n") {
		if cells := strings.Split(line, " | "); len(cells) == 13 && cells[2] == "C-100k" {
			if n, err := strconv.Atoi(strings.ReplaceAll(cells[11], ",", "")); err != nil || n < 3*257 {
				t.Errorf("server connections %q in %s", cells[11], line)
			}
		}
	}
}

func TestProfileChoosesTheUpdateCommandIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	// Lavik cannot run here: a profile whose UPDATE is another real command (HMSET)
	// shows through INFO commandstats that the profile's command is the one sent
	// (write_all_fields: true: every UPDATE writes the whole record with update).
	writeFile(t, dir, "cmpbench.yaml", `systems:
  redis-hmset:
    adapter: resp
    profile: hmset-update
    provision:
      command: [redis-server, --port, "{port}", --bind, 127.0.0.1, --save, ""]
profiles:
  hmset-update:
    commands: {update: [HMSET]}
    capture:
      - [CONFIG, GET, maxmemory]
`)
	writeFile(t, dir, "s.yaml", `name: s
defaults: {connections: 4, ycsb: {record_count: 1000, request_distribution: uniform, write_all_fields: true}}
phases:
  - {name: load, kind: load, duration: 60s}
  - {name: A, duration: 1s, ycsb: {workload: A}}
`)
	r := cli(t, dir, nil, "run", "--systems", "redis-hmset", "--suite", "s.yaml")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	updates := rows(a, "redis-hmset", "A")["UPDATE"].Count
	stats, err := a.ServerStats()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]string{}
	for _, s := range stats {
		if s.Phase == "A" && s.Point == "after" && s.Section == "commandstats" {
			calls[s.Key] = s.Value
		}
	}
	if updates == 0 || !strings.HasPrefix(calls["cmdstat_hmset"], "calls=") {
		t.Fatalf("%d updates, commandstats %v", updates, calls)
	}
	// HSET ran only for the load's 1000 inserts: every update went out as HMSET.
	if !strings.HasPrefix(calls["cmdstat_hset"], "calls=1000,") {
		t.Fatalf("cmdstat_hset %q", calls["cmdstat_hset"])
	}
	if b, err := a.ReadFile("systems/redis-hmset/cmd-config-get-maxmemory.txt"); err != nil || !strings.Contains(string(b), "maxmemory") {
		t.Fatalf("profile capture command: %v %q", err, b)
	}
}

func TestLoadIntoANonEmptySystemIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	cfgFor := func(disposable bool) string {
		return fmt.Sprintf("systems:\n  r:\n    adapter: resp\n    endpoint: %s\n    disposable: %v\n", srv.Endpoint(), disposable)
	}
	dir := t.TempDir()
	writeFile(t, dir, "s.yaml", `name: s
defaults: {connections: 2, memtier: {key_max: 100, value_size: 8}}
phases:
  - {name: load, kind: load, duration: 10s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: run, duration: 1s, memtier: {ratio: "1:10"}}
`)
	writeFile(t, dir, "cmpbench.yaml", cfgFor(false))
	if r := cli(t, dir, nil, "run", "--systems", "r", "--suite", "s.yaml"); r.code != 0 {
		t.Fatalf("first load into the empty server: exit %d\n%s", r.code, r.stderr)
	}
	r := cli(t, dir, nil, "run", "--systems", "r", "--suite", "s.yaml")
	a := archiveOf(t, r)
	if st, msg := phaseStatus(a, "r", "load"); r.code != 1 || st != "failed" || !strings.Contains(msg, "refusing to load: r already holds 100 keys") {
		t.Fatalf("second load: exit %d, %s %q", r.code, st, msg)
	}
	if st, _ := phaseStatus(a, "r", "run"); st != "skipped" {
		t.Fatalf("phase after a refused load: %s", st)
	}
	writeFile(t, dir, "cmpbench.yaml", cfgFor(true))
	r = cli(t, dir, nil, "run", "--systems", "r", "--suite", "s.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, "emptying 100 keys before the load (disposable: true)") {
		t.Fatalf("disposable: exit %d\n%s", r.code, r.stderr)
	}
}
