package main

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

// runSuite runs suite against f.systems of systems and returns the archive's
// directory ("" when nothing was archived: a dry run, bad input).
func runSuite(ctx context.Context, g *globals, f *runFlags, suite *plan.Suite, systems *config.Systems, stdout, stderr io.Writer) (string, error) {
	// The servers cmpbench starts keep their data under the temporary directory
	// (newWorkDir).
	if err := (output{name: "TMPDIR", path: os.TempDir(), dir: true}).check(); err != nil {
		return "", err
	}
	r, err := planSuite(ctx, g, f, suite, systems)
	if err != nil {
		return "", err
	}
	if f.dryRun {
		r.printDryRun(stdout, stderr)
		return "", nil
	}
	// The run's directory comes first: an unusable --out is bad input, found before
	// any server starts or any system is contacted.
	if err := r.create(g, f, stderr); err != nil {
		return "", err
	}
	ctx, stop := stopOnSignals(ctx)
	defer stop()
	work, err := newWorkDir(r.runID)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	status, err := r.run(ctx, f, work, stderr)
	if err != nil {
		return "", err
	}
	dir, err := r.finish(f, status, stdout)
	if se := r.meet.refusal(); se != nil {
		return dir, badInput(se)
	}
	return dir, err
}

// suiteRun is one run of a suite, as runSuite makes it: its plan, the adapters
// that run it, then its archive.
type suiteRun struct {
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

// planSuite checks what the run is asked for and builds its plan, before anything
// is written or contacted.
func planSuite(ctx context.Context, g *globals, f *runFlags, suite *plan.Suite, systems *config.Systems) (*suiteRun, error) {
	names := f.systems
	if len(names) == 0 {
		return nil, inputErr("--systems is required (defined: %s)", strings.Join(systems.Names(), ", "))
	}
	if slices.Contains(names, "") {
		return nil, inputErr("--systems %q has an empty name: give system names separated by commas (defined: %s)", strings.Join(names, ","), strings.Join(systems.Names(), ", "))
	}
	if err := checkSystems(g, systems, names); err != nil {
		return nil, err
	}
	r := &suiteRun{suite: suite, systems: systems, names: names, red: systems.Redactor()}
	var err error
	if r.p, err = plan.Build(suite, names, f.scale, f.seed, f.repeat); err != nil {
		return nil, badInput(err)
	}
	if r.cat, _, err = discover(g); err != nil {
		return nil, err
	}
	if err := r.cat.CheckSystems(ctx, systems, names, r.p.Phases); err != nil {
		return nil, err
	}
	if r.sh, err = shardOf(f, r.p, systems); err != nil {
		return nil, err
	}
	if r.cpus, err = processesOf(f, r.p); err != nil {
		return nil, err
	}
	if w := processesWarning(f.processes, runtime.NumCPU()); w != "" {
		r.warnings = append(r.warnings, w)
	}
	return r, nil
}

// printDryRun prints what the run would do.
func (r *suiteRun) printDryRun(stdout, stderr io.Writer) {
	if r.sh != nil {
		fmt.Fprintf(stdout, "Shard %s of the plan; its first phase starts at %s\n", r.p.Shard, r.sh.startAt.Format(time.RFC3339))
	}
	printPlan(stdout, r.p, r.systems)
	// A run puts the data directories of the servers it starts under the
	// temporary directory (newWorkDir).
	es, warnings := estimates(r.p, r.systems, measureRoom(os.TempDir()))
	printEstimates(stdout, es)
	for _, w := range slices.Concat(r.warnings, warnings) {
		fmt.Fprintln(stderr, "warning:", w)
	}
}

// create makes the run's archive directory, and for a shard the directory where
// the shards meet, and notes the runs under --out that did not finish.
func (r *suiteRun) create(g *globals, f *runFlags, stderr io.Writer) error {
	out, err := filepath.Abs(g.out)
	if err != nil {
		return badInput(err)
	}
	r.runID = newRunID(time.Now(), r.suite.Name)
	h := header(r.runID, r.p, r.systems, r.red)
	if f.processes > 1 {
		h.Processes = f.processes
	}
	if r.sh != nil {
		if err := r.shardHeader(&h, out, f, stderr); err != nil {
			return err
		}
	}
	if r.w, err = archive.Create(out, h, r.red); err != nil {
		return inputErr("--out %s: cannot write the run there: %w", g.out, err)
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
func (r *suiteRun) shardHeader(h *archive.Header, out string, f *runFlags, stderr io.Writer) error {
	p, startAt := r.p, r.sh.startAt
	h.RunID = fmt.Sprintf("%s-shard%dof%d", r.runID, p.Shard.Index, p.Shard.Count)
	r.runID = h.RunID
	h.Shard = &archive.ShardInfo{Count: p.Shard.Count, Shards: []int{p.Shard.Index}, PlanHash: archive.PlanHash(*h, p.Shard.Count), StartAt: startAt}
	dir := filepath.Join(out, ".shards", h.Shard.PlanHash+"-"+startAt.Format("20060102T150405Z"))
	if f.syncDir != "" {
		// Absolute, as every path cmpbench names: a shard's lines name it.
		var err error
		if dir, err = filepath.Abs(f.syncDir); err != nil {
			return inputErr("--sync-dir %s: %w", f.syncDir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return inputErr("--sync-dir %s: %w", dir, err)
	}
	r.meetDir = dir
	if !f.quiet {
		fmt.Fprintf(stderr, "shard %s of plan %s: the shards meet in %s; the first phase starts at %s\n", p.Shard, h.Shard.PlanHash, dir, startAt.Format(time.RFC3339))
	}
	return nil
}

// run runs the plan with progress on stderr, writing the archive, and says how the
// run ended.
func (r *suiteRun) run(ctx context.Context, f *runFlags, work string, stderr io.Writer) (core.RunStatus, error) {
	prog := newProgress(stderr, r.p, r.red, f.quiet)
	defer prog.Close()
	prog.Note(fmt.Sprintf("cmpbench run %s: suite %s, systems %s, %d phases; writing %s", r.runID, r.suite.Name, strings.Join(r.names, ", "), len(r.p.Steps), r.w.Dir()))
	es, warnings := estimates(r.p, r.systems, measureRoom(work))
	for _, e := range es {
		prog.Note(fmt.Sprintf("%s: estimate: %s", e.System, e))
	}
	for _, w := range slices.Concat(r.warnings, warnings) {
		prog.Warn(w)
	}
	cfg := runner.Config{
		RunID:         r.runID,
		Plan:          r.p,
		Systems:       r.systems,
		Launch:        r.cat.Launcher(f.processes, r.cpus),
		Redactor:      r.red,
		WorkDir:       work,
		Sink:          r.w,
		Observer:      prog,
		StatsInterval: f.stats,
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

// finish finishes the archive and prints its tables and where it is.
func (r *suiteRun) finish(f *runFlags, status core.RunStatus, stdout io.Writer) (string, error) {
	dir, tables, err := finishArchive(r.w, status, time.Now())
	switch {
	case err != nil && dir != "":
		fmt.Fprintf(stdout, "Run %s: %s\nArchive: %s\n", r.runID, status, dir)
		return dir, err
	case err != nil:
		return "", fmt.Errorf("%w; what was measured is in %s: `cmpbench recover %s` finishes it", err, r.w.Dir(), r.w.Dir())
	}
	switch {
	case f.quiet:
	case f.wide:
		stdout.Write(tables.Wide)
	default:
		stdout.Write(tables.Compact)
	}
	fmt.Fprintf(stdout, "Run %s: %s\nArchive: %s\nReport:  %s\nPage:    %s\n", r.runID, status, dir, filepath.Join(dir, archive.ReportFile), filepath.Join(dir, report.HTMLFile))
	if status != core.RunComplete {
		return dir, errFailed
	}
	return dir, nil
}
