// Package workloads turns a phase's workload description into the operation stream
// of each worker.
package workloads

import (
	"errors"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/memtier"
)

// NewSource returns the stream of one worker of a phase.
func NewSource(spec core.PhaseSpec, worker int) (core.OpSource, error) {
	switch w := spec.Workload; {
	case w.Memtier != nil:
		return memtier.New(*w.Memtier, spec.Seed, worker, spec.Connections), nil
	}
	return nil, errors.New("phase has no workload")
}
