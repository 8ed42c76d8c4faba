package ladder

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

func TestLadderStopsAfterItsStepsNotSustained(t *testing.T) {
	rates := []float64{100, 200, 400, 800}
	held := map[float64]float64{100: 100, 200: 199, 400: 300, 800: 300} // 199 of 200 is within 97%
	for _, tc := range []struct {
		name      string
		stopAfter int
		reps      int
		failAt    float64 // a step that fails instead
		want      string  // per step and repetition: r(un) or s(kipped)
	}{
		{"stop at the first NS, after its repetitions", 1, 2, 0, "rr rr rr ss"},
		{"two NS steps", 2, 1, 0, "r r r r"},
		{"never stop", 0, 1, 0, "r r r r"},
		{"a failed step counts as not sustained", 1, 1, 200, "r r s s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Method{}.Unit("sys", func(string) {})
			var got []string
			for i, rate := range rates {
				var step string
				for rep := range tc.reps {
					st := core.Step{Index: i + 1, Repetition: rep, Spec: core.PhaseSpec{Name: fmt.Sprintf("get@%g", rate), Rate: rate},
						Method: stepOf("get", Params{StopAfterNS: tc.stopAfter, Combine: Pooled})}
					if v := l.Before(&st); v.Act != core.Proceed {
						step += "s"
						continue
					}
					step += "r"
					p := &core.PhaseRun{Spec: st.Spec, End: core.PhaseEnd{Status: core.StatusOK, Elapsed: 10 * time.Second},
						Totals: []core.OpInterval{{Op: core.OpGet, OK: int64(held[rate] * 10)}}}
					if rate == tc.failAt {
						p.End.Status = core.StatusFailed
					}
					ladderEnded(l, st, p)
				}
				got = append(got, step)
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("steps %q, want %q", strings.Join(got, " "), tc.want)
			}
		})
	}
	var notes []string
	l := Method{}.Unit("sys", func(n string) { notes = append(notes, n) })
	st := core.Step{Index: 3, Spec: core.PhaseSpec{Name: "get@400", Rate: 400}, Method: stepOf("get", Params{StopAfterNS: 1})}
	ladderEnded(l, st, &core.PhaseRun{Spec: st.Spec, End: core.PhaseEnd{Status: core.StatusOK, Elapsed: time.Second}, Totals: []core.OpInterval{{OK: 300}}})
	next := core.Step{Index: 4, Spec: core.PhaseSpec{Name: "get@800"}, Method: st.Method}
	v := l.Before(&next)
	if v.Act != core.Omit || len(notes) != 1 {
		t.Errorf("the step after the ladder stopped: %+v, notes %q", v, notes)
	}
	if why := v.Why; why != `the ladder "get" stopped: 1 of its steps not sustained, the last get@400 (held 300 ops/s of 400 ops/s)` {
		t.Errorf("why: %s", why)
	}
}

// stepOf is a step of the ladder name with params p.
func stepOf(name string, p Params) core.MethodStep {
	b, _ := json.Marshal(p)
	return core.MethodStep{Kind: Name, Of: name, Params: b}
}

// ladderEnded tells l how a step ended when it ran alone, as the step loop does.
func ladderEnded(l core.MethodUnit, st core.Step, p *core.PhaseRun) {
	achieved, _ := core.Sustained(p)
	l.After(st, p, core.WholeStep{Status: p.End.Status, Achieved: achieved, Rate: st.Spec.Rate})
}
