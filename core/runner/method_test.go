package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/runner"
)

// upto is a method written the way an outsider would add one, in this file
// alone: `upto: {rates: [...], steps: N}` runs the phase at each rate in turn,
// and its unit lets only the first N rates of a system run — the later ones
// are omitted, as a ladder omits the steps after it stopped. Nothing else in
// cmpbench names it.
type upto struct{}

type uptoDoc struct {
	Rates []float64 `yaml:"rates"`
	Count int       `yaml:"steps"`
}

type uptoParams struct {
	Steps int `json:"steps"`
}

func init() { core.RegisterMethod(upto{}) }

func (upto) Name() string        { return "upto" }
func (upto) Doc() core.MethodDoc { return &uptoDoc{} }

func (d *uptoDoc) Steps(w core.WrittenPhase) (core.MethodSteps, []error) {
	if len(d.Rates) == 0 || d.Count < 1 {
		return core.MethodSteps{}, []error{fmt.Errorf("upto: rates and steps (at least 1) are required")}
	}
	out := core.MethodSteps{Params: uptoParams{Steps: d.Count}}
	for _, r := range d.Rates {
		out.Steps = append(out.Steps, core.Variant{Name: fmt.Sprintf("%s~%g", w.Name, r), Rate: r})
	}
	return out, nil
}

func (upto) Unit(system string, note func(string)) core.MethodUnit {
	return &uptoUnit{system: system, note: note, first: map[string]int{}}
}

type uptoUnit struct {
	system string
	note   func(string)
	first  map[string]int // the suite index of each upto phase's first step
}

func (u *uptoUnit) Before(st *core.Step) core.Verdict {
	var p uptoParams
	if st.Method.Kind != "upto" || st.Method.DecodeParams(&p) != nil {
		return core.Verdict{}
	}
	first, seen := u.first[st.Method.Of]
	if !seen {
		first = st.Index
		u.first[st.Method.Of] = first
	}
	if st.Index-first < p.Steps {
		return core.Verdict{}
	}
	u.note(fmt.Sprintf("%s: %s is past upto's %d steps", u.system, st.Spec.Name, p.Steps))
	return core.Verdict{Act: core.Omit, Why: "past upto's steps"}
}

func (u *uptoUnit) After(core.Step, *core.PhaseRun, core.WholeStep) core.Verdict {
	return core.Verdict{}
}

const uptoSuite = `name: upto
defaults: {memtier: {key_max: 1000}}
phases:
  - {name: load, kind: load, duration: 5s, connections: 2, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: get, duration: 1s, connections: 2, memtier: {ratio: "0:1"}, upto: {rates: [100, 200, 400], steps: 2}}
  - {name: after, duration: 1s, connections: 2, memtier: {ratio: "0:1"}}
`

// A method added in one file runs, on a run of one process and on a sharded
// run alike: its suite section expands into its steps, each carries its
// parameters, and its unit omits the steps past its count on every shard.
func TestAMethodAddedInOneFileRunsLocallyAndSharded(t *testing.T) {
	want := "load ok:  | get~100 ok:  | get~200 ok:  | after ok: "
	local := runAlone(t, uptoSuite, newShardPlugins(1)[0])
	if got := strings.Join(phaseEnds(local), " | "); got != want {
		t.Errorf("alone: %s\nwant   %s", got, want)
	}
	for _, p := range local.Phases {
		if strings.HasPrefix(p.Spec.Name, "get~") && (p.Method.Kind != "upto" || p.Method.Of != "get" || string(p.Method.Params) != `{"steps":2}`) {
			t.Errorf("%s carries %+v", p.Spec.Name, p.Method)
		}
	}
	for i, res := range runShards(t, uptoSuite, newShardPlugins(2)) {
		if got := strings.Join(phaseEnds(res), " | "); got != want {
			t.Errorf("shard %d: %s\nwant     %s", i, got, want)
		}
	}
}

// runAlone runs suite on system "s" in one process, with plugin pl.
func runAlone(t *testing.T, suite string, pl *shardPlugin) *core.RunResult {
	t.Helper()
	sys, st := systemAndSuite(t, suite)
	p, err := plan.Build(st, []string{"s"}, 1, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	return runner.Run(context.Background(), runner.Config{RunID: "alone", Plan: p, Systems: sys, WorkDir: t.TempDir(),
		Launch: func(context.Context, string) (runner.Driver, core.PluginRef, error) {
			return pl, core.PluginRef{Adapter: "synthetic"}, nil
		}})
}
