package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/core/runner"
	"github.com/cmpbench/cmpbench/plugins/plugintest"
)

// heapSampler forces a collection every 1,000 intervals and keeps the live heap.
type heapSampler struct {
	drv       *plugintest.Synthetic
	first, hi uint64
}

func (h *heapSampler) Interval(plan.Step, core.IntervalReport) {
	if h.drv.Intervals%1000 != 999 {
		return
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if h.first == 0 {
		h.first = ms.HeapAlloc
	}
	h.hi = max(h.hi, ms.HeapAlloc)
}
func (*heapSampler) SystemStarted(core.SystemRun, int)    {}
func (*heapSampler) PhaseStarted(plan.Step, int)          {}
func (*heapSampler) PhaseEnded(plan.Step, *core.PhaseRun) {}
func (*heapSampler) Note(string)                          {}
func (*heapSampler) Warn(string)                          {}

// The host's memory does not grow with the length of a run: 21,000 intervals (three
// phases of almost two hours each, with a side probe) pass through the runner and
// the archive writer while the live heap stays within 32 MB of where it started.
func TestHostMemoryIsBoundedOverLongRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 21,000 intervals")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cmpbench.yaml")
	os.WriteFile(cfg, []byte("systems:\n  s:\n    adapter: resp\n    endpoint: 127.0.0.1:7000\n"), 0o644)
	systems, err := config.LoadSystems(cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	suite, err := plan.ParseSuite("long.yaml", []byte(`name: long
phases:
  - {name: closed, duration: 7000s, memtier: {ratio: "1:10", key_max: 1000}}
  - {name: fixed, duration: 7000s, rate: 20000, memtier: {ratio: "1:10", key_max: 1000}}
  - {name: closed-again, duration: 7000s, memtier: {ratio: "1:10", key_max: 1000}}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(suite, []string{"s"}, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := archive.Create(filepath.Join(dir, "results"), archive.Header{RunID: "long", Started: time.Now()}, redact.New())
	if err != nil {
		t.Fatal(err)
	}
	drv := plugintest.NewSynthetic(20)
	obs := &heapSampler{drv: drv}
	res := runner.Run(context.Background(), runner.Config{RunID: "long", Plan: p, Systems: systems, Launch: drv.Launcher(),
		Redactor: redact.New(), Sink: w, Observer: obs, StatsInterval: time.Hour})
	if res.Status != core.RunComplete || drv.Intervals != 21_000 {
		t.Fatalf("status %s after %d intervals", res.Status, drv.Intervals)
	}
	if growth := int64(obs.hi) - int64(obs.first); growth > 32<<20 {
		t.Fatalf("the live heap grew by %d MB over 21,000 intervals", growth>>20)
	}
	t.Logf("live heap %.1f MB after 1,000 intervals, at most %.1f MB", float64(obs.first)/(1<<20), float64(obs.hi)/(1<<20))
	// What was kept is all there.
	a, err := w.Finish(res.Status, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := a.EachInterval(func(*archive.IntervalRow) error { rows++; return nil }); err != nil {
		t.Fatal(err)
	}
	if rows != 2*21_000 || len(a.Summary) != 6 {
		t.Fatalf("%d interval rows, %d summary rows", rows, len(a.Summary))
	}
}
