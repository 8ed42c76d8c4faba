package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/runner"
	"github.com/cmpbench/cmpbench/plugins/plugintest"
)

// slowPlugin is a synthetic plugin whose measured phases take their time, as a
// real one's do: an interval 100 ms in, then nothing until the phase's duration
// or until it is stopped, when it ends as the engine ends a stopped phase.
type slowPlugin struct {
	*plugintest.Synthetic
	during func(phase string) // called once the phase's first interval is sent
}

func (s *slowPlugin) RunPhase(ctx context.Context, spec core.PhaseSpec, onInterval func(core.IntervalReport)) (core.PhaseEnd, error) {
	started := time.Now()
	ops := []core.OpInterval{{Op: core.OpGet, OK: 100}}
	select {
	case <-time.After(100 * time.Millisecond):
		onInterval(core.IntervalReport{Index: 0, End: 100 * time.Millisecond, Ops: ops})
		s.during(spec.Name)
	case <-ctx.Done():
	}
	end := core.PhaseEnd{Status: core.StatusOK, Started: started, Totals: ops}
	select {
	case <-time.After(spec.Duration - time.Since(started)):
	case <-ctx.Done():
		end.Status, end.Error = core.StatusInterrupted, "stopped: "+context.Cause(ctx).Error()
	}
	end.Ended = time.Now()
	end.Elapsed = end.Ended.Sub(started)
	return end, nil
}

// nodeIn is the process working in dir: a node cmpbench started there.
func nodeIn(t *testing.T, dir string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil && cwd == dir {
			return pid
		}
	}
	t.Fatalf("no process works in %s", dir)
	return 0
}

// The loss of any node of a server cmpbench started fails the phase during
// which it happened, at once, naming the node, how it ended and its log; what
// the phase measured until then is kept, the phases after it fail, and so does
// the run, even when the loss comes in its last phase.
func TestNodeLostFailsThePhase(t *testing.T) {
	const suite = `name: s
defaults: {connections: 2, memtier: {key_max: 1000, ratio: "0:1"}}
phases:
  - {name: first, duration: 1s}
  - {name: second, duration: 2s}
  - {name: last, duration: 5s}
`
	for _, tc := range []struct {
		name   string
		nodes  int
		killIn string // the phase during which node killed is killed
		killed int
		who    string
		phases []phaseWant
	}{
		{"a node of three, mid-run", 3, "second", 1, "(node1 of 3) was killed by signal 9 (killed)", []phaseWant{
			{core.StatusOK, ""}, {core.StatusFailed, "server exited during the phase ("}, {core.StatusFailed, "server exited: "}}},
		{"a node of three, in the last phase", 3, "last", 2, "(node2 of 3) was killed by signal 9 (killed)", []phaseWant{
			{core.StatusOK, ""}, {core.StatusOK, ""}, {core.StatusFailed, "server exited during the phase ("}}},
		{"the one server", 1, "second", 0, "sh at 127.0.0.1:", []phaseWant{
			{core.StatusOK, ""}, {core.StatusFailed, "server exited during the phase ("}, {core.StatusFailed, "server exited: "}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			cfg := filepath.Join(t.TempDir(), "cmpbench.yaml")
			if err := os.WriteFile(cfg, fmt.Appendf(nil, "systems:\n  c:\n    adapter: resp\n    provision:\n      nodes: %d\n      command: [sh, -c, 'echo node {node} up; exec sleep 3600', '{port}']\n", tc.nodes), 0o644); err != nil {
				t.Fatal(err)
			}
			sys, err := config.LoadSystems(cfg, true)
			if err != nil {
				t.Fatal(err)
			}
			s, err := plan.ParseSuite("s.yaml", []byte(suite))
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Build(s, []string{"c"}, 1, 7, 1)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(work, "c")
			if tc.nodes > 1 {
				dir = filepath.Join(dir, fmt.Sprintf("node%d", tc.killed))
			}
			var killedAt time.Time
			drv := &slowPlugin{Synthetic: plugintest.NewSynthetic(0), during: func(phase string) {
				if phase == tc.killIn {
					killedAt = time.Now()
					if err := syscall.Kill(nodeIn(t, dir), syscall.SIGKILL); err != nil {
						t.Error(err)
					}
				}
			}}
			res := runner.Run(context.Background(), runner.Config{RunID: "t", Plan: p, Systems: sys, WorkDir: work,
				Launch: func(context.Context, string) (runner.Driver, core.PluginRef, error) {
					return drv, core.PluginRef{Adapter: "slow"}, nil
				}})
			if res.Status != core.RunFailed {
				t.Errorf("run %s, want failed", res.Status)
			}
			checkPhases(t, res, tc.phases)
			for _, ph := range res.Phases {
				if ph.Spec.Name != tc.killIn {
					continue
				}
				for _, want := range []string{tc.who, "node " + strconv.Itoa(tc.killed) + " up"} {
					if !strings.Contains(ph.End.Error, want) {
						t.Errorf("%s: the error lacks %q: %s", ph.Spec.Name, want, ph.End.Error)
					}
				}
				if took := ph.End.Ended.Sub(killedAt); took > 2*time.Second {
					t.Errorf("%s went on %s after its node was killed", ph.Spec.Name, took)
				}
				if ph.Intervals != 1 || len(ph.Totals) != 1 || ph.Totals[0].OK != 100 {
					t.Errorf("what %s measured before the loss: %d intervals, totals %+v", ph.Spec.Name, ph.Intervals, ph.Totals)
				}
			}
		})
	}
}
