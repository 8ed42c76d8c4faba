package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

const shardSuiteText = `name: sharded
description: three shards of one plan
defaults:
  memtier: {key_max: 3000, key_prefix: sh_, value_size: 64}
phases:
  - {name: load, kind: load, connections: 6, duration: 60s, validate: true, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: fixed, kind: measured, connections: 6, rate: 3000, duration: 2s, memtier: {ratio: "1:10", key_pattern: "R:R"}}
  - {name: counted, kind: measured, connections: 6, ops: 3001, duration: 20s, memtier: {ratio: "1:1", key_pattern: "S:S"}}
`

// shardRun runs the shards of one plan as separate processes, as the pods of the
// Kubernetes Job do, and returns their archives.
func shardRun(t *testing.T, dir string, n int, startAt time.Time, extra ...string) []*archive.Archive {
	t.Helper()
	res := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			args := append([]string{"--config", "systems.yaml", "--out", "shards", "run", "--systems", "r", "--suite", "suite.yaml",
				"--shard", fmt.Sprintf("%d/%d", i, n), "--start-at", startAt.UTC().Format(time.RFC3339)}, extra...)
			res[i] = cli(t, dir, nil, args...)
		})
	}
	wg.Wait()
	var out []*archive.Archive
	for i, r := range res {
		if r.code != 0 {
			t.Fatalf("shard %d exited %d:\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
		out = append(out, archiveOf(t, r))
	}
	return out
}

func TestShardsMergeExactlyIntegration(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	port, _ := redisAt(t, 0)
	dir := t.TempDir()
	writeFile(t, dir, "systems.yaml", fmt.Sprintf("systems:\n  r:\n    adapter: resp\n    endpoint: 127.0.0.1:%d\n    disposable: true\n", port))
	writeFile(t, dir, "suite.yaml", shardSuiteText)

	// A shard of a system cmpbench would start itself is refused: the shards must
	// share one server.
	if r := cli(t, dir, nil, "run", "--systems", "redis", "--suite", "smoke", "--shard", "0/2", "--start-at", time.Now().Format(time.RFC3339), "--dry-run"); r.code != 2 || !strings.Contains(r.stderr, "system redis is started by cmpbench") {
		t.Errorf("a provisioned system sharded: exit %d, %s", r.code, r.stderr)
	}

	startAt := time.Now().Add(3 * time.Second).Truncate(time.Second).Add(time.Second)
	shards := shardRun(t, dir, 3, startAt)

	for _, a := range shards {
		for _, p := range a.Manifest.Phases {
			if p.ScheduledStart == nil || p.Started.Before(*p.ScheduledStart) {
				t.Errorf("%s %s: started %s, scheduled %v", a.Manifest.RunID, p.Name, p.Started, p.ScheduledStart)
			}
			if p.Name == "load" && p.Started.Before(startAt) {
				t.Errorf("%s: the first phase started at %s, before --start-at %s", a.Manifest.RunID, p.Started, startAt)
			}
		}
	}
	// Shard 0 validated the whole load, after every shard had written its part.
	vals, err := shards[0].Validations()
	if err != nil || len(vals) != 1 || !vals[0].OK() || vals[0].Expected != 3000 || vals[0].Counted != 3000 {
		t.Fatalf("shard 0's validation: %+v %v", vals, err)
	}

	r := cli(t, dir, nil, "--out", "merged", "merge", "shards")
	if r.code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m := archiveOf(t, r) // verifies
	if !m.Manifest.Shard.Complete() || len(m.Manifest.Shard.Parts) != 3 || m.Manifest.Status != core.RunComplete {
		t.Fatalf("merged manifest: %+v, %s", m.Manifest.Shard, m.Manifest.Status)
	}
	for _, ph := range []string{"load", "fixed", "counted"} {
		merged := rows(m, "r", ph)
		var ok int64
		pooled := map[string][][]byte{}
		for _, s := range shards {
			for op, row := range rows(s, "r", ph) {
				ok += row.Count
				pooled[op] = append(pooled[op], row.RespHDR)
			}
		}
		var sum int64
		for op, row := range merged {
			sum += row.Count
			h := core.NewHistogram()
			for _, b := range pooled[op] {
				hh, err := core.DecodeHist(b)
				if err != nil {
					t.Fatal(err)
				}
				h.Merge(hh)
			}
			if want := h.ValueAtQuantile(99); row.RespP99 != want {
				t.Errorf("%s %s: merged p99 %d, the pooled histograms' p99 %d", ph, op, row.RespP99, want)
			}
		}
		if sum != ok || sum == 0 {
			t.Errorf("%s: merged %d ops, the shards %d", ph, sum, ok)
		}
		if ph == "load" && sum != 3000 || ph == "counted" && sum != 3001 {
			t.Errorf("%s: %d ops over all shards", ph, sum)
		}
	}
	// NS is decided on the sum against the whole target.
	for _, row := range rows(m, "r", "fixed") {
		if row.TargetRate != 3000 || row.Sustained == nil || !*row.Sustained || row.AchievedRate < 0.97*3000 {
			t.Errorf("merged fixed-rate phase: target %g, achieved %g, sustained %v", row.TargetRate, row.AchievedRate, row.Sustained)
		}
	}
	// Each shard's engine counted its 2 connections (shard 0's probe besides),
	// and the merge adds them up, interval by interval.
	mergedOpen, mergedLost := openConns(t, m, "fixed")
	want := make([]int64, len(mergedOpen))
	for i, s := range shards {
		open, lost := openConns(t, s, "fixed")
		for j, n := range open {
			if j < len(want) {
				want[j] += n
			}
			if n != 2 && !(i == 0 && n == 3) || lost != 0 {
				t.Errorf("shard %d: connections open %v, %d lost; want 2 (and shard 0's probe), none lost", i, open, lost)
				break
			}
		}
	}
	t.Logf("fixed: merged connections open %v, the shards' sum %v", mergedOpen, want)
	if len(mergedOpen) == 0 || mergedOpen[0] != 7 || !slices.Equal(mergedOpen, want) || mergedLost != 0 {
		t.Errorf("merged connections open %v (%d lost), want the shards' sum %v starting at 7", mergedOpen, mergedLost, want)
	}
	for _, p := range m.Manifest.Phases {
		if len(p.Shards) != 3 || p.Connections != 6 || p.StartSkewNs < 0 || p.StartSkewNs > int64(500*time.Millisecond) {
			t.Errorf("merged phase %s: %d shards, %d connections, start skew %s", p.Name, len(p.Shards), p.Connections, time.Duration(p.StartSkewNs))
		}
	}

	// The report regenerates byte-identically from the merged archive alone.
	report := filepath.Join(m.Dir, archive.ReportFile)
	before, _ := os.ReadFile(report)
	if r := cli(t, dir, nil, "report", m.Dir); r.code != 0 {
		t.Fatalf("report: %s", r.stderr)
	}
	if after, _ := os.ReadFile(report); !bytes.Equal(before, after) || !bytes.Contains(after, []byte("merged from all 3 shards")) {
		t.Errorf("the merged report does not regenerate byte-identically, or does not say it is a merge")
	}

	// Merging is associative: (0+1)+2 = 0+1+2.
	r01 := cli(t, dir, nil, "--out", "partial", "merge", shards[0].Dir, shards[1].Dir)
	if r01.code != 1 || !strings.Contains(r01.stderr, "merging 2 of 3 shards") {
		t.Fatalf("partial merge: exit %d\n%s", r01.code, r01.stderr)
	}
	ab := archiveOf(t, r01)
	r2 := cli(t, dir, nil, "--out", "again", "merge", ab.Dir, shards[2].Dir)
	if r2.code != 0 {
		t.Fatalf("merge of a merge: exit %d\n%s", r2.code, r2.stderr)
	}
	again := archiveOf(t, r2)
	if len(again.Summary) != len(m.Summary) {
		t.Fatalf("merge of merges: %d summary rows, %d", len(again.Summary), len(m.Summary))
	}
	for i := range m.Summary {
		x, y := m.Summary[i], again.Summary[i]
		if x.Count != y.Count || x.Errors != y.Errors || x.RespP99 != y.RespP99 || x.SvcP999 != y.SvcP999 || x.AchievedRate != y.AchievedRate || !bytes.Equal(x.RespHDR, y.RespHDR) {
			t.Errorf("merge of merges differs from the merge of all in %s %s: %+v vs %+v", x.Phase, x.Op, x.Counts, y.Counts)
		}
	}
	iv1, _ := m.Intervals()
	iv2, _ := again.Intervals()
	if len(iv1) != len(iv2) {
		t.Fatalf("intervals: %d vs %d rows", len(iv1), len(iv2))
	}
	for i := range iv1 {
		if iv1[i].Count != iv2[i].Count || iv1[i].RespP99 != iv2[i].RespP99 {
			t.Fatalf("interval row %d differs: %+v vs %+v", i, iv1[i].Counts, iv2[i].Counts)
		}
	}

	// Shards of another plan (another seed) are refused, naming the difference;
	// so is a shard given twice.
	other := shardRun(t, dir, 2, time.Now().Add(2*time.Second), "--seed", "9")
	r = cli(t, dir, nil, "--out", "bad", "merge", shards[0].Dir, other[1].Dir)
	if r.code != 2 || !strings.Contains(r.stderr, "are not shards of one plan") {
		t.Errorf("shards of different plans: exit %d, %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "shard count 3 vs 2") && !strings.Contains(r.stderr, "--seed 1 vs 9") {
		t.Errorf("the refusal does not name the difference: %s", r.stderr)
	}
	r = cli(t, dir, nil, "--out", "bad", "merge", shards[0].Dir, ab.Dir)
	if r.code != 2 || !strings.Contains(r.stderr, "shard 0 is in both") {
		t.Errorf("a shard twice: exit %d, %s", r.code, r.stderr)
	}
}

// openConns is what an archive says of a phase's connections: those open at
// each interval's end (-1 where nothing counted them), and those lost in all.
func openConns(t *testing.T, a *archive.Archive, phase string) (open []int64, lost int64) {
	t.Helper()
	rows, err := a.Intervals()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]int]bool{}
	for _, r := range rows {
		k := [2]int{r.Repetition, r.Interval}
		if r.Phase != phase || seen[k] { // the same on each op's row
			continue
		}
		seen[k] = true
		if r.ConnsOpen == nil || r.ConnsLost == nil {
			open = append(open, -1)
			continue
		}
		open = append(open, *r.ConnsOpen)
		lost += *r.ConnsLost
	}
	return open, lost
}

