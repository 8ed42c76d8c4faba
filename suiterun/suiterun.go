// Package suiterun is one run of a suite, from its plan to its archive: it checks
// the systems against their adapters, splits the load between shards and plugin
// processes, writes the manifest's header, runs the plan (core/runner, with the
// catalog's Launcher) into the archive, and finishes the archive with its report.
// The command line parses the flags and prints; this package does the rest.
package suiterun

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/core/runner"
	"github.com/cmpbench/cmpbench/plugins/catalog"
)

// Options are what a run is asked for besides its suite and systems, each as
// the `cmpbench run` flag that the messages name.
type Options struct {
	Scale  float64       // --scale
	Seed   uint64        // --seed
	Repeat int           // --repeat
	Stats  time.Duration // --stats-interval
	Quiet  bool          // --quiet
	// A shard of a run on several processes: --shard I/N, --start-at, --sync-dir.
	Shard   string
	StartAt string
	SyncDir string
	// Plugin processes per system, and the CPUs they are pinned to:
	// --processes, --client-cpus.
	Processes  int
	ClientCPUs string
	// Live: the run is served as it goes (--live); the archive says so.
	Live bool
	// Pins are the input a rerun must find as the archived run had it, by
	// phase (core.Pinned: a trace's file and SHA-256).
	Pins map[string]string
}

// Progress is what a run tells as it goes: the runner's events, and its notes
// and warnings.
type Progress interface {
	runner.Observer
	Note(msg string)
	Warn(msg string)
	Close()
}

// Run is one run of a suite: its plan, the adapters that run it, then its
// archive.
type Run struct {
	o       Options
	suite   *plan.Suite
	systems *config.Systems
	names   []string
	p       *plan.Plan
	cat     *catalog.Catalog
	sh      *sharding // nil unless the run is a shard
	cpus    [][]int
	red     *redact.Redactor
	// warnings are said at --dry-run and as the run starts.
	warnings []string

	runID   string
	out     string // --out, absolute
	h       archive.Header
	w       *archive.Writer
	meetDir string        // where the shards meet, for a sharded run
	meet    *shardMeeting // nil unless the run is a shard
}

// New plans suite on the named systems and checks the plan against what the
// run is asked for, before anything is written or contacted: the systems
// against their adapters in cat, the shard, the processes.
func New(ctx context.Context, o Options, suite *plan.Suite, systems *config.Systems, names []string, cat *catalog.Catalog) (*Run, error) {
	p, err := plan.Build(suite, names, o.Scale, o.Seed, o.Repeat)
	if err != nil {
		return nil, core.BadInput{Err: err}
	}
	if err := checkPins(o.Pins, p.Phases); err != nil {
		return nil, err
	}
	r := &Run{o: o, suite: suite, systems: systems, names: names, p: p, cat: cat, red: systems.Redactor()}
	if err := r.cat.CheckSystems(ctx, systems, names, r.p.Phases); err != nil {
		return nil, err
	}
	if r.sh, err = shardOf(o, r.p, systems); err != nil {
		return nil, err
	}
	if r.cpus, err = processesOf(o, r.p); err != nil {
		return nil, err
	}
	if w := processesWarning(o.Processes, runtime.NumCPU()); w != "" {
		r.warnings = append(r.warnings, w)
	}
	return r, nil
}

// Plan is the plan the run runs: for a shard, its part.
func (r *Run) Plan() *plan.Plan { return r.p }

// RunID names the run, once it is created.
func (r *Run) RunID() string { return r.runID }

// StartAt is when a shard's first phase starts; false when the run is not a
// shard.
func (r *Run) StartAt() (time.Time, bool) {
	if r.sh == nil {
		return time.Time{}, false
	}
	return r.sh.startAt, true
}

// Estimates are each system's estimate, and the warnings of the run: its own,
// and of a system whose data would not fit dir (where the data directories of
// the servers cmpbench starts go) or this machine's memory.
func (r *Run) Estimates(dir string) ([]plan.Estimate, []string) {
	es, warnings := estimates(r.p, r.systems, measureRoom(dir))
	return es, slices.Concat(r.warnings, warnings)
}

// Create makes the run's archive directory under out (--out), and for a shard
// the directory where the shards meet, and notes on stderr the runs under out
// that did not finish.
func (r *Run) Create(out string, stderr io.Writer) error {
	given := out
	out, err := filepath.Abs(given)
	if err != nil {
		return core.BadInput{Err: err}
	}
	r.runID = NewRunID(time.Now(), r.suite.Name)
	h := header(r.runID, r.p, r.systems, r.red)
	if r.o.Processes > 1 {
		h.Processes = r.o.Processes
	}
	h.Live = r.o.Live
	if r.sh != nil {
		if err := r.shardHeader(&h, out, stderr); err != nil {
			return err
		}
	}
	if r.w, err = archive.Create(out, h, r.red); err != nil {
		return core.BadInputf("--out %s: cannot write the run there: %w", given, err)
	}
	r.out, r.h = out, h
	if r.sh != nil {
		if err := r.refuseStranger(); err != nil {
			return err
		}
	}
	for _, d := range archive.InProgress(out) {
		if d == r.w.Dir() {
			continue
		}
		if pid, live := archive.Live(d); live {
			fmt.Fprintf(stderr, "note: %s is a run still going (cmpbench pid %d)\n", d, pid)
			continue
		}
		fmt.Fprintf(stderr, "note: %s is a run that did not finish: `cmpbench recover %s` turns what it measured into an archive\n", d, d)
	}
	return nil
}

