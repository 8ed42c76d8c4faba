package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/adapters/aerospike/astest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/runner"
	"github.com/cmpbench/cmpbench/plugins/host"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cmpbench-runner-test-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "cmpbench")
	cmd := exec.Command("go", "build", "-o", binary, "../../cmd/cmpbench")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cmpbench:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// launch serves built-in adapters from the cmpbench binary, as the CLI does.
func launch(ctx context.Context, adapter string) (runner.Driver, core.PluginRef, error) {
	d, err := host.Launch(ctx, host.Options{Cmd: exec.Command(binary, "plugin", "serve", adapter)})
	if err != nil {
		return nil, core.PluginRef{}, err
	}
	return d, core.PluginRef{Adapter: adapter, Builtin: true, Path: binary}, nil
}

// corruptAfterLoad changes one field of a sampled record as soon as the load ends,
// before cmpbench validates it.
type corruptAfterLoad struct {
	srv     *astest.Server
	want    []byte
	changed int
	notes   []string
}

func (o *corruptAfterLoad) PhaseEnded(st plan.Step, _ *core.PhaseRun) {
	if st.Spec.Kind == core.PhaseLoad && o.changed == 0 {
		o.changed = o.srv.Corrupt("field3", func(v []byte) bool { return bytes.Equal(v, o.want) }, []byte("tampered"))
	}
}
func (o *corruptAfterLoad) SystemStarted(core.SystemRun, int)       {}
func (o *corruptAfterLoad) PhaseStarted(plan.Step, int)             {}
func (o *corruptAfterLoad) Interval(plan.Step, core.IntervalReport) {}
func (o *corruptAfterLoad) Note(m string)                           { o.notes = append(o.notes, m) }
func (o *corruptAfterLoad) Warn(m string)                           { o.notes = append(o.notes, m) }

func TestCorruptedFieldFailsTheRunNamingItIntegration(t *testing.T) {
	srv, err := astest.Start("ycsb")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := filepath.Join(t.TempDir(), "cmpbench.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("systems:\n  as:\n    adapter: aerospike\n    endpoint: %s\n    namespace: ycsb\n", srv.Addr())), 0o644)
	systems, err := config.LoadSystems(cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	suite, err := plan.ParseSuite("s.yaml", []byte(`name: s
defaults: {connections: 4, ycsb: {record_count: 2000, request_distribution: uniform}}
phases:
  - {name: load, kind: load, duration: 60s, validate: true}
  - {name: C, duration: 1s, ycsb: {workload: C}}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(suite, []string{"as"}, 1, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Record 17 is one of the samples; its field3 is what the load wrote.
	load := p.Phases[0]
	want := make([]byte, load.Workload.(ycsb.Spec).FieldLength)
	ycsb.LoadValue(want, load.Seed, 17, 3)
	obs := &corruptAfterLoad{srv: srv, want: want}
	res := runner.Run(context.Background(), runner.Config{RunID: "t", Plan: p, Systems: systems, Launch: launch, Observer: obs, WorkDir: t.TempDir()})
	if obs.changed != 1 {
		t.Fatalf("corrupted %d records", obs.changed)
	}
	if res.Status != core.RunFailed {
		t.Fatalf("run status %s", res.Status)
	}
	y := load.Workload.(ycsb.Spec)
	key := string(ycsb.Key(nil, &y, 17))
	v := res.Validations[0]
	if v.OK() || !strings.Contains(v.Problems[0], "record "+key) || !strings.Contains(v.Problems[0], "field field3 differs") {
		t.Fatalf("validation %+v", v)
	}
	if last := res.Phases[len(res.Phases)-1]; last.End.Status != core.StatusSkipped || !strings.Contains(last.End.Error, key) {
		t.Fatalf("the phase after a failed validation: %s %q", last.End.Status, last.End.Error)
	}
}
