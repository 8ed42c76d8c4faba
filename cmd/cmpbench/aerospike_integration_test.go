package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// checkRealRun holds what every run against real servers must show: every phase
// ok, the load validated and validated again after the restart check (records
// kept: loaded is what must be counted then), the server's own counts equal to
// what the client sent, and each system's capture naming the server's own binary
// (never a shell around it), its SHA-256 and its version.
func checkRealRun(t *testing.T, a *archive.Archive, loaded int64, want map[string]struct{ binary, product, version string }) {
	t.Helper()
	for _, p := range a.Manifest.Phases {
		if p.Status != core.StatusOK {
			t.Errorf("%s %s: %s %s", p.System, p.Name, p.Status, p.Error)
		}
	}
	v := validations(t, a)
	for _, s := range a.Manifest.Systems {
		w, ok := want[s.Name]
		if !ok {
			continue
		}
		if load := v[s.Name+"/after load"]; !load.OK() || load.Counted != loaded {
			t.Errorf("%s after load: %+v", s.Name, load)
		}
		if rs := v[s.Name+"/after restart"]; !rs.OK() || rs.Counted != loaded || rs.Note != "" || len(rs.Samples) < 5 {
			t.Errorf("%s after restart: the data must be kept: %+v", s.Name, rs)
		}
		path, err := exec.LookPath(w.binary)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := core.FileSHA256(path)
		if err != nil {
			t.Fatal(err)
		}
		if s.Binary != path || s.BinarySHA256 != sum || len(s.Launch) == 0 || s.Launch[0] != path {
			t.Errorf("%s: binary %q sha256 %q launch %q; want the server's own %s (%s)", s.Name, s.Binary, s.BinarySHA256, s.Launch, path, sum)
		}
		if !strings.HasPrefix(s.Product, w.product) || !strings.HasPrefix(s.Version, w.version) {
			t.Errorf("%s: product %q version %q, want %s %s", s.Name, s.Product, s.Version, w.product, w.version)
		}
	}
	// The server-side counts: every line says the server counted what the
	// client sent (difference 0), and there is one for every system.
	rep, err := a.ReadFile(archive.ReportFile)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^\| (\S+) \| (\S+) \| \d+ \| (\S+) \| ([\d,]+) \| ([\d,]+) \| (.+) \|$`)
	seen := map[string]int{}
	for _, m := range line.FindAllStringSubmatch(string(rep), -1) {
		if _, ok := want[m[1]]; !ok {
			continue
		}
		seen[m[1]]++
		if m[6] != "0" {
			t.Errorf("server-side counts of %s %s %s: client %s, server %s, difference %s", m[1], m[2], m[3], m[4], m[5], m[6])
		}
	}
	for name := range want {
		if seen[name] < 8 {
			t.Errorf("%s: %d server-side count lines in the report", name, seen[name])
		}
	}
}

// The headline comparison with nothing configured but asd on PATH: cmpbench starts
// one asd itself (built-in system aerospike: its own config, work directories and
// a storage file sized from the suite), and the ycsb suite runs through, restart
// check included (a clean stop and a Community Edition cold start on the file).
func TestHeadlineOnRealAerospikeIntegration(t *testing.T) {
	provisiontest.Need(t, "asd")
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	r := realCLI(t, dir, "run", "--systems", "redis,aerospike", "--suite", "ycsb", "--scale", "0.001", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	checkRealRun(t, a, 100_000, map[string]struct{ binary, product, version string }{
		"aerospike": {"asd", "aerospike", "8.1."},
	})
	// Every op kind of YCSB A-D went to the real server and none failed.
	for _, ph := range []string{"C-max", "A-max", "B-max", "D-max"} {
		if rd := rows(a, "aerospike", ph)["READ"]; rd.Count == 0 || rd.Errors != 0 {
			t.Errorf("%s READ: %+v", ph, rd.Counts)
		}
	}
	if u := rows(a, "aerospike", "A-max")["UPDATE"]; u.Count == 0 || u.Errors != 0 {
		t.Errorf("A UPDATE (REPLACE_ONLY of loaded records): %+v", u.Counts)
	}
	if in := rows(a, "aerospike", "D-max")["INSERT"]; in.Count == 0 || in.Errors != 0 {
		t.Errorf("D INSERT (CREATE_ONLY of new records): %+v", in.Counts)
	}
	checkDriver(t, a, "aerospike", "driver=wire (the engine drives a socket per connection")
	// The audit reads Aerospike's namespace, and redis' restart check lost every
	// key: a proven durability mismatch, never "No mismatch found … same
	// durability" beside a row of —.
	audit := cli(t, dir, nil, "audit", a.Dir)
	for _, want := range []string{"- durability differs — redis: no persistence: every write lost on a restart; aerospike: storage-engine `device`, commit-to-device false",
		"| replication | `master`, no replica | replication-factor `1` |"} {
		if audit.code != 1 || !strings.Contains(audit.stdout, want) || strings.Contains(audit.stdout, "No mismatch") {
			t.Errorf("audit: exit %d, want 1 and %q:\n%s%s", audit.code, want, audit.stdout, audit.stderr)
		}
	}
	// The run removes what it started: no asd of this run is left.
	assertNoServerOf(t, dir)
}

// checkDriver checks that system's capture of its client's settings says how
// its operations went: want is the start of its driver line.
func checkDriver(t *testing.T, a *archive.Archive, system, want string) {
	t.Helper()
	b, err := a.ReadFile(archive.SystemsDir + "/" + system + "/client-policy.txt")
	if err != nil || !strings.Contains(string(b), "\n"+want) {
		t.Errorf("%s's client-policy capture lacks %q: %v\n%s", system, want, err, b)
	}
}

// The same on three asd in one cluster over loopback, replication factor 2: a
// count is the records, not their copies, and the cluster is restarted as a whole.
func TestClusterOnRealAerospikeIntegration(t *testing.T) {
	provisiontest.Need(t, "asd")
	dir := t.TempDir()
	r := realCLI(t, dir, "run", "--systems", "aerospike-cluster", "--suite", "ycsb", "--scale", "0.0002", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	checkRealRun(t, a, 20_000, map[string]struct{ binary, product, version string }{
		"aerospike-cluster": {"asd", "aerospike", "8.1."},
	})
	if s := a.Manifest.Systems[0]; len(s.Nodes) != 3 {
		t.Errorf("nodes %v", s.Nodes)
	}
	checkDriver(t, a, "aerospike-cluster", "driver=wire (the engine drives a socket per connection to each of the 3 nodes")
	// The audit reads the first node's configuration.
	if audit := cli(t, dir, nil, "audit", a.Dir); !strings.Contains(audit.stdout, "| replication | replication-factor `2` |") || !strings.Contains(audit.stdout, "| durability | storage-engine `device`") {
		t.Errorf("audit of the cluster: exit %d\n%s%s", audit.code, audit.stdout, audit.stderr)
	}
	assertNoServerOf(t, dir)
}

// A server that cannot start fails within its ready timeout with its own error
// line in the message, whether it exits (a bad setting) or runs without ever
// answering on its port; nothing it started is left behind.
func TestServerThatCannotStartSaysWhyIntegration(t *testing.T) {
	provisiontest.Need(t, "asd")
	systems, err := config.LoadSystems("", false)
	if err != nil {
		t.Fatal(err)
	}
	as, _ := systems.Lookup("aerospike")
	conf := as.Provision.Files["aerospike.conf"]
	indent := func(s string) string {
		return "          " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n          ")
	}
	bad := strings.Replace(conf, "proto-fd-max 15000", "proto-fd-max 15000\n  no-such-setting yes", 1)
	// The service listens on another port than the one cmpbench waits on.
	silent := strings.Replace(conf, "port {port}\n", "port {port:other}\n", 1) + "# cmpbench waits on {port}\n"
	for _, tc := range []struct {
		name, conf, want string
	}{
		{"a bad setting", bad, "CRITICAL (config): (cfg.c:1658) line 4 :: unknown config parameter name 'no-such-setting'"},
		{"never ready", silent, "did not become ready within its ready timeout (5s, provision.ready_timeout)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "cmpbench.yaml", `systems:
  broken:
    adapter: aerospike
    namespace: ycsb
    provision:
      command: [asd, --foreground, --config-file, "{dir}/aerospike.conf"]
      dirs: [work/smd, udf]
      ready_timeout: 5s
      files:
        aerospike.conf: |
`+indent(tc.conf)+"\n")
			start := time.Now()
			r := realCLI(t, dir, "run", "--systems", "broken", "--suite", "smoke", "--quiet")
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, want 1 and %q in:\n%s", r.code, tc.want, r.stderr)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("took %s with a 5 s ready timeout", took)
			}
			assertNoServerOf(t, dir)
		})
	}
}

// Without asd on PATH the built-in aerospike stops the run before anything
// starts, naming the binary and where to get it: bad input, exit 2.
func TestMissingAerospikeIsBadInputIntegration(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Dir(binary)
	for _, args := range [][]string{
		{"run", "--systems", "aerospike", "--suite", "smoke"},
		{"run", "--systems", "aerospike", "--suite", "smoke", "--dry-run"},
	} {
		r := cli(t, dir, []string{"PATH=" + bin}, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "asd is not on PATH") || !strings.Contains(r.stderr, "https://aerospike.com/download/server/") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "results")); len(entries) > 0 {
		t.Errorf("a run directory was made: %v", entries)
	}
}

// realCLI runs cmpbench in dir with its temporary directory, where the servers
// it starts keep their data, inside dir too: assertNoServerOf then knows them.
func realCLI(t *testing.T, dir string, args ...string) result {
	t.Helper()
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	return cli(t, dir, []string{"TMPDIR=" + tmp}, args...)
}

// assertNoServerOf fails when a process that realCLI started in dir (a server,
// whose data directory is below dir) still runs, or a file of its data is left,
// once cmpbench has exited.
func assertNoServerOf(t *testing.T, dir string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, dir) {
			t.Errorf("still running after cmpbench exited: %s (%s)", cmd, p)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) > 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}
