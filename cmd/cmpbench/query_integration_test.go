package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// The example examples/query-archive runs its DuckDB queries on the archive of a
// real run: npm ci of its package-lock.json in a copy of it, then node query.mjs.
// Its summary has every summary row, its timeline every interval at its time of
// day beside the server sample of that time, and the client's samples are there.
func TestQueryArchiveExampleIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	var missing []string
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Skipf("examples/query-archive needs Node.js: %s not on PATH", strings.Join(missing, " and "))
	}
	dir := t.TempDir()
	// Phases of 2 s with the server sampled every second, for a timeline to join.
	r := cli(t, dir, nil, "run", "--systems", "redis", "--suite", "smoke", "--scale", "0.4", "--stats-interval", "1s", "--quiet")
	a := archiveOf(t, r)

	ex := filepath.Join(dir, "query-archive")
	if err := os.Mkdir(ex, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"package.json", "package-lock.json", "query.mjs"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "query-archive", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, ex, f, string(b))
	}
	run := func(timeout time.Duration, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = ex
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(5*time.Minute, "npm", "ci", "--no-audit", "--no-fund")
	out := run(time.Minute, "node", "query.mjs", a.Dir)

	for _, s := range a.Summary {
		row := fmt.Sprintf(`(?m)^%s\s+%s\s+%d\s+%s\s+%d\s+%d\s`, s.System, regexp.QuoteMeta(s.Phase), s.Repetition, s.Op, s.Count, int64(s.Throughput+0.5))
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("the summary lacks %s %s %s (count %d, %.0f ops/s):\n%s", s.System, s.Phase, s.Op, s.Count, s.Throughput, out)
		}
	}
	ivs, err := a.Intervals()
	if err != nil {
		t.Fatal(err)
	}
	intervals := map[string]bool{}
	for _, iv := range ivs {
		intervals[fmt.Sprint(iv.System, iv.PhaseIndex, iv.Repetition, iv.Interval)] = true
	}
	if want := fmt.Sprintf("Intervals over time, with the server stats sampled by then (%d rows)", len(intervals)); !strings.Contains(out, want) {
		t.Errorf("no %q in\n%s", want, out)
	}
	// The first interval of each phase starts when the manifest says the phase
	// started; the server sample joined to it was taken by the interval's end.
	for _, p := range a.Manifest.Phases {
		row := fmt.Sprintf(`(?m)^%s\s+%s\s+0\s+%s\s+\d+\s+\d+\s+[\d.]+\s+\d+\s+(\d\d:\d\d:\d\d\.\d{3})\s`,
			p.System, regexp.QuoteMeta(p.Name), regexp.QuoteMeta(p.Started.UTC().Format("15:04:05.000")))
		m := regexp.MustCompile(row).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("no first interval of %s starting at %s with a server sample:\n%s", p.Name, p.Started.UTC().Format("15:04:05.000"), out)
			continue
		}
		if sampled, _ := time.Parse("15:04:05.000", m[1]); sampled.Sub(mustClock(t, p.Started)) > time.Second {
			t.Errorf("%s: the server sample joined to its first interval is from %s, after the interval", p.Name, m[1])
		}
	}
	for _, want := range []string{"Summary per system, phase and op (5 rows)", "Client CPU and memory per phase", " cmpbench ", " plugin "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// mustClock is t's time of day in UTC, to the millisecond, on day zero.
func mustClock(t *testing.T, at time.Time) time.Time {
	c, err := time.Parse("15:04:05.000", at.UTC().Format("15:04:05.000"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
