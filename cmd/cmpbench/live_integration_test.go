package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/browsertest"
	"github.com/cmpbench/cmpbench/cmd/cmpbench/internal/live"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// liveSuite is a load, a closed loop and a fixed rate, long enough to be seen
// changing.
const liveSuite = `name: live
phases:
  - {name: load, kind: load, connections: 4, ops: 20000, duration: 60s, memtier: {ratio: "1:0", key_pattern: P, key_max: 20000}}
  - {name: closed, duration: 10s, connections: 4, memtier: {ratio: "1:10", key_max: 20000}}
  - {name: fixed, duration: 10s, rate: 2000, connections: 4, memtier: {ratio: "1:10", key_max: 20000}}
`

var liveLine = regexp.MustCompile(`(?m)^Live: +(http://\S+/) `)

// startLiveRun starts `cmpbench run --live ADDR` of liveSuite on a real
// redis-server, and returns the page's URL, once said, and a wait for the
// run's end.
func startLiveRun(t *testing.T, addr string) (string, func() result) {
	t.Helper()
	port, _ := redisAt(t, 0)
	dir := t.TempDir()
	writeRedisSystem(t, dir, port)
	writeFile(t, dir, "live.yaml", liveSuite)
	cmd := exec.Command(binary, "run", "--systems", "r", "--suite", "./live.yaml", "--live", addr)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			errb.WriteString(sc.Text() + "\n")
			if m := liveLine.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	wait := func() result {
		err := cmd.Wait()
		pw.Close()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return result{out.String(), errb.String(), code}
	}
	select {
	case u := <-urls:
		return u, wait
	case <-time.After(30 * time.Second):
		r := wait()
		t.Fatalf("no Live: line in 30 s:\n%s", r.stderr)
		return "", nil
	}
}

// phaseRead is what the live page shows of the phase under way.
type phaseRead struct {
	Key   string  `json:"key"`
	OK    float64 `json:"ok"`
	LastX float64 `json:"lastX"`
}

const readRunning = `(function () {
  var tr = document.querySelector("#phases tr.running");
  var fig = document.querySelector("figure.chart[data-chart^='rate-']");
  if (!tr || !fig || !fig.getAttribute("data-last-x")) return {key: "", ok: 0, lastX: 0};
  return {key: tr.getAttribute("data-key"), ok: Number(tr.querySelector("td.ok").textContent.replace(/,/g, "")),
    lastX: Number(fig.getAttribute("data-last-x"))};
}())`

// Issue 47: a run with --live, its page open in headless Chromium during the
// run: a phase's operation count and its throughput chart's last point
// advance between two reads, nothing goes wrong on the console, and at the
// end the page's totals are the archive's.
func TestLivePageIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	browsertest.Need(t)
	u, wait := startLiveRun(t, live.DefaultAddr)
	page := browsertest.OpenURL(t, u)
	defer page.Close()
	var first phaseRead
	for deadline := time.Now().Add(40 * time.Second); first.Key == "" || first.LastX == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no phase under way with a chart on the page in 40 s")
		}
		first = browsertest.Eval[phaseRead](t, page, readRunning)
	}
	time.Sleep(2500 * time.Millisecond)
	second := browsertest.Eval[phaseRead](t, page, readRunning)
	if second.Key == first.Key && (second.OK <= first.OK || second.LastX <= first.LastX) {
		t.Errorf("phase %s did not advance: %+v, then %+v", first.Key, first, second)
	}
	t.Logf("phase %s: %g ops at %g s, then %s: %g ops at %g s", first.Key, first.OK, first.LastX, second.Key, second.OK, second.LastX)
	for deadline := time.Now().Add(90 * time.Second); browsertest.Eval[string](t, page, `document.body.getAttribute("data-state")`) == "running"; time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page never said the run ended")
		}
	}
	r := wait()
	a := archiveOf(t, r)
	if rep, _ := a.ReadFile(archive.ReportFile); !a.Manifest.Live || !strings.Contains(string(rep), "The run was served live (run --live)") {
		t.Errorf("the archive does not say the run was served live (manifest live %v)", a.Manifest.Live)
	}
	type total struct {
		Key            string
		OK, Errors     int64
		State, Report  string
		System, Phase  string
		Index, Repeats int
	}
	got := browsertest.Eval[[]total](t, page, `window.cmpbenchLive.state.phases.map(function (p) {
  var k = p.key.split("/");
  return {Key: p.key, OK: p.ok, Errors: p.errors, State: p.state, Report: window.cmpbenchLive.state.run.report, System: p.system, Phase: p.phase, Index: Number(k[1])};
})`)
	if len(got) != 3 {
		t.Fatalf("the page shows %d phases, want 3: %+v", len(got), got)
	}
	for _, p := range got {
		var ok, errs int64
		for _, row := range a.Summary {
			if row.System == p.System && row.PhaseIndex == p.Index {
				ok += row.Count
				errs += row.Errors
			}
		}
		if p.OK != ok || p.Errors != errs || p.State != "ok" || !strings.HasSuffix(p.Report, "/report.html") {
			t.Errorf("page: %s %d ok, %d errors, %s, report %q; archive: %d ok, %d errors", p.Key, p.OK, p.Errors, p.State, p.Report, ok, errs)
		}
	}
	errors, requests := page.Seen()
	for _, e := range errors {
		t.Errorf("console: %s", e)
	}
	for _, q := range requests {
		t.Errorf("the page requested %s", q)
	}
}

