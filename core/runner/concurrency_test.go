package runner

import (
	"testing"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

func TestConcurrencyIsTheLargestPhasePlusItsProbe(t *testing.T) {
	step := func(conns int, probe float64) plan.Step {
		st := plan.Step{Spec: core.PhaseSpec{Connections: conns}}
		if probe >= 0 {
			st.Spec.Probe = &core.ProbeSpec{Rate: probe}
		}
		return st
	}
	for _, tc := range []struct {
		steps []plan.Step
		want  int
	}{
		{nil, 0},
		{[]plan.Step{step(50, -1)}, 50},
		{[]plan.Step{step(50, -1), step(64, 200)}, 65},
		{[]plan.Step{step(64, 0), step(10, 200)}, 64},
	} {
		if got := concurrency(tc.steps); got != tc.want {
			t.Errorf("concurrency = %d, want %d", got, tc.want)
		}
	}
}
