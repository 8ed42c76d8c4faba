// Package workloads turns a phase's workload description into the operation stream
// of each worker.
package workloads

import (
	"errors"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/memtier"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

// NewSource returns the stream of one worker of a phase.
func NewSource(spec core.PhaseSpec, worker int) (core.OpSource, error) {
	switch w := spec.Workload; {
	case w.Memtier != nil:
		return memtier.New(*w.Memtier, spec.Seed, worker, spec.Connections), nil
	case w.YCSB != nil:
		return ycsb.New(*w.YCSB, spec.Seed, worker, spec.Connections, spec.Kind == core.PhaseLoad), nil
	}
	return nil, errors.New("phase has no workload")
}

// NewProbeSource returns the side probe's stream: its op on keys of the loaded range,
// uniformly, never past it, from a random stream of its own.
func NewProbeSource(spec core.PhaseSpec) (core.OpSource, error) {
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
		return memtier.New(m, spec.Seed, spec.Connections, spec.Connections+1), nil
	case w.YCSB != nil:
		// READs (or UPDATEs) of initial records, uniformly.
		y := *w.YCSB
		y.Read, y.Update, y.Insert, y.Scan, y.Distribution = 1, 0, 0, 0, core.DistUniform
		if spec.Probe.Op == core.OpUpdate {
			y.Read, y.Update = 0, 1
		}
		return ycsb.New(y, spec.Seed, spec.Connections, spec.Connections+1, false), nil
	}
	return nil, errors.New("phase has no workload")
}
