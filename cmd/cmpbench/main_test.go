package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
)

// The tests run the real cmpbench binary, built once, so that built-in adapters cross
// the plugin boundary exactly as in production (self-exec), and build the example
// third-party plugin the same way a user would.
var (
	binary    string
	pluginDir string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cmpbench-test-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "cmpbench")
	pluginDir = filepath.Join(dir, "plugins.d")
	for _, b := range [][]string{
		{"build", "-o", binary, "."},
		{"build", "-o", filepath.Join(pluginDir, "cmpbench-adapter-memcached"), "../../plugins/sdk/examples/memcached"},
	} {
		cmd := exec.Command("go", b...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building test binaries:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// cli runs cmpbench in dir with args and extra environment.
func cli(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

var archiveLine = regexp.MustCompile(`(?m)^Archive: (.+)$`)

func archiveOf(t *testing.T, r result) *archive.Archive {
	t.Helper()
	m := archiveLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no archive path printed (exit %d)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if errs := archive.Verify(m[1]); len(errs) > 0 {
		t.Fatalf("archive does not verify: %v", errs)
	}
	a, err := archive.Open(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// writeRedisSystem writes dir's cmpbench.yaml: one system, r, the
// redis-server at port, disposable.
func writeRedisSystem(t *testing.T, dir string, port int) {
	t.Helper()
	writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf("systems:\n  r:\n    adapter: resp\n    endpoint: 127.0.0.1:%d\n    disposable: true\n", port))
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func rows(a *archive.Archive, system, phase string) map[string]archive.SummaryRow {
	out := map[string]archive.SummaryRow{}
	for _, r := range a.Summary {
		if r.System == system && r.Phase == phase {
			out[r.Op] = r
		}
	}
	return out
}

func phaseStatus(a *archive.Archive, system, phase string) (string, string) {
	for _, p := range a.Manifest.Phases {
		if p.System == system && p.Name == phase {
			return string(p.Status), p.Error
		}
	}
	return "missing", ""
}

// started runs cmpbench in the background and returns once the phase has started.
type started struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	lines  chan string
}

func startCLI(t *testing.T, dir string, env []string, waitFor string, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(binary, args...), lines: make(chan string, 1000)}
	s.cmd.Dir = dir
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stdout = &s.stdout
	pr, pw := io.Pipe()
	s.cmd.Stderr = pw
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.stderr.WriteString(sc.Text() + "\n")
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
		close(s.lines)
	}()
	t.Cleanup(func() { s.cmd.Process.Kill(); pw.Close() })
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("cmpbench ended before %q:\n%s", waitFor, s.stderr.String())
			}
			if strings.Contains(l, waitFor) {
				return s
			}
		case <-deadline:
			t.Fatalf("no %q within 60 s:\n%s", waitFor, s.stderr.String())
		}
	}
}

func (s *started) wait(t *testing.T) result {
	t.Helper()
	err := s.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	s.cmd.Stderr.(*io.PipeWriter).Close()
	for range s.lines {
	}
	return result{s.stdout.String(), s.stderr.String(), code}
}

// child finds the process below pid whose command line contains want.
func child(t *testing.T, pid int, want string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), want) {
			return cpid
		}
	}
	t.Fatalf("no child of %d runs %q", pid, want)
	return 0
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// checkPage opens the archive's report.html in headless Chromium as a reader
// would, fails t for a console error, a request beyond the page, a chart that
// did not draw or a page wider than a laptop, keeps a screenshot of its summary
// as the artifact named name, and returns its charts' data.
func checkPage(t *testing.T, a *archive.Archive, name string) []browsertest.Spec {
	t.Helper()
	return checkPageFile(t, filepath.Join(a.Dir, report.HTMLFile), name)
}

// checkPageFile is checkPage for any of cmpbench's pages (compare --html's).
func checkPageFile(t *testing.T, file, name string) []browsertest.Spec {
	t.Helper()
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p := browsertest.Open(t, file, "#summary", browsertest.ArtifactPath(t, "report-summary-"+name+".png"))
	p.Check(t, file)
	if len(p.Charts) == 0 {
		t.Errorf("%s draws no chart", file)
	}
	specs, err := browsertest.Specs(page)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return specs
}
