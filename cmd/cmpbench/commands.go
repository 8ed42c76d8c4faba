package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/compare"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/suites"
)

func newReportCmd(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Regenerate report.md, report.html and charts of an archive from the archive alone",
		Long: `Regenerates report.md, report.html and charts/*.svg from the archive's manifest and tables and
compares them with the archived files. With --out, the regenerated files are written
there; an archive is never changed, so that it still verifies: an --out that is or
lies inside an archive (a directory with a manifest.json) is refused (exit 2). An
archive that does not verify is refused too (exit 1), naming each disagreement.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeArchives(g, 1, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openJudged(args[0], "its report is not regenerated")
			if err != nil {
				return err
			}
			files, err := report.Generate(a)
			if err != nil {
				return err
			}
			var differ []string
			for _, f := range files {
				old, err := a.ReadFile(f.Name)
				if err != nil || !bytes.Equal(old, f.Data) {
					differ = append(differ, f.Name)
				}
				if out != "" {
					if err := archive.WriteGenerated(out, f.Name, f.Data); err != nil {
						return err
					}
				}
			}
			w := cmd.OutOrStdout()
			if len(differ) == 0 {
				fmt.Fprintf(w, "regenerated %d files (report.md, report.html and %d charts): byte-identical to the archived ones\n", len(files), len(files)-2)
			} else {
				fmt.Fprintf(w, "regenerated files that differ from the archived ones (a different cmpbench version?): %s\n", strings.Join(differ, ", "))
			}
			if out != "" {
				fmt.Fprintf(w, "written to %s\n", out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the regenerated files into this directory")
	writes(cmd, "out", true)
	return cmd
}

// openJudged opens an archive for a command that judges it (audit, compare,
// report, rerun): one that is not an archive is bad input (exit 2); one that
// does not verify is refused, saying refused and what verify finds (exit 1).
func openJudged(dir, refused string) (*archive.Archive, error) {
	a, err := archive.OpenVerified(dir, refused)
	var unverified *archive.UnverifiedError
	switch {
	case errors.As(err, &unverified):
		return nil, err
	case err != nil:
		return nil, badInput(err)
	}
	return a, nil
}

func newAuditCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "audit DIR",
		Short: "Put the settings that decide a comparison side by side; exit 1 when they make it unfair",
		Long: `Reads from an archive what it captured of each system (the facts its adapter
read of its CONFIG GET *, INFO or asinfo, the provision, the phases and the load's
validation) and prints, per
system, its durability, replication, memory limit and eviction, threads, CPU
placement, warm-up, data size and TLS, then the mismatches that make the
comparison unfair, in words, and what it cannot compare because the archive does
not tell it (never called the same). Exit 1 when a mismatch is proven (for CI), 0
otherwise: what it cannot compare is said, not failed. report.md and report.html hold the
same section. An archive that does not verify is not audited (exit 1): its
captures may not be what the run saw.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeArchives(g, 1, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openJudged(args[0], "it is not audited")
			if err != nil {
				return err
			}
			text, unfair, err := report.Audit(a)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), text)
			if len(unfair) > 0 {
				return errFailed
			}
			return nil
		},
	}
}

func newVerifyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:               "verify DIR",
		Short:             "Check an archive's SHA256SUMS, manifest and tables",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeArchives(g, 1, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			errs := archive.Verify(args[0])
			for _, e := range errs {
				fmt.Fprintln(cmd.ErrOrStderr(), "verify:", e)
			}
			if len(errs) > 0 {
				return errFailed
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", args[0])
			return nil
		},
	}
}

func newSystemsCmd(g *globals) *cobra.Command {
	var profiles bool
	cmd := &cobra.Command{
		Use:   "systems",
		Short: "List the defined systems (or, with --profiles, the built-in adapters' product profiles)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := newFitted(cmd.OutOrStdout())
			defer out.Close()
			if profiles {
				return printProfiles(out)
			}
			return listSystems(cmd.Context(), g, out)
		},
	}
	cmd.Flags().BoolVar(&profiles, "profiles", false, "list the built-in adapters' product profiles")
	return cmd
}

