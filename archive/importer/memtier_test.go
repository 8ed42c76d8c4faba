package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// memtierFacts reads what a memtier JSON fixture says, independently of the
// importer: each run's counts and percentiles (ms) per command type.
type memtierFacts struct {
	runs []map[string]struct {
		Count       int64
		Percentiles map[string]any `json:"Percentile Latencies"`
		TimeSerie   map[string]any `json:"Time-Serie"`
	}
}

func readMemtierFacts(t *testing.T, path string) memtierFacts {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	var f memtierFacts
	for _, name := range []string{"ALL STATS", "RUN #1 RESULTS", "RUN #2 RESULTS"} {
		raw, ok := top[name]
		if !ok {
			continue
		}
		var run map[string]json.RawMessage
		if err := json.Unmarshal(raw, &run); err != nil {
			t.Fatal(err)
		}
		ops := map[string]struct {
			Count       int64
			Percentiles map[string]any `json:"Percentile Latencies"`
			TimeSerie   map[string]any `json:"Time-Serie"`
		}{}
		for _, k := range []string{"Sets", "Gets", "Totals"} {
			var op struct {
				Count       int64
				Percentiles map[string]any `json:"Percentile Latencies"`
				TimeSerie   map[string]any `json:"Time-Serie"`
			}
			if raw, ok := run[k]; ok {
				if err := json.Unmarshal(raw, &op); err != nil {
					t.Fatal(err)
				}
				ops[k] = op
			}
		}
		f.runs = append(f.runs, ops)
	}
	return f
}