// --processes 2 runs each phase from two plugin processes, merged as they run:
// the same operations as one process would issue, one archive.
func TestProcessesMergeOnTheFlyIntegration(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	port, _ := redisAt(t, 0)
	dir := t.TempDir()
	writeFile(t, dir, "systems.yaml", fmt.Sprintf("systems:\n  r:\n    adapter: resp\n    endpoint: 127.0.0.1:%d\n", port))
	writeFile(t, dir, "suite.yaml", shardSuiteText)
	r := cli(t, dir, nil, "--config", "systems.yaml", "run", "--systems", "r", "--suite", "suite.yaml", "--processes", "2", "--client-cpus", "0-1")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	a := archiveOf(t, r)
	vals, err := a.Validations()
	if err != nil || len(vals) != 1 || !vals[0].OK() || vals[0].Counted != 3000 {
		t.Fatalf("validation: %+v %v", vals, err)
	}
	var counted int64
	for _, row := range rows(a, "r", "counted") {
		counted += row.Count
	}
	if counted != 3001 {
		t.Errorf("the count-bounded phase did %d ops on two processes, want 3001", counted)
	}
	for _, row := range rows(a, "r", "fixed") {
		if row.Sustained == nil || !*row.Sustained || row.TargetRate != 3000 {
			t.Errorf("fixed: target %g, sustained %v", row.TargetRate, row.Sustained)
		}
	}
	// The two processes' connections add up: 3 each, and the first one's probe.
	open, lost := openConns(t, a, "fixed")
	t.Logf("fixed: connections open %v, %d lost", open, lost)
	if len(open) == 0 || open[0] != 7 || slices.Contains(open, -1) || lost != 0 {
		t.Errorf("fixed: connections open %v, %d lost; want 7 from the first interval, none lost", open, lost)
	}
	stats, err := a.ClientStats()
	if err != nil {
		t.Fatal(err)
	}
	procs := map[string]bool{}
	for _, s := range stats {
		procs[s.Process] = true
	}
	if !procs["plugin 0"] || !procs["plugin 1"] {
		t.Errorf("client stats of processes %v, want plugin 0 and plugin 1", procs)
	}
	if r := cli(t, dir, nil, "--config", "systems.yaml", "run", "--systems", "r", "--suite", "suite.yaml", "--processes", "7", "--dry-run"); r.code != 2 || !strings.Contains(r.stderr, "fewer than the 7 parts") {
		t.Errorf("--processes above a phase's connections: exit %d, %s", r.code, r.stderr)
	}
}

