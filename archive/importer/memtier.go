package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// memtier_benchmark's JSON output (--json-out-file), as run_stats.cpp and
// memtier_benchmark.cpp write it since 1.4.0:
//
//	{"configuration": {...the command line's settings...},
//	 "run information": {"Threads", "Connections per thread", "Seconds" or "Requests per client", "Format version"},
//	 "ALL STATS": {                      one run; with --run-count N and --print-all-runs, "RUN #i RESULTS" each
//	   "Runtime": {"Start time", "Finish time", "Total duration" (ms since the epoch, ms), "Interrupted"},
//	   "Sets", "Gets", "Waits" (or one "<Command>s" per --command type), "Totals": {
//	     "Count", "Ops/sec", "Hits/sec", "Misses/sec", "Connection Errors", "Min/Max/Average Latency" (ms),
//	     "Time-Serie": {"<second>": {"Count", "Bytes RX", "Bytes TX", "Min/Max/Average Latency", "p50.00", ...}},
//	     "Percentile Latencies": {"p50.00", ..., "Histogram log format": {"Compressed Histogram": "HISTF..."}}},
//	   "SET", "GET", "WAIT": [{"<=msec", "percent"}, ...]}}
//
// Latencies are recorded in microseconds into HdrHistograms of 2 significant digits
// (10 µs to 600 s, run_stats_types.h); the compressed histogram is that histogram,
// and the per-second percentiles come from per-second histograms of the same
// precision. --hdr-file-prefix P writes the same histograms again, per run i:
// P_FULL_RUN_i.hgrm (all commands), P_GET_command_run_i.hgrm and
// P_SET_command_run_i.hgrm (and P_<command>_command_run_i.hgrm per --command) as
// HdrHistogram logs of one interval, and P_..._i.txt, their percentile distribution
// as text (not read: the .hgrm holds the exact histogram). memtier writes a file
// only for a command that ran.

type mtSection struct {
	Runtime *struct {
		Start       int64  `json:"Start time"`
		Finish      int64  `json:"Finish time"`
		Duration    *int64 `json:"Total duration"`
		Interrupted string `json:"Interrupted"`
	} `json:"Runtime"`
	ops map[string]*mtOp
}

type mtOp struct {
	Count       *int64                     `json:"Count"`
	OpsSec      float64                    `json:"Ops/sec"`
	HitsSec     float64                    `json:"Hits/sec"`
	MissesSec   float64                    `json:"Misses/sec"`
	ConnErrors  int64                      `json:"Connection Errors"`
	MaxLatency  float64                    `json:"Max Latency"`
	TimeSerie   map[string]json.RawMessage `json:"Time-Serie"`
	Percentiles map[string]json.RawMessage `json:"Percentile Latencies"`
}

type mtConfig struct {
	Server        string          `json:"server"`
	Port          int             `json:"port"`
	URI           string          `json:"uri"`
	UnixSocket    string          `json:"unix socket"`
	Protocol      string          `json:"protocol"`
	TLS           string          `json:"tls"`
	TLSSkipVerify string          `json:"tls_skip_verify"`
	RunCount      int             `json:"run_count"`
	Requests      json.Number     `json:"requests"`
	RateLimit     int64           `json:"rate_limit"`
	Clients       int             `json:"clients"`
	Threads       int             `json:"threads"`
	TestTime      int64           `json:"test_time"`
	Ratio         string          `json:"ratio"`
	Pipeline      int             `json:"pipeline"`
	DataSize      int             `json:"data_size"`
	DataSizeRange string          `json:"data_size_range"`
	KeyPrefix     string          `json:"key_prefix"`
	KeyMinimum    json.Number     `json:"key_minimum"`
	KeyMaximum    json.Number     `json:"key_maximum"`
	KeyPattern    string          `json:"key_pattern"`
	Authenticate  json.RawMessage `json:"authenticate"`
	ClientsStart  int             `json:"clients_start"`
	MultiKeyGet   int             `json:"multi_key_get"`
}

// memtierOps are the memtier command types cmpbench has op kinds for.
var memtierOps = map[string]core.OpKind{"Gets": core.OpGet, "Sets": core.OpSet}

