package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/core"
)

// ycsbAtTarget is YCSB output written here, line for line in the format of YCSB
// 0.17's Client, StatusThread and TextMeasurementsExporter (no public output with
// -target, measurement.interval=both and failed operations was found): a run at
// -target 100 with two status intervals, five READs not found, and a password on
// the command line.
const ycsbAtTarget = `Command line: -db site.ycsb.db.RedisClient -s -P workloads/workloada -p redis.host=127.0.0.1 -p redis.port=6379 -p redis.password=hunter2secret -p measurement.interval=both -target 100 -threads 2 -t
YCSB Client 0.17.0

Loading workload...
Starting test.
2026-12-01 10:00:00:000 0 sec: 0 operations; est completion in 0 second
DBWrapper: report latency for each error is false and specific error codes to track for latency are: []
2026-12-01 10:00:10:000 10 sec: 1000 operations; 100 current ops/sec; est completion in 10 seconds [READ: Count=495, Max=900, Min=100, Avg=200, 90=300, 99=500, 99.9=900, 99.99=900] [READ-FAILED: Count=5, Max=400, Min=100, Avg=200, 90=400, 99=400, 99.9=400, 99.99=400] [UPDATE: Count=500, Max=800, Min=150, Avg=250, 90=350, 99=600, 99.9=800, 99.99=800] [Intended-READ: Count=495, Max=1900, Min=100, Avg=300, 90=400, 99=1500, 99.9=1900, 99.99=1900] [Intended-READ-FAILED: Count=5, Max=400, Min=100, Avg=200, 90=400, 99=400, 99.9=400, 99.99=400] [Intended-UPDATE: Count=500, Max=1800, Min=150, Avg=350, 90=450, 99=1600, 99.9=1800, 99.99=1800]
2026-12-01 10:00:20:000 20 sec: 2000 operations; 100 current ops/sec; [READ: Count=500, Max=950, Min=100, Avg=220, 90=310, 99=520, 99.9=950, 99.99=950] [UPDATE: Count=500, Max=810, Min=150, Avg=260, 90=360, 99=610, 99.9=810, 99.99=810] [CLEANUP: Count=2, Max=50, Min=10, Avg=30, 90=50, 99=50, 99.9=50, 99.99=50] [Intended-READ: Count=500, Max=1950, Min=100, Avg=320, 90=410, 99=1520, 99.9=1950, 99.99=1950] [Intended-UPDATE: Count=500, Max=1810, Min=150, Avg=360, 90=460, 99=1610, 99.9=1810, 99.99=1810]
[OVERALL], RunTime(ms), 20000
[OVERALL], Throughput(ops/sec), 100.0
[TOTAL_GCs], Count, 1
[READ], Operations, 995
[READ], AverageLatency(us), 210.0
[READ], MinLatency(us), 100
[READ], MaxLatency(us), 950
[READ], 95thPercentileLatency(us), 400
[READ], 99thPercentileLatency(us), 510
[READ], Return=OK, 995
[READ], Return=NOT_FOUND, 5
[READ-FAILED], Operations, 5
[READ-FAILED], AverageLatency(us), 200.0
[READ-FAILED], MinLatency(us), 100
[READ-FAILED], MaxLatency(us), 400
[READ-FAILED], 95thPercentileLatency(us), 400
[READ-FAILED], 99thPercentileLatency(us), 400
[CLEANUP], Operations, 2
[CLEANUP], AverageLatency(us), 30.0
[UPDATE], Operations, 1000
[UPDATE], AverageLatency(us), 255.0
[UPDATE], MinLatency(us), 150
[UPDATE], MaxLatency(us), 810
[UPDATE], 95thPercentileLatency(us), 500
[UPDATE], 99thPercentileLatency(us), 605
[UPDATE], Return=OK, 1000
[Intended-READ], Operations, 995
[Intended-READ], AverageLatency(us), 310.0
[Intended-READ], MinLatency(us), 100
[Intended-READ], MaxLatency(us), 1950
[Intended-READ], 95thPercentileLatency(us), 900
[Intended-READ], 99thPercentileLatency(us), 1510
[Intended-UPDATE], Operations, 1000
[Intended-UPDATE], AverageLatency(us), 355.0
[Intended-UPDATE], MinLatency(us), 150
[Intended-UPDATE], MaxLatency(us), 1810
[Intended-UPDATE], 95thPercentileLatency(us), 1000
[Intended-UPDATE], 99thPercentileLatency(us), 1605
`