func TestMemtier(t *testing.T) {
	dir := filepath.Join("testdata", "memtier")
	tests := []struct {
		name      string
		json, hdr string
		reps      int
		conns     int
		rate      float64
		ops       []core.OpKind
		files     []string
		response  string
		caveats   []string
	}{
		{name: "closed loop, JSON only", json: "closed.json", reps: 1, conns: 4, ops: []core.OpKind{core.OpGet, core.OpSet},
			response: responseClosed, caveats: []string{"memtier ran closed loop", "2 significant digits", "hits and misses as rates only (GET: ", "error replies"}},
		{name: "closed loop with its .hgrm files", json: "closed.json", hdr: "closed", reps: 1, conns: 4, ops: []core.OpKind{core.OpGet, core.OpSet},
			files: []string{"closed_GET_command_run_1.hgrm", "closed_SET_command_run_1.hgrm", "closed_FULL_RUN_1.hgrm"}, response: responseClosed},
		{name: "rate-limited, two runs", json: "rate.json", hdr: "rate", reps: 2, conns: 2, rate: 1000, ops: []core.OpKind{core.OpGet, core.OpSet},
			files:    []string{"rate_GET_command_run_1.hgrm", "rate_SET_command_run_1.hgrm", "rate_FULL_RUN_1.hgrm", "rate_GET_command_run_2.hgrm", "rate_SET_command_run_2.hgrm", "rate_FULL_RUN_2.hgrm"},
			response: responseUnknown, caveats: []string{"Response time is unknown", "--rate-limiting (500 requests/s per connection)"}},
		{name: "--command SET and HSET", json: "commands.json", hdr: "commands", reps: 1, conns: 2, ops: []core.OpKind{core.OpSet},
			files: []string{"commands_FULL_RUN_1.hgrm"}, response: responseClosed,
			caveats: []string{"Commands cmpbench has no op kind for are not imported: Hsets (15370)", "named by command"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{}
			if tc.hdr != "" {
				o.HDRPrefix = filepath.Join(dir, tc.hdr)
			}
			r, err := Memtier(filepath.Join(dir, tc.json), o)
			if err != nil {
				t.Fatal(err)
			}
			facts := readMemtierFacts(t, filepath.Join(dir, tc.json))
			if len(r.Phases) != tc.reps || len(facts.runs) != tc.reps {
				t.Fatalf("%d phases, %d runs in the JSON; want %d", len(r.Phases), len(facts.runs), tc.reps)
			}
			if r.Info.Tool != ToolMemtier || r.Info.ResponseTime != tc.response || r.System.Endpoint != "127.0.0.1:17391" || r.Status != core.RunComplete {
				t.Errorf("run: %+v, endpoint %q, status %s", r.Info, r.System.Endpoint, r.Status)
			}
			var files []string
			for _, f := range r.Info.Files {
				files = append(files, f.Name)
			}
			if strings.Join(files, " ") != strings.Join(tc.files, " ") {
				t.Errorf("files read %v, want %v", files, tc.files)
			}
			for i, p := range r.Phases {
				if p.Info.Repetition != i || p.Info.Connections != tc.conns || p.Info.Rate != tc.rate || p.Info.Kind != core.PhaseMeasured || p.Info.Name != "memtier" {
					t.Errorf("phase %d: %+v", i, p.Info)
				}
				if p.Info.Started.IsZero() || p.Info.ElapsedNs < int64(time.Second) || p.Info.Ended.Sub(p.Info.Started) != time.Duration(p.Info.ElapsedNs) {
					t.Errorf("phase %d: started %s, ended %s, elapsed %d", i, p.Info.Started, p.Info.Ended, p.Info.ElapsedNs)
				}
				if len(p.Totals) != len(tc.ops) {
					t.Fatalf("phase %d: totals of %d ops, want %v", i, len(p.Totals), tc.ops)
				}
				sums := sumIntervals(p)
				for k, tot := range p.Totals {
					name := map[core.OpKind]string{core.OpGet: "Gets", core.OpSet: "Sets"}[tot.Op]
					fact := facts.runs[i][name]
					if tot.Op != tc.ops[k] || tot.OK != fact.Count || tot.ErrorTotal() != 0 {
						t.Errorf("phase %d: %s count %d, JSON says %d", i, tot.Op, tot.OK, fact.Count)
					}
					if s := sums[tot.Op]; s.OK != tot.OK {
						t.Errorf("phase %d: %s intervals sum to %d, total %d", i, tot.Op, s.OK, tot.OK)
					}
					if len(p.Intervals) != len(fact.TimeSerie) {
						t.Errorf("phase %d: %d intervals, %d seconds in the Time-Serie", i, len(p.Intervals), len(fact.TimeSerie))
					}
					// memtier's own percentiles, from the same histogram: agree to 0.1%.
					for key, got := range map[string]int64{"p50.00": tot.Service.P50, "p99.00": tot.Service.P99, "p99.90": tot.Service.P999} {
						want := msToNs(fact.Percentiles[key].(float64))
						if !within(got, want) {
							t.Errorf("phase %d: %s %s = %d ns, memtier says %d", i, tot.Op, key, got, want)
						}
					}
					if len(tot.Service.HDR) == 0 || tot.Service.Count != tot.OK {
						t.Errorf("phase %d: %s has no histogram of its %d operations", i, tot.Op, tot.OK)
					}
					switch {
					case tc.rate > 0 && tot.Response.Count != 0:
						t.Errorf("phase %d: %s has a response time (%d values) memtier did not measure", i, tot.Op, tot.Response.Count)
					case tc.rate == 0 && tot.Response.P99 != tot.Service.P99:
						t.Errorf("phase %d: closed loop, but %s response p99 %d != service p99 %d", i, tot.Op, tot.Response.P99, tot.Service.P99)
					}
				}
			}
			caveatsInclude(t, r, tc.caveats...)
			a := writeArchive(t, r)
			if len(a.Summary) != tc.reps*len(tc.ops) {
				t.Errorf("%d summary rows", len(a.Summary))
			}
			for _, row := range a.Summary {
				if tc.rate > 0 && (row.Sustained == nil || !*row.Sustained || row.RespP99 != 0 || row.SvcP99 == 0) {
					t.Errorf("summary row %s/%d: sustained %v, resp p99 %d, svc p99 %d", row.Op, row.Repetition, row.Sustained, row.RespP99, row.SvcP99)
				}
			}
		})
	}
}

