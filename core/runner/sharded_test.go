package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// shardPlugin is one shard's synthetic plugin against a store all shards share:
// its loads add to the store's keys, which shard 0 counts.
type shardPlugin struct {
	*plugintest.Synthetic
	keys     *atomic.Int64
	failLoad bool // its part of the load ends failed
	lose     int64
}

func (s *shardPlugin) Count(context.Context) (int64, error) { return s.keys.Load(), nil }

func (s *shardPlugin) Flush(context.Context) error { s.keys.Store(0); return nil }

func (s *shardPlugin) Validate(_ context.Context, _ core.PhaseSpec, expected int64) (core.Validation, error) {
	v := core.Validation{Expected: expected, Counted: s.keys.Load()}
	if v.Counted != expected {
		v.Problems = []string{fmt.Sprintf("counted %d keys of the %d written", v.Counted, expected)}
	}
	return v, nil
}

func (s *shardPlugin) RunPhase(ctx context.Context, spec core.PhaseSpec, onInterval func(core.IntervalReport)) (core.PhaseEnd, error) {
	end, err := s.Synthetic.RunPhase(ctx, spec, onInterval)
	if spec.Kind == core.PhaseLoad {
		for _, t := range end.Totals {
			s.keys.Add(t.OK - s.lose)
		}
		if s.failLoad {
			end.Status, end.Error = core.StatusFailed, "load: 2 of 1000 writes failed"
		}
	}
	return end, err
}

// runShards runs the shards of one plan of suite on system "s" as the processes of
// a sharded run do, each with its plugin, meeting in one directory; it returns
// each shard's result.
func runShards(t *testing.T, suite string, plugins []*shardPlugin) []*core.RunResult {
	t.Helper()
	sys, st := systemAndSuite(t, suite)
	meet, n := t.TempDir(), len(plugins)
	res := make([]*core.RunResult, n)
	var wg sync.WaitGroup
	for i, pl := range plugins {
		p, err := plan.Build(st, []string{"s"}, 1, 7, 1)
		if err != nil {
			t.Fatal(err)
		}
		shard := plan.Shard{Index: i, Count: n}
		if err := p.ForShard(shard); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			res[i] = runner.Run(context.Background(), runner.Config{RunID: fmt.Sprint("shard", i), Plan: p, Systems: sys, WorkDir: t.TempDir(),
				Launch: func(context.Context, string) (runner.Driver, core.PluginRef, error) {
					return pl, core.PluginRef{Adapter: "synthetic"}, nil
				},
				Meeting: runner.DirMeeting{Dir: meet, Shard: shard, Poll: 2 * time.Millisecond, Run: "one run"},
				StartAt: time.Now()})
		})
	}
	wg.Wait()
	return res
}