// Memtier reads memtier_benchmark's JSON output at path, and with o.HDRPrefix its
// HdrHistogram files. Every error it returns is the input's, naming the file.
func Memtier(path string, o Options) (*Run, error) {
	cfg, sections, err := readMemtier(path)
	if err != nil {
		return nil, err
	}
	r, err := newRun(ToolMemtier, path, o)
	if err != nil {
		return nil, err
	}
	m := &memtierImport{r: r, cfg: cfg, path: path, prefix: o.HDRPrefix, runs: len(sections), skipped: map[string]int64{}}
	m.system()
	base := m.phaseInfo(o.Phase)
	r.Info.ResponseTime = responseClosed
	if base.Rate > 0 {
		r.Info.ResponseTime = responseUnknown
	}
	for i, s := range sections {
		p, err := m.phase(s, base, i)
		if err != nil {
			return nil, err
		}
		m.tally(s, i)
		if p.Info.Status != core.StatusOK {
			r.Status = core.RunInterrupted
		}
		r.Phases = append(r.Phases, p)
	}
	first, last := r.Phases[0].Info, r.Phases[len(r.Phases)-1].Info
	r.Started, r.Ended = first.Started, last.Ended
	m.caveats(base)
	return r, nil
}

// memtierImport is one import of memtier output, as it goes.
type memtierImport struct {
	r      *Run
	cfg    *mtConfig
	path   string
	prefix string
	runs   int // how many runs the output holds
	// skipped are the commands cmpbench has no op kind for, with their counts.
	skipped    map[string]int64
	hits       []string // the GETs' hit and miss rates, per run
	connErrors int64
}

// readMemtier reads memtier's JSON output at path: its configuration and its runs.
func readMemtier(path string) (*mtConfig, []*mtSection, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	top, err := decodeJSONObject(b, path)
	if err != nil {
		return nil, nil, err
	}
	var cfg mtConfig
	if raw, ok := top["configuration"]; ok {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, nil, fmt.Errorf("%s: configuration: %w", path, err)
		}
	}
	sections, err := memtierRuns(top, &cfg, path)
	if err != nil {
		return nil, nil, err
	}
	return &cfg, sections, nil
}

// system records what the configuration says of the system, its endpoint and TLS,
// and what must reach no file: --authenticate and a --uri's password.
func (m *memtierImport) system() {
	r, cfg := m.r, m.cfg
	var auth string
	if json.Unmarshal(cfg.Authenticate, &auth) == nil && auth != "" {
		r.secrets = append(r.secrets, auth)
	}
	if u, err := url.Parse(cfg.URI); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			r.secrets = append(r.secrets, pw)
		}
	}
	r.System.Endpoint = memtierEndpoint(cfg)
	if cfg.TLS == "true" {
		r.System.TLS = "verified"
		if cfg.TLSSkipVerify == "true" {
			r.System.TLS = "NOT VERIFIED (tls_skip_verify)"
		}
	}
}

// phaseInfo is the manifest entry every run's phase starts from, as the
// configuration describes it: its name, load, planned length and count.
func (m *memtierImport) phaseInfo(name string) archive.PhaseInfo {
	cfg := m.cfg
	conns := cfg.Clients * max(cfg.Threads, 1)
	rate := float64(cfg.RateLimit) * float64(conns)
	if name == "" {
		name = "memtier"
	}
	base := archive.PhaseInfo{
		System: m.r.System.Name, Name: name, Kind: core.PhaseMeasured, Workload: memtierWorkload(cfg),
		Shape: shape(conns, rate), Connections: conns, Rate: rate, DurationNs: cfg.TestTime * int64(time.Second),
		IntervalNs: int64(time.Second), Status: core.StatusOK,
	}
	if cfg.Pipeline > 1 { // --pipeline: kept, as a phase of cmpbench's own says it
		base.Pipeline = cfg.Pipeline
		base.Shape = plan.Shape(core.PhaseSpec{Connections: conns, Rate: rate, Pipeline: cfg.Pipeline})
	}
	if n, err := cfg.Requests.Int64(); err == nil && n > 0 {
		base.Ops = n * int64(conns)
	}
	return base
}

