// Package archivetest builds deterministic runs and archives for tests of the
// archive, the report and the tools that read archives.
package archivetest

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/workloads/memtier"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// Options vary the generated run.
type Options struct {
	// Throughput and Latency multiply every count and every latency (0 means 1).
	Throughput, Latency float64
	// Repeat runs each measured phase this many times; Jitter is the relative change
	// of throughput from one repetition to the next.
	Repeat int
	Jitter float64
	// InfoExtra is appended to the first system's INFO capture.
	InfoExtra string
	// Lagged makes the second system's client send late in its fixed-rate phase:
	// a send lag above its service time.
	Lagged bool
	// HostSaturated makes the second system's measured phases run on a saturated
	// machine, a busy shell loop beside its server.
	HostSaturated bool
	// Systems names the two systems (default fast and slow); the second misses its
	// fixed rate and gets OOM errors.
	Systems []string
	// FailPhase names a measured phase that ends failed on the first system, its
	// numbers kept.
	FailPhase string
	// RestartPhase names a measured phase during which the first system's server
	// restarted: it ends failed and its after sample counts from zero.
	RestartPhase string
	// Ladder, when set ("pooled" or "mean", methods/ladder), makes the fixed-rate
	// phase the one step of a ladder "rate" whose repetitions the report combines so;
	// repetition r's latencies are r+1 times the first's, so that the methods differ.
	Ladder string
	// Sweep makes the closed-loop phase the one step of a concurrency sweep
	// "closed" (gain 0.1): its knee.
	Sweep bool
	// Method, when its Kind is set, makes every measured phase a step of that
	// method, as a suite's phase written with it: a method of one's own, with
	// its part in the report (archive/report/section).
	Method core.MethodStep
	// Intervals makes every measured phase (but the soak) this many seconds
	// long (default 3), each second's counts and latencies a little apart from
	// the next, as a real server's are: enough for confidence intervals.
	Intervals int
	// Drift makes the first system's closed-loop throughput change by this
	// much across its window (-0.3: falls by 30 %), with Intervals.
	Drift float64
	// Soak adds a 40 s fixed-rate phase "soak" with server stats sampled every 5 s,
	// in which the second system stalls for 2 s: long enough for the over-time
	// charts.
	Soak bool
	// ClientStalls are spans of the soak in which the second system's client
	// was not running (core.PhaseEnd.Stalls), judged as the runner judges them.
	ClientStalls []core.Span
	// Hostile, when set, is what every text a server or a plugin writes says:
	// the first system's version, a refused capture, its plugin's version, a
	// configured value (its first line), the problem its load's validation
	// found; its closed-loop phase ends failed as a server that exited, its log
	// quoted; the second system's error samples, the name of a busy process
	// beside it (its host saturated), and with Soak the name of a server field
	// it charts.
	Hostile string
}

// RunID is the run id of every generated run.
const RunID = "20261201-100000-smoke-abcdef"

// Write writes the archive of the generated run under out, through the same
// archive.Writer calls a real run makes (without a report), and returns its
// directory.
func Write(out string, opt Options, red *redact.Redactor) (string, error) {
	w, err := archive.Create(out, Header(opt), red)
	if err != nil {
		return "", err
	}
	if err := Feed(w, opt, -1); err != nil {
		return "", err
	}
	status := core.RunComplete
	if opt.FailPhase != "" || opt.RestartPhase != "" {
		status = core.RunFailed
	}
	if _, err := w.Finish(status, t0.Add(40*time.Second)); err != nil {
		return "", err
	}
	return w.Commit()
}

// Header is the header of the generated run.
func Header(opt Options) archive.Header {
	_, h := generate(opt)
	return h
}