// printProfiles lists the built-in adapters' product profiles, as each adapter
// says them (core.ProfileLister): a table per adapter that has profiles, named
// when more than one has.
func printProfiles(out io.Writer) error {
	var listers []string
	for _, name := range core.BuiltinAdapters() {
		if a, _ := core.BuiltinAdapter(name); a != nil {
			if _, ok := a.(core.ProfileLister); ok {
				listers = append(listers, name)
			}
		}
	}
	for i, name := range listers {
		a, _ := core.BuiltinAdapter(name)
		head, rows, err := a.(core.ProfileLister).ProfileTable()
		if err != nil {
			return fmt.Errorf("adapter %s: %w", name, err)
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		if len(listers) > 1 {
			fmt.Fprintf(out, "adapter %s:\n", name)
		}
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		for _, row := range append([][]string{head}, rows...) {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// listSystems lists the defined systems, says which cannot be used here and why,
// and checks each usable one's configuration against what its adapter declares.
func listSystems(ctx context.Context, g *globals, out io.Writer) error {
	s, err := loadSystems(g)
	if err != nil {
		return err
	}
	red := s.Redactor()
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SYSTEM\tADAPTER\tDEFINED IN\tTARGET")
	var unusable, usable []string
	for _, n := range s.Names() {
		sys, problems := s.Lookup(n)
		target := sys.Endpoint
		if sys.Provisioned() {
			target = "starts: " + core.ShellQuote(sys.Provision.Command)
		}
		if len(problems) > 0 {
			target = "(not usable here: see below)"
			for _, p := range problems {
				unusable = append(unusable, strings.ReplaceAll(p.Error(), "\n", " "))
			}
		} else {
			usable = append(usable, n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, sys.Adapter, sys.Source, red.String(target))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(unusable) > 0 {
		fmt.Fprintln(out, "\nNot usable here:")
		for _, u := range unusable {
			fmt.Fprintln(out, "  "+red.String(u))
		}
	}
	cat, _, err := discover(g)
	if err != nil {
		return err
	}
	return cat.CheckSystems(ctx, s, usable, nil)
}

func newSuitesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "suites",
		Short: "List the built-in suites",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			width := termWidth(w)
			for _, n := range suites.Names() {
				s, err := loadSuite(n)
				if err != nil {
					return err
				}
				names := s.Entries()
				fmt.Fprintf(w, "%s\n%s\n%s\n\n", n, indentWrap("phases: "+strings.Join(names, ", "), width, "  "),
					indentWrap(strings.TrimSpace(s.Description), width, "  "))
			}
			return nil
		},
	}
}

func newAdaptersCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "adapters",
		Short: "List built-in adapters and discovered plugin binaries",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, dirs, err := discover(g)
			if err != nil {
				return err
			}
			out := newFitted(cmd.OutOrStdout())
			defer out.Close()
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			options := map[string][]core.Option{}
			fmt.Fprintln(tw, "ADAPTER\tKIND\tOPS\tPATH\tSHA-256")
			for _, e := range cat.Entries() {
				kind := "third-party"
				if e.Builtin {
					kind = "built-in"
				}
				ops := "?"
				if d, err := cat.Launch(cmd.Context(), e); err == nil {
					var names []string
					for _, o := range d.Info().Ops {
						names = append(names, o.String())
					}
					ops = strings.Join(names, ",")
					options[e.Name] = d.Info().Options
					d.Kill()
				} else {
					ops = "error: " + err.Error()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name, kind, ops, e.Path, e.SHA256[:16])
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, e := range cat.Entries() {
				if opts := options[e.Name]; len(opts) > 0 {
					fmt.Fprintf(out, "\n%s options (options: {name: value} in a system):\n", e.Name)
					for _, o := range opts {
						fmt.Fprintf(out, "  %s\n", o.Describe())
					}
				}
			}
			for _, p := range cat.Problems {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", core.Printable(p)) // a plugin's own words among them
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "plugin directories searched: %s\n", strings.Join(dirs, ", "))
			return nil
		},
	}
}

func newCompareCmd(g *globals) *cobra.Command {
	o := compare.Defaults
	var threshold, noise, unstable float64
	var failOnRegression bool
	var html string
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two archives phase by phase: throughput and latency changes",
		Long: `For every measured phase and op of two archives (matched by system, phase and op),
prints throughput and p50/p99/p99.9 of A and B and the change with its interval at
--confidence: +12.3% [+9.1, +15.6]. A change is a regression or improvement only when
it is significant (its interval excludes zero) and beyond the threshold; otherwise it
is within noise. The interval comes from each side's repetitions (--repeat) when both
have several, else from a single run's interval, which covers the noise within that
run only. Where a side has no interval (an archive before format 3, a window too short)
the fixed bands judge: within the noise band, or below 0.1% (the histograms'
resolution), unchanged; beyond the threshold a regression or improvement; in between
minor. UNSTABLE marks metrics whose repetitions vary by more than the unstable CV, NS
latencies of fixed-rate phases not sustained. A phase that did not end ok on a side is shown with its status
(failed, interrupted, skipped) and not compared; a latency of an op with no successful
operation is absent (—). Archives with nothing to compare are bad input (exit 2);
an archive that does not verify is not compared (exit 1).
With --html FILE, also writes the comparison as one self-contained page: the
verdicts per phase and each system's percentile spectrum, A solid and B dashed.`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeArchives(g, 2, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Threshold, o.Noise, o.Unstable = threshold/100, noise/100, unstable/100
			if o.Noise < 0 || o.Threshold < o.Noise || o.Unstable <= 0 {
				return inputErr("need 0 <= --noise <= --threshold and --unstable > 0")
			}
			if !(o.Confidence > 0 && o.Confidence < 1) {
				return inputErr("--confidence %g: need a level between 0 and 1 (0.95 is 95 %%)", o.Confidence)
			}
			var archives [2]*archive.Archive
			for i, dir := range args {
				a, err := openJudged(dir, "it is not compared")
				if err != nil {
					return err
				}
				archives[i] = a
			}
			rows := compare.Compare(archives[0], archives[1], o)
			w := newFitted(cmd.OutOrStdout())
			defer w.Close()
			fmt.Fprintf(w, "A: %s (%s)\nB: %s (%s)\n\n", archives[0].Manifest.RunID, args[0], archives[1].Manifest.RunID, args[1])
			if err := compare.Write(w, rows); err != nil {
				return err
			}
			if err := compare.Comparable(rows); err != nil {
				return badInput(err)
			}
			fmt.Fprintln(w)
			for _, line := range compare.Summary(rows, o) {
				fmt.Fprintln(w, line)
			}
			if html != "" {
				if err := writeComparePage(html, archives, args, rows, o); err != nil {
					return err
				}
				fmt.Fprintf(w, "Page: %s\n", html)
			}
			reg, failedInB := compare.Count(rows, compare.Regression), compare.FailedInB(rows)
			if failOnRegression && (reg > 0 || len(failedInB) > 0) {
				return errFailed
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Float64Var(&threshold, "threshold", o.Threshold*100, "percent change beyond which a metric counts as a regression or improvement")
	f.Float64Var(&noise, "noise", o.Noise*100, "percent change within which a metric without an interval counts as unchanged")
	f.Float64Var(&o.Confidence, "confidence", o.Confidence, "level (0-1) at which a change must be significant to count as a regression or improvement")
	f.Float64Var(&unstable, "unstable", o.Unstable*100, "coefficient of variation (percent) of repetitions above which a metric is UNSTABLE")
	f.BoolVar(&failOnRegression, "fail-on-regression", false, "exit 1 when any metric regressed, or a phase that ended ok in A did not in B")
	f.StringVar(&html, "html", "", "also write the comparison as an HTML page to this file")
	writes(cmd, "html", false)
	return cmd
}

// writeComparePage writes compare's rows as report.html's kind of page.
func writeComparePage(file string, archives [2]*archive.Archive, dirs []string, rows []compare.Row, o compare.Options) error {
	page, err := report.CompareHTML(report.Comparison{A: archives[0], B: archives[1], DirA: dirs[0], DirB: dirs[1], Rows: rows, Summary: compare.Summary(rows, o)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, page, 0o644); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	return nil
}

func newExportCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "export", Short: "Export an archive's data in other formats"}
	var out string
	hlog := exportCmd(g, "hlog DIR", "Write HdrHistogram interval logs, one per system and phase, tagged by op",
		func(cmd *cobra.Command, a *archive.Archive) error {
			dir := out
			if dir == "" {
				// Derived, so checked here; a given --out was checked before.
				dir = a.Manifest.RunID + "-hlog"
				if err := (output{name: "--out (default)", path: dir, dir: true}).check(); err != nil {
					return err
				}
			}
			files, err := a.WriteHlogs(dir)
			for _, f := range files {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return err
		})
	hlog.Flags().StringVar(&out, "out", "", "directory for the logs (default ./<run-id>-hlog)")
	writes(hlog, "out", true)
	cmd.AddCommand(hlog)
	cmd.AddCommand(exportCmd(g, "csv DIR", "Write summary.parquet as CSV to stdout",
		func(cmd *cobra.Command, a *archive.Archive) error {
			return a.WriteSummaryCSV(cmd.OutOrStdout())
		}))
	return cmd
}

// exportCmd is an export subcommand: it opens the archive its one argument names
// (one that cannot be opened is bad input) and writes it out with write.
func exportCmd(g *globals, use, short string, write func(cmd *cobra.Command, a *archive.Archive) error) *cobra.Command {
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeArchives(g, 1, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := archive.Open(args[0])
			if err != nil {
				return badInput(err)
			}
			return write(cmd, a)
		},
	}
}
