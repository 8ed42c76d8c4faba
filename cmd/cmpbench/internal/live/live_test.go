package live

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

const suiteYAML = `name: two
phases:
  - {name: closed, duration: 10s, connections: 4, memtier: {ratio: "1:10", key_max: 1000}}
  - {name: fixed, duration: 10s, rate: 1000, connections: 2, memtier: {ratio: "1:10", key_max: 1000}}
`

func testPlan(t *testing.T, systems ...string) *plan.Plan {
	t.Helper()
	s, err := plan.ParseSuite("two.yaml", []byte(suiteYAML))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(s, systems, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clock is a test's clock, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// latency is a distribution of n values of ns each.
func latency(t *testing.T, n int64, ns int64) core.Latency {
	t.Helper()
	h := core.NewHistogram()
	if err := h.RecordValues(ns, n); err != nil {
		t.Fatal(err)
	}
	l, err := core.Summarize(h)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// interval i of a phase: gets GETs (misses of them missing) and sets SETs, each
// taking ns.
func interval(t *testing.T, i int, gets, misses, sets, ns int64) core.IntervalReport {
	get := core.OpInterval{Op: core.OpGet, OK: gets, Hits: gets - misses, Misses: misses, Response: latency(t, gets, ns), Service: latency(t, gets, ns)}
	set := core.OpInterval{Op: core.OpSet, OK: sets, Response: latency(t, sets, ns), Service: latency(t, sets, ns)}
	set.Errors[core.ErrClassTimeout] = 1
	return core.IntervalReport{Index: i, Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Ops: []core.OpInterval{get, set}}
}

// gather scrapes l's metrics: each sample by its name and labels.
func gather(t *testing.T, l *Live) map[string]*dto.Metric {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{l})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.Metric{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			var labels []string
			for _, lp := range m.Label {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = m
		}
	}
	return out
}

// The metrics follow the run from its interval stream: counts by outcome, the
// latency histograms, the rates and states; while a phase runs, and for a
// while after, its samples carry the time its last interval ended, and then
// none.
func TestMetricsFollowTheRun(t *testing.T) {
	p := testPlan(t, "r")
	c := &clock{t: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)}
	l := New(Options{RunID: "run1", Suite: "two", Plan: p, Now: c.now})
	closed := p.Steps[0]
	l.PhaseStarted(closed, 1)
	for i := range 3 {
		c.add(time.Second)
		l.Interval(closed, interval(t, i, 1000, 10, 100, 200_000))
	}
	ops := `cmpbench_operations_total{op=GET,outcome=%s,phase=closed,system=r}`
	running := gather(t, l)
	for _, tc := range []struct {
		name string
		want float64
	}{
		{strings.Replace(ops, "%s", "ok", 1), 2970},
		{strings.Replace(ops, "%s", "miss", 1), 30},
		{"cmpbench_operations_total{op=SET,outcome=ok,phase=closed,system=r}", 300},
		{"cmpbench_operations_total{op=SET,outcome=timeout,phase=closed,system=r}", 3},
		{"cmpbench_achieved_rate{phase=closed,system=r}", 1100},
		{"cmpbench_phase_index{}", 1},
		{"cmpbench_phases{}", 2},
		{"cmpbench_phase_state{phase=closed,state=running,system=r}", 1},
		{"cmpbench_phase_state{phase=fixed,state=pending,system=r}", 1},
		{"cmpbench_run_state{state=running}", 1},
	} {
		m := running[tc.name]
		if m == nil {
			t.Errorf("no %s", tc.name)
			continue
		}
		if got := value(m); got != tc.want {
			t.Errorf("%s = %g, want %g", tc.name, got, tc.want)
		}
	}
	h := running["cmpbench_response_seconds{op=GET,phase=closed,system=r}"]
	if h == nil || h.Histogram.GetSampleCount() != 3000 || math.Abs(h.Histogram.GetSampleSum()-3000*200e-6) > 1 {
		t.Fatalf("GET response time: %v", h)
	}
	// The three intervals' end: the first arrived 1 s after the start, at its end.
	if want := c.now().UnixMilli(); h.GetTimestampMs() != want {
		t.Errorf("a running phase's histogram stamped %d, want its last interval's end %d", h.GetTimestampMs(), want)
	}
	if _, ok := running["cmpbench_send_lag_seconds{op=GET,phase=closed,system=r}"]; ok {
		t.Errorf("a closed loop has no send lag")
	}
	l.PhaseEnded(closed, &core.PhaseRun{System: "r", Spec: closed.Spec, End: core.PhaseEnd{Status: core.StatusOK, Elapsed: 3 * time.Second},
		Totals: []core.OpInterval{{Op: core.OpGet, OK: 3000}, {Op: core.OpSet, OK: 300}}})
	l.Ended(core.RunComplete, "/results/x/report.html")
	after := gather(t, l)
	if m := after["cmpbench_operations_total{op=SET,outcome=ok,phase=closed,system=r}"]; m == nil || m.GetTimestampMs() != h.GetTimestampMs() {
		t.Errorf("an ended phase's counter: %v, want it at its last interval's end still", m)
	}
	c.add(stampedFor)
	if m := gather(t, l)["cmpbench_operations_total{op=SET,outcome=ok,phase=closed,system=r}"]; m == nil || m.TimestampMs != nil {
		t.Errorf("a phase ended %s ago: its counter %v, want one without a time", stampedFor, m)
	}
	for name, want := range map[string]float64{
		"cmpbench_phase_state{phase=closed,state=ok,system=r}": 1, "cmpbench_achieved_rate{phase=closed,system=r}": 1100,
		"cmpbench_run_state{state=complete}": 1, "cmpbench_run_state{state=running}": 0,
	} {
		if m := after[name]; m == nil || value(m) != want {
			t.Errorf("after the run: %s = %v, want %g", name, m, want)
		}
	}
}

// The connections metrics are what the engine counted, interval by interval:
// the latest interval's open, the opened and lost added up; never the phase's
// configured connections, and absent while nothing was counted (before the
// first interval, or from a plugin that does not count them).
func TestConnectionsMetrics(t *testing.T) {
	const (
		open   = "cmpbench_connections_open{phase=closed,system=r}"
		opened = "cmpbench_connections_opened_total{phase=closed,system=r}"
		lost   = "cmpbench_connections_lost_total{phase=closed,system=r}"
	)
	absent := math.NaN()
	for _, tc := range []struct {
		name  string
		conns []*core.Conns // per interval; nil: none said
		ended bool
		want  map[string]float64 // NaN: absent
	}{
		{"before the first interval", nil, false, map[string]float64{open: absent, opened: absent, lost: absent}},
		{"as counted", []*core.Conns{{Open: 5, Opened: 5}}, false, map[string]float64{open: 5, opened: 5, lost: 0}},
		{"three lost", []*core.Conns{{Open: 5, Opened: 5}, {Open: 2, Lost: 3}}, false, map[string]float64{open: 2, opened: 5, lost: 3}},
		{"and reopened", []*core.Conns{{Open: 5, Opened: 5}, {Open: 2, Lost: 3}, {Open: 5, Opened: 3}}, false, map[string]float64{open: 5, opened: 8, lost: 3}},
		{"lost and reopened within an interval", []*core.Conns{{Open: 5, Opened: 5}, {Open: 5, Opened: 1, Lost: 1}}, false, map[string]float64{open: 5, opened: 6, lost: 1}},
		{"the phase ended", []*core.Conns{{Open: 5, Opened: 5}, {Open: 4, Lost: 1}}, true, map[string]float64{open: 0, opened: 5, lost: 1}},
		{"a plugin that does not count them", []*core.Conns{nil, nil}, false, map[string]float64{open: absent, opened: absent, lost: absent}},
		{"nor after its phase", []*core.Conns{nil, nil}, true, map[string]float64{open: absent, opened: absent, lost: absent}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPlan(t, "r")
			closed := p.Steps[0] // 4 connections and the side probe
			l := New(Options{RunID: "run1", Suite: "two", Plan: p})
			l.PhaseStarted(closed, 1)
			for i, c := range tc.conns {
				r := interval(t, i, 100, 0, 10, 100_000)
				r.Conns = c
				l.Interval(closed, r)
			}
			if tc.ended {
				l.PhaseEnded(closed, &core.PhaseRun{System: "r", Spec: closed.Spec, End: core.PhaseEnd{Status: core.StatusOK, Elapsed: time.Second}})
			}
			got := gather(t, l)
			for name, want := range tc.want {
				m := got[name]
				switch {
				case math.IsNaN(want) && m != nil:
					t.Errorf("%s = %g, want it absent", name, value(m))
				case !math.IsNaN(want) && m == nil:
					t.Errorf("no %s, want %g", name, want)
				case m != nil && value(m) != want:
					t.Errorf("%s = %g, want %g", name, value(m), want)
				}
			}
		})
	}
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return math.NaN()
}