func TestYCSB(t *testing.T) {
	dir := filepath.Join("testdata", "ycsb")
	synthetic := filepath.Join(t.TempDir(), "at-target.log")
	if err := os.WriteFile(synthetic, []byte(ycsbAtTarget), 0o644); err != nil {
		t.Fatal(err)
	}
	type op struct {
		kind             core.OpKind
		ok, notFound     int64
		p99, max         int64 // service, ns
		respP99          int64
		intervalsOK      []int64
		intervalNotFound []int64
	}
	tests := []struct {
		name, file string
		version    string
		conns      int
		rate       float64
		elapsed    time.Duration
		started    time.Time
		endpoint   string
		response   string
		ops        []op
		caveats    []string
	}{
		{name: "0.17.0 with status lines (cybergarage/go-redis)", file: filepath.Join(dir, "go-redis-server-workloada.txt"), version: "0.17.0",
			elapsed: 235 * time.Millisecond, started: time.Date(2022, 9, 3, 17, 7, 47, 680e6, time.UTC), response: "taken as equal to service time",
			ops: []op{{kind: core.OpRead, ok: 479, p99: 298000, max: 13207000, intervalsOK: []int64{479}},
				{kind: core.OpUpdate, ok: 521, p99: 319000, max: 934000, intervalsOK: []int64{521}}},
			caveats: []string{"The output has no YCSB command line", "Intervals are YCSB's status lines", "gives no p50, p90, p99.9, p99.99; its p95 has no column here", "as if UTC"}},
		{name: "0.1 with failed UPDATEs counted as Operations (Junyi1995)", file: filepath.Join(dir, "mongodb-async-workloada-0.1.txt"), version: "0.1",
			conns: 1, elapsed: 336 * time.Millisecond, endpoint: "localhost:27017", response: responseClosed,
			ops: []op{{kind: core.OpRead, ok: 499, p99: 1005000, max: 60223000, intervalsOK: []int64{499}},
				{kind: core.OpUpdate, ok: 0, notFound: 501, intervalsOK: []int64{0}, intervalNotFound: []int64{501}}},
			caveats: []string{"YCSB ran closed loop", "UPDATE (501) only failed", "[OVERALL] throughput (2976.19 ops/s) counts failed operations", "no status lines"}},
		{name: "a load without its command line (Depdx)", file: filepath.Join(dir, "load-no-command-line.txt"),
			elapsed: 1186 * time.Millisecond, response: "taken as equal to service time",
			ops:     []op{{kind: core.OpInsert, ok: 1000, p99: 2133000, max: 22527000, intervalsOK: []int64{1000}}},
			caveats: []string{"The output has no YCSB command line"}},
		{name: "at -target, measurement.interval=both, failures (written here)", file: synthetic, version: "0.17.0", conns: 2, rate: 100,
			elapsed: 20 * time.Second, started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), endpoint: "127.0.0.1:6379", response: responseIntended,
			ops: []op{{kind: core.OpRead, ok: 995, notFound: 5, p99: 510000, max: 950000, respP99: 1510000, intervalsOK: []int64{495, 500}, intervalNotFound: []int64{5, 0}},
				{kind: core.OpUpdate, ok: 1000, p99: 605000, max: 810000, respP99: 1605000, intervalsOK: []int64{500, 500}}},
			caveats: []string{"Response time is YCSB's: from YCSB's intended start times"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := YCSB(tc.file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			p := r.Phases[0]
			if r.Info.Tool != ToolYCSB || r.Info.Version != tc.version || !strings.HasPrefix(r.Info.ResponseTime, tc.response) || r.System.Endpoint != tc.endpoint {
				t.Errorf("run %+v, endpoint %q", r.Info, r.System.Endpoint)
			}
			if p.Info.Connections != tc.conns || p.Info.Rate != tc.rate || p.Info.ElapsedNs != int64(tc.elapsed) || !p.Info.Started.Equal(tc.started) {
				t.Errorf("phase %+v", p.Info)
			}
			if len(p.Totals) != len(tc.ops) {
				t.Fatalf("totals %+v", p.Totals)
			}
			for k, want := range tc.ops {
				got := p.Totals[k]
				if got.Op != want.kind || got.OK != want.ok || got.Errors[core.ErrClassNotFound] != want.notFound || got.ErrorTotal() != want.notFound {
					t.Errorf("%s: ok %d, errors %v; want %d and %d not found", got.Op, got.OK, got.Errors, want.ok, want.notFound)
				}
				if got.Service.P99 != want.p99 || got.Service.Max != want.max || len(got.Service.HDR) != 0 {
					t.Errorf("%s: service p99 %d, max %d; want %d, %d", got.Op, got.Service.P99, got.Service.Max, want.p99, want.max)
				}
				wantResp := want.respP99
				if tc.rate == 0 {
					wantResp = want.p99
				}
				if got.Response.P99 != wantResp {
					t.Errorf("%s: response p99 %d, want %d", got.Op, got.Response.P99, wantResp)
				}
				if len(p.Intervals) != len(want.intervalsOK) {
					t.Fatalf("%d intervals, want %d", len(p.Intervals), len(want.intervalsOK))
				}
				for i, iv := range p.Intervals {
					o := iv.Ops[k]
					nf := int64(0)
					if want.intervalNotFound != nil {
						nf = want.intervalNotFound[i]
					}
					if o.OK != want.intervalsOK[i] || o.Errors[core.ErrClassNotFound] != nf {
						t.Errorf("%s interval %d: ok %d, not found %d; want %d, %d", got.Op, i, o.OK, o.Errors[core.ErrClassNotFound], want.intervalsOK[i], nf)
					}
				}
			}
			caveatsInclude(t, r, tc.caveats...)
			a := writeArchive(t, r)
			for _, s := range r.secrets {
				if strings.Contains(a.Manifest.Phases[0].Workload, s) {
					t.Errorf("the workload description holds the secret %q", s)
				}
			}
		})
	}
}

