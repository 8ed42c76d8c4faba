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

// ForShard turns the plan into shard s's part of it (SplitSpec on every step).
// Phases that cannot be split yet are refused, naming them: pub/sub (a subscriber
// expects every publisher), concurrency sweeps and knees (decided on one
// process's results), restart checks (a restart is the one server's, not a
// shard's), and phases with fewer connections than shards.
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
		switch {
		case unsplit(*st) != "":
			refuse(*st, unsplit(*st))
			continue
		case st.Checks.Restart:
			refuse(*st, "a restart check restarts the one server all shards share; run it unsharded")
			continue
		}
		spec, err := SplitSpec(st.Spec, s, repetitionStride)
		if err != nil {
			refuse(*st, err.Error())
			continue
		}
		st.Spec = spec
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	p.Shard = s
	return nil
}

// SplitSpec returns part s of a phase run by s.Count processes. The phase's
// connections (its own window of a larger phase, when it is a shard already) are
// split into contiguous windows (core.Split); part s runs its window, each
// connection with the key range, seed and send offsets it has in the whole phase,
// so that the parts together issue exactly the operations of the phase: a P or S
// load writes every key once across all of them. Rates and op counts are split in
// proportion to connections (op counts exactly as the connections' quotas are);
// the side probe runs in part 0 only; the inserts (core.Inserter) of part s come
// from a range of their own, s*stride/N on from the phase's, where stride
// separates the inserts of the phase's repetitions. Pub/sub phases and phases
// with fewer connections (or ops) than parts cannot be split.
func SplitSpec(spec core.PhaseSpec, s Shard, stride int64) (core.PhaseSpec, error) {
	if s.Count <= 1 {
		return spec, nil
	}
	if u, ok := spec.Workload.(core.Unsplittable); ok {
		return spec, errors.New(u.Unsplittable())
	}
	if spec.Connections < s.Count {
		return spec, fmt.Errorf("it has %d connections, fewer than the %d parts", spec.Connections, s.Count)
	}
	n := spec.Connections
	start, conns := core.Split(int64(n), s.Count, s.Index)
	total := spec.AllConnections()
	out := spec
	out.ConnBase, out.ConnTotal, out.Connections = spec.ConnBase+int(start), total, int(conns)
	out.Rate = spec.Rate * float64(conns) / float64(n)
	if spec.Ops > 0 {
		var ops int64
		for c := start; c < start+conns; c++ {
			_, q := core.Split(spec.Ops, n, int(c))
			ops += q
		}
		if ops == 0 {
			return spec, fmt.Errorf("its %d ops leave part %s none", spec.Ops, s)
		}
		out.Ops = ops
	}
	if s.Index != 0 {
		out.Probe = nil
	}
	if w, ok := spec.Workload.(core.Inserter); ok && spec.Kind != core.PhaseLoad {
		out.Workload = w.ShiftInserts(0, int64(s.Index)*(stride/int64(s.Count)))
	}
	return out, nil
}

// unsplit says why a step cannot run sharded when its method (or the method
// whose result it uses) is decided on one process's results (core.Unsplit),
// or "".
func unsplit(st Step) string {
	for _, kind := range []string{st.Method.Kind, st.Uses.Kind} {
		if m, ok := core.LookupMethod(kind); ok {
			if u, ok := m.(core.Unsplit); ok {
				return u.Unsplit()
			}
		}
	}
	return ""
}