func TestPromBuckets(t *testing.T) {
	top := Buckets[len(Buckets)-1]
	for _, tc := range []struct {
		name   string
		values map[int64]int64 // ns: count
		le     float64         // a bucket's bound
		want   uint64          // the count at or below it
	}{
		{"all below", map[int64]int64{100_000: 5}, lastBelow(1e-3), 5},
		{"split by a bound", map[int64]int64{100_000: 5, 10_000_000: 7}, lastBelow(1e-3), 5},
		{"all above", map[int64]int64{10_000_000: 7}, lastBelow(1e-3), 0},
		{"the top bucket holds them all", map[int64]int64{100_000: 5, 10_000_000: 7}, top, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newPacked()
			var n int64
			var sum float64
			for v, c := range tc.values {
				if err := h.RecordValues(v, c); err != nil {
					t.Fatal(err)
				}
				n += c
				sum += float64(v*c) / 1e9
			}
			count, gotSum, buckets := promBuckets(h)
			if count != uint64(n) || math.Abs(gotSum-sum) > sum*1e-3 {
				t.Errorf("count %d sum %g, want %d and %g", count, gotSum, n, sum)
			}
			if got := buckets[tc.le]; got != tc.want {
				t.Errorf("le %g: %d, want %d", tc.le, got, tc.want)
			}
		})
	}
}

