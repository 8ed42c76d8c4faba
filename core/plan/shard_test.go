package plan_test

import (
	"math"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

const shardSuite = `
name: sharded
phases:
  - {name: load, kind: load, connections: 7, duration: 60s, ops: 1000, memtier: {ratio: "1:0", key_pattern: "P:P", key_min: 1, key_max: 1000, value_size: 8}}
  - {name: fixed, kind: measured, connections: 7, rate: 10000, duration: 5s, probe: {rate: 100}, memtier: {ratio: "1:10", key_pattern: "R:R", key_min: 1, key_max: 1000, value_size: 8}}
  - {name: counted, kind: measured, connections: 7, duration: 5s, ops: 1003, memtier: {ratio: "1:1", key_pattern: "S:S", key_min: 1, key_max: 1000, value_size: 8}}
  - {name: ycsb-run, kind: measured, connections: 7, duration: 5s, ycsb: {workload: d, record_count: 100}}
`

func shardPlan(t *testing.T, s plan.Shard) *plan.Plan {
	t.Helper()
	suite, err := plan.ParseSuite("sharded.yaml", []byte(shardSuite))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(suite, []string{"a"}, 1, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ForShard(s); err != nil {
		t.Fatal(err)
	}
	return p
}

// opsOf runs the op streams of a step's connections for their quotas (or n ops
// each when the phase has no count bound) and calls fn with every key.
func opsOf(t *testing.T, spec core.PhaseSpec, n int64, fn func(global int, key string)) {
	t.Helper()
	streams, err := core.NewStreams(spec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range spec.Connections {
		src := streams.Source(spec.ConnBase + i)
		quota := n
		if spec.Ops > 0 {
			_, quota = core.Split(spec.Ops, spec.Connections, i)
		}
		var op core.Op
		for range quota {
			src.Next(&op)
			fn(spec.ConnBase+i, string(op.Key))
		}
	}
}

func TestShardsTogetherAreTheWholePlan(t *testing.T) {
	whole := shardPlan(t, plan.Shard{})
	for _, n := range []int{1, 2, 3, 7} {
		var shards []*plan.Plan
		for i := range n {
			shards = append(shards, shardPlan(t, plan.Shard{Index: i, Count: n}))
		}
		for si, want := range whole.Steps {
			var conns int
			var rate float64
			var ops int64
			probes := 0
			for _, sp := range shards {
				got := sp.Steps[si].Spec
				conns += got.Connections
				rate += got.Rate
				ops += got.Ops
				if got.Probe != nil {
					probes++
				}
				if n > 1 && got.ConnTotal != want.Spec.Connections {
					t.Errorf("N=%d %s: ConnTotal %d, want %d", n, got.Name, got.ConnTotal, want.Spec.Connections)
				}
				if errs := got.Validate(); len(errs) > 0 {
					t.Errorf("N=%d %s: %v", n, got.Name, errs)
				}
			}
			if conns != want.Spec.Connections || math.Abs(rate-want.Spec.Rate) > 1e-9*want.Spec.Rate || ops != want.Spec.Ops {
				t.Errorf("N=%d %s: shards sum to %d conns, %g ops/s, %d ops; the phase has %d, %g, %d", n, want.Spec.Name, conns, rate, ops, want.Spec.Connections, want.Spec.Rate, want.Spec.Ops)
			}
			if wantProbes := map[bool]int{true: 1, false: 0}[want.Spec.Probe != nil]; probes != wantProbes {
				t.Errorf("N=%d %s: %d shards probe, want %d", n, want.Spec.Name, probes, wantProbes)
			}
		}

		// Every connection's stream is the one it has in the whole phase: the
		// load writes every key exactly once across all shards and connections,
		// and the other phases issue the same keys per connection.
		for si, want := range whole.Steps[:3] {
			wantKeys := map[int][]string{}
			opsOf(t, want.Spec, 50, func(g int, k string) { wantKeys[g] = append(wantKeys[g], k) })
			gotKeys := map[int][]string{}
			for _, sp := range shards {
				spec := sp.Steps[si].Spec
				if spec.Connections < 2 {
					opsOf(t, spec, 50, func(g int, k string) { gotKeys[g] = append(gotKeys[g], k) })
					continue
				}
				// Each shard split again over two processes (--processes 2) is
				// still the same streams.
				for k := range 2 {
					part, err := plan.SplitSpec(spec, plan.Shard{Index: k, Count: 2}, 1e10)
					if err != nil {
						t.Fatal(err)
					}
					opsOf(t, part, 50, func(g int, k string) { gotKeys[g] = append(gotKeys[g], k) })
				}
			}
			for g := range want.Spec.Connections {
				if strings.Join(gotKeys[g], ",") != strings.Join(wantKeys[g], ",") {
					t.Fatalf("N=%d %s: connection %d issues other keys when sharded", n, want.Spec.Name, g)
				}
			}
			if want.Spec.Kind == core.PhaseLoad {
				seen := map[string]int{}
				for _, ks := range gotKeys {
					for _, k := range ks {
						seen[k]++
					}
				}
				if len(seen) != 1000 {
					t.Fatalf("N=%d: the load wrote %d distinct keys, want 1000", n, len(seen))
				}
				for k, c := range seen {
					if c != 1 {
						t.Fatalf("N=%d: the load wrote %s %d times", n, k, c)
					}
				}
			}
		}

		// YCSB inserts of different shards never collide.
		if n > 1 {
			starts := map[int64]bool{}
			for _, sp := range shards {
				starts[sp.Steps[3].Spec.Workload.(ycsb.Spec).InsertStart] = true
			}
			if len(starts) != n {
				t.Errorf("N=%d: YCSB insert starts %v are not one per shard", n, starts)
			}
		}
	}
}

func TestShardRefusals(t *testing.T) {
	for _, tc := range []struct{ suite, want string }{
		{`{name: x, kind: measured, connections: 2, duration: 5s, memtier: {ratio: "1:1", key_max: 100}}`, "fewer than the 3 parts"},
		{`{name: ps, kind: measured, connections: 4, rate: 100, duration: 5s, pubsub: {subscribers: 2, channels: 2}}`, "pub/sub"},
		{`{name: sw, kind: measured, connections: 3, duration: 5s, sweep: {connections: [3, 6]}, memtier: {ratio: "1:1", key_max: 100}}`, "sweeps"},
		{`{name: few, kind: measured, connections: 3, duration: 5s, ops: 2, memtier: {ratio: "1:1", key_max: 100}}`, "leave part 2/3 none"},
	} {
		suite, err := plan.ParseSuite("s.yaml", []byte("name: s\nphases:\n  - "+tc.suite+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build(suite, []string{"a"}, 1, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		err = p.ForShard(plan.Shard{Index: 2, Count: 3})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--shard 2/3") {
			t.Errorf("%s: %v, want an error saying %q", tc.suite, err, tc.want)
		}
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]string{"0/1": "0/1", "2/3": "2/3", " 1/2 ": "1/2", "3/3": "", "-1/2": "", "1": "", "a/b": "", "0/0": "", "0/1001": ""} {
		s, err := plan.ParseShard(in)
		if got := map[bool]string{true: s.String(), false: ""}[err == nil]; got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %q", in, s, err, want)
		}
	}
}
