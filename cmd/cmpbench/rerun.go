package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/compare"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/runner"
)

func newRerunCmd(g *globals) *cobra.Command {
	var systems []string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "rerun ARCHIVE [--systems a,b]",
		Short: "Run an archived run again: same suite text, seed, scale, repetitions and system definitions; then compare",
		Long: `Runs the suite text, seed, scale and repetitions an archive's manifest records,
against the system definitions it records (secrets from the environment, as their
${VAR} references say; profiles defined in the original systems file are not in the
archive), writes a new archive, warns where a server's binary SHA-256 or version
differs from the archived one, and ends with the compare of the two archives.`,
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
		return badInput{err}
	}
	suite.Source = "rerun of " + m.RunID
	defs := map[string]any{}
	var names []string
	for _, s := range m.Systems {
		defs[s.Name] = s.Definition
		names = append(names, s.Name)
	}
	for _, n := range only {
		if !slices.Contains(names, n) {
			return inputErr("--systems: %s is not a system of %s (it has %s)", n, m.RunID, strings.Join(names, ", "))
		}
	}
	if len(only) > 0 {
		names = only
	}
	data, err := yaml.Marshal(map[string]any{"systems": defs})
	if err != nil {
		return err
	}
	systems, err := config.LoadSystemsData("the system definitions of "+m.RunID, data)
	if err != nil {
		return badInput{err}
	}
	f := &runFlags{systems: names, scale: m.Scale, seed: m.Seed, repeat: max(1, m.Repeat), stats: runner.DefaultStatsInterval, processes: 1, quiet: quiet}
	if !quiet {
		fmt.Fprintf(stderr, "cmpbench rerun of %s: suite %s, seed %d, scale %g, repeat %d\n", m.RunID, suite.Name, f.seed, f.scale, f.repeat)
	}
	newDir, runErr := runSuite(ctx, g, f, suite, systems, stdout, stderr)
	if newDir == "" {
		return runErr
	}
	b, err := archive.Open(newDir)
	if err != nil {
		return err
	}
	for _, w := range serverChanges(m, b.Manifest) {
		fmt.Fprintln(stderr, "warning:", w)
	}
	rows := slices.DeleteFunc(compare.Compare(a, b, compare.Defaults), func(r compare.Row) bool { return !slices.Contains(names, r.System) })
	fmt.Fprintf(stdout, "\nCompared with the archived run\nA: %s (%s)\nB: %s (%s)\n\n", m.RunID, dir, b.Manifest.RunID, newDir)
	if err := compare.Write(stdout, rows); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%d regressions, %d improvements, %d unstable (threshold %g%%, noise %g%%)\n",
		compare.Count(rows, compare.Regression), compare.Count(rows, compare.Improvement), compare.Count(rows, compare.Unstable),
		compare.Defaults.Threshold*100, compare.Defaults.Noise*100)
	return runErr
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
			out = append(out, fmt.Sprintf("%s: the server was %s %s then, %s %s now", n.Name, o.Product, o.Version, n.Product, n.Version))
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
