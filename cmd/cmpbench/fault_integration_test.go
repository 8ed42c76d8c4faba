package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// redisAt runs a redis-server without persistence on port (0: a free one), extra
// arguments last, and returns the port and the process; the test stops it.
func redisAt(t *testing.T, port int, extra ...string) (int, *exec.Cmd) {
	t.Helper()
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, extra...)
	cmd := exec.Command("redis-server", args...)
	// A process group of its own: a child it forked (BGREWRITEAOF, BGSAVE)
	// writes into the test's directory, and must be gone, not only the server,
	// before that directory is removed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		_ = cmd.Wait()
		for deadline := time.Now().Add(5 * time.Second); syscall.Kill(-pgid, 0) == nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	})
	for range 100 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return port, cmd
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("redis-server on port %d did not start", port)
	return 0, nil
}

// redisDo sends inline commands and returns their one-line replies.
func redisDo(t *testing.T, port int, cmds ...string) []string {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	var out []string
	for _, cmd := range cmds {
		fmt.Fprintf(c, "%s\r\n", cmd)
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "$") && !strings.HasPrefix(line, "$-1") {
			line, _ = rd.ReadString('\n')
		}
		out = append(out, strings.TrimSpace(line))
	}
	return out
}

// The fault matrix: what a user sees when the server or the plugin fails under a
// run, when a load cannot fit, and when the target holds data that is not the
// run's own: the status of each phase, the exit code, and the report's caveat.
func TestFaultMatrixIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	const slowLoad = `name: quick
defaults: {connections: 4, memtier: {key_max: 20000, value_size: 64}}
phases:
  - {name: load, kind: load, rate: 2000, duration: 60s, validate: true, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: long, duration: 6s, memtier: {ratio: "1:10"}}
`
	type phase struct{ status, msg string }
	for _, tc := range []struct {
		name   string
		suite  string
		oom    bool
		setup  func(t *testing.T, port int)
		during string // the progress line after which fault runs
		fault  func(t *testing.T, run *started, port int, srv *exec.Cmd)
		phases map[string]phase
		caveat string
		report string // more the report must say
	}{
		{
			name: "server killed", suite: quickSuite, during: "r: long (",
			fault:  func(t *testing.T, _ *started, _ int, srv *exec.Cmd) { _ = srv.Process.Kill() },
			phases: map[string]phase{"load": {"ok", ""}, "long": {"failed", "unreachable"}, "after": {"failed", ""}},
			caveat: "r, long ended failed:",
		},
		{
			name: "server killed and restarted", suite: quickSuite, during: "r: long (",
			fault: func(t *testing.T, _ *started, port int, srv *exec.Cmd) {
				_ = srv.Process.Kill()
				time.Sleep(700 * time.Millisecond)
				redisAt(t, port)
			},
			phases: map[string]phase{"load": {"ok", ""}, "long": {"failed", "the server restarted during the phase (instance "},
				"after": {"skipped", `the server restarted during "long" (instance `}},
			caveat: "r, after ended skipped: `the server restarted during \"long\" (instance ",
			report: "| — | not comparable: the server restarted during the phase (`instance ",
		},
		{
			name: "OOM during the load", suite: slowLoad, oom: true,
			phases: map[string]phase{"load": {"failed", "writes failed"}, "long": {"skipped", `the load "load" failed`}},
			caveat: "r, long ended skipped: `the load \"load\" failed",
		},
		{
			name: "plugin killed during the load", suite: slowLoad, during: "r: load (",
			fault: func(t *testing.T, run *started, _ int, _ *exec.Cmd) {
				time.Sleep(500 * time.Millisecond)
				_ = syscall.Kill(child(t, run.cmd.Process.Pid, "plugin serve resp"), syscall.SIGKILL)
			},
			phases: map[string]phase{"load": {"failed", "plugin process exited"}, "long": {"skipped", `the load "load" failed`}},
			caveat: "r, long ended skipped: `the load \"load\" failed",
		},
		{
			name: "a target holding data not the run's", suite: `name: sets
defaults: {connections: 2, memtier: {key_max: 100, value_size: 8}}
phases:
  - {name: sets, duration: 1s, memtier: {ratio: "1:0"}}
`,
			setup: func(t *testing.T, port int) {
				redisDo(t, port, "SET precious:1 one", "SET precious:2 two", "SET precious:3 three", "SET precious:4 four", "SET precious:5 five")
			},
			phases: map[string]phase{"sets": {"failed", "refusing to write: r holds 5 keys this run did not write"}},
			caveat: "r, sets ended failed: `refusing to write",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, srv := redisAt(t, 0)
			if tc.oom {
				redisDo(t, port, "CONFIG SET maxmemory 2mb", "CONFIG SET maxmemory-policy noeviction")
			}
			if tc.setup != nil {
				tc.setup(t, port)
			}
			dir := t.TempDir()
			writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf("systems:\n  r:\n    adapter: resp\n    endpoint: 127.0.0.1:%d\n", port))
			writeFile(t, dir, "s.yaml", tc.suite)
			var r result
			if tc.fault != nil {
				run := startCLI(t, dir, nil, tc.during, "run", "--systems", "r", "--suite", "s.yaml")
				time.Sleep(1500 * time.Millisecond)
				tc.fault(t, run, port, srv)
				r = run.wait(t)
			} else {
				r = cli(t, dir, nil, "run", "--systems", "r", "--suite", "s.yaml")
			}
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
			}
			a := archiveOf(t, r)
			if a.Manifest.Status != "failed" {
				t.Errorf("run status %s", a.Manifest.Status)
			}
			for name, want := range tc.phases {
				if st, msg := phaseStatus(a, "r", name); st != want.status || !strings.Contains(msg, want.msg) {
					t.Errorf("phase %s: %s %q, want %s %q\n%s", name, st, msg, want.status, want.msg, r.stderr)
				}
			}
			rep, err := a.ReadFile(archive.ReportFile)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(rep), tc.caveat) || !strings.Contains(string(rep), tc.report) {
				t.Errorf("the report lacks %q or %q:\n%s", tc.caveat, tc.report, rep)
			}
			if strings.Contains(string(rep), "| **-") {
				t.Errorf("the report sets a count the server lost against the client's:\n%s", rep)
			}
			if tc.setup != nil {
				if got := redisDo(t, port, "GET precious:1", "DBSIZE"); got[0] != "one" || got[1] != ":5" {
					t.Errorf("the target's own data changed: %q", got)
				}
			}
		})
	}
}