// Issue 43's weak answer: --processes 3 on 2 cores ran with no warning. More load
// processes than cores measure the client's own contention: it is said at
// --dry-run and in the run (naming the flag, the count and the CPUs), the run
// goes on (exit 0), and the archive records it so that its report says so.
func TestProcessesBeyondTheCoresIntegration(t *testing.T) {
	k := runtime.NumCPU() + 1
	if k > 8 {
		t.Skipf("this machine has %d CPUs: the suite's 8 connections cannot be split over more processes than that", k-1)
	}
	provisiontest.Need(t, "redis-server")
	srv := provisiontest.Redis(t)
	dir := t.TempDir()
	writeFile(t, dir, "systems.yaml", fmt.Sprintf("systems:\n  r: {adapter: resp, endpoint: %q, disposable: true}\n", srv.Endpoint()))
	writeFile(t, dir, "suite.yaml", `name: many
description: more load processes than cores
defaults:
  memtier: {key_max: 1000, key_prefix: pr_, value_size: 64}
phases:
  - {name: load, kind: load, connections: 8, duration: 30s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: closed, kind: measured, connections: 8, duration: 2s, memtier: {ratio: "1:10", key_pattern: "R:R"}}
`)
	want := fmt.Sprintf("--processes %d runs %d load processes per system on %d CPUs (runtime.NumCPU)", k, k, k-1)
	args := []string{"--config", "systems.yaml", "run", "--systems", "r", "--suite", "suite.yaml", "--processes", fmt.Sprint(k)}
	if r := cli(t, dir, nil, append(args, "--dry-run")...); r.code != 0 || !strings.Contains(r.stderr, "warning: "+want) {
		t.Errorf("--dry-run: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r := cli(t, dir, nil, args...)
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("run: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	if a.Manifest.Processes != k {
		t.Errorf("the manifest records %d processes, want %d", a.Manifest.Processes, k)
	}
	md, err := os.ReadFile(filepath.Join(a.Dir, archive.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if caveat := fmt.Sprintf("%d load processes per system on a client with %d CPUs", k, k-1); !strings.Contains(string(md), caveat) {
		t.Errorf("the report does not say %q", caveat)
	}
	// As many processes as cores: nothing to say.
	if r := cli(t, dir, nil, "--config", "systems.yaml", "run", "--systems", "r", "--suite", "suite.yaml", "--processes", fmt.Sprint(k-1), "--dry-run"); r.code != 0 || strings.Contains(r.stderr, "--processes") {
		t.Errorf("--processes %d on %d CPUs: exit %d, stderr:\n%s", k-1, k-1, r.code, r.stderr)
	}
}

// The Kubernetes Jobs' own command lines (deploy/kubernetes), run as three local
// shard processes and the merge, against two local redis-servers standing for
// the cluster's systems: the exact code path the pods run.
func TestKubernetesPodsLocallyIntegration(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	p1, _ := redisAt(t, 0)
	p2, _ := redisAt(t, 0)
	dir := t.TempDir()
	local := writeFile(t, dir, "local.yaml", fmt.Sprintf("systems:\n  valkey: {adapter: resp, endpoint: \"127.0.0.1:%d\"}\n  azure-managed-redis: {adapter: resp, endpoint: \"127.0.0.1:%d\"}\n", p1, p2))
	out := filepath.Join(dir, "volume")
	startAt := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339)
	res := make([]result, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			args := append(kubernetesShardArgs(t, i, startAt, out), "--config", local, "--scale", "0.001")
			res[i] = cli(t, dir, nil, args...)
		})
	}
	wg.Wait()
	for i, r := range res {
		if r.code != 0 {
			t.Fatalf("pod %d exited %d:\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
	}
	r := cli(t, dir, nil, kubernetesMergeArgs(t, startAt, out)...)
	if r.code != 0 {
		t.Fatalf("merge pod exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	m := archiveOf(t, r)
	if !m.Manifest.Shard.Complete() || len(m.Manifest.Systems) != 2 {
		t.Fatalf("merged: %+v, %d systems", m.Manifest.Shard, len(m.Manifest.Systems))
	}
	vals, err := m.Validations()
	if err != nil || len(vals) != 2 {
		t.Fatalf("validations: %+v %v", vals, err)
	}
	for _, v := range vals {
		if !v.OK() || v.Counted != 3000 {
			t.Errorf("%s: the shards' loads together: %+v", v.System, v)
		}
	}
}

// Issue 25's weak answer: a shard started with --start-at in the past, whose
// other shard never comes, used to wait silently under --quiet for as long as the
// plan's longest phase. It says what it waits for, and where.
func TestShardWaitingForAnAbsentShardSaysSo(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	srv := provisiontest.Redis(t)
	dir := t.TempDir()
	writeFile(t, dir, "systems.yaml", fmt.Sprintf("systems:\n  r: {adapter: resp, endpoint: %q, disposable: true}\n", srv.Endpoint()))
	writeFile(t, dir, "suite.yaml", shardSuiteText)
	s := startCLI(t, dir, nil, "shard 0/2 waits for shard 1 at r.0.0.before", "--config", "systems.yaml", "--out", "shards", "run", "--systems", "r",
		"--suite", "suite.yaml", "--shard", "0/2", "--start-at", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), "--quiet")
	if !strings.Contains(s.stderr.String(), "it gives up in 9m") || !strings.Contains(s.stderr.String(), "--sync-dir") {
		t.Errorf("the wait is not said in full:\n%s", s.stderr.String())
	}
}

// Issue 43, bug 5: shard 0 of one run and shard 1 of another run of the same plan
// (same suite, systems, seed and shard count; --start-at apart) used to merge into
// a "complete" archive with only a start-skew caveat. The shards of one run share
// their --start-at: merge refuses, naming both archives and the two starts.
func TestMergeRefusesShardsOfTwoRunsIntegration(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	port, _ := redisAt(t, 0)
	dir := t.TempDir()
	writeFile(t, dir, "systems.yaml", fmt.Sprintf("systems:\n  r:\n    adapter: resp\n    endpoint: 127.0.0.1:%d\n    disposable: true\n", port))
	writeFile(t, dir, "suite.yaml", shardSuiteText)
	first := time.Now().Add(3 * time.Second).Truncate(time.Second)
	one := shardRun(t, dir, 2, first)
	second := time.Now().Add(3 * time.Second).Truncate(time.Second)
	two := shardRun(t, dir, 2, second)
	if !second.After(first) {
		t.Fatalf("the two runs start at %s and %s", first, second)
	}
	r := cli(t, dir, nil, "--out", "mixed", "merge", one[0].Dir, two[1].Dir)
	if r.code != 2 {
		t.Fatalf("shards of two runs merged: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{one[0].Dir, two[1].Dir, "--start-at " + first.UTC().Format(time.RFC3339) + " vs " + second.UTC().Format(time.RFC3339)} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not name %q:\n%s", want, r.stderr)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "mixed")); len(entries) > 0 {
		t.Errorf("a refused merge left %d entries in --out", len(entries))
	}
	// The shards of each run still merge.
	if r := cli(t, dir, nil, "--out", "merged", "merge", one[0].Dir, one[1].Dir); r.code != 0 {
		t.Errorf("the shards of one run: exit %d\n%s", r.code, r.stderr)
	}
}

// Issue 43's weak answer: two shards of one plan started with different
// --start-at into one --out each waited the full 10 minutes for the other (and
// then failed, exit 1). They see each other's in-progress directories: both stop
// at once, exit 2, naming both directories and both starts, and keep no archive.
// A shard started twice is refused alike, and so are shards of two runs that
// meet in one --sync-dir, each writing to its own --out.
func TestShardsOfTwoRunsStopAtOnceIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	srv := provisiontest.Redis(t)
	dir := t.TempDir()
	writeFile(t, dir, "systems.yaml", fmt.Sprintf("systems:\n  r: {adapter: resp, endpoint: %q, disposable: true}\n", srv.Endpoint()))
	writeFile(t, dir, "suite.yaml", shardSuiteText)
	run := func(t *testing.T, shard string, at time.Time, out string, extra ...string) *started {
		return startCLI(t, dir, nil, "the shards meet in", append([]string{"--config", "systems.yaml", "--out", out, "run", "--systems", "r",
			"--suite", "suite.yaml", "--shard", shard, "--start-at", at.UTC().Format(time.RFC3339)}, extra...)...)
	}
	// Within a bound well under the 10 minutes they used to wait.
	within := func(t *testing.T, s *started) result {
		done := make(chan result, 1)
		go func() { done <- s.wait(t) }()
		select {
		case r := <-done:
			return r
		case <-time.After(3 * time.Minute):
			s.cmd.Process.Kill()
			t.Fatalf("still waiting after 3 minutes:\n%s", s.stderr.String())
			return result{}
		}
	}
	for _, tc := range []struct {
		name     string
		shards   [2]string
		starts   [2]time.Duration
		outs     [2]string
		extra    []string
		saysDirs []string // besides both starts
	}{
		{"different --start-at", [2]string{"0/2", "1/2"}, [2]time.Duration{time.Minute, time.Minute + 34*time.Second}, [2]string{"a", "a"}, nil,
			[]string{"are not shards of one run: they differ in --start-at", filepath.Join(dir, "a", "."), filepath.Join(dir, "a", ".")}},
		{"one shard twice", [2]string{"0/2", "0/2"}, [2]time.Duration{time.Minute, time.Minute}, [2]string{"b", "b"}, nil,
			[]string{"are not shards of one run: both are shard 0/2", filepath.Join(dir, "b", "."), filepath.Join(dir, "b", ".")}},
		{"one --sync-dir, two --out", [2]string{"0/2", "1/2"}, [2]time.Duration{time.Minute, time.Minute + 34*time.Second}, [2]string{"c0", "c1"}, []string{"--sync-dir", "meet"},
			[]string{"is the note of shard", filepath.Join(dir, "meet", "r.0.0.before")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := time.Now().Truncate(time.Second)
			a := run(t, tc.shards[0], base.Add(tc.starts[0]), tc.outs[0], tc.extra...)
			b := run(t, tc.shards[1], base.Add(tc.starts[1]), tc.outs[1], tc.extra...)
			for i, r := range []result{within(t, a), within(t, b)} {
				if r.code != 2 {
					t.Fatalf("shard %d: exit %d\n%s", i, r.code, r.stderr)
				}
				wants := append([]string{base.Add(tc.starts[0]).UTC().Format(time.RFC3339), base.Add(tc.starts[1]).UTC().Format(time.RFC3339),
					"measured nothing and keeps no archive"}, tc.saysDirs...)
				for _, want := range wants {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("shard %d does not say %q:\n%s", i, want, r.stderr)
					}
				}
				if n := strings.Count(r.stderr, filepath.Join(dir, tc.outs[0], ".")); tc.outs[0] == tc.outs[1] && n < 2 {
					t.Errorf("shard %d does not name both directories:\n%s", i, r.stderr)
				}
			}
			for _, out := range tc.outs {
				if left := append(archive.InProgress(filepath.Join(dir, out)), archive.Finished(filepath.Join(dir, out))...); len(left) > 0 {
					t.Errorf("refused shards left %v", left)
				}
			}
		})
	}
}
