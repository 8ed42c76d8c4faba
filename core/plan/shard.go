package plan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cmpbench/cmpbench/core"
)

// Shard is one of the processes that run a plan together (cmpbench run --shard I/N):
// Index of Count, 0-based. The zero Shard is a plan run by one process.
type Shard struct {
	Index, Count int
}

// MaxShards bounds --shard's N.
const MaxShards = 1000

// ParseShard reads "I/N".
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("--shard %q: want I/N, the 0-based shard index I of N shards (e.g. 0/3)", s)
	}
	if cnt < 1 || cnt > MaxShards || idx < 0 || idx >= cnt {
		return Shard{}, fmt.Errorf("--shard %q: want 0 <= I < N <= %d", s, MaxShards)
	}
	return Shard{Index: idx, Count: cnt}, nil
}

// Sharded says the plan is split over more than one process.
func (s Shard) Sharded() bool { return s.Count > 1 }

// First says this is shard 0, or the only process: the one that checks the system
// before a load and validates it after.
func (s Shard) First() bool { return s.Index == 0 }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// shardInsertStride separates the records that the shards of one phase
// repetition insert: shard k inserts from k*(repetitionStride/N) on.
func shardInsertStride(n int) int64 { return repetitionStride / int64(n) }

// ForShard turns the plan into shard s's part of it. Every phase's connections are
// split into N contiguous windows (core.Split); a shard runs its window, each
// connection with the key range, seed and send offsets it has in the whole phase,
// so that the shards together issue exactly the operations of the unsharded plan: a
// P or S load writes every key once across all shards. Rates and op counts are
// split in proportion to connections (the op counts exactly as the connections'
// quotas are); the side probe runs on shard 0 only; YCSB inserts of each shard come
// from a range of their own. Phases that cannot be split yet are refused, naming
// them: pub/sub (a subscriber expects every publisher), concurrency sweeps and
// knees (decided on merged results), restart checks (a restart is the one server's,
// not a shard's), and phases with fewer connections than shards.
func (p *Plan) ForShard(s Shard) error {
	if !s.Sharded() {
		p.Shard = s
		return nil
	}
	var errs []error
	refused := map[string]bool{}
	refuse := func(st Step, why string) {
		if !refused[st.Spec.Name+why] {
			refused[st.Spec.Name+why] = true
			errs = append(errs, fmt.Errorf("phase %q cannot run sharded (--shard %s): %s", st.Spec.Name, s, why))
		}
	}
	for i := range p.Steps {
		st := &p.Steps[i]
		spec := &st.Spec
		switch {
		case spec.Workload.PubSub != nil:
			refuse(*st, "pub/sub phases are not split across shards yet (each subscriber expects every publisher's messages)")
			continue
		case st.Sweep.Name != "" || st.KneeOf != "":
			refuse(*st, "concurrency sweeps and knees are decided on one process's results; run them unsharded")
			continue
		case st.Checks.Restart:
			refuse(*st, "a restart check restarts the one server all shards share; run it unsharded")
			continue
		case spec.Connections < s.Count:
			refuse(*st, fmt.Sprintf("it has %d connections, fewer than the %d shards", spec.Connections, s.Count))
			continue
		}
		total := spec.Connections
		base, conns := core.Split(int64(total), s.Count, s.Index)
		spec.ConnBase, spec.ConnTotal, spec.Connections = int(base), total, int(conns)
		spec.Rate = spec.Rate * float64(conns) / float64(total)
		if spec.Ops > 0 {
			var ops int64
			for c := base; c < base+conns; c++ {
				_, q := core.Split(spec.Ops, total, int(c))
				ops += q
			}
			spec.Ops = ops
			if ops == 0 {
				refuse(*st, fmt.Sprintf("its %d ops leave shard %s none", st.Spec.Ops, s))
			}
		}
		if !s.First() {
			spec.Probe = nil
		}
		if y := spec.Workload.YCSB; y != nil && y.Insert > 0 && spec.Kind != core.PhaseLoad {
			yy := *y
			yy.InsertStart += int64(s.Index) * shardInsertStride(s.Count)
			spec.Workload.YCSB = &yy
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	p.Shard = s
	return nil
}