// Feed hands the generated run to w as a runner would. With stopAfter >= 0 it stops
// in the middle of phase number stopAfter (counting every system's phases), after
// half its intervals, as a run that died there.
func Feed(w *archive.Writer, opt Options, stopAfter int) error {
	res, _ := generate(opt)
	n := 0
	for _, sys := range res.Systems {
		if err := w.SystemStarted(sys); err != nil {
			return err
		}
		for _, gp := range res.phases {
			if gp.p.System != sys.Name {
				continue
			}
			p := gp.p
			if err := w.PhaseStarted(&p); err != nil {
				return err
			}
			totals := core.NewTotals(p.Spec.OpenLoop())
			for i := range gp.intervals {
				if n == stopAfter && i == len(gp.intervals)/2 {
					return nil
				}
				if err := totals.Add(&gp.intervals[i]); err != nil {
					return err
				}
				if err := w.Interval(&p, &gp.intervals[i]); err != nil {
					return err
				}
			}
			var err error
			if p.Totals, err = totals.Result(); err != nil {
				return err
			}
			p.ClientLagged = core.ClientLagged(p.Totals)
			if err := w.PhaseEnded(&p); err != nil {
				return err
			}
			if opt.Hostile != "" && p.Spec.Kind == core.PhaseLoad && sys.Name == res.Systems[0].Name {
				if err := w.Validation(core.Validation{System: sys.Name, Point: "after load", Expected: 1000, Counted: 1000,
					Samples: []core.SampleCheck{}, Problems: []string{opt.Hostile}, Note: opt.Hostile}); err != nil {
					return err
				}
			}
			n++
		}
		if err := w.SystemEnded(sys); err != nil {
			return err
		}
	}
	return nil
}

// generated is a generated run.
type generated struct {
	Systems []core.SystemRun
	phases  []genPhase
}

type genPhase struct {
	p         core.PhaseRun
	intervals []core.IntervalReport
}

// generate makes a two-system run with a load, a closed-loop and a fixed-rate phase
// whose latencies follow fixed formulas; "slow" misses its fixed rate. o varies it.
func generate(opt Options) (*generated, archive.Header) {
	opt = withDefaults(opt)
	res := &generated{}
	m := header(opt)
	specs := phaseSpecs(opt)
	for si, sys := range opt.Systems {
		run, info := system(si, sys, opt)
		res.Systems = append(res.Systems, run)
		m.Systems = append(m.Systems, info)
		for pi, spec := range specs {
			reps := 1
			if spec.Kind == core.PhaseMeasured {
				reps = opt.Repeat
			}
			for rp := range reps {
				spec.Seed = uint64(pi + 1)
				res.phases = append(res.phases, newPhaseGen(opt, si, sys, pi, rp, spec).phase())
			}
		}
	}
	return res, m
}

// withDefaults fills in the options left zero.
func withDefaults(opt Options) Options {
	if opt.Throughput == 0 {
		opt.Throughput = 1
	}
	if opt.Latency == 0 {
		opt.Latency = 1
	}
	opt.Repeat = max(opt.Repeat, 1)
	if len(opt.Systems) != 2 {
		opt.Systems = []string{"fast", "slow"}
	}
	return opt
}

// header is the run's header, its systems not yet added.
func header(opt Options) archive.Header {
	return archive.Header{
		RunID: RunID, Started: t0, CommandLine: []string{"cmpbench", "run", "--systems", strings.Join(opt.Systems, ","), "--suite", "smoke"},
		Cmpbench: archive.BuildInfo{Version: "v0.1.0", Commit: "0123456789abcdef0123"},
		Host:     core.HostFacts{Hostname: "bench1", OS: "linux", Platform: "debian", PlatformVersion: "12", Kernel: "6.1", Arch: "amd64", CPUModel: "Test CPU", CPUs: 2, MemoryBytes: 24 << 30, GoVersion: "go1.26.8"},
		Seed:     1, Scale: 1, Repeat: opt.Repeat,
		Suite: archive.SuiteInfo{Name: "smoke", Description: "test suite", Source: "built-in", YAML: "name: smoke\n"},
	}
}

// phaseSpecs are the suite's phases: a load, a closed-loop and a fixed-rate
// phase, and with Soak a long fixed-rate one.
func phaseSpecs(opt Options) []core.PhaseSpec {
	memtier := &memtier.Spec{SetRatio: 1, GetRatio: 10, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 1000, KeyPrefix: "kv_", ValueMin: 256, ValueMax: 256}
	load := *memtier
	load.SetRatio, load.GetRatio, load.SetPattern = 1, 0, 'P'
	probe := &core.ProbeSpec{Rate: 200, Op: core.OpGet, Stall: time.Second}
	specs := []core.PhaseSpec{
		{Name: "load", Kind: core.PhaseLoad, Connections: 4, Duration: time.Minute, Ops: 1000, Workload: load},
		{Name: "closed-1:10", Kind: core.PhaseMeasured, Connections: 8, Duration: 3 * time.Second, Workload: *memtier, Probe: probe},
		{Name: "rate-5000", Kind: core.PhaseMeasured, Connections: 4, Rate: 5000, Duration: 3 * time.Second, Workload: *memtier, Probe: probe},
	}
	if opt.Soak {
		specs = append(specs, core.PhaseSpec{Name: "soak", Kind: core.PhaseMeasured, Connections: 4, Rate: 5000, Duration: 40 * time.Second, Workload: *memtier, Probe: probe})
	}
	return specs
}

