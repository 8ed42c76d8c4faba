package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/compare"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/suiterun"
)

func newRerunCmd(g *globals) *cobra.Command {
	var systems []string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "rerun ARCHIVE [--systems a,b]",
		Short: "Run an archived run again: same suite text, seed, scale, repetitions and system definitions; then compare",
		Long: `Runs the suite text, seed, scale and repetitions an archive's manifest records,
against the system definitions it records (secrets from the environment, as their
${VAR} references say) with the profiles their systems file defined, writes a new
archive, warns where a server's binary SHA-256 or version differs from the archived
one, and ends with the compare of the two archives. An archive that does not verify
is refused (exit 1). A system that cannot be run again from what the archive holds
(a profile an older archive lacks) is left out with a warning saying why, the others
run, and the rerun exits 1; naming it in --systems is bad input (exit 2).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeArchives(g, 1, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRerun(cmd.Context(), g, args[0], systems, quiet, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringSliceVar(&systems, "systems", nil, "only these of the archived systems (default: all, in the archived order)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress and no tables of the run: only warnings, errors, the lines naming the new archive and the compare")
	writes(cmd, "out", true)
	return cmd
}

func runRerun(ctx context.Context, g *globals, dir string, only []string, quiet bool, stdout, stderr io.Writer) error {
	// What a rerun starts, connects to and may empty comes from the manifest: an
	// archive that does not verify may have been edited (another endpoint, another
	// password reference), so it is refused before anything is touched.
	a, err := openJudged(dir, "it is not run again")
	if err != nil {
		return err
	}
	m := a.Manifest
	ag, err := suiterun.Rerun(m, only)
	if err != nil {
		return err
	}
	for _, w := range ag.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	suite, systems, names, leftOut := ag.Suite, ag.Systems, ag.Names, ag.LeftOut
	ag.Options.Quiet = quiet
	f := &runFlags{systems: names, Options: ag.Options}
	if !quiet {
		fmt.Fprintf(stderr, "cmpbench rerun of %s: suite %s, seed %d, scale %g, repeat %d\n", m.RunID, suite.Name, f.Seed, f.Scale, f.Repeat)
	}
	newDir, runErr := runSuite(ctx, g, f, suite, systems, stdout, stderr)
	if newDir == "" {
		return runErr
	}
	cmpErr := compareRerun(a, newDir, names, stdout, stderr)
	if len(leftOut) > 0 {
		// Said last, below the compare: the rerun is not the whole run.
		fmt.Fprintf(stderr, "warning: not the whole run: %s not run again (see above)\n", strings.Join(leftOut, ", "))
		if runErr == nil {
			runErr = errFailed
		}
	}
	return cmp.Or(cmpErr, runErr)
}

// compareRerun warns where the rerun's servers differ from the archived run's
// and prints the compare of the two archives for the systems run again.
func compareRerun(a *archive.Archive, newDir string, names []string, stdout, stderr io.Writer) error {
	b, err := archive.Open(newDir)
	if err != nil {
		return err
	}
	for _, w := range serverChanges(a.Manifest, b.Manifest) {
		fmt.Fprintln(stderr, "warning:", w)
	}
	rows := slices.DeleteFunc(compare.Compare(a, b, compare.Defaults), func(r compare.Row) bool { return !slices.Contains(names, r.System) })
	fmt.Fprintf(stdout, "\nCompared with the archived run\nA: %s (%s)\nB: %s (%s)\n\n", a.Manifest.RunID, a.Dir, b.Manifest.RunID, newDir)
	if err := compare.Write(stdout, rows); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	for _, line := range compare.Summary(rows, compare.Defaults) {
		fmt.Fprintln(stdout, line)
	}
	return nil
}

// serverChanges says where a rerun's servers differ from the archived run's: the
// binary cmpbench started, or the version the server reported.
func serverChanges(was, now archive.Manifest) []string {
	var out []string
	for _, n := range now.Systems {
		i := slices.IndexFunc(was.Systems, func(s archive.SystemInfo) bool { return s.Name == n.Name })
		if i < 0 {
			continue
		}
		o := was.Systems[i]
		if o.BinarySHA256 != n.BinarySHA256 {
			out = append(out, fmt.Sprintf("%s: the server binary differs (SHA-256 %s then, %s now)", n.Name, orNone(o.BinarySHA256), orNone(n.BinarySHA256)))
		}
		if o.Product != n.Product || o.Version != n.Version {
			// What the servers said of themselves: shown, never acted on by the terminal.
			out = append(out, core.Printable(fmt.Sprintf("%s: the server was %s %s then, %s %s now", n.Name, o.Product, o.Version, n.Product, n.Version)))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none recorded"
	}
	return s
}
