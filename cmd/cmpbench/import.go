package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/importer"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/suiterun"
)

func newImportCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Turn memtier_benchmark or YCSB results into an archive",
		Long: `Reads another tool's results and writes them as an archive under --out, marked as
imported in its manifest, with what the source does not tell among the report's
caveats. report, verify, compare and export then take it like any archive. Bad input
(not the tool's output, a truncated file, an HdrHistogram file --hdr-prefix names that
is missing) exits 2.`,
	}
	type tool struct {
		use, short, long string
		read             func(string, importer.Options) (*importer.Run, error)
		phase            string // the default phase name
	}
	for _, t := range []tool{
		{"memtier RUN.json", "Import memtier_benchmark's JSON output (--json-out-file)",
			`Imports memtier_benchmark's JSON output: each run's totals and exact latency
histograms (its "Compressed Histogram"s), and its per-second Time-Serie as
intervals. With --hdr-prefix P (memtier's --hdr-file-prefix), its HdrHistogram files
P_GET_command_run_N.hgrm, P_SET_command_run_N.hgrm and P_FULL_RUN_N.hgrm are read and
checked against the JSON; each must exist for a command that ran. With --run-count,
memtier must have been run with --print-all-runs: each run becomes a repetition.`,
			importer.Memtier, "memtier"},
		{"ycsb LOG", "Import YCSB's text output (the [OVERALL], [READ], ... lines and its status lines)",
			`Imports YCSB's output: the [OVERALL] and per-operation lines, and the periodic
status lines (-s, on stderr) as intervals when they add up to the totals. With
--hdr-prefix P (YCSB's hdrhistogram.output.path, with hdrhistogram.fileoutput=true),
its HdrHistogram logs P<OP>.hdr give exact histograms and intervals; each must exist
for an operation that ran.`,
			importer.YCSB, "ycsb-run, or ycsb-load for a load"},
	} {
		var o importer.Options
		c := &cobra.Command{
			Use:   t.use,
			Short: t.short,
			Long:  t.long,
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) != 1 {
					return inputErr("%s: want one file, got %d arguments", cmd.CommandPath(), len(args))
				}
				return nil
			},
			RunE: func(cmd *cobra.Command, args []string) error {
				return runImport(g, args[0], o, t.read, cmd.OutOrStdout())
			},
		}
		f := c.Flags()
		f.StringVar(&o.HDRPrefix, "hdr-prefix", "", "prefix of the tool's HdrHistogram files")
		f.StringVar(&o.System, "system", importer.DefaultSystem, "name of the system the results are of (compare matches archives by system, phase and op)")
		f.StringVar(&o.Phase, "phase", "", "name of the phase (default "+t.phase+")")
		writes(c, "out", true)
		cmd.AddCommand(c)
	}
	return cmd
}

var importName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

func runImport(g *globals, path string, o importer.Options, read func(string, importer.Options) (*importer.Run, error), stdout io.Writer) error {
	for flag, v := range map[string]string{"--system": o.System, "--phase": o.Phase} {
		if v != "" && !importName.MatchString(v) {
			return inputErr("%s %q: want letters, digits and . _ : - only", flag, v)
		}
	}
	if _, err := os.Stat(path); err != nil {
		return badInput(err)
	}
	run, err := read(path, o)
	if err != nil {
		return badInput(err)
	}
	out, err := filepath.Abs(g.out)
	if err != nil {
		return badInput(err)
	}
	started := run.Started
	if started.IsZero() {
		started = time.Now()
	}
	version, commit := core.BuildVersion()
	w, err := run.Write(out, suiterun.NewRunID(started, "import-"+strings.TrimSuffix(run.Info.Tool, "_benchmark")), archive.BuildInfo{Version: version, Commit: commit}, os.Args)
	if err != nil {
		return inputErr("--out %s: cannot write the archive there: %w", g.out, err)
	}
	dir, tables, err := suiterun.FinishArchive(w, run.Status, run.Ended)
	if err != nil {
		return fmt.Errorf("%w; what was imported is in %s", err, w.Dir())
	}
	stdout.Write(tables.Compact)
	fmt.Fprintf(stdout, "Imported %s (%s): %s\nArchive: %s\nReport:  %s\nPage:    %s\n", path, run.Info.Tool, run.Status, dir, filepath.Join(dir, archive.ReportFile), filepath.Join(dir, report.HTMLFile))
	return nil
}
