package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

func TestLadderExpansion(t *testing.T) {
	for _, tc := range []struct {
		name, ladder string
		want         string // step: rate duration reps stop
		err          string
	}{
		{"a list of rates", `{rates: [20000, 50000, 100000], step: 20s}`,
			"get@20000:20000/20s/1/1 get@50000:50000/20s/1/1 get@100000:100000/20s/1/1", ""},
		{"from, to and factor; the top is a step", `{rates: {from: 20000, to: 100000, factor: 2}, step: 5s, repeat: 2, stop_after_ns: 0}`,
			"get@20000:20000/5s/2/0 get@40000:40000/5s/2/0 get@80000:80000/5s/2/0 get@100000:100000/5s/2/0", ""},
		{"the phase's duration is the step", `{rates: [1000]}`, "get@1000:1000/3s/1/1", ""},
		{"falling rates", `{rates: [5000, 1000], step: 1s}`, "", "rates must be positive and rising"},
		{"a factor that never rises", `{rates: {from: 10, to: 100, factor: 1}, step: 1s}`, "", "factor above 1"},
		{"too many steps", `{rates: {from: 1, to: 1e9, factor: 1.01}, step: 1s}`, "", "more than 100"},
		{"rates of the wrong shape", `{rates: 5, step: 1s}`, "", "a list of rates, or {from, to, factor}"},
		{"an unknown key", `{rates: [1], step: 1s, stop_after: 2}`, "", `unknown key "stop_after"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSuite("l.yaml", []byte(fmt.Sprintf(`name: l
defaults: {memtier: {key_max: 100}}
phases:
  - {name: load, kind: load, duration: 5s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: get, duration: 3s, connections: 48, memtier: {ratio: "0:1"}, ladder: %s}
  - {name: after, duration: 1s}
`, tc.ladder)))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "l.yaml:5: ") {
					t.Fatalf("error %v, want %q at l.yaml:5", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := Build(s, []string{"a"}, 1, 7, 1)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			seeds := map[uint64]bool{}
			for i, ph := range s.Phases {
				l := s.Ladders[i]
				if l.Name == "" {
					continue
				}
				reps := 0
				for _, st := range p.Steps {
					if st.Index == i {
						reps++
						if st.Ladder != l || st.Spec.Kind != core.PhaseMeasured || st.Spec.Connections != 48 {
							t.Errorf("step %s: %+v", ph.Name, st)
						}
					}
				}
				seeds[p.Phases[i].Seed] = true
				got = append(got, fmt.Sprintf("%s:%g/%s/%d/%d", ph.Name, ph.Rate, ph.Duration, reps, l.StopAfterNS))
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("steps %s\nwant  %s", strings.Join(got, " "), tc.want)
			}
			if len(seeds) != len(got) {
				t.Errorf("steps share seeds: %d seeds for %d steps", len(seeds), len(got))
			}
			if last := s.Phases[len(s.Phases)-1]; last.Name != "after" || s.Ladders[len(s.Phases)-1].Name != "" || last.Duration != time.Second {
				t.Errorf("the phase after the ladder: %+v", last)
			}
		})
	}
}
