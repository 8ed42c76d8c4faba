package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// Issue 43, bug 2: a client that stopped running (its plugin process stopped with
// SIGSTOP) yielded an ok phase at a rate over time it stood still, and the side
// probe's caveat blamed the server. The phase now fails as client-stalled, its
// closed-loop rate counts the time the client ran, a fixed-rate phase stopped
// past its end is not sustained, and the probe's stall is the client's.
func TestStoppedClientIsNotAMeasurementIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	for _, tc := range []struct {
		name, phase, shape string
		stop               time.Duration
	}{
		{"closed loop, stopped 3s of 6s", "closed", "", 3 * time.Second},
		{"fixed rate, stopped past its end", "paced", "rate: 2000, ", 8 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, _ := redisAt(t, 0)
			dir := t.TempDir()
			writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf("systems:\n  r:\n    adapter: resp\n    endpoint: 127.0.0.1:%d\n", port))
			writeFile(t, dir, "s.yaml", fmt.Sprintf(`name: s
defaults: {connections: 4, memtier: {key_max: 2000, value_size: 64}}
phases:
  - {name: load, kind: load, duration: 30s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: free, %sduration: 3s, memtier: {ratio: "1:10"}}
  - {name: %s, %sduration: 6s, probe: {rate: 100, stall: 1s}, memtier: {ratio: "1:10"}}
`, tc.shape, tc.phase, tc.shape))
			run := startCLI(t, dir, nil, "r: "+tc.phase+" (", "run", "--systems", "r", "--suite", "s.yaml")
			time.Sleep(1500 * time.Millisecond)
			plugin := child(t, run.cmd.Process.Pid, "plugin serve resp")
			if err := syscall.Kill(plugin, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(tc.stop)
			if err := syscall.Kill(plugin, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			r := run.wait(t)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
			}
			a := archiveOf(t, r)
			st, msg := phaseStatus(a, "r", tc.phase)
			if st != "failed" || !strings.Contains(msg, "the client was not running for") {
				t.Fatalf("phase %s %q, want failed, the client was not running\n%s", st, msg, r.stderr)
			}
			p := phaseInfo(t, a, "r", tc.phase)
			stalled := time.Duration(p.ClientStalledNs)
			if want := min(tc.stop, 6*time.Second-1500*time.Millisecond); stalled < want-500*time.Millisecond || len(p.ClientStalls) == 0 {
				t.Errorf("stalled %s in %d spans, want about %s at least", stalled, len(p.ClientStalls), want)
			}
			for _, row := range rows(a, "r", tc.phase) {
				if row.Sustained != nil && *row.Sustained {
					t.Errorf("%s: sustained at %.0f ops/s, though the client stood still", row.Op, row.AchievedRate)
				}
				if free := rows(a, "r", "free")[row.Op]; tc.shape == "" && row.AchievedRate < 0.7*free.AchievedRate {
					// Over the time it ran: about the rate of the phase before,
					// which nothing stopped; over its window it was half of it.
					t.Errorf("%s: achieved %.0f ops/s, the unstopped phase before %.0f: the stop still counts against the system", row.Op, row.AchievedRate, free.AchievedRate)
				}
			}
			if tc.shape != "" && p.ElapsedNs < int64(6*time.Second) {
				t.Errorf("a fixed-rate phase stopped past its end has elapsed %s, under its 6s", time.Duration(p.ElapsedNs))
			}
			rep, err := a.ReadFile(archive.ReportFile)
			if err != nil {
				t.Fatal(err)
			}
			md := string(rep)
			for _, want := range []string{"r, " + tc.phase + " was client-stalled: the client process was not running for",
				"1 of them the client's own: its process was not running then", "the client's: not running for"} {
				if !strings.Contains(md, want) {
					t.Errorf("the report lacks %q:\n%s", want, md)
				}
			}
			if strings.Contains(md, "r, "+tc.phase+" had 1 stall") {
				t.Errorf("the report blames the server for the client's stall:\n%s", md)
			}
			if errs := archive.Verify(a.Dir); len(errs) > 0 {
				t.Errorf("the archive does not verify: %v", errs)
			}
		})
	}
}

// phaseInfo is the manifest entry of a system's phase.
func phaseInfo(t *testing.T, a *archive.Archive, system, phase string) archive.PhaseInfo {
	t.Helper()
	for _, p := range a.Manifest.Phases {
		if p.System == system && p.Name == phase {
			return p
		}
	}
	t.Fatalf("no phase %s of %s", phase, system)
	return archive.PhaseInfo{}
}