// Issue 47: a real Prometheus scraping `cmpbench run --live` every second has
// the operation counters of each phase, at rates within 5 % of the archive's
// throughput, and latency histograms whose p99 is the archive's within the
// buckets' resolution.
func TestLivePrometheusIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	provisiontest.Need(t, "prometheus")
	livePort, promPort := freeLoopbackPort(t), freeLoopbackPort(t)
	promURL := startPrometheus(t, promPort, livePort)
	_, wait := startLiveRun(t, fmt.Sprintf("127.0.0.1:%d", livePort))
	r := wait()
	a := archiveOf(t, r)
	time.Sleep(1500 * time.Millisecond) // Prometheus's last scrape written
	for _, phase := range []string{"load", "closed", "fixed"} {
		samples := promSamples(t, promURL, fmt.Sprintf(`cmpbench_operations_total{system="r",phase=%q,outcome=~"ok|miss"}`, phase))
		var seconds float64
		var count int64
		p99 := map[string]int64{}
		for _, row := range a.Summary {
			if row.System == "r" && row.Phase == phase {
				seconds, count = row.DurationS, count+row.Count
				p99[row.Op] = row.RespP99
			}
		}
		// The ops over the phase's whole window: a closed loop's achieved rate
		// leaves out the time its client stood still, which Prometheus's
		// samples, a second apart, cannot.
		achieved := float64(count) / seconds
		// The last phase's last interval may end after the last scrape before
		// cmpbench exits.
		if last := phase == "fixed"; len(samples) == 0 || !last && samples[len(samples)-1].value != float64(count) {
			t.Errorf("%s: Prometheus's counters %v, want them ending at the archive's %d ops", phase, samples, count)
			continue
		}
		if phase == "load" {
			continue // over in well under a second: no rate to tell
		}
		checkLiveConnections(t, promURL, a, phase)
		rate, at := counterRate(samples)
		// Prometheus's samples begin after the phase's first interval, whose
		// warm-up the phase's whole-window rate holds: compare the rate over
		// the same intervals of the archive.
		same := archiveRate(t, a, "r", phase, samples[0], samples[len(samples)-1])
		t.Logf("%s: Prometheus %.0f ops/s over %d samples, archive %.0f ops/s over the same intervals, %.0f over the phase (%d ops in %.3f s)", phase, rate, len(samples), same, achieved, count, seconds)
		if len(samples) < 3 || math.Abs(rate/same-1) > 0.01 {
			t.Errorf("%s: Prometheus's rate %.0f ops/s (%d samples), the archive's %.0f over the same intervals", phase, rate, len(samples), same)
		}
		for op, want := range p99 {
			q := fmt.Sprintf(`histogram_quantile(0.99, cmpbench_response_seconds_bucket{system="r",phase=%q,op=%q})`, phase, op)
			got := promInstant(t, promURL, q, at) * 1e9
			// Linear within the bucket holding the 99th percentile: at most one
			// bucket's width (x1.26) from the archive's value.
			t.Logf("%s %s: p99 Prometheus %.0f ns, archive %d ns", phase, op, got, want)
			if ratio := got / float64(want); ratio < 1/1.27 || ratio > 1.27 {
				t.Errorf("%s %s: Prometheus's p99 %.0f ns, the archive's %d ns", phase, op, got, want)
			}
		}
	}
}