// system is system si as it ran and as the manifest describes it.
func system(si int, sys string, opt Options) (core.SystemRun, archive.SystemInfo) {
	run := core.SystemRun{
		Name: sys, Adapter: "resp", Endpoint: "127.0.0.1:700" + string(rune('0'+si)), Provisioned: true,
		Launch: []string{"/usr/bin/redis-server", "--port", "7000"}, Binary: "/usr/bin/redis-server", BinarySHA256: "ab" + sha(si),
		Plugin:  core.PluginRef{Adapter: "resp", Builtin: true, Path: "/usr/local/bin/cmpbench", SHA256: "cd" + sha(si), Version: "1", SDKVersion: "v0.1.0", Protocol: 1},
		Capture: core.Capture{Product: "redis", Version: "7.0.15", VersionField: "INFO server.redis_version", Sections: map[string]string{"info": "# Server\nredis_version:7.0.15\n"}},
	}
	if si == 0 {
		run.Capture.Sections["info"] += opt.InfoExtra
	}
	// The facts the resp adapter reads of these captures (its tests check
	// that it does): INFO without a role, and no CONFIG GET, tell none.
	run.Capture.Facts = &core.Facts{}
	if si == 0 && opt.Hostile != "" {
		first, _, _ := strings.Cut(opt.Hostile, "\n")
		run.Capture.Version, run.Plugin.Version = opt.Hostile, opt.Hostile
		run.Capture.Refused = []string{"CONFIG GET *: " + opt.Hostile}
		run.Capture.Sections["config"] = "appendonly no\nsave \nmaxmemory 0\nmaxmemory-policy " + first + "\n"
		run.Capture.Facts = &core.Facts{
			Durability: core.Fact{Words: "no persistence: every write lost on a restart", Class: core.DurabilityNone},
			Memory:     core.Fact{Words: "no limit (" + core.Quoted(strings.TrimSpace(first)) + ")", Class: "unlimited"},
		}
	}
	if si == 1 {
		run.Capture.Refused = []string{"CONFIG GET *: NOPERM User bench has no permissions to run the 'config|get' command"}
	}
	info := archive.SystemInfo{Name: sys, Adapter: "resp", DefinedIn: "built-in", Definition: map[string]any{"adapter": "resp"}, CostPerMonth: 3000}
	if si == 1 {
		info.CostPerMonth = 1000
	}
	return run, info
}

// phaseGen makes one repetition of one phase of one system.
type phaseGen struct {
	opt       Options
	si, pi    int // the system's and the phase's positions
	spec      core.PhaseSpec
	p         core.PhaseRun
	latency   float64 // multiplies every latency
	factor    float64 // multiplies every count
	start     time.Time
	secs      int
	soak      bool
	restarted bool
}

