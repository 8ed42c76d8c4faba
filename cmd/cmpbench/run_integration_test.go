package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
	"github.com/cmpbench/cmpbench/plugins"
)

func TestSmokeRunIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	r := cli(t, dir, nil, "run", "--systems", "redis,redis-aof", "--suite", "smoke")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	a := archiveOf(t, r)
	if sha, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command(sha, "-c", "--quiet", archive.SumsFile)
		cmd.Dir = a.Dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum -c: %v\n%s", err, out)
		}
	}
	if a.Manifest.Status != "complete" || len(a.Manifest.Phases) != 6 {
		t.Fatalf("status %s, %d phases", a.Manifest.Status, len(a.Manifest.Phases))
	}
	for _, sys := range []string{"redis", "redis-aof"} {
		load := rows(a, sys, "load")["SET"]
		if load.Count != 10_000 || load.Errors != 0 {
			t.Errorf("%s load: %d writes, %d errors", sys, load.Count, load.Errors)
		}
		closed := rows(a, sys, "closed-1:10")
		if closed["GET"].Count == 0 || closed["SET"].Count == 0 || closed["GET"].Misses != 0 {
			t.Errorf("%s closed loop: %+v", sys, closed)
		}
		// 1:10 SET:GET is exact per connection, whatever the throughput.
		if ratio := float64(closed["GET"].Count) / float64(closed["SET"].Count); math.Abs(ratio-10) > 0.1 {
			t.Errorf("%s GET/SET = %.2f, want 10", sys, ratio)
		}
		fixed := rows(a, sys, "rate-5000")["GET"]
		if fixed.Sustained == nil || !*fixed.Sustained || math.Abs(fixed.AchievedRate-5000)/5000 > 0.02 {
			t.Errorf("%s at 5000 ops/s: achieved %.1f, sustained %v", sys, fixed.AchievedRate, fixed.Sustained)
		}
		if fixed.RespP50 < fixed.SvcP50 || fixed.SvcHDR == nil {
			t.Errorf("%s fixed-rate phase must record response and service time apart", sys)
		}
	}
	var info archive.SystemInfo
	for _, s := range a.Manifest.Systems {
		if s.Name == "redis-aof" {
			info = s
		}
	}
	if info.Product != "redis" || info.Version == "" || len(info.BinarySHA256) != 64 || !strings.Contains(strings.Join(info.Launch, " "), "--appendfsync everysec") {
		t.Errorf("redis-aof capture %+v", info)
	}
	if len(a.Manifest.Plugins) != 2 || !a.Manifest.Plugins[0].Builtin || a.Manifest.Plugins[0].Protocol != plugins.ProtocolVersion {
		t.Errorf("plugins %+v", a.Manifest.Plugins)
	}
	cfg, err := a.ReadFile("systems/redis-aof/config.txt")
	if err != nil || !strings.Contains(string(cfg), "appendonly yes") {
		t.Errorf("config capture: %v", err)
	}
	rep, _ := a.ReadFile(archive.ReportFile)
	if !strings.Contains(string(rep), "| redis-aof | ") || !strings.Contains(string(rep), "### rate-5000") {
		t.Errorf("report:\n%s", rep)
	}
	// The fairness audit names the durability difference, and fails.
	if r := cli(t, dir, nil, "audit", a.Dir); r.code != 1 || !strings.Contains(r.stdout, "- durability differs — redis: no persistence: every write lost on a restart; redis-aof: appendfsync everysec: up to 1 s of writes lost on power loss.") {
		t.Errorf("audit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// report.html opens offline in a real browser, every chart drawn; the
	// fixed-rate phase's spectrum has both systems' response and service time.
	specs := checkPage(t, a, "smoke")
	spectrum := slices.IndexFunc(specs, func(s browsertest.Spec) bool { return s.Title == "Latency by percentile: rate-5000" })
	if spectrum < 0 {
		t.Fatal("report.html has no spectrum of rate-5000")
	}
	for _, want := range []string{"redis GET response", "redis GET service", "redis-aof GET response", "redis-aof GET service"} {
		if !slices.Contains(specs[spectrum].Labels(), want) {
			t.Errorf("the spectrum of rate-5000 has no %q", want)
		}
	}
	// The server's own count of connections during the closed loop: its 8, the
	// probe's and cmpbench's own.
	found := 0
	for _, line := range strings.Split(string(rep), "\n") {
		if cells := strings.Split(line, " | "); len(cells) == 13 && cells[2] == "closed-1:10" {
			found++
			if n, err := strconv.Atoi(strings.ReplaceAll(cells[11], ",", "")); err != nil || n < 9 || n > 20 {
				t.Errorf("server connections %q during an 8-connection phase: %s", cells[11], line)
			}
		}
	}
	if found != 2 {
		t.Errorf("the report's phase table has %d closed-1:10 lines, want 2:\n%s", found, rep)
	}
	// The report is rebuilt from the archive alone, byte for byte.
	if r := cli(t, dir, nil, "report", a.Dir); r.code != 0 || !strings.Contains(r.stdout, "byte-identical") {
		t.Errorf("report regeneration: %d %s %s", r.code, r.stdout, r.stderr)
	}
	checkSamplers(t, a)
	charts, _ := filepath.Glob(filepath.Join(a.Dir, "charts", "*.svg"))
	if len(charts) < 3 || !strings.Contains(string(rep), "](charts/throughput.svg)") || !strings.Contains(string(rep), "](charts/throughput-fixed-rate.svg)") {
		t.Errorf("charts %v", charts)
	}
	for _, c := range charts {
		texts := svgText(t, c)
		for _, sys := range []string{"redis", "redis-aof"} {
			if !namesSeriesOf(texts, sys) {
				t.Errorf("%s has no series for %s: %q", filepath.Base(c), sys, texts)
			}
		}
	}
	page := filepath.Join(dir, "compare.html")
	if r := cli(t, dir, nil, "compare", "--fail-on-regression", "--html", page, a.Dir, a.Dir); r.code != 0 || !strings.Contains(r.stdout, "0 regressions") || !strings.Contains(r.stdout, "Page: "+page) {
		t.Errorf("compare with itself: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, c := range checkPageFile(t, page, "compare-smoke") {
		if labels := c.Labels(); !slices.Contains(labels, "A GET") || !slices.Contains(labels, "B GET") {
			t.Errorf("compare page's %s: series %q, want A's and B's GET", c.ID, labels)
		}
	}
	hl := filepath.Join(dir, "hlog")
	if r := cli(t, dir, nil, "export", "hlog", "--out", hl, a.Dir); r.code != 0 || strings.Count(r.stdout, ".hlog") != 6 {
		t.Errorf("export hlog: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// namesSeriesOf is whether a chart's texts name a series of sys: sys itself,
// or sys followed by what the series is (its probe, an op).
func namesSeriesOf(texts []string, sys string) bool {
	return slices.ContainsFunc(texts, func(s string) bool { return s == sys || strings.HasPrefix(s, sys+" ") })
}

// svgText parses an SVG file and returns the content of its text elements.
func svgText(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	texts, err := chart.Texts(b)
	if err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	return texts
}

// checkSamplers checks the side probe, server stats and client stats of a run.
func checkSamplers(t *testing.T, a *archive.Archive) {
	t.Helper()
	probe, err := a.Probe()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range a.Manifest.Phases {
		var n int
		for _, r := range probe {
			if r.System == p.System && r.PhaseIndex == p.Index && r.Repetition == p.Repetition {
				n++
				if r.Op != "GET" || r.Outcome != "hit" || r.ResponseNs < r.ServiceNs {
					t.Fatalf("probe row %+v", r)
				}
			}
		}
		want := p.ProbeRate * float64(p.ElapsedNs) / 1e9
		if p.Kind != "measured" {
			if n != 0 {
				t.Errorf("%s %s: %d probe requests outside a measured phase", p.System, p.Name, n)
			}
			continue
		}
		if math.Abs(float64(n)-want) > 0.02*want {
			t.Errorf("%s %s: %d probe requests, want %.0f ± 2%%", p.System, p.Name, n, want)
		}
	}
	stats, err := a.ServerStats()
	if err != nil {
		t.Fatal(err)
	}
	points := map[string]bool{}
	for _, s := range stats {
		if s.Section == "commandstats" {
			points[s.System+"/"+s.Phase+"/"+s.Point] = true
		}
	}
	for _, p := range a.Manifest.Phases {
		if p.Kind == "measured" && (!points[p.System+"/"+p.Name+"/before"] || !points[p.System+"/"+p.Name+"/after"]) {
			t.Errorf("%s %s: no commandstats before and after the phase", p.System, p.Name)
		}
	}
	clients, err := a.ClientStats()
	if err != nil {
		t.Fatal(err)
	}
	procs := map[string]bool{}
	ours := map[int]bool{}
	for _, c := range clients {
		procs[c.Process] = true
		ours[c.Pid] = true
		if c.RSSBytes <= 0 || c.CPUPercent < 0 {
			t.Fatalf("client sample %+v", c)
		}
	}
	if !procs["cmpbench"] || !procs["plugin"] {
		t.Errorf("client stats cover %v", procs)
	}
	withHost := 0
	for _, p := range a.Manifest.Phases {
		// A phase shorter than 100 ms (a quick load) is too short to measure CPU in.
		if p.CoresAllowed < 1 || p.ClientCores <= 0 && p.ElapsedNs >= int64(100*time.Millisecond) {
			t.Errorf("%s %s: client cores %.2f of %d", p.System, p.Name, p.ClientCores, p.CoresAllowed)
		}
		// The machine's load: the server this test started is on it, and cmpbench's
		// own processes are never among the others.
		if p.ElapsedNs >= int64(time.Second) {
			withHost++
			if h := p.Host; h == nil || h.Cores < 1 || h.BusyCores <= 0 {
				t.Errorf("%s %s: host load %+v", p.System, p.Name, h)
			} else {
				for _, o := range h.Others {
					if ours[o.Pid] || o.Name == "" || o.Name == "?" {
						t.Errorf("%s %s: other process %+v", p.System, p.Name, o)
					}
				}
			}
		}
	}
	if withHost == 0 {
		t.Error("no phase long enough to have the machine's load")
	}
}

const quickSuite = `name: quick
defaults:
  connections: 4
  memtier: {key_max: 2000, value_size: 64}
phases:
  - {name: load, kind: load, duration: 30s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: long, duration: 6s, memtier: {ratio: "1:10"}}
  - {name: after, duration: 1s, memtier: {ratio: "1:10"}}
`

// midPhase starts the quick suite on the built-in redis system and returns once its
// long phase has run for a while, with the pids of the server and of the plugin.
func midPhase(t *testing.T) (s *started, redis, plugin int) {
	t.Helper()
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	writeFile(t, dir, "quick.yaml", quickSuite)
	s = startCLI(t, dir, nil, "redis: long (", "run", "--systems", "redis", "--suite", "quick.yaml")
	time.Sleep(1500 * time.Millisecond)
	return s, child(t, s.cmd.Process.Pid, "redis-server"), child(t, s.cmd.Process.Pid, "plugin serve resp")
}

func TestOverloadIsNotSustainedIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	writeFile(t, dir, "over.yaml", `name: over
defaults: {connections: 4, memtier: {key_max: 1000, value_size: 32}}
phases:
  - {name: load, kind: load, duration: 30s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: far-above, rate: 10000000, duration: 2s, memtier: {ratio: "1:10"}}
`)
	r := cli(t, dir, nil, "run", "--systems", "redis", "--suite", "./over.yaml")
	a := archiveOf(t, r)
	row := rows(a, "redis", "far-above")["GET"]
	if row.Sustained == nil || *row.Sustained {
		t.Fatalf("10M ops/s on this machine reported sustained (achieved %.0f)", row.AchievedRate)
	}
	rep, _ := a.ReadFile(archive.ReportFile)
	if !strings.Contains(string(rep), "**NS**") {
		t.Fatal("report does not mark the phase NS")
	}
}

func TestOOMRepliesAreErrorsIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", `systems:
  tiny:
    adapter: resp
    provision:
      command: [redis-server, --port, "{port}", --bind, 127.0.0.1, --save, "", --maxmemory, 2mb, --maxmemory-policy, noeviction]
`)
	writeFile(t, dir, "oom.yaml", `name: oom
defaults: {connections: 4, memtier: {key_max: 20000, value_size: 256}}
phases:
  - {name: load, kind: load, duration: 30s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: mixed, duration: 1s, memtier: {ratio: "1:1"}}
`)
	r := cli(t, dir, nil, "run", "--systems", "tiny", "--suite", "oom.yaml")
	if r.code != 1 {
		t.Fatalf("a run whose load hit OOM exited %d", r.code)
	}
	a := archiveOf(t, r)
	load := rows(a, "tiny", "load")["SET"]
	if load.ErrOOM == 0 || load.Count+load.Errors != 20_000 || load.Count == 0 || load.Count >= 20_000 {
		t.Fatalf("load: %d ok, %d errors (%d OOM)", load.Count, load.Errors, load.ErrOOM)
	}
	if want := float64(load.Count) / load.DurationS; math.Abs(load.Throughput-want) > 1e-6*want {
		t.Fatalf("throughput %.1f counts errors (successes alone give %.1f)", load.Throughput, want)
	}
	if st, msg := phaseStatus(a, "tiny", "load"); st != "failed" || !strings.Contains(msg, "writes failed") {
		t.Fatalf("load status %s: %s", st, msg)
	}
	// The counts say how many; the samples say what, in the archive and in the progress lines.
	for _, ph := range a.Manifest.Phases {
		if ph.Name == "load" && (len(ph.ErrorSamples) != 1 || !strings.HasPrefix(ph.ErrorSamples[0], "oom: OOM command not allowed")) {
			t.Fatalf("load error samples %q", ph.ErrorSamples)
		}
	}
	if !strings.Contains(r.stderr, "first errors: oom: OOM command not allowed") {
		t.Fatalf("the progress lines do not say what the errors were:\n%s", r.stderr)
	}
	// What reads the data a failed load did not write is not measured.
	if st, msg := phaseStatus(a, "tiny", "mixed"); st != "skipped" || !strings.Contains(msg, `the load "load" failed`) {
		t.Fatalf("the phase after a failed load: %s: %s", st, msg)
	}

	// A load that fits, then writes that do not: OOM replies in a measured phase
	// are errors of their class, never throughput.
	writeFile(t, dir, "fits.yaml", `name: fits
defaults: {connections: 4, memtier: {value_size: 256}}
phases:
  - {name: load, kind: load, duration: 30s, memtier: {ratio: "1:0", key_pattern: P, key_max: 1000}}
  - {name: mixed, duration: 2s, memtier: {ratio: "1:1", key_max: 40000}}
`)
	r = cli(t, dir, nil, "run", "--systems", "tiny", "--suite", "fits.yaml")
	a = archiveOf(t, r)
	if st, msg := phaseStatus(a, "tiny", "load"); st != "ok" {
		t.Fatalf("the load that fits: %s: %s", st, msg)
	}
	mixed := rows(a, "tiny", "mixed")
	if set := mixed["SET"]; set.ErrOOM == 0 || set.Count >= set.Count+set.Errors || mixed["GET"].Hits == 0 {
		t.Fatalf("mixed: SET %d ok %d OOM, GET %d hits", set.Count, set.ErrOOM, mixed["GET"].Hits)
	}
	if want := float64(mixed["SET"].Count) / mixed["SET"].DurationS; math.Abs(mixed["SET"].Throughput-want) > 1e-6*want+1e-9 {
		t.Fatalf("SET throughput %.1f counts errors (successes alone give %.1f)", mixed["SET"].Throughput, want)
	}
	// Issue 43's weak answer: a phase in which most writes failed was ok.
	st, msg := phaseStatus(a, "tiny", "mixed")
	t.Logf("mixed: %d of %d SETs failed: %s %q", mixed["SET"].Errors, mixed["SET"].Errors+mixed["SET"].Count, st, msg)
	if set := mixed["SET"]; set.Errors > set.Count && (st != "failed" || !strings.Contains(msg, "of its SET operations failed") || !strings.Contains(msg, " oom)")) {
		t.Fatalf("mixed, %d of %d SETs failed: %s %q", set.Errors, set.Errors+set.Count, st, msg)
	}
}

func TestKillingTheServerFailsThePhaseIntegration(t *testing.T) {
	s, redis, _ := midPhase(t)
	if err := syscall.Kill(redis, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := s.wait(t)
	if r.code != 1 {
		t.Fatalf("exit %d", r.code)
	}
	a := archiveOf(t, r)
	// The phase is stopped as soon as the server it measures exits, keeping what
	// it measured until then.
	if st, msg := phaseStatus(a, "redis", "long"); st != "failed" || !strings.Contains(msg, "server exited during the phase (") ||
		!strings.Contains(msg, "was killed by signal 9 (killed)") {
		t.Fatalf("phase long: %s %s", st, msg)
	}
	if long := rows(a, "redis", "long"); long["GET"].Count == 0 {
		t.Fatalf("want the successes before the kill: %+v", long["GET"])
	}
	if st, msg := phaseStatus(a, "redis", "after"); st != "failed" || !strings.Contains(msg, "server exited") {
		t.Fatalf("phase after: %s %s", st, msg)
	}
}

func TestPluginCrashFailsOnlyThatPhaseIntegration(t *testing.T) {
	s, redis, plugin := midPhase(t)
	if err := syscall.Kill(plugin, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := s.wait(t)
	if r.code != 1 {
		t.Fatalf("exit %d", r.code)
	}
	a := archiveOf(t, r)
	if st, msg := phaseStatus(a, "redis", "long"); st != "failed" || !strings.Contains(msg, "plugin process exited") {
		t.Fatalf("phase long: %s %q", st, msg)
	}
	if got := rows(a, "redis", "long")["GET"].Count; got == 0 {
		t.Fatal("the intervals received before the crash were lost")
	}
	if st, msg := phaseStatus(a, "redis", "after"); st != "ok" {
		t.Fatalf("the next phase did not run on a new plugin: %s %s", st, msg)
	}
	if alive(redis) {
		t.Fatal("redis-server left running")
	}
}

func TestInterruptFinalisesTheArchiveIntegration(t *testing.T) {
	s, redis, _ := midPhase(t)
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := s.wait(t)
	if r.code != 1 {
		t.Fatalf("exit %d", r.code)
	}
	a := archiveOf(t, r)
	if a.Manifest.Status != "interrupted" {
		t.Fatalf("status %s", a.Manifest.Status)
	}
	if st, _ := phaseStatus(a, "redis", "long"); st != "interrupted" {
		t.Fatalf("phase long: %s", st)
	}
	if got := rows(a, "redis", "long")["GET"].Count; got == 0 {
		t.Fatal("the interrupted phase's measurements were lost")
	}
	if st, _ := phaseStatus(a, "redis", "after"); st != "skipped" {
		t.Fatalf("phase after: %s", st)
	}
	if alive(redis) {
		t.Fatal("redis-server left running after Ctrl-C")
	}
}

func TestThirdPartyPluginIntegration(t *testing.T) {
	provisiontest.Need(t, "memcached")
	dir := t.TempDir()
	sample, _ := filepath.Abs("../../plugins/sdk/examples/memcached/sample.yaml")
	r := cli(t, dir, nil, "--plugin-dir", pluginDir, "--config", sample, "run", "--systems", "memcached", "--suite", "smoke", "--scale", "0.2")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	a := archiveOf(t, r)
	p := a.Manifest.Plugins[0]
	want, _ := core.FileSHA256(filepath.Join(pluginDir, "cmpbench-adapter-memcached"))
	if p.Builtin || p.Adapter != "memcached" || p.SHA256 != want {
		t.Fatalf("plugin %+v", p)
	}
	if got := rows(a, "memcached", "closed-1:10")["GET"]; got.Hits == 0 {
		t.Fatalf("no GET hits through the third-party plugin: %+v", got)
	}
	if a.Manifest.Systems[0].Product != "memcached" {
		t.Fatalf("capture %+v", a.Manifest.Systems[0])
	}
	out := cli(t, dir, nil, "--plugin-dir", pluginDir, "adapters")
	if !strings.Contains(out.stdout, "memcached  third-party  GET,SET") || !strings.Contains(out.stdout, "resp       built-in") {
		t.Fatalf("adapters:\n%s", out.stdout)
	}
}

func TestSecretsNeverReachTheArchiveIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	const secret = "Cmpb3nch-it-s3cret-71f0"
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", `systems:
  locked:
    adapter: resp
    provision:
      command: [redis-server, --port, "{port}", --bind, 127.0.0.1, --save, "", --requirepass, "${CMPBENCH_IT_PASSWORD}"]
    auth: {password: "${CMPBENCH_IT_PASSWORD}"}
`)
	r := cli(t, dir, []string{"CMPBENCH_IT_PASSWORD=" + secret}, "run", "--systems", "locked", "--suite", "smoke", "--scale", "0.1")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Fatal("the password was printed")
	}
	err := filepath.Walk(a.Dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("%s contains the password", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Parquet pages are compressed: read every string back as well.
	iv, err := a.Intervals()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range a.Summary {
		if strings.Contains(r.System+r.Phase+r.Workload+r.Shape+r.Status, secret) {
			t.Fatal("summary.parquet holds the password")
		}
	}
	for _, r := range iv {
		if strings.Contains(r.System+r.Phase+r.Op, secret) {
			t.Fatal("intervals.parquet holds the password")
		}
	}
	launch := strings.Join(a.Manifest.Systems[0].Launch, " ")
	if !strings.Contains(launch, "--requirepass [redacted]") {
		t.Fatalf("launch line %q", launch)
	}
}

func TestBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "bad.yaml", "systems:\n  x:\n    adapter: resp\n    endpont: 127.0.0.1:1\n")
	writeFile(t, dir, "huge.yaml", "name: huge\nphases:\n  - {name: l, ladder: {rates: [1000, 1e300], step: 1s}, memtier: {key_max: 5}}\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--systems", "nope"}, `system "nope" is not defined`},
		{[]string{"run"}, "--systems is required"},
		{[]string{"--config", "bad.yaml", "run", "--systems", "x"}, `bad.yaml:4: system "x": unknown key "endpont" (known: adapter, auth, cluster,`},
		{[]string{"run", "--systems", "redis", "--suite", "nosuch"}, `suite "nosuch" is not built in`},
		{[]string{"run", "--systems", "redis", "--scale", "0"}, "--scale must be a positive number"},
		{[]string{"run", "--systems", "redis", "--bogus"}, "unknown flag"},
		// Issue 43, bug 4: passed --dry-run, and the run died writing a chart.
		{[]string{"run", "--systems", "redis", "--suite", "huge.yaml", "--dry-run"}, `huge.yaml:3: phase "l": ladder.rates: 1e+300 is beyond 1e+09 requests/s`},
		{[]string{"run", "--systems", "redis", "--scale", "1e6", "--dry-run"}, `phase "closed-1:10" after --scale 1e+06: duration must be positive and at most 168h0m0s`},
	}
	for _, tc := range tests {
		r := cli(t, dir, nil, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

func TestListingsAndDryRun(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, dir, nil, "systems")
	if r.code != 0 || !strings.Contains(r.stdout, "redis-aof") {
		t.Fatalf("systems: %d %s", r.code, r.stdout)
	}
	r = cli(t, dir, nil, "suites")
	for _, name := range []string{"smoke", "memtier", "ycsb", "latency", "knee", "soak", "pubsub"} {
		if r.code != 0 || !regexp.MustCompile(`(?m)^`+name+`\n  phases: .*\n(  .*\n)*  [A-Z].*`).MatchString(r.stdout) {
			t.Fatalf("suites: %d: no entry for %s with its phases and description\n%s", r.code, name, r.stdout)
		}
	}
	// Wrapped: no line wider than 100 columns when stdout is not a terminal.
	for _, line := range strings.Split(r.stdout, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("suites: a line of %d columns: %s", n, line)
		}
	}
	r = cli(t, dir, nil, "run", "--systems", "redis,redis-aof", "--suite", "memtier", "--scale", "0.01", "--dry-run")
	if r.code != 0 || strings.Count(r.stdout, "redis-aof ") < 4 || !strings.Contains(r.stdout, "memtier 1:19 R:R kv_[1..10000] 1024-4096B miss=0.1") {
		t.Fatalf("dry run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "results")); len(entries) != 0 {
		t.Fatal("a dry run wrote an archive")
	}
}

func TestVerifyNamesATamperedFileIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	r := cli(t, dir, nil, "run", "--systems", "redis", "--suite", "smoke", "--scale", "0.1")
	a := archiveOf(t, r)
	p := filepath.Join(a.Dir, archive.SummaryFile)
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 0xff
	os.WriteFile(p, b, 0o644)
	v := cli(t, dir, nil, "verify", a.Dir)
	if v.code != 1 || !strings.Contains(v.stderr, "summary.parquet: checksum mismatch") {
		t.Fatalf("verify after tampering: %d %s", v.code, v.stderr)
	}
}

// A fixed-rate ladder whose top steps are beyond what this machine can do: the
// first step not sustained shows as NS with the rate achieved, the steps after it
// are not run, and the report has the ladder's table.
func TestLadderStopsAtNSIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	writeFile(t, dir, "s.yaml", `name: lad
defaults: {connections: 4, memtier: {key_max: 1000, value_size: 32}}
phases:
  - {name: load, kind: load, duration: 30s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: get, memtier: {ratio: "0:1"}, ladder: {rates: [1000, 4000, 3000000, 6000000], step: 1s}}
`)
	r := cli(t, dir, nil, "run", "--systems", "redis", "--suite", "s.yaml")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	var names []string
	for _, p := range a.Manifest.Phases {
		names = append(names, p.Name)
		if strings.HasPrefix(p.Name, "get@") && (p.Method == nil || p.Method.Kind != "ladder" || p.Method.Of != "get") {
			t.Errorf("step %s is not recorded as a step of the ladder: %+v", p.Name, p.Method)
		}
	}
	if got := strings.Join(names, " "); got != "load get@1000 get@4000 get@3000000" {
		t.Errorf("phases run: %s", got)
	}
	if !strings.Contains(r.stderr, `redis: the ladder "get" stopped: 1 of its steps not sustained, the last get@3000000 (held `) ||
		!strings.Contains(r.stderr, "its steps from get@6000000 on are not run") {
		t.Errorf("progress does not say where the ladder stopped:\n%s", r.stderr)
	}
	rep, _ := a.ReadFile(archive.ReportFile)
	for _, want := range []string{"### Ladder get", "| target ops/s | redis |", "| 3,000,000 | NS (", "repetitions pooled (histograms merged)"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	if texts := svgText(t, filepath.Join(a.Dir, "charts", "ladder-get.svg")); !slices.Contains(texts, "redis p50") || !slices.Contains(texts, "redis p99.9") {
		t.Errorf("the ladder chart has no series for redis: %q", texts)
	}
	if !regexp.MustCompile(`\| 1,000 \| \d+\.\d{3} / \d+\.\d{3} \|`).Match(rep) {
		t.Errorf("the 1,000 ops/s step has no p50 / p99:\n%s", rep)
	}
	if r := cli(t, dir, nil, "report", a.Dir); r.code != 0 || !strings.Contains(r.stdout, "byte-identical") {
		t.Errorf("report regeneration: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// A concurrency sweep finds a knee, and the phase written with connections: knee
// runs there; the report's sweep table marks the same knee.
func TestSweepFindsTheKneeIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	writeFile(t, dir, "s.yaml", `name: sw
defaults: {memtier: {key_max: 1000, value_size: 32}}
phases:
  - {name: load, kind: load, duration: 30s, connections: 4, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: reads, memtier: {ratio: "1:10"}, sweep: {connections: [1, 2, 4, 8], step: 1s}}
  - {name: at-knee, duration: 1s, connections: knee, memtier: {ratio: "1:10"}}
`)
	r := cli(t, dir, nil, "run", "--systems", "redis", "--suite", "s.yaml")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	var knee int
	for _, p := range a.Manifest.Phases {
		if p.Name == "at-knee" {
			knee = p.Connections
			if p.Uses == nil || *p.Uses != (core.MethodRef{Kind: "sweep", Of: "reads"}) {
				t.Errorf("at-knee does not say whose knee it ran at: %+v", p.Uses)
			}
		}
		if strings.HasPrefix(p.Name, "reads@") {
			var params struct{ Gain float64 }
			if p.Method == nil || p.Method.Kind != "sweep" || p.Method.Of != "reads" || p.Method.DecodeParams(&params) != nil || params.Gain != 0.1 {
				t.Errorf("step %s: %+v", p.Name, p.Method)
			}
		}
	}
	if !slices.Contains([]int{1, 2, 4, 8}, knee) {
		t.Fatalf("at-knee ran at %d connections, not one of the sweep's", knee)
	}
	if want := fmt.Sprintf("redis: at-knee runs at the knee of reads: %d connections", knee); !strings.Contains(r.stderr, want) {
		t.Errorf("progress lacks %q:\n%s", want, r.stderr)
	}
	rep, _ := a.ReadFile(archive.ReportFile)
	for _, c := range []string{"sweep-reads-throughput.svg", "sweep-reads-latency.svg"} {
		if texts := svgText(t, filepath.Join(a.Dir, "charts", c)); !slices.Contains(texts, "redis") {
			t.Errorf("%s has no series for redis: %q", c, texts)
		}
	}
	for _, want := range []string{"### Sweep reads", fmt.Sprintf("**redis** — knee at %d connections", knee), fmt.Sprintf("| **%d** (knee) |", knee), "| p99.99 ms (worst op) |"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	if r := cli(t, dir, nil, "report", a.Dir); r.code != 0 || !strings.Contains(r.stdout, "byte-identical") {
		t.Errorf("report regeneration: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// The built-in suites of the published methods run at a small scale, and their
// reports regenerate from the archive byte for byte, every chart an SVG naming the
// system.
func TestMethodSuitesRegenerateIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	for _, tc := range []struct {
		suite, scale string
		want         string // in the report
		chart        string // in report.html, the title's start
	}{
		{"latency", "0.0005", "### Ladder get-816", "Ladder get-816"},
		{"knee", "0.001", "### Sweep read-sweep", "Sweep read-sweep"},
		{"soak", "0.0005", "## Stalls", "Latency over time"},
		{"pubsub", "0.05", "### Pub/sub messages", "Latency by percentile"},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			dir := t.TempDir()
			r := cli(t, dir, nil, "run", "--systems", "redis", "--suite", tc.suite, "--scale", tc.scale)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			a := archiveOf(t, r)
			rep, _ := a.ReadFile(archive.ReportFile)
			if !strings.Contains(string(rep), tc.want) {
				t.Errorf("report lacks %q", tc.want)
			}
			specs := checkPage(t, a, tc.suite)
			if tc.chart != "" && !slices.ContainsFunc(specs, func(s browsertest.Spec) bool { return strings.HasPrefix(s.Title, tc.chart) }) {
				t.Errorf("report.html has no chart %q", tc.chart)
			}
			if r := cli(t, dir, nil, "report", a.Dir); r.code != 0 || !strings.Contains(r.stdout, "byte-identical") {
				t.Errorf("report regeneration: %d %s %s", r.code, r.stdout, r.stderr)
			}
			for _, p := range a.Manifest.Phases {
				if m := p.Messages; m != nil && (m.Lost != 0 || m.Duplicates != 0 || m.Delivered != m.Expected || m.Published == 0) {
					t.Errorf("%s: messages %+v", p.Name, *m)
				}
			}
			charts, _ := filepath.Glob(filepath.Join(a.Dir, "charts", "*.svg"))
			for _, c := range charts {
				texts := svgText(t, c)
				if !slices.ContainsFunc(texts, func(s string) bool { return strings.HasPrefix(s, "redis") }) {
					t.Errorf("%s names no redis series: %q", filepath.Base(c), texts)
				}
			}
		})
	}
}
