package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/runner"
	"github.com/cmpbench/cmpbench/plugins/catalog"
	"github.com/cmpbench/cmpbench/suiterun"
	"github.com/cmpbench/cmpbench/workloads/suites"
)

type runFlags struct {
	suiterun.Options
	systems []string
	suite   string
	dryRun  bool
	wide    bool
	live    string // --live: the address served on, "" for none
}

func newRunCmd(g *globals) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run --systems a,b --suite NAME|FILE",
		Short: "Run a suite against systems and archive the results",
		Args:  runArgs(&f.live),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRun(cmd.Context(), g, f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.systems, "systems", nil, "systems to compare, in order (see `cmpbench systems`)")
	fl.StringVar(&f.suite, "suite", "smoke", "built-in suite name or path to a suite file")
	fl.Float64Var(&f.Scale, "scale", 1, "multiply durations, op counts and key ranges (e.g. 0.01 for a quick try)")
	fl.Uint64Var(&f.Seed, "seed", 1, "run seed; every random choice derives from it")
	fl.IntVar(&f.Repeat, "repeat", 1, "run each measured phase this many times; the report shows the median and the spread")
	fl.DurationVar(&f.Stats, "stats-interval", runner.DefaultStatsInterval, "how often server stats are sampled during a phase")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the expanded phase plan and exit")
	fl.BoolVar(&f.Quiet, "quiet", false, "no progress and no tables: only warnings, errors and the lines naming the archive and its report")
	fl.BoolVar(&f.wide, "wide", false, "print each phase's full table (every op and percentile, response and service time) instead of the compact one that fits 100 columns")
	fl.StringVar(&f.Shard, "shard", "", "run shard I of N (0-based, e.g. 0/3) of the plan: its share of every phase's connections, rate and ops; `cmpbench merge` combines the shards' archives")
	fl.StringVar(&f.StartAt, "start-at", "", "with --shard: when the first phase starts on every shard (RFC 3339, e.g. 2026-12-03T10:00:00Z)")
	fl.IntVar(&f.Processes, "processes", 1, "plugin processes that generate each system's load together, each a share of every phase's connections, merged as they run (for client machines where one process stops scaling)")
	fl.StringVar(&f.ClientCPUs, "client-cpus", "", "pin the plugin processes to these CPUs (taskset list, e.g. 2-5), split evenly between them")
	liveFlag(cmd, &f.live)
	fl.StringVar(&f.SyncDir, "sync-dir", "", "with --shard: a directory all shards share, where they meet before and after every phase (default: under --out)")
	completeFlag(cmd, "systems", completeSystems(g))
	completeFlag(cmd, "suite", completeSuite)
	writes(cmd, "out", true)
	writes(cmd, "sync-dir", true)
	return cmd
}

// loadSystems reads --config, or ./cmpbench.yaml when present.
func loadSystems(g *globals) (*config.Systems, error) {
	path, required := g.config, true
	if path == "" {
		path, required = config.DefaultFile, false
	}
	s, err := config.LoadSystems(path, required)
	if err != nil {
		return nil, badInput(err)
	}
	return s, nil
}