// shardHeader names a shard's run and records its shard in h, and makes the
// directory where the shards meet.
func (r *Run) shardHeader(h *archive.Header, out string, stderr io.Writer) error {
	p, startAt := r.p, r.sh.startAt
	h.RunID = fmt.Sprintf("%s-shard%dof%d", r.runID, p.Shard.Index, p.Shard.Count)
	r.runID = h.RunID
	h.Shard = &archive.ShardInfo{Count: p.Shard.Count, Shards: []int{p.Shard.Index}, PlanHash: archive.PlanHash(*h, p.Shard.Count), StartAt: startAt}
	dir := filepath.Join(out, ".shards", h.Shard.PlanHash+"-"+startAt.Format("20060102T150405Z"))
	if r.o.SyncDir != "" {
		// Absolute, as every path cmpbench names: a shard's lines name it.
		var err error
		if dir, err = filepath.Abs(r.o.SyncDir); err != nil {
			return core.BadInputf("--sync-dir %s: %w", r.o.SyncDir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return core.BadInputf("--sync-dir %s: %w", dir, err)
	}
	r.meetDir = dir
	if !r.o.Quiet {
		fmt.Fprintf(stderr, "shard %s of plan %s: the shards meet in %s; the first phase starts at %s\n", p.Shard, h.Shard.PlanHash, dir, startAt.Format(time.RFC3339))
	}
	return nil
}

// Execute runs the plan, writing the archive, with the data of the servers
// cmpbench starts in a work directory of its own (removed when the run is
// done) and the progress that newProgress makes; it says how the run ended.
func (r *Run) Execute(ctx context.Context, newProgress func(*plan.Plan, *redact.Redactor) Progress) (core.RunStatus, error) {
	work, err := newWorkDir(r.runID)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	return r.run(ctx, work, newProgress(r.p, r.red))
}

// run runs the plan with prog, writing the archive, and says how the run
// ended.
func (r *Run) run(ctx context.Context, work string, prog Progress) (core.RunStatus, error) {
	defer prog.Close()
	prog.Note(fmt.Sprintf("cmpbench run %s: suite %s, systems %s, %d phases; writing %s", r.runID, r.suite.Name, strings.Join(r.names, ", "), len(r.p.Steps), r.w.Dir()))
	es, warnings := r.Estimates(work)
	for _, e := range es {
		prog.Note(fmt.Sprintf("%s: estimate: %s", e.System, e))
	}
	for _, w := range warnings {
		prog.Warn(w)
	}
	cfg := runner.Config{
		RunID:         r.runID,
		Plan:          r.p,
		Systems:       r.systems,
		Launch:        r.cat.Launcher(r.o.Processes, r.cpus),
		Redactor:      r.red,
		WorkDir:       work,
		Sink:          r.w,
		Observer:      prog,
		StatsInterval: r.o.Stats,
	}
	if r.sh != nil {
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		r.meet = r.meeting(prog, stop)
		cfg.StartAt, cfg.Meeting = r.sh.startAt, r.meet
	}
	res := runner.Run(ctx, cfg)
	prog.Close() // what follows goes below the bars
	if res.SinkError != "" {
		return res.Status, fmt.Errorf("keeping the results failed (%s); what reached the disk is in %s: free space and run `cmpbench recover %s`", res.SinkError, r.w.Dir(), r.w.Dir())
	}
	if err := r.endRefused(res); err != nil {
		return res.Status, err
	}
	return res.Status, nil
}

// Finish finishes the archive (FinishArchive) and returns its directory and
// its console tables. A directory with an error is an archive without its
// report; no directory is an archive not finished, which `cmpbench recover`
// finishes, as the error says.
func (r *Run) Finish(status core.RunStatus) (string, report.Console, error) {
	dir, tables, err := FinishArchive(r.w, status, time.Now())
	if err != nil && dir == "" {
		return "", tables, fmt.Errorf("%w; what was measured is in %s: `cmpbench recover %s` finishes it", err, r.w.Dir(), r.w.Dir())
	}
	return dir, tables, err
}

// Refusal is the bad input of a shard that met a shard of another run, which
// stopped it; nil when it met none.
func (r *Run) Refusal() error {
	if se := r.meet.refusal(); se != nil {
		return core.BadInput{Err: se}
	}
	return nil
}