// tally notes what run i gives that no table holds: the GETs' hit and miss rates
// and the connection errors.
func (m *memtierImport) tally(s *mtSection, i int) {
	if g := s.ops["Gets"]; g != nil && (g.HitsSec > 0 || g.MissesSec > 0) {
		run := ""
		if m.runs > 1 {
			run = fmt.Sprintf("run %d: ", i+1)
		}
		m.hits = append(m.hits, fmt.Sprintf("%s%.2f hits/s and %.2f misses/s", run, g.HitsSec, g.MissesSec))
	}
	if t := s.ops["Totals"]; t != nil {
		m.connErrors += t.ConnErrors
	}
}

// caveats says what memtier's output lacks, and how its numbers were taken; p is
// the phases' manifest entry.
func (m *memtierImport) caveats(p archive.PhaseInfo) {
	r, cfg := m.r, m.cfg
	r.commonCaveats(ToolMemtier)
	if p.Rate > 0 {
		r.caveat("Response time is unknown: memtier sends at its --rate-limiting (%d requests/s per connection) but times each request from its actual send, so a request the schedule held back shows no delay (coordinated omission). The response-time columns are empty; the service-time columns hold memtier's latencies.", cfg.RateLimit)
	} else {
		r.caveat("memtier ran closed loop: its latencies, measured from each request's send to its reply, are service time, which in a closed loop is also the response time (as in cmpbench's own closed-loop phases). A closed loop sends less while the server stalls, so a stall shows in fewer requests rather than in their latency.")
	}
	if cfg.Pipeline > 1 {
		r.caveat("memtier pipelined %d requests per connection: each latency includes the wait behind the requests sent before it on the connection.", cfg.Pipeline)
	}
	r.caveat("Percentiles have memtier's precision: its histograms keep 2 significant digits of microseconds (a bucket 1%% wide); each bucket is re-recorded in cmpbench's nanosecond histogram at its upper bound, the value memtier's own percentiles report, so they agree to 0.1%%. Per-second percentiles are memtier's, from per-second histograms of the same precision, imported as written.")
	r.caveat("memtier counts a server's error replies (OOM, WRONGTYPE, ...) as completed requests, timed and in its throughput, and its output does not say how many there were: unlike cmpbench's own runs, these counts may include errors. Check memtier's stderr (\"handle error response\") for any.")
	if len(m.hits) > 0 {
		r.caveat("The hits and misses columns are 0 because memtier gives hits and misses as rates only (GET: %s); its byte counts are of the wire, not of values, and are left out too.", strings.Join(m.hits, "; "))
	}
	if m.connErrors > 0 {
		r.caveat("memtier counted %d connection errors, not attributed to any command: they are in none of the tables.", m.connErrors)
	}
	if len(m.skipped) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m.skipped)) {
			parts = append(parts, fmt.Sprintf("%s (%d)", k, m.skipped[k]))
		}
		r.caveat("Commands cmpbench has no op kind for are not imported: %s. The total throughput counts only the imported ones.", strings.Join(parts, ", "))
	}
	if cfg.MultiKeyGet > 1 {
		r.caveat("memtier sent multi-key GETs (--multi-key-get %d): each GET counted here read up to that many keys.", cfg.MultiKeyGet)
	}
	if cfg.ClientsStart > 0 {
		r.caveat("memtier ramped its connections up (--clients-start %d): %d is the most it had open.", cfg.ClientsStart, p.Connections)
	}
}

// decodeJSONObject decodes a JSON object's members, saying where a syntax error is.
func decodeJSONObject(b []byte, path string) (map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	err := json.Unmarshal(b, &top)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(b, max(syn.Offset-1, 0)) // Offset counts the bytes read, the bad one included
		if syn.Offset >= int64(len(bytes.TrimRight(b, " \t\r\n"))) {
			return nil, fmt.Errorf("%s:%d:%d: the JSON ends before it is complete: a truncated file?", path, line, col)
		}
		return nil, fmt.Errorf("%s:%d:%d: not valid JSON: %v", path, line, col, syn)
	case errors.As(err, &typ):
		return nil, fmt.Errorf("%s: not memtier_benchmark JSON output: the file is JSON but not an object", path)
	case err != nil:
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: the JSON ends before it is complete: a truncated file?", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return top, nil
}