func TestMemtierWithoutHistogram(t *testing.T) {
	// A JSON whose op has percentiles but no compressed histogram (memtier's fields,
	// built here): the summary holds what there is and says the histogram is missing.
	path := filepath.Join(t.TempDir(), "run.json")
	text := `{"configuration": {"server": "127.0.0.1", "port": 6379, "clients": 2, "threads": 1, "test_time": 1, "ratio": "0:1", "pipeline": 1},
	"ALL STATS": {"Runtime": {"Start time": 1796280681971, "Finish time": 1796280682971, "Total duration": 1000, "Interrupted": "false"},
	 "Gets": {"Count": 1000, "Ops/sec": 1000.0, "Max Latency": 2.5, "Time-Serie": {"0": {"Count": 1000, "Max Latency": 2.5, "p50.00": 0.1}},
	          "Percentile Latencies": {"p50.00": 0.1, "p99.00": 0.9, "p99.90": 2.1}},
	 "Totals": {"Count": 1000, "Ops/sec": 1000.0}}}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Memtier(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Phases[0].Totals[0].Service
	if got.Count != 1000 || got.P50 != 100000 || got.P99 != 900000 || got.P999 != 2100000 || got.Max != 2500000 || got.P90 != 0 || len(got.HDR) != 0 {
		t.Errorf("latency %+v", got)
	}
	caveatsInclude(t, r, "has no histogram memtier's counts agree with", "p50.00, p99.00, p99.90", "the others show as —")
	a := writeArchive(t, r)
	md, _ := a.ReadFile("report.md")
	if !strings.Contains(string(md), "| imported | 1,000 | 0.100 | 0.900 | 2.100 | — |") {
		t.Errorf("report.md does not show the missing p99.99 as —:\n%s", md)
	}
}

// Issue 46: memtier's --pipeline is kept with the phase, as cmpbench's own
// pipelined phases say it: in its depth, its shape and a caveat.
func TestMemtierPipelineIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	text := `{"configuration": {"server": "127.0.0.1", "port": 6379, "clients": 25, "threads": 2, "test_time": 1, "ratio": "1:10", "pipeline": 16},
	"ALL STATS": {"Runtime": {"Start time": 1796280681971, "Finish time": 1796280682971, "Total duration": 1000, "Interrupted": "false"},
	 "Gets": {"Count": 1000, "Ops/sec": 1000.0, "Max Latency": 2.5, "Time-Serie": {"0": {"Count": 1000, "Max Latency": 2.5, "p50.00": 0.1}},
	          "Percentile Latencies": {"p50.00": 0.1, "p99.00": 0.9, "p99.90": 2.1}},
	 "Totals": {"Count": 1000, "Ops/sec": 1000.0}}}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Memtier(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Phases[0].Info
	if p.Pipeline != 16 || p.Shape != "closed loop, 50 conns, pipeline 16" {
		t.Errorf("pipeline %d, shape %q", p.Pipeline, p.Shape)
	}
	caveatsInclude(t, r, "memtier pipelined 16 requests per connection")
	a := writeArchive(t, r)
	if got := a.Manifest.Phases[0]; got.Pipeline != 16 {
		t.Errorf("the archive's phase: pipeline %d", got.Pipeline)
	}
}

func TestMemtierBadInput(t *testing.T) {
	dir := t.TempDir()
	closed, err := os.ReadFile(filepath.Join("testdata", "memtier", "closed.json"))
	if err != nil {
		t.Fatal(err)
	}
	rate, err := os.ReadFile(filepath.Join("testdata", "memtier", "rate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(rate, &top); err != nil {
		t.Fatal(err)
	}
	delete(top, "RUN #1 RESULTS")
	delete(top, "RUN #2 RESULTS")
	bestOnly, _ := json.Marshal(top)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, file string
		hdr        string
		want       string
	}{
		{"not JSON", write("text.json", []byte("ALL STATS\n=====\nSets 1.0\n")), "", "text.json:1:1: not valid JSON"},
		{"truncated", write("cut.json", closed[:len(closed)/2]), "", "cut.json:%d:%d: the JSON ends before it is complete: a truncated file?"},
		{"JSON, not memtier's", write("other.json", []byte(`{"results": []}`)), "", `other.json: not memtier_benchmark JSON output: no "ALL STATS"`},
		{"a JSON array", write("array.json", []byte(`[1, 2]`)), "", "array.json: not memtier_benchmark JSON output"},
		{"before 1.4.0", write("old.json", []byte(`{"ALL STATS": {"Sets": {"Ops/sec": 1.0, "Latency": 0.1}, "Totals": {"Ops/sec": 1.0}}}`)), "", "has no Count: memtier_benchmark before 1.4.0"},
		{"best and worst runs only", write("best.json", bestOnly), "", "kept only the best, worst and averaged runs"},
		{"missing .hgrm", filepath.Join("testdata", "memtier", "closed.json"), filepath.Join(dir, "nothere"), "nothere_GET_command_run_1.hgrm: no such file (--hdr-prefix)"},
		{".hgrm of another run", filepath.Join("testdata", "memtier", "closed.json"), filepath.Join("testdata", "memtier", "rate"), "rate_GET_command_run_1.hgrm holds 1010 operations, but"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Memtier(tc.file, Options{HDRPrefix: tc.hdr})
			if err == nil {
				t.Fatal("no error")
			}
			if want := tc.want; strings.Contains(want, "%d") {
				if !strings.Contains(err.Error(), "cut.json:") || !strings.Contains(err.Error(), "truncated file?") {
					t.Errorf("error %q, want %q", err, want)
				}
				return
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
}

func TestMemtierSecretsReachNoFile(t *testing.T) {
	// The configuration memtier writes holds --authenticate and --uri as given.
	b, err := os.ReadFile(filepath.Join("testdata", "memtier", "closed.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), `"authenticate": ""`, `"authenticate": "s3cret-passw0rd"`, 1)
	text = strings.Replace(text, `"uri": ""`, `"uri": "redis://u:uri-passw0rd@10.1.2.3:6380"`, 1)
	path := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Memtier(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.secrets, " ") != "s3cret-passw0rd uri-passw0rd" || r.System.Endpoint != "10.1.2.3:6380" {
		t.Errorf("secrets %q, endpoint %q", r.secrets, r.System.Endpoint)
	}
	a := writeArchive(t, r) // Commit refuses an archive that holds a secret
	for _, f := range []string{"manifest.json", "report.md"} {
		data, _ := a.ReadFile(f)
		if strings.Contains(string(data), "passw0rd") {
			t.Errorf("%s holds a secret", f)
		}
	}
}

func TestMemtierInterrupted(t *testing.T) {
	// The same run as memtier writes it when a signal stops it early, with
	// connection errors (fields of memtier's JSON, set here).
	b, err := os.ReadFile(filepath.Join("testdata", "memtier", "closed.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), `"Interrupted": "false"`, `"Interrupted": "true"`, 1)
	i := strings.LastIndex(text, `"Connection Errors": 0`)
	text = text[:i] + `"Connection Errors": 3` + text[i+len(`"Connection Errors": 0`):]
	path := filepath.Join(t.TempDir(), "stopped.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Memtier(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != core.RunInterrupted || r.Phases[0].Info.Status != core.StatusInterrupted {
		t.Errorf("run %s, phase %s", r.Status, r.Phases[0].Info.Status)
	}
	caveatsInclude(t, r, "memtier counted 3 connection errors")
	a := writeArchive(t, r)
	md, _ := a.ReadFile("report.md")
	if !strings.Contains(string(md), "memtier ended interrupted: `memtier_benchmark was interrupted") {
		t.Errorf("report.md does not say the run was interrupted:\n%s", md)
	}
}