func TestYCSBSecrets(t *testing.T) {
	p := ycsbProps(strings.Fields("-db x -p redis.password=hunter2secret -p mongodb.url=mongodb://u:pw123456@h:27017/ycsb -p recordcount=10"))
	if got := strings.Join(ycsbSecrets(p), " "); got != "hunter2secret pw123456" {
		t.Errorf("secrets %q", got)
	}
	if got := ycsbEndpoint(p); got != "h:27017" {
		t.Errorf("endpoint %q", got)
	}
}

// writeYCSBHdr writes an HdrHistogram log as YCSB's OneMeasurementHdrHistogram
// does (a comment naming the measurement, the format version, the start time, no
// base time line, times relative to the start, interval lengths), one interval per
// histogram of values in µs, each 10 s long from start.
func writeYCSBHdr(t *testing.T, path, name string, start time.Time, intervals ...[]int64) {
	t.Helper()
	var b bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&b)
	_ = w.OutputComment("[Logging for: " + name + "]")
	_ = w.OutputLogFormatVersion()
	_ = w.OutputStartTime(start.UnixMilli())
	w.SetBaseTime(start.UnixMilli())
	_ = w.OutputLegend()
	for i, values := range intervals {
		h := hdrhistogram.New(1, 3600e6, 3)
		for _, v := range values {
			_ = h.RecordValue(v)
		}
		h.SetStartTimeMs(start.Add(time.Duration(i) * 10 * time.Second).UnixMilli())
		h.SetEndTimeMs(start.Add(time.Duration(i+1) * 10 * time.Second).UnixMilli())
		if err := w.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestYCSBHdrLogs(t *testing.T) {
	// Text output and HdrHistogram logs written here in YCSB's formats: READ in
	// three intervals (two status lines and the final export), UPDATE in two.
	dir := t.TempDir()
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	reads := [][]int64{{100, 120, 130, 5000}, {110, 115, 90000}, {100}}
	updates := [][]int64{{200, 210}, {220, 230, 240}}
	writeYCSBHdr(t, filepath.Join(dir, "run-READ.hdr"), "READ", start, reads...)
	writeYCSBHdr(t, filepath.Join(dir, "run-UPDATE.hdr"), "UPDATE", start, updates...)
	log := `Command line: -db site.ycsb.BasicDB -P workloads/workloada -p hdrhistogram.fileoutput=true -p hdrhistogram.output.path=run- -threads 4 -t
YCSB Client 0.17.0
[OVERALL], RunTime(ms), 30000
[OVERALL], Throughput(ops/sec), 0.4
[READ], Operations, 8
[READ], 99thPercentileLatency(us), 90000
[READ], Return=OK, 8
[UPDATE], Operations, 5
[UPDATE], 99thPercentileLatency(us), 240
[UPDATE], Return=OK, 5
`
	path := filepath.Join(dir, "run.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	without, err := YCSB(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	caveatsInclude(t, without, `YCSB wrote HdrHistogram logs (hdrhistogram.fileoutput=true, output path "run-") that were not given with --hdr-prefix`)

	r, err := YCSB(path, Options{HDRPrefix: filepath.Join(dir, "run-")})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Phases[0]
	if len(p.Intervals) != 3 || !p.Info.Started.Equal(start) || p.Info.Connections != 4 {
		t.Fatalf("%d intervals, started %s, %d conns", len(p.Intervals), p.Info.Started, p.Info.Connections)
	}
	for i, iv := range p.Intervals {
		if iv.Start != time.Duration(i)*10*time.Second || iv.End != time.Duration(i+1)*10*time.Second {
			t.Errorf("interval %d: %s to %s", i, iv.Start, iv.End)
		}
		wantUpdates := 0
		if i < len(updates) {
			wantUpdates = len(updates[i])
		}
		if iv.Ops[0].OK != int64(len(reads[i])) || iv.Ops[1].OK != int64(wantUpdates) || len(iv.Ops[0].Service.HDR) == 0 {
			t.Errorf("interval %d: %d READs, %d UPDATEs", i, iv.Ops[0].OK, iv.Ops[1].OK)
		}
	}
	read := p.Totals[0]
	// Each value is its YCSB bucket's upper bound (3 digits) re-recorded in
	// cmpbench's histogram (3 digits): within 0.2% of what was recorded.
	near := func(got, want int64) bool { return got >= want && float64(got-want) <= 0.002*float64(want) }
	if read.OK != 8 || !near(read.Service.Max, 90000*1000) || !near(read.Service.P50, 115*1000) || len(read.Service.HDR) == 0 || read.Response.P99 != read.Service.P99 {
		t.Errorf("READ totals %+v", read.Service)
	}
	if len(r.Info.Files) != 2 || r.Info.Files[0].Name != "run-READ.hdr" {
		t.Errorf("files %+v", r.Info.Files)
	}
	caveatsInclude(t, r, "Intervals and histograms are YCSB's HdrHistogram logs'", "Percentiles come from YCSB's HdrHistogram logs")
	writeArchive(t, r)

	// A log of another run, and a missing one.
	writeYCSBHdr(t, filepath.Join(dir, "other-READ.hdr"), "READ", start, []int64{1, 2})
	writeYCSBHdr(t, filepath.Join(dir, "other-UPDATE.hdr"), "UPDATE", start, updates...)
	if _, err := YCSB(path, Options{HDRPrefix: filepath.Join(dir, "other-")}); err == nil || !strings.Contains(err.Error(), "other-READ.hdr holds 2 operations, but") {
		t.Errorf("another run's log: %v", err)
	}
	if _, err := YCSB(path, Options{HDRPrefix: filepath.Join(dir, "none-")}); err == nil || !strings.Contains(err.Error(), "none-READ.hdr: no such file (--hdr-prefix)") {
		t.Errorf("a missing log: %v", err)
	}
}

func TestYCSBBadInput(t *testing.T) {
	dir := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join("testdata", "ycsb", "go-redis-server-workloada.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(fixture), "\n")
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", "no [OVERALL], RunTime(ms) line: not YCSB output, or cut short"},
		{"memtier's output", "ALL STATS\nSets 1.00 ---\n", "no [OVERALL], RunTime(ms) line"},
		{"cut before the results", strings.Join(lines[:7], ""), "no [OVERALL], RunTime(ms) line"},
		{"cut after [OVERALL]", strings.Join(lines[:18], ""), "no [<OP>], Operations lines after [OVERALL]: the output is cut short"},
		{"a count that is no number", "[OVERALL], RunTime(ms), 10\n[READ], Operations, many\n", "bad.log:2: [READ], Operations: \"many\" is not a number"},
		{"Return= without Operations", "[OVERALL], RunTime(ms), 10\n[READ], Return=OK, 5\n", "bad.log:2: [READ] has Return= lines but no Operations line"},
		// Issue 25, bug 9: cut inside the UPDATE lines, before its Return=OK
		// line, the log used to import 521 UPDATE successes as complete.
		{"cut inside an operation's lines", strings.Join(lines[:36], ""), "bad.log:32: [UPDATE] has Operations 521 but no Return= line: the output is cut short"},
		{"Return= lines that do not add up", "[OVERALL], RunTime(ms), 10\n[READ], Operations, 10\n[READ], Return=OK, 7\n[READ], Return=ERROR, 1\n",
			"bad.log:2: [READ] has Operations 10, but its Return= lines count 7 successes of 8"},
		{"a run time of 0", "[OVERALL], RunTime(ms), 0\n[READ], Operations, 10\n[READ], Return=OK, 10\n", "bad.log: [OVERALL], RunTime(ms) is 0: no rate can be made of it"},
		{"a status line's bad number", "2026-12-01 10:00:00:000 10 sec: 5 operations; [READ: Count=x]\n[OVERALL], RunTime(ms), 10\n", "bad.log:1: status line: [READ: Count=x]: not a number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.log")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := YCSB(path, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.log") {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestHdrLogFormats(t *testing.T) {
	// memtier's .hgrm (HdrHistogram_c: absolute start and end times) and a Java-style
	// log (relative start, interval length) both give absolute intervals.
	l, err := readHdrLog(filepath.Join("testdata", "memtier", "closed_FULL_RUN_1.hgrm"))
	if err != nil {
		t.Fatal(err)
	}
	iv := l.Intervals[0]
	// 1796281524.783 to 1796281527.786: memtier's own start and end.
	if len(l.Intervals) != 1 || iv.End.Sub(iv.Start) != 3003*time.Millisecond || !iv.Start.Equal(l.Start) || iv.Hist.TotalCount() == 0 {
		t.Errorf("memtier log: %d intervals, %s to %s, start %s", len(l.Intervals), iv.Start, iv.End, l.Start)
	}
	dir := t.TempDir()
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	writeYCSBHdr(t, filepath.Join(dir, "x.hdr"), "X", start, []int64{1}, []int64{2, 3})
	l, err = readHdrLog(filepath.Join(dir, "x.hdr"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Intervals) != 2 || !l.Intervals[1].Start.Equal(start.Add(10*time.Second)) || !l.Intervals[1].End.Equal(start.Add(20*time.Second)) {
		t.Errorf("Java-style log: %+v", l.Intervals)
	}
	for _, bad := range []struct{ text, want string }{
		{"#[StartTime: 1 (seconds since epoch)]\n", "no interval histograms"},
		{"1.0,2.0,3.0\n", "bad.hdr:1: want start,length,max,histogram; got 3 fields"},
		{"1.0,2.0,3.0,HISTFAAAnotbase64\n", "bad.hdr:1: histogram:"},
		{"5.0,-2.0,3.0,HISTFAAA\n", "bad.hdr:1: the interval ends before it starts"},
	} {
		_, err := parseHdrLog(strings.NewReader(bad.text), "bad.hdr")
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.text, err, bad.want)
		}
	}
	// Values beyond cmpbench's 60 s are counted at it.
	us := hdrhistogram.New(1, 3600e6, 3)
	_ = us.RecordValue(120e6) // 120 s
	_ = us.RecordValue(5)
	h, clamped, err := nanos(us)
	if err != nil || clamped != 1 || h.TotalCount() != 2 || !within(h.Max(), core.HistMax) {
		t.Errorf("nanos: clamped %d, count %d, max %d, %v", clamped, h.TotalCount(), h.Max(), err)
	}
}

func TestYCSBIntendedOnly(t *testing.T) {
	// measurement.interval=intended: YCSB records the latency from each operation's
	// intended start under the op's own name, and no service time (written here).
	path := filepath.Join(t.TempDir(), "intended.log")
	text := "Command line: -db site.ycsb.BasicDB -p measurement.interval=intended -target 50 -t\n" +
		"[OVERALL], RunTime(ms), 1000\n[READ], Operations, 50\n[READ], MaxLatency(us), 900\n[READ], 99thPercentileLatency(us), 700\n[READ], Return=OK, 50\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := YCSB(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := r.Phases[0].Totals[0]
	if read.Response.P99 != 700000 || read.Service.Count != 0 || !strings.Contains(r.Info.ResponseTime, "measurement.interval=intended") {
		t.Errorf("response %+v, service %+v, %q", read.Response, read.Service, r.Info.ResponseTime)
	}
	a := writeArchive(t, r)
	if row := a.Summary[0]; row.RespP99 != 700000 || row.SvcP99 != 0 {
		t.Errorf("summary: resp p99 %d, svc p99 %d", row.RespP99, row.SvcP99)
	}
}

func TestYCSBHistogramMeasurementType(t *testing.T) {
	// measurementtype=histogram, as YCSB before HdrHistogram wrote it (the lines of
	// its OneMeasurementHistogram, written here): percentiles in ms, 1 ms buckets.
	path := filepath.Join(t.TempDir(), "histogram.log")
	text := "[OVERALL], RunTime(ms), 2000.0\n[OVERALL], Throughput(ops/sec), 500.0\n" +
		"[UPDATE], Operations, 1000\n[UPDATE], AverageLatency(us), 2218.85\n[UPDATE], MinLatency(us), 554\n[UPDATE], MaxLatency(us), 352634\n" +
		"[UPDATE], 95thPercentileLatency(ms), 4\n[UPDATE], 99thPercentileLatency(ms), 7\n[UPDATE], Return=0, 1000\n" +
		"[UPDATE], 0, 398\n[UPDATE], 1, 500\n[UPDATE], >1000, 0\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := YCSB(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := r.Phases[0].Totals[0]
	if u.Op != core.OpUpdate || u.OK != 1000 || u.Service.P99 != 7e6 || u.Service.Max != 352634000 {
		t.Errorf("UPDATE %+v", u)
	}
	caveatsInclude(t, r, "measurementtype=histogram buckets")
	writeArchive(t, r)
}

func TestYCSBLoadIsMeasured(t *testing.T) {
	// A load's output with its command line (written here): in the tables and
	// compared, as what was measured.
	path := filepath.Join(t.TempDir(), "load.log")
	text := "Command line: -db site.ycsb.BasicDB -P workloads/workloada -p recordcount=1000 -threads 8 -load\nYCSB Client 0.17.0\n" +
		"[OVERALL], RunTime(ms), 1186\n[INSERT], Operations, 1000\n[INSERT], MaxLatency(us), 22527\n[INSERT], 99thPercentileLatency(us), 2133\n[INSERT], Return=OK, 1000\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := YCSB(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Phases[0].Info
	if p.Name != "ycsb-load" || p.Kind != core.PhaseMeasured || p.Connections != 8 || p.Ops != 1000 {
		t.Errorf("phase %+v", p)
	}
	caveatsInclude(t, r, "YCSB loaded the records (-load)")
	writeArchive(t, r)
}
