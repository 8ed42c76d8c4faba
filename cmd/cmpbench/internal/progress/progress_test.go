package progress

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// A run of two phases on one system: a load of 10,000 keys (count-bounded, 60 s at
// most) and 30 s of closed loop (time-bounded).
const suiteYAML = `name: two
defaults:
  connections: 4
  memtier: {key_max: 10000, value_size: 16}
phases:
  - {name: load, kind: load, duration: 60s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: mix, kind: measured, duration: 30s, memtier: {ratio: "1:10", key_pattern: "R:R"}}
`

func testPlan(t *testing.T, systems ...string) *plan.Plan {
	t.Helper()
	if len(systems) == 0 {
		systems = []string{"redis"}
	}
	s, err := plan.ParseSuite("two.yaml", []byte(suiteYAML))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(s, systems, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clock is a test's clock, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// interval is one second of a phase: ok successful ops of op, errs errors, p99.
func interval(i int, op core.OpKind, ok, errs int64, p99 time.Duration) core.IntervalReport {
	o := core.OpInterval{Op: op, OK: ok, Response: core.Latency{Count: ok, P99: int64(p99)}}
	o.Errors[core.ErrClassTimeout] = errs
	return core.IntervalReport{Index: i, Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Ops: []core.OpInterval{o}}
}

// drive hands the observer what the runner would in a run of testPlan, as far as
// the middle of the second phase (pause, if not nil, is called there), and to its
// end.
func drive(t *testing.T, p *Progress, pl *plan.Plan, c *clock, pause func()) {
	t.Helper()
	load, mix := pl.Steps[0], pl.Steps[1]
	p.Note("cmpbench run x: suite two, systems redis, 2 phases")
	p.SystemStarted(core.SystemRun{Name: "redis", Endpoint: "127.0.0.1:6379", Capture: core.Capture{Product: "redis", Version: "7.0.15"}}, 0)
	p.PhaseStarted(load, 1)
	c.add(time.Second)
	p.Interval(load, interval(0, core.OpSet, 5000, 0, 400*time.Microsecond))
	c.add(time.Second)
	p.Interval(load, interval(1, core.OpSet, 5000, 0, 400*time.Microsecond))
	end := core.PhaseEnd{Status: core.StatusOK, Elapsed: 2 * time.Second}
	p.PhaseEnded(load, &core.PhaseRun{System: "redis", Spec: load.Spec, End: end, Intervals: 2,
		Totals: []core.OpInterval{{Op: core.OpSet, OK: 10000, Response: core.Latency{Count: 10000, P99: 400_000}}}})
	p.Warn("redis: server stats: connection reset")
	c.add(time.Second) // sampling the server's stats, opening the mix's connections
	p.PhaseStarted(mix, 1)
	for i := range 30 {
		c.add(time.Second)
		p.Interval(mix, interval(i, core.OpGet, 76136, 2, 375*time.Microsecond))
		if i == 14 && pause != nil {
			pause()
		}
	}
	end = core.PhaseEnd{Status: core.StatusFailed, Elapsed: 30 * time.Second, Error: "the server restarted during the phase"}
	totals := core.OpInterval{Op: core.OpGet, OK: 30 * 76136, Response: core.Latency{Count: 30 * 76136, P99: 375_000}}
	totals.Errors[core.ErrClassTimeout] = 60
	p.PhaseEnded(mix, &core.PhaseRun{System: "redis", Spec: mix.Spec, End: end, Intervals: 30, Totals: []core.OpInterval{totals}})
	p.Close()
}

var stampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ `)

// Off a terminal: a timestamped line per phase start and end, and one every 10 s of
// a phase with the run's ETA; no escape sequences.
func TestProgressPlainLines(t *testing.T) {
	pl := testPlan(t)
	c := &clock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	p := New(&buf, Options{Plan: pl, Redactor: redact.New(), Now: c.now})
	drive(t, p, pl, c, nil)
	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines {
		if !stampRE.MatchString(l) {
			t.Errorf("line without a timestamp: %q", l)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape sequences off a terminal:\n%q", out)
	}
	for _, want := range []string{
		"2026-12-03T10:00:00Z redis: load (memtier 1:0 P:P kv_[1..10000] 16B; closed loop, 4 conns; 10000 ops or 1m0s); phase 1 of 2, run ETA 36s + 10,000 ops at rates not yet measured (at most 1m36s)\n",
		"2026-12-03T10:00:02Z redis: load ok in 2s: 10,000 ops ok (5,000 ops/s), 0 errors; SET p99 0.400 ms\n",
		"2026-12-03T10:00:02Z warning: redis: server stats: connection reset\n",
		// 30 s of the mix and the 1 s around a phase the load measured.
		"2026-12-03T10:00:03Z redis: mix (memtier 1:10 R:R kv_[1..10000] 16B; closed loop, 4 conns; 30s); phase 2 of 2, run ETA 31s\n",
		"2026-12-03T10:00:13Z   redis mix: 10s of 30s, 76,136 ops/s, p99 GET 0.375 ms, 20 errors; run: 1 of 2 phases done, ETA 21s\n",
		"2026-12-03T10:00:23Z   redis mix: 20s of 30s, 76,136 ops/s, p99 GET 0.375 ms, 40 errors; run: 1 of 2 phases done, ETA 11s\n",
		"2026-12-03T10:00:33Z redis: mix failed in 30s: 2,284,080 ops ok (76,136 ops/s), 60 errors; GET p99 0.375 ms; the server restarted during the phase\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// Start and end of each phase, the periodic lines at 10, 20 and 30 s, a note,
	// the system and the warning: 10 lines, not one per interval.
	if len(lines) != 10 {
		t.Errorf("%d lines, want 10:\n%s", len(lines), out)
	}
}

// The ETA is the phases' bounds only until a rate is measured: the load's rate
// so far times the rest of it, and once it ended, the next system's load at that
// rate (the only one measured), each phase with the overhead the run measured.
func TestProgressETAFromMeasuredRates(t *testing.T) {
	pl := testPlan(t, "a", "b")
	c := &clock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	p := New(io.Discard, Options{Plan: pl, Now: c.now})
	load := pl.Steps[0]
	p.SystemStarted(core.SystemRun{Name: "a"}, 0)
	c.add(3 * time.Second) // a's server starting
	p.PhaseStarted(load, 1)
	eta := p.ETA // as the live page asks it (issue 47)
	// a's load (at most 60 s), a's mix, b's load and mix; 3 s around each.
	if got, want := eta(), "1m12s + 20,000 ops at rates not yet measured (at most 3m12s)"; got != want {
		t.Errorf("before a rate: ETA %s, want %s", got, want)
	}
	c.add(time.Second)
	p.Interval(load, interval(0, core.OpSet, 2500, 0, time.Millisecond))
	// 2,500 ops/s: 3 s of a's load and 4 of b's, 30 s of each mix, 3 s around each.
	if got, want := eta(), "1m19s"; got != want {
		t.Errorf("1 s into the load: ETA %s, want %s", got, want)
	}
	for i := 1; i < 4; i++ {
		c.add(time.Second)
		p.Interval(load, interval(i, core.OpSet, 2500, 0, time.Millisecond))
	}
	p.PhaseEnded(load, &core.PhaseRun{System: "a", Spec: load.Spec, End: core.PhaseEnd{Status: core.StatusOK, Elapsed: 4 * time.Second},
		Totals: []core.OpInterval{{Op: core.OpSet, OK: 10000}}})
	c.add(500 * time.Millisecond)
	p.PhaseStarted(pl.Steps[1], 1)
	// Measured: 500 ms between phases, the typical overhead; 1.75 s on average
	// with the server's start. Left: a's mix, b's load at a's rate, b's mix.
	if got, want := eta(), "1m6s to 1m9s"; got != want {
		t.Errorf("after a's load: ETA %s, want %s (30.5 + 4.5 + 30.5 to 31.75 + 5.75 + 31.75)", got, want)
	}
}

// With Quiet: the warning and the phase that failed, nothing else.
func TestProgressQuiet(t *testing.T) {
	pl := testPlan(t)
	c := &clock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	p := New(&buf, Options{Plan: pl, Redactor: redact.New(), Now: c.now, Quiet: true})
	drive(t, p, pl, c, nil)
	p.Prompt("redis: restart check: restart the server now")
	want := "2026-12-03T10:00:02Z warning: redis: server stats: connection reset\n" +
		"2026-12-03T10:00:33Z redis: mix failed in 30s: 2,284,080 ops ok (76,136 ops/s), 60 errors; GET p99 0.375 ms; the server restarted during the phase\n" +
		"2026-12-03T10:00:33Z redis: restart check: restart the server now\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// On a terminal (a real pseudo-terminal): the run's bar with phases done and the
// ETA, and the phase's bar with ops/s, p99 and errors, under the lines; at the end
// the run's bar says how long it took.
func TestProgressLiveBarsOnATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var screen bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			mu.Lock()
			screen.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	seen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return stripANSI(screen.String())
	}
	waitFor := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if s := seen(); strings.Contains(s, want) {
				return s
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no %q on the terminal:\n%s", want, seen())
		return ""
	}

	pl := testPlan(t)
	c := &clock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	p := New(tty, Options{Plan: pl, Redactor: redact.New(), Now: c.now, Terminal: true})
	drive(t, p, pl, c, func() {
		// 15 s into the mix: 15 s of it and the 1 s around a phase are left.
		waitFor("redis mix")
		waitFor("15s of 30s, 76,136 ops/s, p99 GET 0.375 ms, 30 errors")
		s := waitFor("ETA 16s")
		for _, want := range []string{"run 1/2 phases", "redis: load ok in 2s", "warning: redis: server stats: connection reset",
			"redis: mix (memtier 1:10"} {
			if !strings.Contains(s, want) {
				t.Errorf("no %q on the terminal:\n%s", want, s)
			}
		}
		for _, bar := range []string{`run 1/2 phases\s+\[[=>-]+\] \d+s, ETA 16s`, `redis mix\s+\[=+>-+\] 15s of 30s`} {
			if !regexp.MustCompile(bar).MatchString(s) {
				t.Errorf("no bar %q on the terminal:\n%s", bar, s)
			}
		}
		if stampRE.MatchString(s) || strings.Contains(s, "Z redis:") {
			t.Errorf("timestamps on a terminal:\n%s", s)
		}
	})
	s := waitFor("ended after 33s")
	if !strings.Contains(s, "run 2/2 phases") || !strings.Contains(s, "redis: mix failed in 30s") {
		t.Errorf("the end of the run:\n%s", s)
	}
	tty.Close()
	<-read
}

// --quiet on a terminal: no bars, no escape sequences; the lines without a
// timestamp.
func TestProgressQuietOnATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	pl := testPlan(t)
	c := &clock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	p := New(tty, Options{Plan: pl, Redactor: redact.New(), Now: c.now, Terminal: true, Quiet: true})
	drive(t, p, pl, c, nil)
	tty.Close()
	b, _ := io.ReadAll(ptmx) // EIO once the terminal's side is closed
	got := strings.ReplaceAll(string(b), "\r\n", "\n")
	want := "warning: redis: server stats: connection reset\n" +
		"redis: mix failed in 30s: 2,284,080 ops ok (76,136 ops/s), 60 errors; GET p99 0.375 ms; the server restarted during the phase\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// stripANSI leaves the text of what was drawn, without cursor movements.
func stripANSI(s string) string {
	return strings.ReplaceAll(ansiRE.ReplaceAllString(s, ""), "\r", "")
}

func TestAchievedRate(t *testing.T) {
	run := func(rate float64, ok int64, status core.PhaseStatus) *core.PhaseRun {
		r := &core.PhaseRun{Totals: []core.OpInterval{{Op: core.OpGet, OK: ok}}}
		r.Spec.Rate = rate
		r.End.Status, r.End.Elapsed = status, 10*time.Second
		return r
	}
	for _, tc := range []struct {
		name string
		r    *core.PhaseRun
		want string
	}{
		{"closed loop", run(0, 408_330, core.StatusOK), "40,833 ops/s"},
		{"fixed rate held", run(5000, 49_900, core.StatusOK), "4,990 of 5,000 ops/s"},
		{"fixed rate missed", run(100_000, 408_330, core.StatusOK), "NS: 40,833 of 100,000 ops/s, below the 97% of its target that counts as sustained"},
		{"fixed rate failed", run(100_000, 408_330, core.StatusFailed), "40,833 of 100,000 ops/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := achievedRate(tc.r); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

// A server's log quoted in a phase's error, its error replies, a plugin's note
// and a warning reach the terminal as text: an escape sequence, a CR that would
// overwrite the line, BEL, NUL and a right-to-left override are shown, never
// acted on; each line stays one line per line of text.
func TestProgressShowsControlCharacters(t *testing.T) {
	const log = "\x1b[2J\x1b[31mERR\x1b[0m done\rFAKE ok\a\x00 \u202Eevil"
	const shown = "␛[2J␛[31mERR␛[0m done␍FAKE ok␇␀ [U+202E]evil"
	pl := testPlan(t)
	c := &clock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	p := New(&buf, Options{Plan: pl, Redactor: redact.New(), Now: c.now, Quiet: true})
	load := pl.Steps[0]
	end := core.PhaseEnd{Status: core.StatusFailed, Elapsed: time.Second, Error: "server exited (exit status 1); the end of its log:\n" + log,
		ErrorSamples: []string{log}, Notes: []string{log}}
	p.PhaseEnded(load, &core.PhaseRun{System: "redis", Spec: load.Spec, End: end, Intervals: 1,
		Totals: []core.OpInterval{{Op: core.OpSet, OK: 1, Response: core.Latency{Count: 1, P99: 400_000}}}})
	p.Warn(log)
	p.Prompt(log)
	out := buf.String()
	if loc := regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u202e]").FindStringIndex(out); loc != nil {
		t.Errorf("a control character reached the terminal at %d: %q", loc[0], out)
	}
	if n := strings.Count(out, shown); n != 5 {
		t.Errorf("the log shown %d times, want 5 (error, sample, note, warning, prompt):\n%s", n, out)
	}
}
