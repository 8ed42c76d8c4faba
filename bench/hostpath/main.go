// Command hostpath measures the host's memory over a long run: the built-in ycsb
// suite at full length (a 100,000,000-record load, 16 warm-ups and 16 300 s
// measured phases, a side probe at 200 requests/s) for two systems, driven by
// synthetic plugins that answer at once, through the real runner and archive
// writer, then finished into an archive with its report. It prints the intervals
// handled and the peak resident memory (VmHWM) of this process.
//
//	go run ./bench/hostpath [-systems 2] [-probe 200] [-cpuprofile FILE]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/core/runner"
	_ "github.com/cmpbench/cmpbench/methods" // the built-in methods, which suites name
	"github.com/cmpbench/cmpbench/plugins/plugintest"
	_ "github.com/cmpbench/cmpbench/workloads" // the built-in workloads, which archives and suites name
	"github.com/cmpbench/cmpbench/workloads/suites"
)

func main() {
	nsys := flag.Int("systems", 2, "systems in the run")
	probe := flag.Int("probe", 200, "side-probe records per interval of measured phases")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "hostpath:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*nsys, *probe); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "hostpath:", err)
		os.Exit(1)
	}
}

// run runs the suite for nsys synthetic systems through the runner into an archive,
// finishes it, and prints what the host handled and the memory it took.
func run(nsys, probe int) error {
	dir, err := os.MkdirTemp("", "cmpbench-hostpath-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	systems, names, err := writeSystems(dir, nsys)
	if err != nil {
		return err
	}
	p, err := ycsbPlan(names)
	if err != nil {
		return err
	}
	red := redact.New()
	w, err := archive.Create(filepath.Join(dir, "results"), archive.Header{RunID: "hostpath", Started: time.Now(), Suite: archive.SuiteInfo{Name: "ycsb"}}, red)
	if err != nil {
		return err
	}
	drv := plugintest.NewSynthetic(probe)
	var maxHeap uint64
	obs := &heapWatch{max: &maxHeap, drv: drv}
	start := time.Now()
	res := runner.Run(context.Background(), runner.Config{RunID: "hostpath", Plan: p, Systems: systems, Launch: drv.Launcher(),
		Redactor: red, Sink: w, Observer: obs, StatsInterval: time.Hour})
	ran := time.Since(start)
	printFailedPhases(res)
	final, err := finish(w, res)
	if err != nil {
		return err
	}
	fmt.Printf("   %d systems, %d phases, %d intervals (%d probe records each in measured phases) through the host in %s; archive %.1f MiB finished in %s\n",
		nsys, len(res.Phases), drv.Intervals, probe, ran.Round(time.Second), float64(dirSize(final))/(1<<20), time.Since(start.Add(ran)).Round(time.Second))
	fmt.Printf("   host peak RSS (VmHWM) %s, Go heap in use at most %.1f MiB (sampled every 1,000 intervals), run status %s\n",
		vmHWM(), float64(maxHeap)/(1<<20), res.Status)
	return nil
}

// writeSystems writes a systems file with nsys RESP systems (s1, s2, ...) in dir and
// loads it.
func writeSystems(dir string, nsys int) (*config.Systems, []string, error) {
	var yaml strings.Builder
	yaml.WriteString("systems:\n")
	var names []string
	for i := range nsys {
		n := fmt.Sprintf("s%d", i+1)
		names = append(names, n)
		fmt.Fprintf(&yaml, "  %s: {adapter: resp, endpoint: \"127.0.0.1:%d\"}\n", n, 7000+i)
	}
	cfg := filepath.Join(dir, "cmpbench.yaml")
	if err := os.WriteFile(cfg, []byte(yaml.String()), 0o644); err != nil {
		return nil, nil, err
	}
	systems, err := config.LoadSystems(cfg, true)
	if err != nil {
		return nil, nil, err
	}
	return systems, names, nil
}

// ycsbPlan is the built-in ycsb suite's plan at full length for the systems named.
func ycsbPlan(names []string) (*plan.Plan, error) {
	text, err := suites.Get("ycsb")
	if err != nil {
		return nil, err
	}
	suite, err := plan.ParseSuite("ycsb.yaml", text)
	if err != nil {
		return nil, err
	}
	return plan.Build(suite, names, 1, 1, 1)
}

// printFailedPhases prints each phase of the run that did not end ok.
func printFailedPhases(res *core.RunResult) {
	for _, ph := range res.Phases {
		if ph.End.Status != core.StatusOK {
			fmt.Fprintf(os.Stderr, "phase %s %s: %s %s\n", ph.System, ph.Spec.Name, ph.End.Status, ph.End.Error)
		}
	}
}

// finish finishes the archive, adds its report and commits it, returning its
// directory.
func finish(w *archive.Writer, res *core.RunResult) (string, error) {
	a, err := w.Finish(res.Status, time.Now())
	if err != nil {
		return "", err
	}
	files, _, err := report.Render(a)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if err := w.AddFile(f.Name, f.Data); err != nil {
			return "", err
		}
	}
	return w.Commit()
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var size int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, _ error) error {
		if fi != nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	return size
}

// heapWatch samples the heap every 1,000 intervals.
type heapWatch struct {
	max *uint64
	drv *plugintest.Synthetic
}

func (h *heapWatch) Interval(plan.Step, core.IntervalReport) {
	if h.drv.Intervals%1000 == 0 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		*h.max = max(*h.max, ms.HeapInuse)
	}
}
func (*heapWatch) SystemStarted(core.SystemRun, int)    {}
func (*heapWatch) PhaseStarted(plan.Step, int)          {}
func (*heapWatch) PhaseEnded(plan.Step, *core.PhaseRun) {}
func (*heapWatch) Note(string)                          {}
func (*heapWatch) Warn(msg string)                      { fmt.Fprintln(os.Stderr, "warning:", msg) }

func vmHWM() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.Join(strings.Fields(strings.TrimPrefix(l, "VmHWM:")), " ")
		}
	}
	return "unknown"
}