// newPhaseGen sets up repetition rp of phase pi (spec) of system si (sys):
// its scale factors, start time and length.
func newPhaseGen(opt Options, si int, sys string, pi, rp int, spec core.PhaseSpec) *phaseGen {
	g := &phaseGen{opt: opt, si: si, pi: pi, spec: spec, latency: opt.Latency, secs: 3, soak: spec.Name == "soak"}
	g.p = core.PhaseRun{System: sys, Index: pi, Repetition: rp, Spec: spec, Shape: shape(spec)}
	if opt.Ladder != "" && spec.Name == "rate-5000" {
		// As methods/ladder writes a step (the fixtures stay below the methods).
		params, _ := json.Marshal(map[string]any{"stop_after_ns": 1, "combine": opt.Ladder})
		g.p.Method = core.MethodStep{Kind: "ladder", Of: "rate", Params: params}
		g.latency *= float64(rp + 1)
	}
	if opt.Method.Kind != "" && spec.Kind == core.PhaseMeasured {
		g.p.Method = opt.Method
	}
	if opt.Sweep && spec.Name == "closed-1:10" {
		params, _ := json.Marshal(map[string]any{"gain": 0.1})
		g.p.Method = core.MethodStep{Kind: "sweep", Of: "closed", Params: params}
	}
	g.factor = opt.Throughput * (1 + opt.Jitter*float64(rp))
	g.start = t0.Add(time.Duration(si*20+pi*5) * time.Second)
	if pi == 0 {
		g.secs = 1
	}
	if opt.Intervals > 0 && spec.Kind == core.PhaseMeasured {
		g.secs = opt.Intervals
	}
	if g.soak {
		g.secs = 40
	}
	g.restarted = si == 0 && spec.Name == opt.RestartPhase
	return g
}

// phase makes the phase: how it ended, its intervals and, when measured, its
// samples.
func (g *phaseGen) phase() genPhase {
	g.end()
	var intervals []core.IntervalReport
	for iv := range g.secs {
		intervals = append(intervals, g.interval(iv))
	}
	g.p.Intervals = len(intervals)
	if g.spec.Kind == core.PhaseMeasured {
		g.samples(intervals)
	}
	return genPhase{g.p, intervals}
}

// end is how the phase ended: ok, or failed as the options say.
func (g *phaseGen) end() {
	g.p.End = core.PhaseEnd{Status: core.StatusOK, Started: g.start, Ended: g.start.Add(time.Duration(g.secs) * time.Second), Elapsed: time.Duration(g.secs) * time.Second, CPUUser: time.Second, CPUSystem: time.Second / 2}
	if g.si == 0 && g.spec.Name == g.opt.FailPhase {
		g.p.End.Status, g.p.End.Error = core.StatusFailed, "the server went away"
	}
	if g.restarted {
		g.p.End.Status, g.p.End.Error = core.StatusFailed, "the server restarted during the phase (instance run-a became run-b): the data it held before may be gone"
	}
	if g.si == 1 && g.soak && len(g.opt.ClientStalls) > 0 {
		g.p.End.Stalls = g.opt.ClientStalls
		for _, s := range g.opt.ClientStalls {
			g.p.End.Stalled += s.End - s.Start
		}
		core.JudgeStalls(&g.p.End, g.spec.Kind)
	}
	if g.pi == 1 && g.si == 1 {
		g.p.End.ErrorSamples = []string{"oom: OOM command not allowed when used memory > 'maxmemory'."}
	}
	if h := g.opt.Hostile; h != "" && g.pi == 1 {
		if g.si == 0 {
			g.p.End.Status, g.p.End.Error = core.StatusFailed, "server exited (exit status 1); the end of its log:\n"+h
			g.p.End.Notes = []string{h}
		} else {
			g.p.End.ErrorSamples = []string{h}
		}
	}
}

// interval is second iv of the phase: each op's counts and latencies, and in a
// measured phase the side probe's requests.
func (g *phaseGen) interval(iv int) core.IntervalReport {
	rep := core.IntervalReport{Index: iv, Start: time.Duration(iv) * time.Second, End: time.Duration(iv+1) * time.Second}
	for _, k := range g.spec.Workload.OpKinds() {
		rep.Ops = append(rep.Ops, g.op(k, iv))
	}
	if g.spec.Kind == core.PhaseMeasured {
		rep.Probe = g.probe(iv)
	}
	return rep
}