// checkSystems reports every system on the command line that is not defined or not
// usable here. A name that is not defined but is a built-in adapter or product
// profile gets the systems-file entry to add, and where the file goes.
func checkSystems(g *globals, systems *config.Systems, names []string) error {
	var errs config.Errors
	var whats, entries []string
	for _, n := range names {
		_, err := systems.Get(n)
		if err == nil {
			continue
		}
		errs = append(errs, err)
		if sys, _ := systems.Lookup(n); sys != nil {
			continue
		}
		if what, lines := builtinExample(n); lines != nil {
			whats = append(whats, n+" is "+what)
			entries = append(entries, "  "+n+":")
			for _, l := range lines {
				entries = append(entries, "    "+l)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	if len(entries) == 0 {
		return badInput(errs)
	}
	servers := "a server"
	if len(whats) > 1 {
		servers = "servers"
	}
	file := "./" + config.DefaultFile + " (read when it exists; or give a file with --config FILE)"
	if g.config != "" {
		file = g.config
	}
	return badInput(fmt.Errorf("%w\n%s; for %s on this machine, add to %s:\nsystems:\n%s",
		errs, strings.Join(whats, ", "), servers, file, strings.Join(entries, "\n")))
}

// builtinExample says what a name is built into cmpbench as, an adapter or a product
// profile of one, and gives that adapter's example entry for it; nil lines when it
// is neither or the adapter has no example.
func builtinExample(name string) (what string, lines []string) {
	for _, a := range core.BuiltinAdapters() {
		if name == a {
			if ex, ok := exampler(a); ok {
				return "a built-in adapter", ex.Example("")
			}
		}
	}
	for _, a := range core.BuiltinAdapters() {
		s, ok := core.ProfileSchemaOf(a)
		if !ok || !slices.Contains(s.Builtin(), name) {
			continue
		}
		if ex, ok := exampler(a); ok {
			return "a built-in profile of the " + a + " adapter", ex.Example(name)
		}
	}
	return "", nil
}

func exampler(adapter string) (core.Exampler, bool) {
	a, _ := core.BuiltinAdapter(adapter)
	ex, ok := a.(core.Exampler)
	return ex, ok
}

// loadSuite reads a built-in suite by name, or a suite file.
func loadSuite(name string) (*plan.Suite, error) {
	if strings.ContainsAny(name, "/.") {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, inputErr("suite file: %w", err)
		}
		s, err := plan.ParseSuite(name, data)
		if err != nil {
			return nil, badInput(err)
		}
		return s, nil
	}
	data, err := suites.Get(name)
	if err != nil {
		return nil, badInput(err)
	}
	s, err := plan.ParseSuite(name+".yaml (built-in)", data)
	if err != nil {
		return nil, fmt.Errorf("built-in suite %s: %w", name, err)
	}
	s.Source = "built-in"
	return s, nil
}

// discover finds the adapters: built-ins and the plugins in --plugin-dir (or the
// default directories), which it returns too.
func discover(g *globals) (*catalog.Catalog, []string, error) {
	dirs := g.pluginDirs
	if len(dirs) == 0 {
		dirs = catalog.DefaultDirs()
	}
	for _, d := range g.pluginDirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, nil, inputErr("--plugin-dir %s is not a directory", d)
		}
	}
	cat, err := catalog.Discover(dirs)
	return cat, dirs, err
}

func runRun(ctx context.Context, g *globals, f *runFlags, stdout, stderr io.Writer) error {
	if f.Stats <= 0 {
		return inputErr("--stats-interval must be positive, got %s (it is how often server stats are sampled during a phase)", f.Stats)
	}
	systems, err := loadSystems(g)
	if err != nil {
		return err
	}
	suite, err := loadSuite(f.suite)
	if err != nil {
		return err
	}
	_, err = runSuite(ctx, g, f, suite, systems, stdout, stderr)
	return err
}

// stopOnSignals returns a context that ends on SIGINT and SIGTERM, on SIGHUP (the
// terminal closed) and on SIGPIPE when it means that our output went away
// (`cmpbench run 2>&1 | head`): the run then ends as interrupted, keeping what it
// measured and stopping every server and plugin. A SIGPIPE from a socket whose peer
// went away (a plugin that crashed) is not an interrupt.
func stopOnSignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGPIPE && !outputGone() {
					continue
				}
				cancel(fmt.Errorf("%s signal", s))
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// outputGone reports whether stdout or stderr is a pipe or socket whose reader is
// gone.
func outputGone() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}, {Fd: 2, Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}

func printPlan(w io.Writer, p *plan.Plan, systems *config.Systems) {
	fmt.Fprintf(w, "Suite %s (%s), scale %g, seed %d\n\n", p.Suite.Name, p.Suite.Source, p.Scale, p.Seed)
	red := systems.Redactor()
	for _, n := range p.Systems {
		s, _ := systems.Get(n)
		where := "endpoint " + s.Endpoint
		if s.Provisioned() {
			where = "started by cmpbench: " + red.String(core.ShellQuote(s.Provision.Command))
		}
		fmt.Fprintf(w, "System %s (adapter %s; %s)\n", n, s.Adapter, where)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSYSTEM\tPHASE\tKIND\tSHAPE\tBOUND\tWORKLOAD\tSEED")
	for i, st := range p.Steps {
		s := st.Spec
		shape := plan.StepShape(st)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", i+1, st.System, s.Name, s.Kind, shape, plan.Bound(s), core.DescribeWorkload(s.Workload), s.Seed)
	}
	tw.Flush()
}
