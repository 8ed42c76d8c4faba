package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

func TestUnwritableOutIsBadInputBeforeAnythingStarts(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	writeFile(t, dir, "not-a-dir", "a regular file")
	start := time.Now()
	r := cli(t, dir, nil, "--out", "not-a-dir/results", "run", "--systems", "redis", "--suite", "smoke")
	if r.code != 2 || !strings.Contains(r.stderr, "--out not-a-dir/results") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("took %s to refuse an unusable --out", took)
	}
	if strings.Contains(r.stderr, "started") {
		t.Fatalf("a server was started before --out was checked:\n%s", r.stderr)
	}
}

// gone waits up to 5 s for a process to end.
func gone(pid int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
		// A zombie is gone for our purpose: it holds no connection.
		if stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
			if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				return true
			}
		}
	}
	return false
}

// pendingDir is the in-progress directory of the only run under dir/results.
func pendingDir(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "results", ".*.partial"))
	if len(m) != 1 {
		t.Fatalf("in-progress directories: %v", m)
	}
	return m[0]
}

func manifestStatus(t *testing.T, dir string) core.RunStatus {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, archive.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m archive.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Status
}

func TestKilledRunLeavesNothingRunningAndRecoversIntegration(t *testing.T) {
	s, redis, plugin := midPhase(t)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.wait(t)
	if !gone(plugin) {
		t.Fatalf("the plugin (pid %d) outlived cmpbench", plugin)
	}
	if !gone(redis) {
		t.Fatalf("redis-server (pid %d) outlived cmpbench", redis)
	}
	dir := s.cmd.Dir
	pending := pendingDir(t, dir)
	if st := manifestStatus(t, pending); st != archive.StatusInProgress {
		t.Fatalf("the killed run's directory says %q", st)
	}
	if r := cli(t, dir, nil, "verify", pending); r.code == 0 || !strings.Contains(r.stderr, "cmpbench recover") {
		t.Fatalf("verify of an unfinished run: exit %d, %s", r.code, r.stderr)
	}

	r := cli(t, dir, nil, "recover", pending)
	if r.code != 0 {
		t.Fatalf("recover: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	final := strings.TrimSpace(strings.TrimPrefix(strings.Split(r.stdout[strings.Index(r.stdout, "Recovered: "):], "\n")[0], "Recovered: "))
	if v := cli(t, dir, nil, "verify", final); v.code != 0 {
		t.Fatalf("verify of the recovered archive: %s", v.stderr)
	}
	if rep := cli(t, dir, nil, "report", final); rep.code != 0 || !strings.Contains(rep.stdout, "byte-identical") {
		t.Fatalf("report of the recovered archive: exit %d\n%s%s", rep.code, rep.stdout, rep.stderr)
	}
	a, err := archive.Open(final)
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest.Status != core.RunInterrupted {
		t.Fatalf("recovered status %s", a.Manifest.Status)
	}
	if st, _ := phaseStatus(a, "redis", "load"); st != "ok" {
		t.Fatalf("the finished load phase: %s", st)
	}
	for _, p := range a.Manifest.Phases {
		if p.Name == "long" && (!p.Partial || p.Status != core.StatusInterrupted || p.Intervals == 0) {
			t.Fatalf("the phase cmpbench died in: %+v", p)
		}
	}
	if got := rows(a, "redis", "long")["GET"].Count; got == 0 {
		t.Fatal("the intervals of the phase cmpbench died in were lost")
	}
	rep, _ := a.ReadFile(archive.ReportFile)
	if !strings.Contains(string(rep), "recovered") {
		t.Fatalf("the report does not say the run was recovered:\n%s", rep)
	}
}

// Issue 25, bug 1: recover refuses the directory of a run still going (exit 2,
// naming its process) and leaves it alone: the run goes on to finish its own
// archive with every phase, and leaves no in-progress directory behind. It used to
// take the live run's spools, and the run then failed to keep its results.
func TestRecoverRefusesARunStillGoingIntegration(t *testing.T) {
	s, _, _ := midPhase(t)
	dir := s.cmd.Dir
	pending := pendingDir(t, dir)
	r := cli(t, dir, nil, "recover", pending)
	want := fmt.Sprintf("belongs to a run still going: cmpbench (pid %d) holds its lock", s.cmd.Process.Pid)
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("recover of a live run: exit %d, want 2 and %q:\n%s", r.code, want, r.stderr)
	}
	res := s.wait(t)
	if res.code != 0 {
		t.Fatalf("the live run: exit %d\n%s", res.code, res.stderr)
	}
	a := archiveOf(t, res)
	if a.Manifest.Status != core.RunComplete {
		t.Fatalf("the live run ended %s", a.Manifest.Status)
	}
	for _, ph := range []string{"load", "long", "after"} {
		if st, why := phaseStatus(a, "redis", ph); st != "ok" {
			t.Errorf("%s: %s %s", ph, st, why)
		}
	}
	if left := archive.InProgress(filepath.Join(dir, "results")); len(left) > 0 {
		t.Errorf("in-progress directories left: %v", left)
	}
	if locks, _ := filepath.Glob(filepath.Join(dir, "results", ".*.lock")); len(locks) > 0 {
		t.Errorf("lock files left: %v", locks)
	}
}

// startWithPipe runs the quick suite with stderr on a pipe the test controls.
func startWithPipe(t *testing.T) (cmd *exec.Cmd, stdout *bytes.Buffer, stderr *os.File, lines *bufio.Scanner) {
	t.Helper()
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	writeFile(t, dir, "quick.yaml", quickSuite)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout = &bytes.Buffer{}
	cmd = exec.Command(binary, "run", "--systems", "redis", "--suite", "quick.yaml")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stdout, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); r.Close() })
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "redis: long (") {
			time.Sleep(1500 * time.Millisecond)
			return cmd, stdout, r, sc
		}
	}
	t.Fatal("the long phase never started")
	return nil, nil, nil, nil
}

