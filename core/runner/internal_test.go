package runner

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
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

func TestTimeoutsGrowWithTheData(t *testing.T) {
	for _, tc := range []struct {
		p           *config.Provision
		loaded      int64
		ready, stop time.Duration
	}{
		{nil, 5_000_000, config.DefaultReadyTimeout, config.DefaultStopTimeout},
		{&config.Provision{}, 5_000_000, config.DefaultReadyTimeout, config.DefaultStopTimeout},
		{&config.Provision{ReadyTimeout: config.Duration(time.Minute), StopTimeout: config.Duration(300 * time.Second)}, 100_000_000, time.Minute, 300 * time.Second},
		{&config.Provision{ReadyTimeout: config.Duration(time.Minute), ReadyPerMillion: config.Duration(10 * time.Second), StopPerMillion: config.Duration(time.Second)},
			100_000_000, time.Minute + 1000*time.Second, config.DefaultStopTimeout + 100*time.Second},
		{&config.Provision{ReadyPerMillion: config.Duration(10 * time.Second)}, 0, config.DefaultReadyTimeout, config.DefaultStopTimeout},
	} {
		r := &systemRunner{sys: &config.System{Provision: tc.p}, loaded: tc.loaded}
		if got := r.readyTimeout(); got != tc.ready {
			t.Errorf("%+v, %d records: ready timeout %s, want %s", tc.p, tc.loaded, got, tc.ready)
		}
		if got := r.stopTimeout(); got != tc.stop {
			t.Errorf("%+v, %d records: stop timeout %s, want %s", tc.p, tc.loaded, got, tc.stop)
		}
	}
}
