package ladder

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	_ "github.com/cmpbench/cmpbench/workloads"
	"github.com/cmpbench/cmpbench/workloads/memtier"
	"github.com/cmpbench/cmpbench/workloads/suites"
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
			s, err := plan.ParseSuite("l.yaml", []byte(fmt.Sprintf(`name: l
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
			p, err := plan.Build(s, []string{"a"}, 1, 7, 1)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			seeds := map[uint64]bool{}
			for i, ph := range s.Phases {
				m := s.Around[i].Method
				if m.Kind != Name {
					continue
				}
				l := paramsOf(t, m)
				reps := 0
				for _, st := range p.Steps {
					if st.Index == i {
						reps++
						if st.Method.Ref() != m.Ref() || string(st.Method.Params) != string(m.Params) || st.Spec.Kind != core.PhaseMeasured || st.Spec.Connections != 48 {
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
			if last := s.Phases[len(s.Phases)-1]; last.Name != "after" || s.Around[len(s.Phases)-1].Method.Kind != "" || last.Duration != time.Second {
				t.Errorf("the phase after the ladder: %+v", last)
			}
		})
	}
}

// The latency suite is the published ladders' shape: 1,000,000 keys of 256 B, GET
// and 1:10 ladders at 816 connections to 2,400,000 requests/s, GET at 48 to
// 300,000, 20 s steps run twice, stopping at the first step not sustained.
func TestLatencySuiteShape(t *testing.T) {
	data, _ := suites.Get("latency")
	s, err := plan.ParseSuite("latency.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(s, []string{"a"}, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	type ladder struct {
		conns       int
		ratio       string
		first, last float64
		steps, reps int
	}
	got := map[string]*ladder{}
	for _, st := range p.Steps {
		if st.Method.Kind != Name {
			continue
		}
		l := paramsOf(t, st.Method)
		if l.StopAfterNS != 1 || st.Spec.Duration != 20*time.Second || st.Spec.Workload.(memtier.Spec).ValueMax != 256 || st.Spec.Workload.(memtier.Spec).KeyMax != 1_000_000 {
			t.Errorf("step %s: %+v %+v", st.Spec.Name, l, st.Spec)
		}
		g := got[st.Method.Of]
		if g == nil {
			g = &ladder{conns: st.Spec.Connections, ratio: fmt.Sprintf("%d:%d", st.Spec.Workload.(memtier.Spec).SetRatio, st.Spec.Workload.(memtier.Spec).GetRatio), first: st.Spec.Rate}
			got[st.Method.Of] = g
		}
		g.last = st.Spec.Rate
		if st.Repetition == 0 {
			g.steps++
		}
		g.reps = max(g.reps, st.Repetition+1)
	}
	want := map[string]ladder{
		"get-816":   {816, "0:1", 20000, 2_400_000, 10, 2},
		"mixed-816": {816, "1:10", 20000, 2_400_000, 10, 2},
		"get-48":    {48, "0:1", 20000, 300_000, 5, 2},
	}
	for name, w := range want {
		if g := got[name]; g == nil || *g != w {
			t.Errorf("ladder %s: %+v, want %+v", name, g, w)
		}
	}
}

// The pubsub suite is seed 001's delivery test: 64 publishers, 100 subscribers on
// 100 channels, 128 B messages, a ladder of publish rates, 20 s steps twice.
func TestPubSubSuiteShape(t *testing.T) {
	data, _ := suites.Get("pubsub")
	s, err := plan.ParseSuite("pubsub.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(s, []string{"a"}, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var rates []float64
	for _, st := range p.Steps {
		ps, ok := st.Spec.Workload.(core.PubSubSpec)
		if !ok || ps != (core.PubSubSpec{Channels: 100, Subscribers: 100, PayloadSize: 128, ChannelPrefix: core.DefaultChannelPrefix}) ||
			st.Spec.Connections != 64 || st.Spec.Probe != nil || st.Spec.Duration != 20*time.Second || st.Method.Of != "pubsub" {
			t.Fatalf("step %s: %+v %+v", st.Spec.Name, st.Spec, ps)
		}
		if st.Repetition == 0 {
			rates = append(rates, st.Spec.Rate)
		} else if st.Repetition > 1 {
			t.Fatalf("step %s repetition %d", st.Spec.Name, st.Repetition)
		}
	}
	if fmt.Sprint(rates) != "[10000 20000 50000 100000 200000 400000]" {
		t.Fatalf("rates %v", rates)
	}
}

// combine says how the report combines a step's repetitions; every step of the
// ladder carries it, and only the two methods are accepted.
func TestLadderCombine(t *testing.T) {
	for _, tc := range []struct {
		name, combine string
		want          string
		err           string
	}{
		{"pooled by default", "", Pooled, ""},
		{"pooled", ", combine: pooled", Pooled, ""},
		{"mean", ", combine: mean", Mean, ""},
		{"an unknown method", ", combine: median", "", `ladder: combine "median" is not pooled or mean`},
		{"the wrong case", ", combine: Mean", "", `ladder: combine "Mean" is not pooled or mean`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := plan.ParseSuite("l.yaml", []byte(fmt.Sprintf(`name: l
defaults: {memtier: {key_max: 100}}
phases:
  - {name: load, kind: load, duration: 5s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: get, duration: 3s, memtier: {ratio: "0:1"}, ladder: {rates: [10, 20], repeat: 2%s}}
`, tc.combine)))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), `l.yaml:5: phase "get": `+tc.err) {
					t.Fatalf("error %v, want %q at l.yaml:5", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Build(s, []string{"a"}, 1, 7, 1)
			if err != nil {
				t.Fatal(err)
			}
			steps := 0
			for _, st := range p.Steps {
				if st.Method.Kind != Name {
					continue
				}
				steps++
				if got := paramsOf(t, st.Method).Combine; got != tc.want {
					t.Errorf("step %s rep %d: combine %q, want %q", st.Spec.Name, st.Repetition, got, tc.want)
				}
			}
			if steps != 4 {
				t.Errorf("%d ladder steps run, want 2 rates × 2 repetitions", steps)
			}
		})
	}
}

// paramsOf is what a ladder's step carries.
func paramsOf(t *testing.T, m core.MethodStep) Params {
	t.Helper()
	var p Params
	if err := m.DecodeParams(&p); err != nil {
		t.Fatal(err)
	}
	return p
}