// lastBelow is the largest bound below s.
func lastBelow(s float64) float64 {
	var out float64
	for _, b := range Buckets {
		if b < s {
			out = b
		}
	}
	return out
}

func TestThin(t *testing.T) {
	many := make([]chart.XY, 3*maxPoints)
	for i := range many {
		many[i] = chart.XY{X: float64(i), Y: float64(i % 3)}
	}
	for _, tc := range []struct {
		name    string
		points  []chart.XY
		largest bool
		n       int
		y       float64 // of the first point
	}{
		{"few: as they are", many[:10], true, 10, 0},
		{"latencies: the largest of each group", many, true, maxPoints, 2},
		{"rates: the mean of each group", many, false, maxPoints, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := thin(tc.points, tc.largest)
			if len(got) != tc.n || got[0].Y != tc.y || got[len(got)-1].X != tc.points[len(tc.points)-1].X {
				t.Errorf("%d points, first %v, last %v; want %d, y %g, ending at x %g", len(got), got[0], got[len(got)-1], tc.n, tc.y, tc.points[len(tc.points)-1].X)
			}
		})
	}
}

func TestPhaseLabels(t *testing.T) {
	step := func(index int, name string) plan.Step {
		return plan.Step{Index: index, Spec: core.PhaseSpec{Name: name}}
	}
	for _, tc := range []struct {
		name  string
		steps []plan.Step
		want  map[int]string
	}{
		{"names as they are", []plan.Step{step(0, "load"), step(1, "mix")}, map[int]string{0: "load", 1: "mix"}},
		{"repetitions share their name", []plan.Step{step(1, "mix"), step(1, "mix")}, map[int]string{1: "mix"}},
		{"two phases of one name apart", []plan.Step{step(0, "mix"), step(3, "mix")}, map[int]string{0: "mix#1", 3: "mix#4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := phaseLabels(tc.steps)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("phase %d: %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// Every endpoint is read-only, and nothing served holds a secret.
func TestServedReadOnlyAndRedacted(t *testing.T) {
	const secret = "s3cr3t-Pa55w0rd"
	p := testPlan(t, "r")
	l := New(Options{RunID: "run1", Suite: "two", Plan: p, Redactor: redact.New(secret)})
	l.PhaseStarted(p.Steps[0], 1)
	l.Interval(p.Steps[0], interval(t, 0, 100, 0, 10, 100_000))
	l.Warn("auth failed for password " + secret)
	srv, err := Serve(l, DefaultAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !srv.Loopback() || !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Errorf("served on %s, loopback %t", srv.URL(), srv.Loopback())
	}
	for _, path := range []string{"", "state", "metrics", "events"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			req, _ := http.NewRequest(method, srv.URL()+path, strings.NewReader("x"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s /%s: %d, want 405", method, path, resp.StatusCode)
			}
		}
	}
	for path, want := range map[string]string{"": "report.js", "state": "auth failed", "metrics": "cmpbench_operations_total", "nothing": "404"} {
		resp, err := http.Get(srv.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(b)
		if want == "404" {
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("/%s: %d, want 404", path, resp.StatusCode)
			}
			continue
		}
		if want == "report.js" {
			want = "function drawPanels(" // report.js's drawing code, inlined
		}
		if !strings.Contains(body, want) || strings.Contains(body, secret) {
			t.Errorf("/%s: holds %q: %t, holds the secret: %t", path, want, strings.Contains(body, want), strings.Contains(body, secret))
		}
	}
}

// The events send the state as it changes, and end with the run's end, which
// says where its report is.
func TestEventsEndWithTheRun(t *testing.T) {
	p := testPlan(t, "r")
	l := New(Options{RunID: "run1", Suite: "two", Plan: p})
	srv, err := Serve(l, DefaultAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get(srv.URL() + "events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := readEvents(resp.Body)
	first := <-events
	if first.Run.State != stateRunning || first.Phases[0].State != statePending {
		t.Fatalf("first event: %+v", first)
	}
	l.PhaseStarted(p.Steps[0], 1)
	l.Interval(p.Steps[0], interval(t, 0, 100, 0, 10, 100_000))
	var st snapshot
	for st = range events {
		if st.Phases[0].OK == 110 {
			break
		}
	}
	if st.Phases[0].State != stateRunning || st.Of != "r closed" || len(st.Charts) < 10 {
		t.Errorf("after an interval: %+v", st.Phases[0])
	}
	l.Ended(core.RunInterrupted, "/results/x/report.html")
	for st = range events {
	}
	if st.Run.State != string(core.RunInterrupted) || st.Run.Report != "/results/x/report.html" {
		t.Errorf("the last event: %+v", st.Run)
	}
}

// readEvents reads the state events of a stream until it ends.
func readEvents(r io.Reader) <-chan snapshot {
	out := make(chan snapshot)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var s snapshot
			if json.Unmarshal([]byte(data), &s) == nil {
				out <- s
			}
		}
	}()
	return out
}
