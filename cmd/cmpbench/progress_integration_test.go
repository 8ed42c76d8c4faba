package main

import (
	"bytes"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

var stamped = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ `)

// A run's progress as the CLI shows it: timestamped lines off a terminal, bars on
// one (a real pseudo-terminal), and with --quiet nothing on stderr and only the
// lines naming the archive and its report on stdout.
func TestProgressOfARunIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	args := []string{"run", "--systems", "redis", "--suite", "smoke", "--scale", "0.1"}

	r := cli(t, dir, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, l := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
		if !stamped.MatchString(l) {
			t.Errorf("a line without its time off a terminal: %q", l)
		}
	}
	for _, want := range []string{"Z cmpbench run ", "Z redis: estimate: ", "Z redis: load (", "; phase 1 of 3, run ETA ", "Z redis: rate-5000 ok in "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("no %q in\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "Archive: ") || !strings.Contains(r.stdout, "rate-5000") {
		t.Errorf("the tables and the archive's lines are not on stdout:\n%s", r.stdout)
	}

	q := cli(t, dir, nil, append(args, "--quiet")...)
	if q.code != 0 || q.stderr != "" {
		t.Errorf("--quiet: exit %d, stderr:\n%s", q.code, q.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(q.stdout, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "Run ") || !strings.HasPrefix(lines[1], "Archive: ") || !strings.HasPrefix(lines[2], "Report:  ") || !strings.HasPrefix(lines[3], "Page:    ") {
		t.Errorf("--quiet: stdout is not the four lines naming the run, its archive, report and page:\n%s", q.stdout)
	}
	archiveOf(t, q)

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	// Phases of 2 s, to see them going (intervals are of 1 s).
	cmd := exec.Command(binary, "run", "--systems", "redis", "--suite", "smoke", "--scale", "0.4")
	var stdout bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	screen, _ := io.ReadAll(ptmx) // until cmpbench, the terminal's last user, exits
	if err := cmd.Wait(); err != nil {
		t.Fatalf("on a terminal: %v\n%s", err, screen)
	}
	s := string(screen)
	for _, want := range []string{"run 1/3 phases", "ETA ", "redis closed-1:10", " ops/s, p99 GET ", " errors", "redis: rate-5000 ok in ", "run 3/3 phases", "ended after "} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q on the terminal:\n%s", want, s)
		}
	}
	if stamped.MatchString(s) {
		t.Errorf("timestamps on a terminal:\n%s", s)
	}
	if !strings.Contains(stdout.String(), "Archive: ") {
		t.Errorf("on a terminal, stdout lacks the archive:\n%s", stdout.String())
	}
}
