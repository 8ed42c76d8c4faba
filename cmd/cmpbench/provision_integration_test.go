package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// nodePid is the process of node n of a system a run started with
// TMPDIR=dir/tmp: the one working in the node's directory, or naming it.
func nodePid(t *testing.T, dir, system string, n int) int {
	t.Helper()
	nodes, _ := filepath.Glob(filepath.Join(dir, "tmp", "cmpbench-*", system, fmt.Sprintf("node%d", n)))
	if len(nodes) != 1 {
		t.Fatalf("the directories of node %d of %s: %v", n, system, nodes)
	}
	node := nodes[0]
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		cwd, _ := os.Readlink(p + "/cwd")
		cmd, _ := os.ReadFile(p + "/cmdline")
		if cwd == node || strings.Contains(string(cmd), node+"/") {
			return pid
		}
	}
	t.Fatalf("no process of %s", node)
	return 0
}

// pidRuns reports whether process pid runs (a zombie does not).
func pidRuns(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	state := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(state) > 0 && state[0] != "Z" && state[0] != "X"
}

// nodeLostSuite loads a little data and reads it for 6 s: its last phase, during
// which the test kills a node.
const nodeLostSuite = `name: lost
defaults: {connections: 4, memtier: {key_max: 2000, value_size: 64}}
phases:
  - {name: load, kind: load, duration: 30s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: long, duration: 6s, memtier: {ratio: "1:10"}}
`

// checkNodeLost runs the suite on system, kills node 1 by its pid a second into
// the last phase, and checks that the phase failed at once naming the node and
// keeping what it measured, that the run failed (exit 1), and that nothing the
// run started is left.
func checkNodeLost(t *testing.T, dir, system string) {
	t.Helper()
	writeFile(t, dir, "lost.yaml", nodeLostSuite)
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	run := startCLI(t, dir, []string{"TMPDIR=" + tmp}, system+": long (", "run", "--systems", system, "--suite", "lost.yaml")
	time.Sleep(time.Second)
	pid := nodePid(t, dir, system, 1)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := run.wait(t)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (a node of the cluster was lost)\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	if a.Manifest.Status != "failed" {
		t.Errorf("run %s, want failed", a.Manifest.Status)
	}
	st, msg := phaseStatus(a, system, "long")
	if st != "failed" || !strings.Contains(msg, "server exited during the phase (") || !strings.Contains(msg, "(node1 of 3) was killed by signal 9 (killed)") ||
		!strings.Contains(msg, "the end of its log:") {
		t.Errorf("phase long: %s %q", st, msg)
	}
	for _, p := range a.Manifest.Phases {
		if p.Name == "long" && time.Duration(p.ElapsedNs) > 4*time.Second {
			t.Errorf("phase long ran %s of its 6 s: it was not stopped when its node was lost", time.Duration(p.ElapsedNs))
		}
	}
	if row := rows(a, system, "long")["GET"]; row.Count == 0 {
		t.Errorf("what phase long measured before the loss is gone: GET %+v", row.Counts)
	}
	assertNoServerOf(t, dir)
}

// The loss of a node of a cluster cmpbench started fails the phase during
// which it happened, even when it is the run's last phase and the client goes
// on being served by the other nodes: three redis-servers in a cluster.
func TestRedisNodeLostFailsThePhaseIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	provisiontest.Need(t, "redis-cli")
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", `systems:
  shards:
    adapter: resp
    cluster: true
    provision:
      nodes: 3
      command: [redis-server, --port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, "", --appendonly, "no",
                --cluster-enabled, "yes", --cluster-config-file, nodes.conf]
      setup: [redis-cli, --cluster, create, "{endpoints}", --cluster-replicas, "0", --cluster-yes]
`)
	checkNodeLost(t, dir, "shards")
}

// The same on the built-in aerospike-cluster (three asd, replication factor 2),
// whose client, served by the two nodes left, used to end such a phase ok.
func TestAerospikeNodeLostFailsThePhaseIntegration(t *testing.T) {
	provisiontest.Need(t, "asd")
	checkNodeLost(t, t.TempDir(), "aerospike-cluster")
}

var leftBehind = regexp.MustCompile(`leaving pid (\d+) \(redis-server, listening on (127\.0\.0\.1:\d+)\)`)

// A server that daemonizes is refused: at --dry-run when its command line says
// so (exit 2), at start-up when it does it anyway (a wrapper script): the
// system does not start, the line says why, and no process of it remains —
// neither the one cmpbench started nor the daemon, found by its port.
func TestDaemonizingServerIsRefusedIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	script := writeFile(t, dir, "start-redis.sh", fmt.Sprintf("#!/bin/sh\nexec redis-server --port \"$1\" --bind 127.0.0.1 --daemonize yes --dir %q --save ''\n", t.TempDir()))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "cmpbench.yaml", `systems:
  said:
    adapter: resp
    provision:
      command: [redis-server, --port, "{port}", --daemonize, "yes"]
`)
	r := cli(t, dir, nil, "run", "--systems", "said", "--suite", "smoke", "--dry-run")
	if r.code != 2 || !strings.Contains(r.stderr, `cmpbench.yaml:5: system "said": provision.command has --daemonize yes: a server cmpbench starts must stay in the foreground`) {
		t.Errorf("--dry-run of a command that says --daemonize yes: exit %d\n%s", r.code, r.stderr)
	}
	// A wrapper script hides it from that check: the run finds it out.
	writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf("systems:\n  hidden:\n    adapter: resp\n    provision:\n      command: [%q, \"{port}\"]\n", script))
	r = realCLI(t, dir, "run", "--systems", "hidden", "--suite", "smoke", "--scale", "0.01")
	if r.code != 1 || !strings.Contains(r.stderr, "the system did not start: the server daemonized during start-up: start-redis.sh at 127.0.0.1:") ||
		!strings.Contains(r.stderr, "exited with status 0, leaving pid ") || !strings.Contains(r.stderr, "listening on 127.0.0.1:") {
		t.Fatalf("a server that daemonized: exit %d\n%s", r.code, r.stderr)
	}
	m := leftBehind.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no pid named:\n%s", r.stderr)
	}
	pid, _ := strconv.Atoi(m[1])
	defer syscall.Kill(pid, syscall.SIGKILL) // should the test fail, nothing is left either
	if pidRuns(pid) {
		t.Errorf("the daemon, pid %d, still runs after cmpbench exited", pid)
	}
	if c, err := net.DialTimeout("tcp", m[2], time.Second); err == nil {
		c.Close()
		t.Errorf("something still answers on %s, the port cmpbench chose", m[2])
	}
	if !strings.Contains(r.stderr, fmt.Sprintf("stopped pid %d (redis-server", pid)) {
		t.Errorf("cmpbench does not say it stopped pid %d:\n%s", pid, r.stderr)
	}
	assertNoServerOf(t, dir)
}

// A command that prints something else and exits with status 0 during start-up
// is described as that, quoting what it printed.
func TestStartupExitWithStatus0SaysWhatHappenedIntegration(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", `systems:
  junk:
    adapter: resp
    provision:
      command: [sh, -c, "echo hello garbage; echo more junk; exit 0", "{port}"]
`)
	r := realCLI(t, dir, "run", "--systems", "junk", "--suite", "smoke", "--scale", "0.01")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"exited with status 0 during start-up, before answering on its port", "hello garbage", "more junk"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the start-up failure lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "ended)") {
		t.Errorf("still the old line:\n%s", r.stderr)
	}
	assertNoServerOf(t, dir)
}