// op is one op's second iv: its count (the second system misses a fixed rate)
// and latencies from fixed formulas.
func (g *phaseGen) op(k core.OpKind, iv int) core.OpInterval {
	si := int64(g.si)
	n := int64(1000)
	if g.spec.OpenLoop() {
		n = 5000 * 10 / 11 // GET share of 1:10
		if k == core.OpSet {
			n = 5000 / 11
		}
		if si == 1 {
			n = n * 9 / 10 // 90% of the target: not sustained
		}
	}
	n = int64(float64(n) * g.factor)
	latency := g.latency
	if g.opt.Intervals > 0 && !g.soak {
		// A second apart from the next: a few percent, deterministically.
		x := float64(iv)
		n = int64(float64(n) * (1 + 0.03*math.Cos(2.3*x+float64(g.si))))
		latency *= 1 + 0.04*math.Sin(1.7*x+float64(g.pi))
		if g.si == 0 && g.spec.Name == "closed-1:10" && g.secs > 1 {
			n = int64(float64(n) * (1 + g.opt.Drift*(x/float64(g.secs-1)-0.5)))
		}
	}
	o := core.OpInterval{Op: k, OK: n}
	if k == core.OpGet {
		o.Hits, o.Misses = n-n/10, n/10
	} else {
		o.Bytes = n * 256
	}
	svc, resp, lag := core.NewHistogram(), core.NewHistogram(), core.NewHistogram()
	for i := range n {
		svc.RecordValue(int64(float64(50_000*(si+1)+(i*7919)%200_000) * latency))
	}
	o.Service = summarize(svc)
	o.Response = o.Service
	if g.spec.OpenLoop() {
		for i := range n {
			resp.RecordValue(int64(float64(60_000*(si+1)+(i*104729)%400_000) * latency))
			l := int64(20_000 + (i*31)%30_000)
			if g.opt.Lagged && si == 1 {
				l *= 40 // 0.8 to 2 ms
			}
			lag.RecordValue(l)
		}
		o.Response, o.Lag = summarize(resp), summarize(lag)
	}
	if g.pi == 1 && si == 1 && k == core.OpSet {
		o.Errors[core.ErrClassOOM] = 7
	}
	return o
}

// probe is second iv's 200 probe GETs, one slow request in the middle; the
// second system stops answering in the fixed-rate phase and in the soak.
func (g *phaseGen) probe(iv int) []core.ProbeRecord {
	var out []core.ProbeRecord
	for i := range 200 {
		at := time.Duration(iv)*time.Second + time.Duration(i)*5*time.Millisecond
		lat := time.Duration(80_000+i*100) * time.Duration(g.si+1)
		if iv == 1 && i == 100 {
			lat = 40 * time.Millisecond
		}
		pr := core.ProbeRecord{Intended: at, Start: at + time.Microsecond, End: at + lat, Op: core.OpGet, Outcome: core.OutcomeOK}
		// The second system stops answering: at 1.2 s of the fixed-rate
		// phase until 2.45 s (the last request sent into it timed out),
		// at 12 s of the soak until 14 s. The requests sent
		// into the pause wait for its end, one by one.
		switch {
		case g.si == 1 && g.spec.Name == "rate-5000" && iv == 1 && i >= 40 && i < 90:
			pr.Start, pr.End = 2450*time.Millisecond-time.Duration(90-i)*time.Microsecond, 2450*time.Millisecond
			if i == 89 {
				pr.Outcome, pr.Class = core.OutcomeError, core.ErrClassTimeout
			}
		case g.si == 1 && g.soak && iv == 12 && i < 100:
			pr.Start, pr.End = 14*time.Second-time.Duration(100-i)*time.Microsecond, 14*time.Second
		}
		out = append(out, pr)
	}
	return out
}

// samples are a measured phase's server samples (the server counted what the
// client sent: successes, errors and probe GETs), client samples and machine
// load.
func (g *phaseGen) samples(intervals []core.IntervalReport) {
	var gets, sets int64
	for _, iv := range intervals {
		for _, o := range iv.Ops {
			if o.Op == core.OpGet {
				gets += o.OK + o.ErrorTotal()
			} else {
				sets += o.OK + o.ErrorTotal()
			}
		}
		gets += int64(len(iv.Probe))
	}
	g.serverStats(gets, sets)
	g.p.ClientStats = []core.ProcessSample{{At: g.start, Process: "plugin", Pid: 100 + g.si, CPUPercent: 50, RSSBytes: 64 << 20}}
	g.p.ClientCores, g.p.CoresAllowed = 0.5, 2
	if (g.opt.HostSaturated || g.opt.Hostile != "") && g.si == 1 {
		g.p.Host = &core.HostLoad{Cores: 2, BusyCores: 1.97, Saturated: true, Others: []core.ProcessCPU{
			{Name: "bash", Pid: 4711, Cores: 0.88}, {Name: "redis-server", Pid: 4702, Cores: 0.55}}}
		if g.opt.Hostile != "" {
			g.p.Host.Others[0].Name = g.opt.Hostile
		}
	}
}

