package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/compare"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/runner"
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
	if imp := m.Imported; imp != nil {
		return inputErr("%s was imported from %s's output %s: it records no cmpbench suite or systems to run again", dir, imp.Tool, imp.Source)
	}
	suite, err := plan.ParseSuite(fmt.Sprintf("suite.yaml of %s", m.RunID), []byte(m.Suite.YAML))
	if err != nil {
		return badInput(err)
	}
	suite.Source = "rerun of " + m.RunID
	systems, names, leftOut, err := rerunSystems(m, only, stderr)
	if err != nil {
		return err
	}
	f := &runFlags{systems: names, Options: suiterun.Options{Scale: m.Scale, Seed: m.Seed, Repeat: max(1, m.Repeat), Stats: runner.DefaultStatsInterval, Processes: 1, Quiet: quiet}}
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

// rerunSystems loads the archived definitions of the systems a rerun runs
// (only, or all in the archived order), each on its own, so that one that cannot
// be run again (a profile defined in a systems file that the archive does not
// hold, a definition this cmpbench no longer reads) keeps out only itself: it is
// left out with a warning saying which and why, and the others run. Naming it in
// --systems, or leaving nothing to run, is bad input.
func rerunSystems(m archive.Manifest, only []string, stderr io.Writer) (*config.Systems, []string, []string, error) {
	var names []string
	for _, s := range m.Systems {
		names = append(names, s.Name)
	}
	for _, n := range only {
		if !slices.Contains(names, n) {
			return nil, nil, nil, inputErr("--systems: %s is not a system of %s (it has %s)", n, m.RunID, strings.Join(names, ", "))
		}
	}
	if len(only) > 0 {
		names = only
	}
	var run, leftOut []string
	var why []error
	for _, n := range names {
		if _, err := loadArchivedSystems(m, n); err != nil {
			leftOut, why = append(leftOut, n), append(why, err)
			continue
		}
		run = append(run, n)
	}
	if len(leftOut) > 0 && (len(only) > 0 || len(run) == 0) {
		return nil, nil, nil, badInput(errors.Join(why...))
	}
	for _, err := range why {
		fmt.Fprintln(stderr, "warning:", err)
	}
	systems, err := loadArchivedSystems(m, run...)
	if err != nil {
		return nil, nil, nil, badInput(err)
	}
	return systems, run, leftOut, nil
}

// loadArchivedSystems reads the archived definitions of the named systems, with
// the profiles their systems file defined for them, as a systems file.
func loadArchivedSystems(m archive.Manifest, names ...string) (*config.Systems, error) {
	defs, profiles := map[string]any{}, map[string]any{}
	var missing []string
	for _, s := range m.Systems {
		if !slices.Contains(names, s.Name) {
			continue
		}
		defs[s.Name] = s.Definition
		profile, _ := s.Definition["profile"].(string)
		if s.Profile != "" {
			// As a node: the profile stays as it was written.
			var p yaml.Node
			if err := yaml.Unmarshal([]byte(s.Profile), &p); err != nil || len(p.Content) != 1 {
				return nil, fmt.Errorf("system %s of %s is not run again: its archived profile %s is not YAML: %v", s.Name, m.RunID, profile, err)
			}
			profiles[profile] = p.Content[0]
		} else if profile != "" {
			missing = append(missing, fmt.Sprintf("%s (defined in %s, profile %s)", s.Name, s.DefinedIn, profile))
		}
	}
	file := map[string]any{"systems": defs}
	if len(profiles) > 0 {
		file["profiles"] = profiles
	}
	data, err := yaml.Marshal(file)
	if err != nil {
		return nil, err
	}
	what := "the system definitions of " + m.RunID
	if len(names) == 1 {
		what = fmt.Sprintf("the definition of system %s in %s", names[0], m.RunID)
	}
	systems, err := config.LoadSystemsData(what, data)
	if err != nil && len(missing) > 0 {
		// Archives written before profiles were archived lack them.
		return nil, fmt.Errorf("system %s is not run again: %w\n(the archive does not hold the profiles its systems file defined: run it by hand with that file, REPRODUCE.md step 4)", strings.Join(missing, ", "), err)
	}
	if err != nil {
		return nil, fmt.Errorf("system %s is not run again: %w", strings.Join(names, ", "), err)
	}
	return systems, nil
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
	fmt.Fprintf(stdout, "\n%d regressions, %d improvements, %d unstable (threshold %g%%, noise %g%%)\n",
		compare.Count(rows, compare.Regression), compare.Count(rows, compare.Improvement), compare.Count(rows, compare.Unstable),
		compare.Defaults.Threshold*100, compare.Defaults.Noise*100)
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
