package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// A soak phase during which one server stops answering for 1.5 s (DEBUG SLEEP):
// the report shows one stall of about 1.5 s for that system and none for the
// other, charts the slowest probe request per 10 s and the server's memory over
// the phase, and regenerates byte for byte.
func TestSoakStallIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	port1, _ := redisAt(t, 0, "--enable-debug-command", "local")
	port2, _ := redisAt(t, 0)
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf("systems:\n  r1:\n    adapter: resp\n    endpoint: 127.0.0.1:%d\n  r2:\n    adapter: resp\n    endpoint: 127.0.0.1:%d\n", port1, port2))
	writeFile(t, dir, "s.yaml", `name: s
defaults: {connections: 4, memtier: {key_max: 2000, value_size: 64}}
phases:
  - {name: load, kind: load, duration: 30s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: soak, rate: 2000, duration: 12s, probe: {rate: 200, stall: 1s}, memtier: {ratio: "1:10"}}
`)
	run := startCLI(t, dir, nil, "r1: soak (", "run", "--systems", "r1,r2", "--suite", "s.yaml", "--stats-interval", "1s")
	time.Sleep(4 * time.Second)
	sent := time.Now()
	if got := redisDo(t, port1, "DEBUG SLEEP 1.5"); got[0] != "+OK" {
		t.Fatalf("DEBUG SLEEP: %q", got)
	}
	t.Logf("DEBUG SLEEP 1.5 took %s", time.Since(sent).Round(time.Millisecond))
	r := run.wait(t)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	for _, p := range a.Manifest.Phases {
		if p.Name == "soak" && p.ProbeStallNs != int64(time.Second) {
			t.Errorf("%s: manifest records a stall threshold of %d ns", p.System, p.ProbeStallNs)
		}
	}
	rep, err := a.ReadFile(archive.ReportFile)
	if err != nil {
		t.Fatal(err)
	}
	md := string(rep)
	// One stall of about the server's pause, about 4 s into the phase.
	line := regexp.MustCompile(`(?m)^- r1: 1 stall > 1 s, peak ([0-9.]+) s, [0-9:]{8}–[0-9:]{8}$`).FindStringSubmatch(md)
	if line == nil {
		t.Fatalf("no line of one stall for r1:\n%s", md)
	}
	t.Log(md[strings.Index(md, "## Stalls"):strings.Index(md, "## Charts")])
	if peak, _ := strconv.ParseFloat(line[1], 64); peak < 1.4 || peak > 2.0 {
		t.Errorf("a 1.5 s pause made a stall of %.2f s", peak)
	}
	// A server's pause, and never the client's: the client ran through it.
	row := regexp.MustCompile(`(?m)^\| r1 \| [0-9:.]{12} \| ([0-9.]+) s \| ([0-9.]+) s \| ([0-9]+) \| 0 \| the server's \|$`).FindStringSubmatch(md)
	if row == nil {
		t.Fatalf("no table row of r1's stall:\n%s", md)
	}
	into, _ := strconv.ParseFloat(row[1], 64)
	n, _ := strconv.Atoi(row[3])
	// The probe sends every 5 ms: the requests due in the pause's first half second
	// waited more than 1 s for it.
	if into < 2 || into > 9 || n < 60 || n > 140 || row[2] != line[1] {
		t.Errorf("stall at %s s into the phase, %s s long, %d requests: %s", row[1], row[2], n, row[0])
	}
	for _, want := range []string{
		"- r2: no stall > 1 s (slowest of ",
		"- r1, soak had 1 stall > 1 s (the longest " + line[1] + " s)",
		"![Slowest probe request per 10 s: soak](charts/probe-max-1-soak.svg)",
		"![Server stats over time: soak](charts/server-1-soak.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(r.stdout, "### Stalls (side probe)") || !strings.Contains(r.stdout, "- r1, soak: 1 stall > 1 s, peak "+line[1]+" s") {
		t.Errorf("the console does not say it:\n%s", r.stdout)
	}
	if rr := cli(t, dir, nil, "report", a.Dir); rr.code != 0 || !strings.Contains(rr.stdout, "byte-identical") {
		t.Errorf("report regeneration: %d %s %s", rr.code, rr.stdout, rr.stderr)
	}
	stallInPage(t, a, line[1])
	// Two redis-servers started alike: the fairness audit finds nothing unfair.
	if rr := cli(t, dir, nil, "audit", a.Dir); rr.code != 0 || !strings.Contains(rr.stdout, "No mismatch found") {
		t.Errorf("audit of two identical systems: exit %d\n%s%s", rr.code, rr.stdout, rr.stderr)
	}
	charts, _ := filepath.Glob(filepath.Join(a.Dir, "charts", "*.svg"))
	if len(charts) != 7 {
		t.Errorf("charts %v: want throughput, p99.9, spectrum, latency, rate, probe-max and server", charts)
	}
	for _, c := range charts {
		texts := svgText(t, c)
		for _, sys := range []string{"r1", "r2"} {
			if !namesSeriesOf(texts, sys) {
				t.Errorf("%s has no series for %s: %q", filepath.Base(c), sys, texts)
			}
		}
		switch filepath.Base(c) {
		case "probe-max-1-soak.svg":
			if !slices.Contains(texts, "stall threshold 1 s") {
				t.Errorf("%s does not draw the threshold: %q", filepath.Base(c), texts)
			}
		case "server-1-soak.svg":
			if !strings.Contains(strings.Join(texts, "|"), "memory.used_memory") {
				t.Errorf("%s does not chart used_memory: %q", filepath.Base(c), texts)
			}
		}
	}
}

// stallInPage checks that report.html's latency-over-time chart of the soak
// shows r1's stall: shaded, as long as report.md says (peak, in s), with the
// probe's slow requests above the 1 s threshold inside it, and r2 without one.
func stallInPage(t *testing.T, a *archive.Archive, peak string) {
	t.Helper()
	specs := checkPage(t, a, "stall")
	i := slices.IndexFunc(specs, func(s browsertest.Spec) bool { return s.Title == "Latency over time: soak" })
	if i < 0 {
		t.Fatal("report.html has no latency-over-time chart of the soak")
	}
	c := specs[i]
	if len(c.Bands) != 1 || c.Bands[0].Label != "r1 stall "+peak+" s" {
		t.Fatalf("stall bands %+v: want r1's one stall of %s s", c.Bands, peak)
	}
	band := c.Bands[0]
	probe := slices.IndexFunc(c.Series, func(s browsertest.Series) bool { return s.Label == "r1 probe" })
	if probe < 0 {
		t.Fatalf("no r1 probe series among %q", c.Labels())
	}
	slow := 0
	for j, y := range c.Series[probe].Ys {
		if y != nil && *y > 1000 {
			slow++
			if x := c.Xs[j]; x < band.From-0.01 || x > band.To+0.01 {
				t.Errorf("a probe request of %.0f ms at %.2f s, outside the stall %.2f–%.2f s", *y, x, band.From, band.To)
			}
		}
	}
	if slow == 0 {
		t.Error("the chart draws no probe request above the 1 s threshold")
	}
}
