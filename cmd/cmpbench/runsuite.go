package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/cmd/cmpbench/internal/live"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/suiterun"
)

// runSuite runs suite against f.systems of systems (suiterun: from its plan to
// its archive) and returns the archive's directory ("" when nothing was
// archived: a dry run, bad input).
func runSuite(ctx context.Context, g *globals, f *runFlags, suite *plan.Suite, systems *config.Systems, stdout, stderr io.Writer) (string, error) {
	// The servers cmpbench starts keep their data under the temporary directory
	// (suiterun's work directory).
	if err := (output{name: "TMPDIR", path: os.TempDir(), dir: true}).check(); err != nil {
		return "", err
	}
	r, err := planSuite(ctx, g, f, suite, systems)
	if err != nil {
		return "", err
	}
	if f.dryRun {
		printDryRun(r, systems, g.out, stdout, stderr)
		return "", nil
	}
	// --live listens first, then the run's directory is made: an address that
	// cannot be listened on or an unusable --out is bad input, found before any
	// server starts or any system is contacted.
	var lr *liveRun
	if f.live != "" {
		o := live.Options{Suite: suite.Name, Plan: r.Plan(), Redactor: systems.Redactor()}
		if lr, err = startLive(f.live, o, stderr); err != nil {
			return "", err
		}
	}
	if err := r.Create(g.out, stderr); err != nil {
		lr.ended(core.RunFailed, "")
		return "", err
	}
	if lr != nil {
		lr.l.SetRunID(r.RunID())
	}
	ctx, stop := stopOnSignals(ctx)
	defer stop()
	status, err := r.Execute(ctx, func(p *plan.Plan, red *redact.Redactor) suiterun.Progress {
		prog := newProgress(stderr, p, red, f.Quiet)
		if lr == nil {
			return prog
		}
		lr.l.SetETA(prog.ETA)
		return withLive{prog, lr.l}
	})
	if err != nil {
		lr.ended(status, "")
		return "", err
	}
	dir, err := finishRun(r, f, status, stdout)
	lr.ended(status, reportOf(dir, err))
	if se := r.Refusal(); se != nil {
		return dir, se
	}
	return dir, err
}

// planSuite checks what the run is asked for and builds its plan, before anything
// is written or contacted.
func planSuite(ctx context.Context, g *globals, f *runFlags, suite *plan.Suite, systems *config.Systems) (*suiterun.Run, error) {
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
	cat, _, err := discover(g)
	if err != nil {
		return nil, err
	}
	o := f.Options
	o.Live = f.live != ""
	return suiterun.New(ctx, o, suite, systems, names, cat)
}

// reportOf is the path of an archive's report.html, "" when it has none.
func reportOf(dir string, err error) string {
	if dir == "" || err != nil {
		return ""
	}
	return filepath.Join(dir, report.HTMLFile)
}

// printDryRun prints what the run would do.
func printDryRun(r *suiterun.Run, systems *config.Systems, out string, stdout, stderr io.Writer) {
	if at, ok := r.StartAt(); ok {
		fmt.Fprintf(stdout, "Shard %s of the plan; its first phase starts at %s\n", r.Plan().Shard, at.Format(time.RFC3339))
	}
	printPlan(stdout, r.Plan(), systems)
	// A run puts the data directories of the servers it starts under the
	// temporary directory.
	es, warnings := r.Estimates(os.TempDir())
	printEstimates(stdout, es)
	printHowSure(stdout, out, r.Plan())
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
}

// finishRun finishes the archive and prints its tables and where it is.
func finishRun(r *suiterun.Run, f *runFlags, status core.RunStatus, stdout io.Writer) (string, error) {
	dir, tables, err := r.Finish(status)
	switch {
	case err != nil && dir != "":
		fmt.Fprintf(stdout, "Run %s: %s\nArchive: %s\n", r.RunID(), status, dir)
		return dir, err
	case err != nil:
		return "", err
	}
	switch {
	case f.Quiet:
	case f.wide:
		stdout.Write(tables.Wide)
	default:
		stdout.Write(tables.Compact)
	}
	fmt.Fprintf(stdout, "Run %s: %s\nArchive: %s\nReport:  %s\nPage:    %s\n", r.RunID(), status, dir, filepath.Join(dir, archive.ReportFile), filepath.Join(dir, report.HTMLFile))
	if status != core.RunComplete {
		return dir, errFailed
	}
	return dir, nil
}