// position is the line and column of a byte offset.
func position(b []byte, off int64) (line, col int) {
	off = min(off, int64(len(b)))
	line = 1 + bytes.Count(b[:off], []byte("\n"))
	col = int(off) - bytes.LastIndexByte(b[:off], '\n')
	return line, col
}

// memtierRuns finds the runs of the output: "ALL STATS", or with --run-count and
// --print-all-runs each "RUN #i RESULTS".
func memtierRuns(top map[string]json.RawMessage, cfg *mtConfig, path string) ([]*mtSection, error) {
	var names []string
	if _, ok := top["ALL STATS"]; ok {
		names = []string{"ALL STATS"}
	} else {
		for i := 1; ; i++ {
			n := fmt.Sprintf("RUN #%d RESULTS", i)
			if _, ok := top[n]; !ok {
				break
			}
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		if _, ok := top["BEST RUN RESULTS"]; ok {
			return nil, fmt.Errorf("%s: memtier ran %d times (--run-count) and kept only the best, worst and averaged runs, which are not measurements of one run; run it with --print-all-runs to import each run", path, cfg.RunCount)
		}
		return nil, fmt.Errorf(`%s: not memtier_benchmark JSON output: no "ALL STATS" (nor "RUN #1 RESULTS") object`, path)
	}
	var out []*mtSection
	for _, n := range names {
		s, err := parseSection(top[n], n, path)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func parseSection(raw json.RawMessage, name, path string) (*mtSection, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, fmt.Errorf("%s: %q: %v", path, name, err)
	}
	s := &mtSection{ops: map[string]*mtOp{}}
	if rt, ok := members["Runtime"]; ok {
		if err := json.Unmarshal(rt, &s.Runtime); err != nil {
			return nil, fmt.Errorf("%s: %q: Runtime: %v", path, name, err)
		}
	}
	for k, v := range members {
		if k == "Runtime" || len(bytes.TrimSpace(v)) == 0 || bytes.TrimSpace(v)[0] != '{' {
			continue // the latency distributions ("SET": [...]) and anything else
		}
		var op mtOp
		if err := json.Unmarshal(v, &op); err != nil {
			return nil, fmt.Errorf("%s: %q: %s: %v", path, name, k, err)
		}
		if op.Count == nil {
			return nil, fmt.Errorf("%s: %q: %s has no Count: memtier_benchmark before 1.4.0 wrote rates only, from which no operation counts can be had", path, name, k)
		}
		s.ops[k] = &op
	}
	if s.ops["Totals"] == nil {
		return nil, fmt.Errorf(`%s: %q: not memtier_benchmark JSON output: no "Totals"`, path, name)
	}
	return s, nil
}

// memtierRun is one run of the output, as its phase is built.
type memtierRun struct {
	*memtierImport
	s     *mtSection
	i     int    // the run's index, from 0
	where string // the run's object in the output, for errors and caveats
	// standard: the run sent memtier's SETs and GETs (it has Waits), not --command
	// types, whose .hgrm files are named by command.
	standard bool
	open     bool // the run was rate-limited
}

// phase builds repetition i of the phase from one run of the output.
func (m *memtierImport) phase(s *mtSection, p archive.PhaseInfo, i int) (Phase, error) {
	run := &memtierRun{memtierImport: m, s: s, i: i, where: "ALL STATS", standard: s.ops["Waits"] != nil, open: p.Rate > 0}
	if m.runs > 1 {
		run.where = fmt.Sprintf("RUN #%d RESULTS", i+1)
	}
	p.Repetition = i
	run.runtime(&p)
	names := run.opNames()
	totals, notes, err := run.totals(names)
	if err != nil {
		return Phase{}, err
	}
	if err := run.checkFullRun(); err != nil {
		return Phase{}, err
	}
	if len(notes) > 0 {
		m.r.caveat("%s", strings.Join(notes, " "))
	}
	intervals, err := run.seconds(names, p)
	if err != nil {
		return Phase{}, err
	}
	if intervals == nil && len(names) > 0 {
		m.r.caveat("%s: memtier's per-second counts do not add up to its totals, so intervals.parquet holds the whole run as one interval.", run.where)
	}
	ph := Phase{Info: p, Intervals: intervals, Totals: totals}
	ph.wholeRun()
	return ph, nil
}

// runtime sets the phase's start, end, length and status from the run's Runtime,
// or its length from its count over its rate when it has none.
func (run *memtierRun) runtime(p *archive.PhaseInfo) {
	totals := run.s.ops["Totals"]
	if rt := run.s.Runtime; rt != nil {
		p.Started, p.Ended = time.UnixMilli(rt.Start).UTC(), time.UnixMilli(rt.Finish).UTC()
		if rt.Duration != nil {
			p.ElapsedNs = *rt.Duration * int64(time.Millisecond)
		}
		if rt.Interrupted == "true" {
			p.Status = core.StatusInterrupted
			p.Error = "memtier_benchmark was interrupted (SIGINT or SIGTERM) before its test time was up"
		}
	}
	if p.ElapsedNs == 0 && totals.OpsSec > 0 {
		// Before memtier wrote its run time: count over rate.
		p.ElapsedNs = int64(float64(*totals.Count) / totals.OpsSec * 1e9)
		run.r.caveat("%s: memtier's output has no run time; the duration is its count over its rate (%d / %.2f ops/s).", run.where, *totals.Count, totals.OpsSec)
	}
}

// opNames are the run's commands that cmpbench has op kinds for and that ran, in
// OpKind order; the others' counts go to m.skipped.
func (run *memtierRun) opNames() []string {
	var names []string
	for k, op := range run.s.ops {
		if k == "Totals" {
			continue
		}
		if _, ok := memtierOps[k]; !ok {
			if *op.Count > 0 {
				run.skipped[k] += *op.Count
			}
			continue
		}
		if *op.Count > 0 {
			names = append(names, k)
		}
	}
	sort.Slice(names, func(a, b int) bool { return memtierOps[names[a]] < memtierOps[names[b]] })
	return names
}

// totals are the ops' totals, their latencies from the .hgrm files with
// --hdr-prefix, else from the JSON; notes say which have percentiles only.
func (run *memtierRun) totals(names []string) (totals []core.OpInterval, notes []string, err error) {
	for _, k := range names {
		op := run.s.ops[k]
		t := core.OpInterval{Op: memtierOps[k], OK: *op.Count}
		lat, note, err := memtierLatency(run.r, op, k, run.where, run.path)
		if err != nil {
			return nil, nil, err
		}
		if run.prefix != "" && run.standard {
			file := fmt.Sprintf("%s_%s_command_run_%d.hgrm", run.prefix, strings.ToUpper(strings.TrimSuffix(k, "s")), run.i+1)
			h, err := memtierHgrm(run.r, file, *op.Count, k, run.where, run.path)
			if err != nil {
				return nil, nil, err
			}
			if lat, err = core.Summarize(h); err != nil {
				return nil, nil, err
			}
			note = ""
		}
		if note != "" {
			notes = append(notes, note)
		}
		t.Service = lat
		fillClosedLoop(&t, run.open)
		totals = append(totals, t)
	}
	return totals, notes, nil
}

// checkFullRun checks the run's FULL_RUN .hgrm file, all commands', against its
// Totals, with --hdr-prefix.
func (run *memtierRun) checkFullRun() error {
	if run.prefix == "" {
		return nil
	}
	if !run.standard {
		run.r.caveat("%s: memtier's per-command .hgrm files are named by command, not by the command types its JSON sums up; the JSON's histograms are used, and %s_FULL_RUN_%d.hgrm is checked against its Totals.", run.where, run.prefix, run.i+1)
	}
	if n := *run.s.ops["Totals"].Count; n > 0 {
		if _, err := memtierHgrm(run.r, fmt.Sprintf("%s_FULL_RUN_%d.hgrm", run.prefix, run.i+1), n, "Totals", run.where, run.path); err != nil {
			return err
		}
	}
	return nil
}

// memtierLatency is an op's latency distribution from the JSON: its compressed
// histogram, or failing that its percentiles (note says so).
func memtierLatency(r *Run, op *mtOp, name, where, path string) (core.Latency, string, error) {
	var hist struct {
		Compressed string `json:"Compressed Histogram"`
	}
	if raw, ok := op.Percentiles["Histogram log format"]; ok {
		if err := json.Unmarshal(raw, &hist); err != nil {
			return core.Latency{}, "", fmt.Errorf("%s: %s: %s: Histogram log format: %v", path, where, name, err)
		}
	}
	if hist.Compressed != "" {
		us, err := hdrhistogram.Decode([]byte(hist.Compressed))
		if err != nil {
			return core.Latency{}, "", fmt.Errorf("%s: %s: %s: Compressed Histogram: %v", path, where, name, err)
		}
		if us.TotalCount() == *op.Count {
			h, err := r.nanos(us, where+" "+name)
			if err != nil {
				return core.Latency{}, "", err
			}
			l, err := core.Summarize(h)
			return l, "", err
		}
	}
	l := core.Latency{Count: *op.Count, Max: msToNs(op.MaxLatency)}
	var have []string
	for k, raw := range op.Percentiles {
		q, ok := quantileKey(k)
		if !ok {
			continue
		}
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			return core.Latency{}, "", fmt.Errorf("%s: %s: %s: Percentile Latencies: %s: %v", path, where, name, k, err)
		}
		if set := percentileField(&l, q); set != nil {
			*set = msToNs(v)
			have = append(have, k)
		}
	}
	sort.Strings(have)
	return l, fmt.Sprintf("%s: %s has no histogram memtier's counts agree with: its summary holds only the percentiles memtier printed (%s) and the maximum; the others show as —.", where, name, strings.Join(have, ", ")), nil
}

// memtierHgrm reads one of memtier's .hgrm files and checks it against the JSON's
// count.
func memtierHgrm(r *Run, file string, count int64, name, where, path string) (*hdrhistogram.Histogram, error) {
	l, err := readPrefixedHdrLog(file, fmt.Sprintf("memtier writes it for every command type that ran, and %s says %s ran %d times", path, name, count))
	if err != nil {
		return nil, err
	}
	var us *hdrhistogram.Histogram
	for _, iv := range l.Intervals {
		if us == nil {
			us = iv.Hist
		} else {
			us.Merge(iv.Hist)
		}
	}
	if err := r.addCountedFile(file, us.TotalCount(), count, fmt.Sprintf("%s's %s %s counts", path, where, name)); err != nil {
		return nil, err
	}
	return r.nanos(us, where+" "+name)
}

// nanos converts a histogram of microseconds, saying in a caveat when a value
// was beyond cmpbench's histograms.
func (r *Run) nanos(us *hdrhistogram.Histogram, what string) (*hdrhistogram.Histogram, error) {
	h, clamped, err := nanos(us)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if clamped > 0 {
		r.caveat("%s: %d latencies were above %s, the most cmpbench's histograms hold, and are counted at it.", what, clamped, time.Duration(core.HistMax))
	}
	return h, nil
}

// seconds lays out memtier's Time-Serie as intervals of one second: nil when
// an op's seconds do not add up to its count.
func (run *memtierRun) seconds(names []string, p archive.PhaseInfo) ([]core.IntervalReport, error) {
	s, path, where := run.s, run.path, run.where
	type second struct {
		Count int64
		Max   float64 `json:"Max Latency"`
		q     map[float64]float64
	}
	perOp := map[string]map[int]second{}
	secs := map[int]bool{}
	for _, k := range names {
		op := s.ops[k]
		perOp[k] = map[int]second{}
		var sum int64
		for ts, raw := range op.TimeSerie {
			n, err := strconv.Atoi(ts)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s: %s: %s: Time-Serie: %q is not a second", path, where, k, ts)
			}
			var members map[string]json.RawMessage
			if err := json.Unmarshal(raw, &members); err != nil {
				return nil, fmt.Errorf("%s: %s: %s: Time-Serie %s: %v", path, where, k, ts, err)
			}
			sec := second{q: map[float64]float64{}}
			if err := json.Unmarshal(raw, &sec); err != nil {
				return nil, fmt.Errorf("%s: %s: %s: Time-Serie %s: %v", path, where, k, ts, err)
			}
			for mk, mv := range members {
				if q, ok := quantileKey(mk); ok {
					var v float64
					if err := json.Unmarshal(mv, &v); err != nil {
						return nil, fmt.Errorf("%s: %s: %s: Time-Serie %s: %s: %v", path, where, k, ts, mk, err)
					}
					sec.q[q] = v
				}
			}
			perOp[k][n] = sec
			secs[n] = true
			sum += sec.Count
		}
		if sum != *op.Count {
			return nil, nil
		}
	}
	var out []core.IntervalReport
	for i, n := range slices.Sorted(maps.Keys(secs)) {
		start := time.Duration(n) * time.Second
		end := min(start+time.Second, max(start, time.Duration(p.ElapsedNs)))
		iv := core.IntervalReport{Index: i, Start: start, End: end}
		for _, k := range names {
			sec := perOp[k][n]
			o := core.OpInterval{Op: memtierOps[k], OK: sec.Count}
			if sec.Count > 0 {
				o.Service = core.Latency{Count: sec.Count, P50: msToNs(sec.q[50]), P90: msToNs(sec.q[90]), P99: msToNs(sec.q[99]),
					P999: msToNs(sec.q[99.9]), P9999: msToNs(sec.q[99.99]), Max: msToNs(sec.Max)}
			}
			fillClosedLoop(&o, run.open)
			iv.Ops = append(iv.Ops, o)
		}
		out = append(out, iv)
	}
	return out, nil
}