// checkLiveConnections checks what Prometheus scraped of a phase's connections
// against the phase's in the archive: its engine counted its connections and
// its side probe's open while it ran (none lost, on a server that stays up),
// and none once it ended; the run's last phase may end after the last scrape.
func checkLiveConnections(t *testing.T, promURL string, a *archive.Archive, phase string) {
	t.Helper()
	want := -1.0
	for _, p := range a.Manifest.Phases {
		if p.System == "r" && p.Name == phase {
			want = float64(p.Connections)
			if p.ProbeRate > 0 {
				want++
			}
		}
	}
	open := promSamples(t, promURL, fmt.Sprintf(`cmpbench_connections_open{system="r",phase=%q}`, phase))
	lost := promSamples(t, promURL, fmt.Sprintf(`cmpbench_connections_lost_total{system="r",phase=%q}`, phase))
	var most float64
	for _, s := range open {
		most = max(most, s.value)
	}
	t.Logf("%s: connections open %v, lost %v; the phase's %g", phase, open, lost, want)
	if len(open) == 0 || most != want || phase != "fixed" && open[len(open)-1].value != 0 {
		t.Errorf("%s: Prometheus's connections open %v, want %g while it ran and 0 once it ended", phase, open, want)
	}
	if len(lost) == 0 || lost[len(lost)-1].value != 0 {
		t.Errorf("%s: connections lost %v, want 0", phase, lost)
	}
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startPrometheus starts Debian's prometheus on loopback, scraping
// 127.0.0.1:target every second, and waits until it is ready.
func startPrometheus(t *testing.T, port, target int) string {
	t.Helper()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "prometheus.yml", fmt.Sprintf("global: {scrape_interval: 1s, scrape_timeout: 900ms}\nscrape_configs:\n  - job_name: cmpbench\n    static_configs: [{targets: ['127.0.0.1:%d']}]\n", target))
	cmd := exec.Command("prometheus", "--config.file="+cfg, "--storage.tsdb.path="+dir+"/data",
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready in 30 s:\n%s", logs.String())
		}
	}
}

type promSample struct {
	at    float64 // seconds
	value float64
}

// promQuery asks Prometheus's HTTP API.
func promQuery(t *testing.T, base, path string, params url.Values) []json.RawMessage {
	t.Helper()
	resp, err := http.Get(base + path + "?" + params.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("prometheus %s %v: %v %s", path, params, err, body.Error)
	}
	return body.Data.Result
}

// promSamples are the raw samples of the series q selects over the last 5
// minutes, summed at each time (the series of one phase share their times),
// each kept where the sum changed.
func promSamples(t *testing.T, base, q string) []promSample {
	t.Helper()
	res := promQuery(t, base, "/api/v1/query", url.Values{"query": {q + "[5m]"}, "time": {fmt.Sprint(time.Now().Unix())}})
	sums := map[float64]float64{}
	for _, r := range res {
		var s struct {
			Values [][2]any `json:"values"`
		}
		if err := json.Unmarshal(r, &s); err != nil {
			t.Fatal(err)
		}
		for _, v := range s.Values {
			f, _ := strconv.ParseFloat(v[1].(string), 64)
			sums[v[0].(float64)] += f
		}
	}
	var out []promSample
	for _, at := range slices.Sorted(maps.Keys(sums)) {
		if n := len(out); n == 0 || out[n-1].value != sums[at] {
			out = append(out, promSample{at, sums[at]})
		}
	}
	return out
}

// archiveRate is the archive's rate of system's successful ops in phase over
// the intervals between two of Prometheus's samples of its counter. Each
// sample must be the sum of the phase's first intervals, as the archive has
// them (the live page counts whole intervals); the rate is of those between.
func archiveRate(t *testing.T, a *archive.Archive, system, phase string, first, last promSample) float64 {
	t.Helper()
	rows, err := a.Intervals()
	if err != nil {
		t.Fatal(err)
	}
	counts, ends := map[int]int64{}, map[int]int64{}
	for _, r := range rows {
		if r.System == system && r.Phase == phase {
			counts[r.Interval] += r.Count
			ends[r.Interval] = r.EndNs
		}
	}
	at := func(s promSample) (sum, end int64) {
		for _, i := range slices.Sorted(maps.Keys(counts)) {
			if float64(sum) == s.value {
				return sum, end
			}
			sum, end = sum+counts[i], ends[i]
		}
		if float64(sum) != s.value {
			t.Fatalf("%s: Prometheus's counter %v is the sum of none of the archive's first intervals %v", phase, s, counts)
		}
		return sum, end
	}
	n0, t0 := at(first)
	n1, t1 := at(last)
	if t1 <= t0 {
		t.Fatalf("%s: no interval between Prometheus's samples %v and %v", phase, first, last)
	}
	return float64(n1-n0) / (float64(t1-t0) / 1e9)
}

// counterRate is a counter's rate from its first sample to its last change
// (later samples are the ended phase's, at scrape time), and that sample's
// time.
func counterRate(s []promSample) (float64, float64) {
	if len(s) < 2 {
		return 0, 0
	}
	first, last := s[0], s[len(s)-1]
	if last.at <= first.at {
		return 0, last.at
	}
	return (last.value - first.value) / (last.at - first.at), last.at
}

// promInstant is q's one value at time at.
func promInstant(t *testing.T, base, q string, at float64) float64 {
	t.Helper()
	res := promQuery(t, base, "/api/v1/query", url.Values{"query": {q}, "time": {strconv.FormatFloat(at, 'f', 3, 64)}})
	if len(res) != 1 {
		t.Fatalf("%s: %d series, want 1", q, len(res))
	}
	var s struct {
		Value [2]any `json:"value"`
	}
	if err := json.Unmarshal(res[0], &s); err != nil {
		t.Fatal(err)
	}
	f, _ := strconv.ParseFloat(s.Value[1].(string), 64)
	return f
}