func TestHangupAndBrokenOutputEndTheRunAsInterruptIntegration(t *testing.T) {
	// SIGHUP stops the phase at once; a broken pipe is noticed at cmpbench's next
	// write to it, here the line that ends the phase, so the next phase is the one
	// that does not run.
	tests := []struct {
		name      string
		stop      func(cmd *exec.Cmd, stderr *os.File)
		stoppedIn string
	}{
		{"SIGHUP: the terminal closed", func(cmd *exec.Cmd, _ *os.File) { cmd.Process.Signal(syscall.SIGHUP) }, "long"},
		{"SIGPIPE: whoever read our output went away", func(_ *exec.Cmd, stderr *os.File) { stderr.Close() }, "after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stdout, stderr, _ := startWithPipe(t)
			redis, plugin := child(t, cmd.Process.Pid, "redis-server"), child(t, cmd.Process.Pid, "plugin serve resp")
			tc.stop(cmd, stderr)
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != 1 {
				t.Fatalf("exit %d (%v)\n%s", code, err, stdout)
			}
			a := archiveOf(t, result{stdout: stdout.String()})
			if a.Manifest.Status != core.RunInterrupted {
				t.Fatalf("status %s", a.Manifest.Status)
			}
			if st, _ := phaseStatus(a, "redis", tc.stoppedIn); st != "interrupted" && st != "skipped" {
				t.Fatalf("phase %s: %s", tc.stoppedIn, st)
			}
			if rows(a, "redis", "long")["GET"].Count == 0 {
				t.Fatal("the interrupted phase's measurements were lost")
			}
			if !gone(plugin) || !gone(redis) {
				t.Fatal("a plugin or server outlived the run")
			}
		})
	}
}

func TestFullDiskNeverClaimsCompleteIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", full).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", full).Run() })
	writeFile(t, dir, "quick.yaml", quickSuite)
	r := cli(t, dir, nil, "--out", filepath.Join(full, "results"), "run", "--systems", "redis", "--suite", "quick.yaml")
	if r.code != 1 || !strings.Contains(r.stderr, "no space left on device") || !strings.Contains(r.stderr, "cmpbench recover") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	entries, _ := os.ReadDir(filepath.Join(full, "results"))
	var pending string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".lock") {
			continue // the run's lock file, released when it exited
		}
		if !strings.HasSuffix(e.Name(), ".partial") {
			t.Fatalf("%s is under a final name", e.Name())
		}
		pending = filepath.Join(full, "results", e.Name())
		if st := manifestStatus(t, pending); st != archive.StatusInProgress {
			t.Fatalf("%s claims %q", e.Name(), st)
		}
	}
	// On the disk still full, recover fails as the machine's fault (exit 1, not
	// bad input) and loses nothing.
	if rec := cli(t, dir, nil, "recover", pending); rec.code != 1 || !strings.Contains(rec.stderr, "no space left on device") || !strings.Contains(rec.stderr, "free space") {
		t.Fatalf("recover on a full disk: exit %d\n%s", rec.code, rec.stderr)
	}
	// Issue 25, bug 5: with room again, recover makes an archive that verifies
	// (the capture that a full disk cut short used to be left out of the
	// manifest and fail verify).
	if out, err := exec.Command("mount", "-o", "remount,size=64m", full).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	rec := cli(t, dir, nil, "recover", pending)
	if rec.code != 0 {
		t.Fatalf("recover after the disk had room again: exit %d\n%s", rec.code, rec.stderr)
	}
	final := strings.TrimSpace(strings.TrimPrefix(strings.Split(rec.stdout[strings.Index(rec.stdout, "Recovered: "):], "\n")[0], "Recovered: "))
	if v := cli(t, dir, nil, "verify", final); v.code != 0 {
		t.Fatalf("verify of the recovered archive: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
}