// serverStats are the server's samples before, during and after the phase, and
// in a soak one every 5 s.
func (g *phaseGen) serverStats(gets, sets int64) {
	stat := func(point, instance string, uptime, gc, sc int64) core.StatsSample {
		return core.StatsSample{At: g.start, Point: point, Stats: map[string]string{
			"commandstats.cmdstat_get": fmt.Sprintf("calls=%d,usec=1,usec_per_call=0.10,rejected_calls=0,failed_calls=0", gc),
			"commandstats.cmdstat_set": fmt.Sprintf("calls=%d,usec=1,usec_per_call=0.10,rejected_calls=0,failed_calls=0", sc),
			"memory.used_memory":       "1048576",
			"server.redis_version":     "7.0.15",
			core.StatInstance:          instance,
			core.StatUptime:            fmt.Sprint(uptime),
			core.StatTimeline:          "memory.used_memory",
		}}
	}
	secs := int64(g.secs)
	before := stat("before", "run-a", 600, 5_000_000, 500)
	after := stat("after", "run-a", 600+secs, 5_000_000+gets, 500+sets)
	// During the phase the server saw its connections, the probe's and cmpbench's own.
	during := stat("during", "run-a", 601, 5_000_000+gets/2, 500+sets/2)
	during.At = g.start.Add(time.Second)
	during.Stats[core.StatConnections] = fmt.Sprint(g.spec.Connections + 2)
	if g.restarted {
		// Restarted late in the phase: the counts started over.
		after = stat("after", "run-b", 1, gets/10, sets/10)
	}
	g.p.ServerStats = []core.StatsSample{before, during, after}
	if !g.soak {
		return
	}
	// Every 5 s: memory grows; the second system, like a RocksDB server, also
	// tells its running compactions.
	for k := int64(1); k < secs/5; k++ {
		smp := stat("during", "run-a", 600+5*k, 5_000_000+gets*k*5/secs, 500+sets*k*5/secs)
		smp.At = g.start.Add(time.Duration(5*k) * time.Second)
		smp.Stats["memory.used_memory"] = fmt.Sprint(1048576 + k*102400*int64(g.si+1))
		if g.si == 1 {
			field := "rocksdb.num_running_compactions"
			if first, _, _ := strings.Cut(g.opt.Hostile, "\n"); first != "" {
				field = "rocksdb." + strings.ReplaceAll(first, ",", " ") // a field the adapter names so
			}
			smp.Stats[field] = fmt.Sprint(k % 3)
			smp.Stats[core.StatTimeline] = "memory.used_memory," + field
		}
		g.p.ServerStats = append(g.p.ServerStats, smp)
	}
	g.p.ServerStats = append(g.p.ServerStats[:1], append(g.p.ServerStats[3:], g.p.ServerStats[2])...)
}

func sha(i int) string {
	s := ""
	for range 31 {
		s += string(rune('0' + i))
	}
	return s + s
}

func summarize(h *hdrhistogram.Histogram) core.Latency {
	l, err := core.Summarize(h)
	if err != nil {
		panic(err)
	}
	return l
}

func shape(s core.PhaseSpec) string {
	if s.OpenLoop() {
		return fmt.Sprintf("%.0f ops/s, %d conns", s.Rate, s.Connections)
	}
	return fmt.Sprintf("closed loop, %d conns", s.Connections)
}

// WriteSystems writes under out, through the archive's writer as a run does,
// an archive of runs, systems without phases (their captures as given: sections,
// facts, plugin), checks as its validations; finished, not committed.
func WriteSystems(out string, runs []core.SystemRun, checks []core.Validation) (*archive.Archive, error) {
	h := Header(Options{})
	h.Systems = nil
	w, err := archive.Create(out, h, nil)
	if err != nil {
		return nil, err
	}
	for _, run := range runs {
		for _, err := range []error{w.SystemStarted(run), w.SystemEnded(run)} {
			if err != nil {
				return nil, err
			}
		}
	}
	for _, v := range checks {
		if err := w.Validation(v); err != nil {
			return nil, err
		}
	}
	return w.Finish(core.RunComplete, t0.Add(40*time.Second))
}