// What a user reads when a system cannot be reached, or a phase is too short to say
// something: the cause, not a timeout or an impossible number.
func TestMessagesSayWhyIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	port, _ := redisAt(t, 0)
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf(`systems:
  plain:
    adapter: resp
    endpoint: 127.0.0.1:%d
  tlsplain:
    adapter: resp
    endpoint: 127.0.0.1:%d
    tls: {enabled: true, insecure_skip_verify: true}
  down:
    adapter: resp
    endpoint: 127.0.0.1:1
`, port, port))
	writeFile(t, dir, "s.yaml", `name: s
phases:
  - {name: load, kind: load, duration: 10s, memtier: {ratio: "1:0", key_pattern: P, key_max: 100}}
  - {name: warm, kind: warmup, duration: 40ms, memtier: {ratio: "0:1", key_max: 100}}
`)
	r := cli(t, dir, nil, "run", "--systems", "plain,tlsplain,down", "--suite", "s.yaml")
	for _, want := range []string{
		"plain: warm ok in ", ") to measure the client's CPU use", "; too short (",
		"tlsplain: load failed, did not run: the system did not start: cannot open tlsplain at 127.0.0.1:",
		"no answer to the TLS handshake within", "is the server serving TLS on this port?",
		"down: load failed, did not run: the system did not start: cannot open down at 127.0.0.1:1 (tried for ",
		"connection refused: nothing accepts connections there; is the server running, and on this port?",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the output lacks %q:\n%s", want, r.stderr)
		}
	}
	a := archiveOf(t, r)
	for _, p := range a.Manifest.Phases {
		if p.System == "plain" && p.Name == "warm" && (p.ClientCores != 0 || p.Host != nil) {
			t.Errorf("a 40 ms phase reports %.2f client cores, host load %+v", p.ClientCores, p.Host)
		}
	}
}

// The restart check of a system cmpbench does not start: cmpbench asks for the
// restart, notices it from the server's uptime, waits until the server is ready and
// validates again; a server that does not restart in time fails the check.
func TestExternalRestartCheckIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	for _, restart := range []bool{true, false} {
		t.Run(fmt.Sprintf("restarted %v", restart), func(t *testing.T) {
			data := t.TempDir()
			aof := []string{"--appendonly", "yes", "--appendfsync", "always", "--dir", data}
			port, srv := redisAt(t, 0, aof...)
			dir := t.TempDir()
			writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf("systems:\n  r:\n    adapter: resp\n    endpoint: 127.0.0.1:%d\n    restart_wait: 8s\n", port))
			writeFile(t, dir, "s.yaml", `name: s
defaults: {connections: 4, memtier: {key_max: 2000, value_size: 16}}
phases:
  - {name: load, kind: load, duration: 30s, validate: true, restart: true, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: reads, duration: 1s, memtier: {ratio: "0:1"}}
`)
			run := startCLI(t, dir, nil, "restart the server now", "run", "--systems", "r", "--suite", "s.yaml")
			if restart {
				time.Sleep(1500 * time.Millisecond) // uptime is in seconds
				c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(c, "SHUTDOWN\r\n") // no reply: the server closes the connection as it exits
				_, _ = io.ReadAll(c)
				c.Close()
				_ = srv.Wait()
				redisAt(t, port, aof...)
			}
			r := run.wait(t)
			a := archiveOf(t, r)
			vals, err := a.Validations()
			if err != nil {
				t.Fatal(err)
			}
			var after *core.Validation
			for i := range vals {
				if vals[i].Point == "after restart" {
					after = &vals[i]
				}
			}
			switch {
			case restart && (r.code != 0 || after == nil || !after.OK() || after.Counted != 2000):
				t.Fatalf("exit %d, validation after restart %+v\n%s", r.code, after, r.stderr)
			case !restart && (r.code != 1 || !strings.Contains(r.stderr, "did not restart within 8s (restart_wait)")):
				t.Fatalf("exit %d without a restart:\n%s", r.code, r.stderr)
			}
			if restart && !strings.Contains(r.stderr, "r: restart check: the server restarted") {
				t.Errorf("progress does not say the restart was seen:\n%s", r.stderr)
			}
		})
	}
}
