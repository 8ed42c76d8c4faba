package main

import (
	"regexp"
	"strings"
	"testing"
)

// A dry run prints each system's estimate after the plan, and what it counts.
func TestDryRunPrintsEstimate(t *testing.T) {
	r := cli(t, t.TempDir(), nil, "run", "--systems", "redis,redis-aof", "--suite", "memtier", "--scale", "0.01", "--dry-run")
	for _, want := range []string{
		"\nEstimate per system:\n",
		"  redis: time 21s + 10,000 ops at the system's rate (at most 30m21s); 10,000 ops + as many as the system serves in 3 closed-loop phases; writes 25.7 MB\n",
		"  redis-aof: time 21s + 10,000 ops at the system's rate (at most 30m21s);",
		"  writes: the data the phases add to the server as sent",
	} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("dry run: exit %d, no %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
}

// A run prints the same estimate at its start, before any system starts: here one
// whose server exits at once (false), so that nothing runs. Smoke at --scale 0.1:
// 1000 keys of 3+4 + 256 B, 1000 + 5000/s x 1 s ops, 1+1 s + 3x3 s to 60 s more
// for the load.
func TestRunStartPrintsEstimate(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", "systems:\n  x: {adapter: resp, provision: {command: [false, --port, \"{port}\"]}}\n")
	r := cli(t, dir, nil, "run", "--systems", "x", "--suite", "smoke", "--scale", "0.1")
	want := "\nx: estimate: time 11s + 1,000 ops at the system's rate (at most 1m11s); 6,000 ops + as many as the system serves in 1 closed-loop phase; writes 263.0 kB\nx: load failed"
	// Off a terminal every line starts with its time.
	stderr := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ `).ReplaceAllString(r.stderr, "")
	if r.code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, no %q in\n%s", r.code, want, r.stderr)
	}
}
