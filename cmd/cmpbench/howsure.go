package main

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core/confidence"
	"github.com/cmpbench/cmpbench/core/plan"
)

// printHowSure says, before a run, what it can tell apart: from the newest
// archive under out of the same suite with any of the plan's systems, how much
// each measured phase's throughput varied from run to run there, and so the
// smallest difference the plan's repetitions find and how many it takes to
// tell 5 %. Nothing else knows a system's variance before it is measured:
// without such an archive it says so.
func printHowSure(w io.Writer, out string, p *plan.Plan) {
	fmt.Fprintln(w, "\nHow sure:")
	dir, spreads := lastSpreads(out, p)
	if len(spreads) == 0 {
		fmt.Fprintf(w, "  unknown before it is measured: no archive of suite %s with these systems and intervals under %s to take the run-to-run spread from. After the run, the report's How sure section says it.\n", p.Suite.Name, out)
		return
	}
	fmt.Fprintf(w, "  from %s: with --repeat %d each side, a comparison of throughput finds at 95 %% confidence, 80 %% of the time:\n", dir, p.Repeat)
	for _, s := range spreads {
		d, n := confidence.Detectable(s.Sigma, p.Repeat), confidence.RunsToTell(s.Sigma, confidence.TellApart)
		ge, note := "", fmt.Sprintf("spread %.1f %% over %d repetitions", 100*s.Sigma, s.Reps)
		if s.AtLeast {
			ge, note = "≥ ", fmt.Sprintf("spread ≥ %.1f %% within one run: runs differ more", 100*s.Sigma)
		}
		runs := fmt.Sprint(n)
		if n == math.MaxInt {
			runs = "—"
		}
		fmt.Fprintf(w, "  %s %s: a difference of %s%.1f %%; %s%s repetitions to tell %.0f %% (%s)\n",
			s.Phase, s.System, ge, 100*d, ge, runs, 100*confidence.TellApart, note)
	}
}

// lastSpreads is the newest finished archive under out of the plan's suite
// whose measured phases have spreads for the plan's systems, and those
// spreads; "" and none when there is no such archive.
func lastSpreads(out string, p *plan.Plan) (string, []report.Spread) {
	dirs := archive.Finished(out)
	slices.Reverse(dirs) // run IDs begin with their start: newest first
	for _, dir := range dirs {
		m, err := archive.ReadManifest(dir)
		if err != nil || m.Suite.Name != p.Suite.Name || m.FormatVersion < 3 {
			continue
		}
		a, err := archive.Open(dir)
		if err != nil {
			continue
		}
		all, err := report.Spreads(a)
		if err != nil {
			continue
		}
		var mine []report.Spread
		for _, s := range all {
			if slices.Contains(p.Systems, s.System) {
				mine = append(mine, s)
			}
		}
		if len(mine) > 0 {
			return dir, mine
		}
	}
	return "", nil
}
