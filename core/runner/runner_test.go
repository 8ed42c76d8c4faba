package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/runner"
	"github.com/cmpbench/cmpbench/plugins/plugintest"
)

// faulty is a synthetic plugin with faults injected by phase name: a server that
// refuses the load, restarts (losing or keeping its data), a plugin that dies part
// way, a system that holds data before the run.
type faulty struct {
	*plugintest.Synthetic
	keys      int64      // what the system holds
	failLoad  string     // a load that ends failed, as on OOM replies
	restart   string     // a phase during which the server restarts
	keepData  bool       // ... and comes back with its data
	crash     string     // a phase whose plugin dies after two intervals
	cancel    func()     // called when a phase of system "a" ends: Ctrl-C
	mu        sync.Mutex // Stats runs beside RunPhase
	instance  int
	exited    atomic.Bool
	launches  atomic.Int32  // how many times the runner launched the plugin
	slowCount time.Duration // how long Count takes
	pace      time.Duration // how long a measured phase takes before its intervals
	obs       runner.Observer
}

func (f *faulty) Exited() bool { return f.exited.Load() }

func (f *faulty) Count(context.Context) (int64, error) {
	time.Sleep(f.slowCount)
	return f.keys, nil
}

func (f *faulty) Flush(context.Context) error { f.keys = 0; return nil }

func (f *faulty) Validate(_ context.Context, _ core.PhaseSpec, expected int64) (core.Validation, error) {
	return core.Validation{Expected: expected, Counted: f.keys}, nil
}

func (f *faulty) Stats(context.Context) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return map[string]string{core.StatInstance: fmt.Sprint("run", f.instance), core.StatUptime: "100"}, nil
}

func (f *faulty) RunPhase(ctx context.Context, spec core.PhaseSpec, onInterval func(core.IntervalReport)) (core.PhaseEnd, error) {
	if spec.Name == f.crash {
		started := time.Now()
		for i := range 2 {
			onInterval(core.IntervalReport{Index: i, Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
				Ops: []core.OpInterval{{Op: core.OpGet, OK: 1000}}})
		}
		f.exited.Store(true)
		err := errors.New("plugin process exited: signal: killed")
		return core.PhaseEnd{Status: core.StatusFailed, Error: err.Error(), Started: started, Ended: time.Now(), Elapsed: 2700 * time.Millisecond}, err
	}
	if spec.Kind == core.PhaseMeasured {
		time.Sleep(f.pace)
	}
	end, err := f.Synthetic.RunPhase(ctx, spec, onInterval)
	if spec.Kind == core.PhaseLoad {
		for _, t := range end.Totals {
			f.keys += t.OK
		}
	}
	if spec.Name == f.failLoad {
		end.Status, end.Error = core.StatusFailed, "2 errors: oom: OOM command not allowed when used memory > 'maxmemory'"
	}
	if spec.Name == f.restart {
		f.mu.Lock()
		f.instance++
		f.mu.Unlock()
		if !f.keepData {
			f.keys = 0
		}
	}
	if f.cancel != nil {
		f.cancel()
	}
	return end, err
}