// systemAndSuite are system "s" (an endpoint no test reaches: the plugins are
// synthetic) and the suite read from its text.
func systemAndSuite(t *testing.T, suite string) (*config.Systems, *plan.Suite) {
	t.Helper()
	cfgFile := filepath.Join(t.TempDir(), "cmpbench.yaml")
	if err := os.WriteFile(cfgFile, []byte("systems:\n  s:\n    adapter: resp\n    endpoint: 127.0.0.1:7000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sys, err := config.LoadSystems(cfgFile, true)
	if err != nil {
		t.Fatal(err)
	}
	st, err := plan.ParseSuite("s.yaml", []byte(suite))
	if err != nil {
		t.Fatal(err)
	}
	return sys, st
}

func newShardPlugins(n int, rates ...float64) []*shardPlugin {
	keys := &atomic.Int64{}
	out := make([]*shardPlugin, n)
	for i := range out {
		out[i] = &shardPlugin{Synthetic: plugintest.NewSynthetic(0), keys: keys}
		if i < len(rates) {
			out[i].AssumedRate = rates[i]
		}
	}
	return out
}

// phaseEnds are a shard's phases as "name status: error", in order.
func phaseEnds(res *core.RunResult) []string {
	var out []string
	for _, p := range res.Phases {
		out = append(out, fmt.Sprintf("%s %s: %s", p.Spec.Name, p.End.Status, p.End.Error))
	}
	return out
}

// What needs every shard is decided once, on the whole step, and every shard
// acts on it alike: shard 0 validates the load after all wrote theirs, a ladder
// stops where the shards together stopped keeping up, a load that failed on one
// shard leaves the phases after it unrun on all, a failed validation stops all.
// (Issue 44: these tests hold the rules through any change of the step loop.)
func TestShardedRunsDecideOnTheWholeStep(t *testing.T) {
	const ladder = `name: l
defaults: {connections: 4, memtier: {key_max: 1000}}
phases:
  - {name: load, kind: load, duration: 60s, validate: true, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: up, duration: 1s, ladder: {rates: [40000, 120000, 200000]}, memtier: {ratio: "0:1"}}
  - {name: reads, duration: 1s, memtier: {ratio: "0:1"}}
`
	t.Run("the whole load is validated on shard 0, a ladder stops on the sum", func(t *testing.T) {
		// Shard 0 alone would hold 120,000 (80,000 of its 60,000), shard 1 not (40,000
		// of 60,000); together they do (120,000), and neither holds 200,000 (100,000
		// each, 120,000 together).
		res := runShards(t, ladder, newShardPlugins(2, 80_000, 40_000))
		for i, r := range res {
			want := []string{"load ok: ", "up@40000 ok: ", "up@120000 ok: ", "up@200000 ok: ", "reads ok: "}
			if got := phaseEnds(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("shard %d ran:\n%s\nwant:\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		if v := res[0].Validations; len(v) != 1 || !v[0].OK() || v[0].Expected != 1000 || v[0].Counted != 1000 {
			t.Errorf("shard 0's validation of the whole load: %+v", v)
		}
		if v := res[1].Validations; len(v) != 0 {
			t.Errorf("shard 1 validated too: %+v", v)
		}
	})
	const stopping = `name: l
defaults: {connections: 4, memtier: {key_max: 1000}}
phases:
  - {name: load, kind: load, duration: 60s, validate: true, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: up, duration: 1s, ladder: {rates: [40000, 200000, 300000]}, memtier: {ratio: "0:1"}}
  - {name: reads, duration: 1s, memtier: {ratio: "0:1"}}
`
	t.Run("a ladder the shards together did not hold stops on every shard", func(t *testing.T) {
		res := runShards(t, stopping, newShardPlugins(2, 80_000, 80_000))
		for i, r := range res {
			want := []string{"load ok: ", "up@40000 ok: ", "up@200000 ok: ", "reads ok: "}
			if got := phaseEnds(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("shard %d ran:\n%s\nwant:\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	})
	t.Run("a load that failed on one shard leaves the reads unrun on all", func(t *testing.T) {
		pl := newShardPlugins(2)
		pl[1].failLoad = true
		res := runShards(t, ladder, pl)
		for i, r := range res {
			got := phaseEnds(r)
			if len(got) != 5 || !strings.HasPrefix(got[4], "reads skipped: ") || !strings.Contains(got[4], `the load "load" failed on a shard`) {
				t.Errorf("shard %d ran:\n%s", i, strings.Join(got, "\n"))
			}
		}
		if v := res[0].Validations; len(v) != 1 || v[0].OK() || !strings.Contains(v[0].Problems[0], "not validated: the load failed on a shard") {
			t.Errorf("shard 0's validation: %+v", v)
		}
	})
	t.Run("a failed validation stops every shard", func(t *testing.T) {
		pl := newShardPlugins(2)
		pl[1].lose = 5 // shard 1's writes do not all land
		res := runShards(t, ladder, pl)
		for i, r := range res {
			got := phaseEnds(r)
			if len(got) != 5 || got[0] != "load ok: " || !strings.HasPrefix(got[1], "up@40000 skipped: ") || !strings.Contains(got[1], "validation failed") {
				t.Errorf("shard %d ran:\n%s", i, strings.Join(got, "\n"))
			}
		}
		if r := res[0]; r.Status != core.RunFailed || res[1].Status != core.RunFailed {
			t.Errorf("run status %s and %s", r.Status, res[1].Status)
		}
	})
}
