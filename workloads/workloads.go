// Package workloads turns a phase's workload description into the operation stream
// of each worker.
package workloads

import (
	"errors"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/memtier"
	"github.com/cmpbench/cmpbench/workloads/pubsub"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

// Phase is the operation streams of one phase: Source(i) for connection i, and
// the side probe's. The streams of a phase share what they must (YCSB's
// acknowledged insert counter), so make one Phase per phase and take every
// connection's stream from it.
type Phase struct {
	spec core.PhaseSpec
	ycsb *ycsb.Phase
}

// NewPhase returns the streams of a phase.
func NewPhase(spec core.PhaseSpec) *Phase {
	p := &Phase{spec: spec}
	if y := spec.Workload.YCSB; y != nil {
		p.ycsb = ycsb.NewPhase(*y, spec.Seed, spec.AllConnections(), spec.Kind == core.PhaseLoad)
	}
	return p
}

// Source returns the stream of connection worker (0-based) of this process: in a
// shard, connection ConnBase+worker of the whole phase, the stream it has there.
func (p *Phase) Source(worker int) (core.OpSource, error) {
	worker += p.spec.ConnBase
	switch w := p.spec.Workload; {
	case w.Memtier != nil:
		return memtier.New(*w.Memtier, p.spec.Seed, worker, p.spec.AllConnections()), nil
	case p.ycsb != nil:
		return p.ycsb.Source(worker), nil
	case w.PubSub != nil:
		return pubsub.New(*w.PubSub, worker), nil
	}
	return nil, errors.New("phase has no workload")
}

// ProbeSource returns the side probe's stream: its op on keys of the loaded range,
// uniformly, never past it, from a random stream of its own.
func (p *Phase) ProbeSource() (core.OpSource, error) {
	spec := p.spec
	if spec.Probe == nil {
		return nil, errors.New("phase has no probe")
	}
	switch w := spec.Workload; {
	case w.Memtier != nil:
		m := *w.Memtier
		m.SetRatio, m.GetRatio = 0, 1
		if spec.Probe.Op == core.OpSet {
			m.SetRatio, m.GetRatio = 1, 0
		}
		m.SetPattern, m.GetPattern, m.MissFraction = core.PatternUniform, core.PatternUniform, 0
		return memtier.New(m, spec.Seed, spec.AllConnections(), spec.AllConnections()+1), nil
	case w.YCSB != nil:
		// READs (or UPDATEs) of initial records, uniformly.
		y := *w.YCSB
		y.Read, y.Update, y.Insert, y.Scan, y.Distribution = 1, 0, 0, 0, core.DistUniform
		if spec.Probe.Op == core.OpUpdate {
			y.Read, y.Update = 0, 1
		}
		return ycsb.NewPhase(y, spec.Seed, spec.AllConnections()+1, false).Source(spec.AllConnections()), nil
	}
	return nil, errors.New("phase has no workload")
}