func runFaulty(t *testing.T, f *faulty, disposable bool, systems []string, suite string) *core.RunResult {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "cmpbench.yaml")
	var b strings.Builder
	b.WriteString("systems:\n")
	for _, s := range systems {
		fmt.Fprintf(&b, "  %s:\n    adapter: resp\n    endpoint: 127.0.0.1:7000\n    disposable: %v\n", s, disposable)
	}
	os.WriteFile(cfg, []byte(b.String()), 0o644)
	sys, err := config.LoadSystems(cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := plan.ParseSuite("s.yaml", []byte(suite))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(s, systems, 1, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Synthetic == nil {
		f.Synthetic = plugintest.NewSynthetic(0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if f.cancel != nil {
		f.cancel = cancel
	}
	return runner.Run(ctx, runner.Config{RunID: "t", Plan: p, Systems: sys, Launch: func(context.Context, string) (runner.Driver, core.PluginRef, error) {
		f.launches.Add(1)
		f.exited.Store(false) // a new process
		return f, core.PluginRef{Adapter: "faulty"}, nil
	}, WorkDir: t.TempDir(), Observer: f.obs})
}

const loadAndRead = `name: s
defaults: {connections: 2, memtier: {key_max: 1000}}
phases:
  - {name: load, kind: load, duration: 60s, validate: true, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: mixed, duration: 2s, memtier: {ratio: "1:10"}}
  - {name: reads, duration: 1s, memtier: {ratio: "0:1"}}
`

type phaseWant struct {
	status core.PhaseStatus
	error  string // a part of the phase's error ("" for none)
}

func checkPhases(t *testing.T, res *core.RunResult, want []phaseWant) {
	t.Helper()
	if len(res.Phases) != len(want) {
		t.Fatalf("%d phases, want %d", len(res.Phases), len(want))
	}
	for i, w := range want {
		p := res.Phases[i]
		if p.End.Status != w.status || (w.error == "") != (p.End.Error == "") || !strings.Contains(p.End.Error, w.error) {
			t.Errorf("%s/%s: %s %q, want %s %q", p.System, p.Spec.Name, p.End.Status, p.End.Error, w.status, w.error)
		}
	}
}

func TestRunnerFaults(t *testing.T) {
	for _, tc := range []struct {
		name       string
		f          *faulty
		disposable bool
		systems    []string
		suite      string
		status     core.RunStatus
		phases     []phaseWant
		validation string // a part of the first validation's first problem
		launches   int32  // how many plugin processes the run launched (0: not checked)
	}{
		{
			name: "a load into a system that holds data is refused", f: &faulty{keys: 5}, systems: []string{"a"}, suite: loadAndRead,
			status: core.RunFailed,
			phases: []phaseWant{{core.StatusFailed, "refusing to load: a already holds 5 keys; mark it disposable: true"},
				{core.StatusSkipped, "the load was refused"}, {core.StatusSkipped, "the load was refused"}},
		},
		{
			name: "a disposable system is emptied before its load", f: &faulty{keys: 5}, disposable: true, systems: []string{"a"}, suite: loadAndRead,
			status: core.RunComplete, phases: []phaseWant{{core.StatusOK, ""}, {core.StatusOK, ""}, {core.StatusOK, ""}},
		},
		{
			name: "a plugin that crashed is launched again for the next phase", f: &faulty{crash: "mixed"}, systems: []string{"a"}, suite: loadAndRead,
			status: core.RunFailed, launches: 2,
			phases: []phaseWant{{core.StatusOK, ""}, {core.StatusFailed, "plugin process exited"}, {core.StatusOK, ""}},
		},
		{
			name: "a failed load skips what needs its data", f: &faulty{failLoad: "load"}, systems: []string{"a"}, suite: loadAndRead,
			status: core.RunFailed, validation: "not validated: the load failed: 2 errors: oom",
			phases: []phaseWant{{core.StatusFailed, "OOM"}, {core.StatusSkipped, `the load "load" failed`}, {core.StatusSkipped, `the load "load" failed`}},
		},
		{
			name: "a restart that lost the data", f: &faulty{restart: "mixed"}, systems: []string{"a"}, suite: loadAndRead,
			status: core.RunFailed,
			phases: []phaseWant{{core.StatusOK, ""}, {core.StatusFailed, "the server restarted during the phase (instance run0 became run1)"},
				{core.StatusSkipped, `the server restarted during "mixed" (instance run0 became run1), and the data loaded before may be lost: this run did not show that a keeps its data across a restart`}},
		},
		{
			// Its count looks whole, but nothing showed the system keeps its data.
			name: "a restart with the keys back", f: &faulty{restart: "mixed", keepData: true}, systems: []string{"a"}, suite: loadAndRead,
			status: core.RunFailed,
			phases: []phaseWant{{core.StatusOK, ""}, {core.StatusFailed, "the server restarted during the phase"}, {core.StatusSkipped, "may be lost"}},
		},
		{
			name: "foreign data is never written", f: &faulty{keys: 5}, systems: []string{"a"}, suite: `name: s
defaults: {connections: 2, memtier: {key_max: 1000}}
phases:
  - {name: sets, duration: 1s, memtier: {ratio: "1:0"}}
  - {name: reads, duration: 1s, memtier: {ratio: "0:1"}}
`, status: core.RunFailed,
			phases: []phaseWant{{core.StatusFailed, "refusing to write: a holds 5 keys this run did not write, which sets could overwrite"}, {core.StatusOK, ""}},
		},
		{
			name: "a disposable system may be written", f: &faulty{keys: 5}, disposable: true, systems: []string{"a"}, suite: `name: s
defaults: {connections: 2, memtier: {key_max: 1000}}
phases:
  - {name: sets, duration: 1s, memtier: {ratio: "1:0"}}
`, status: core.RunComplete, phases: []phaseWant{{core.StatusOK, ""}},
		},
		{
			name: "an interrupt skips the systems not started", f: &faulty{cancel: func() {}}, systems: []string{"a", "b"}, suite: loadAndRead,
			status: core.RunInterrupted,
			phases: []phaseWant{{core.StatusOK, ""}, {core.StatusSkipped, "run interrupted before this phase"}, {core.StatusSkipped, "run interrupted before this phase"},
				{core.StatusSkipped, "run interrupted before this system started"}, {core.StatusSkipped, "run interrupted before this system started"}, {core.StatusSkipped, "run interrupted before this system started"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runFaulty(t, tc.f, tc.disposable, tc.systems, tc.suite)
			if res.Status != tc.status {
				t.Errorf("run %s, want %s", res.Status, tc.status)
			}
			checkPhases(t, res, tc.phases)
			if tc.launches != 0 && tc.f.launches.Load() != tc.launches {
				t.Errorf("%d plugin launches, want %d", tc.f.launches.Load(), tc.launches)
			}
			if tc.disposable && len(res.Validations) > 0 && res.Validations[0].Counted != 1000 {
				t.Errorf("validation after emptying and loading: %+v", res.Validations[0])
			}
			if tc.validation != "" {
				if len(res.Validations) == 0 || len(res.Validations[0].Problems) == 0 || !strings.Contains(res.Validations[0].Problems[0], tc.validation) {
					t.Errorf("validations %+v, want a problem %q", res.Validations, tc.validation)
				}
			}
		})
	}
}

// A phase whose plugin died is measured over the time its intervals cover, not
// over the time until the host noticed.
func TestCrashedPhaseRatesOverItsIntervals(t *testing.T) {
	res := runFaulty(t, &faulty{crash: "reads"}, false, []string{"a"}, `name: s
defaults: {connections: 2, memtier: {key_max: 1000}}
phases:
  - {name: reads, duration: 10s, memtier: {ratio: "0:1"}}
`)
	p := res.Phases[0]
	if p.End.Status != core.StatusFailed || p.End.Elapsed != 2*time.Second {
		t.Fatalf("%s, elapsed %s, want failed over the 2 s of its intervals", p.End.Status, p.End.Elapsed)
	}
	if len(p.End.Notes) == 0 || !strings.Contains(p.End.Notes[0], "the plugin stopped after 2.7s; its intervals cover 2s") {
		t.Fatalf("notes %q", p.End.Notes)
	}
}

// warnings is an Observer that keeps the warnings.
type warnings struct {
	mu   sync.Mutex
	said []string
}

func (*warnings) SystemStarted(core.SystemRun, int)       {}
func (*warnings) PhaseStarted(plan.Step, int)             {}
func (*warnings) Interval(plan.Step, core.IntervalReport) {}
func (*warnings) PhaseEnded(plan.Step, *core.PhaseRun)    {}
func (*warnings) Note(string)                             {}
func (w *warnings) Warn(m string)                         { w.mu.Lock(); w.said = append(w.said, m); w.mu.Unlock() }

// Issue 43's weak answer: a plugin whose Count hangs blocked the run silently for
// up to 30 minutes. The runner says what it waits for, for how long, and when it
// gives up.
func TestASlowCountIsSaid(t *testing.T) {
	defer runner.SetLongCallNotice(100*time.Millisecond, 200*time.Millisecond)()
	w := &warnings{}
	f := &faulty{slowCount: 550 * time.Millisecond, obs: w}
	runFaulty(t, f, false, []string{"a"}, loadAndRead)
	w.mu.Lock()
	defer w.mu.Unlock()
	var waits []string
	for _, m := range w.said {
		if strings.HasPrefix(m, "a: waiting for plugin ") {
			waits = append(waits, m)
		}
	}
	// The count before the load, said after 0.1 s, 0.3 s and 0.5 s.
	if len(waits) < 2 || !strings.Contains(waits[0], "to count the keys (Count) (for 0s; cmpbench gives up in 30m0s)") {
		t.Fatalf("warnings %q", w.said)
	}
}

// samples is an Observer that is told the client's samples too (ClientObserver).
type samples struct {
	warnings
	mu      sync.Mutex
	systems map[string][]string // the processes sampled, per system
}

func (s *samples) ClientSampled(system string, p core.ProcessSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.systems[system] = append(s.systems[system], p.Process)
}

// The live page (issue 47) shows the client's CPU from the samples the archive
// keeps, as they are taken: an Observer that asks is told each.
func TestClientSamplesAreTold(t *testing.T) {
	s := &samples{systems: map[string][]string{}}
	runFaulty(t, &faulty{obs: s, pace: 1600 * time.Millisecond}, false, []string{"a"}, loadAndRead)
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.systems["a"]
	// Each measured phase takes 1.6 s, sampled first at 1.5 s.
	if len(got) < 2 || !slices.Contains(got, "cmpbench") {
		t.Fatalf("samples told for a: %q, want the host's (cmpbench) among at least 2", got)
	}
	if len(s.systems) != 1 {
		t.Errorf("samples told for systems %v, want a only", s.systems)
	}
}