// percentileField is the field of l that holds quantile q (0-100), or nil.
func percentileField(l *core.Latency, q float64) *int64 {
	switch q {
	case 50:
		return &l.P50
	case 90:
		return &l.P90
	case 99:
		return &l.P99
	case 99.9:
		return &l.P999
	case 99.99:
		return &l.P9999
	}
	return nil
}

// quantileKey reads memtier's percentile keys ("p50.00", "p99.90"; "p%.3f" cut to
// six characters).
func quantileKey(k string) (float64, bool) {
	s, ok := strings.CutPrefix(k, "p")
	if !ok {
		return 0, false
	}
	q, err := strconv.ParseFloat(s, 64)
	return q, err == nil && q > 0 && q <= 100
}

func msToNs(ms float64) int64 { return int64(ms*1e6 + 0.5) }

func memtierEndpoint(c *mtConfig) string {
	switch {
	case c.UnixSocket != "":
		return "unix:" + c.UnixSocket
	case c.URI != "":
		// A URI may carry credentials: only its host is kept.
		if u, err := url.Parse(c.URI); err == nil && u.Host != "" {
			return u.Host
		}
	}
	if c.Server == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", c.Server, c.Port)
}

func memtierWorkload(c *mtConfig) string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if c.Ratio != "" {
		add("ratio %s", c.Ratio)
	}
	if c.KeyPattern != "" {
		add("key pattern %s", c.KeyPattern)
	}
	if c.KeyMaximum != "" {
		add("keys %s[%s..%s]", c.KeyPrefix, strings.TrimSpace(c.KeyMinimum.String()), strings.TrimSpace(c.KeyMaximum.String()))
	}
	switch {
	case c.DataSize > 0:
		add("%d B values", c.DataSize)
	case c.DataSizeRange != "" && c.DataSizeRange != "0:0":
		add("%s B values", strings.Replace(c.DataSizeRange, ":", "-", 1))
	}
	if c.Pipeline > 0 {
		add("pipeline %d", c.Pipeline)
	}
	if c.Protocol != "" {
		add("protocol %s", c.Protocol)
	}
	if len(parts) == 0 {
		return "memtier_benchmark"
	}
	return "memtier_benchmark " + strings.Join(parts, ", ")
}
