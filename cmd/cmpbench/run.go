package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/core/runner"
	"github.com/cmpbench/cmpbench/core/sampler"
	"github.com/cmpbench/cmpbench/plugins/catalog"
	"github.com/cmpbench/cmpbench/workloads/suites"
)

type runFlags struct {
	systems []string
	suite   string
	scale   float64
	seed    uint64
	repeat  int
	stats   time.Duration
	dryRun  bool
	quiet   bool
	wide    bool
	// A shard of a run on several processes: --shard I/N, --start-at, --sync-dir.
	shard   string
	startAt string
	syncDir string
	// Plugin processes per system, and the CPUs they are pinned to.
	processes  int
	clientCPUs string
}

func newRunCmd(g *globals) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run --systems a,b --suite NAME|FILE",
		Short: "Run a suite against systems and archive the results",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRun(cmd.Context(), g, f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.systems, "systems", nil, "systems to compare, in order (see `cmpbench systems`)")
	fl.StringVar(&f.suite, "suite", "smoke", "built-in suite name or path to a suite file")
	fl.Float64Var(&f.scale, "scale", 1, "multiply durations, op counts and key ranges (e.g. 0.01 for a quick try)")
	fl.Uint64Var(&f.seed, "seed", 1, "run seed; every random choice derives from it")
	fl.IntVar(&f.repeat, "repeat", 1, "run each measured phase this many times; the report shows the median and the spread")
	fl.DurationVar(&f.stats, "stats-interval", runner.DefaultStatsInterval, "how often server stats are sampled during a phase")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the expanded phase plan and exit")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress and no tables: only warnings, errors and the lines naming the archive and its report")
	fl.BoolVar(&f.wide, "wide", false, "print each phase's full table (every op and percentile, response and service time) instead of the compact one that fits 100 columns")
	fl.StringVar(&f.shard, "shard", "", "run shard I of N (0-based, e.g. 0/3) of the plan: its share of every phase's connections, rate and ops; `cmpbench merge` combines the shards' archives")
	fl.StringVar(&f.startAt, "start-at", "", "with --shard: when the first phase starts on every shard (RFC 3339, e.g. 2026-12-03T10:00:00Z)")
	fl.IntVar(&f.processes, "processes", 1, "plugin processes that generate each system's load together, each a share of every phase's connections, merged as they run (for client machines where one process stops scaling)")
	fl.StringVar(&f.clientCPUs, "client-cpus", "", "pin the plugin processes to these CPUs (taskset list, e.g. 2-5), split evenly between them")
	fl.StringVar(&f.syncDir, "sync-dir", "", "with --shard: a directory all shards share, where they meet before and after every phase (default: under --out)")
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
		return nil, badInput{err}
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
		return badInput{errs}
	}
	servers := "a server"
	if len(whats) > 1 {
		servers = "servers"
	}
	file := "./" + config.DefaultFile + " (read when it exists; or give a file with --config FILE)"
	if g.config != "" {
		file = g.config
	}
	return badInput{fmt.Errorf("%w\n%s; for %s on this machine, add to %s:\nsystems:\n%s",
		errs, strings.Join(whats, ", "), servers, file, strings.Join(entries, "\n"))}
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
			return nil, badInput{err}
		}
		return s, nil
	}
	data, err := suites.Get(name)
	if err != nil {
		return nil, badInput{err}
	}
	s, err := plan.ParseSuite(name+".yaml (built-in)", data)
	if err != nil {
		return nil, fmt.Errorf("built-in suite %s: %w", name, err)
	}
	s.Source = "built-in"
	return s, nil
}

// checkAdapters checks that every system's adapter is there, and the system's
// configuration against what its adapter declares, without connecting: its options
// (a built-in adapter's were checked when the file was read; a plugin's take
// running it), the adapter's own check (core.SystemValidator), and that it
// executes every phase's op kinds. Problems are bad input, with the system's
// file:line.
func checkAdapters(ctx context.Context, cat *catalog.Catalog, systems *config.Systems, names []string, phases []core.PhaseSpec) error {
	var errs config.Errors
	for _, n := range names {
		sys, _ := systems.Get(n)
		e, err := cat.Lookup(sys.Adapter)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: system %q: %w", sys.Source, n, err))
			continue
		}
		target := sys.SystemConfig(sys.Endpoints()...)
		var info core.Info
		var validate func(core.SystemConfig) error
		if a, ok := core.BuiltinAdapter(e.Name); e.Builtin && ok {
			info = a.Info() // its options were checked when the file was read
			if v, ok := a.(core.SystemValidator); ok {
				validate = v.ValidateSystem
			}
		} else {
			d, err := cat.Launch(ctx, e)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: system %q: %w", sys.Source, n, err))
				continue
			}
			defer d.Kill()
			info = d.Info()
			errs = append(errs, sys.CheckOptions(info.Options)...)
			validate = func(c core.SystemConfig) error { return d.ValidateSystem(ctx, c) }
		}
		if validate != nil {
			// As the plugin's Open will receive it: with the declared defaults.
			target = target.Received(info.Options)
			errs = append(errs, sys.AdapterProblems(validate(target), info.Options)...)
		}
		for _, ph := range phases {
			if err := info.CanRun(ph.Workload); err != nil {
				errs = append(errs, fmt.Errorf("system %s, phase %s: %w", n, ph.Name, err))
			}
		}
	}
	if len(errs) > 0 {
		return badInput{errs}
	}
	return nil
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
	if f.stats <= 0 {
		return inputErr("--stats-interval must be positive, got %s (it is how often server stats are sampled during a phase)", f.stats)
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

// finishArchive writes an archive's tables, draws its report and console tables
// from what was written, and commits it under its final name. A report that
// cannot be drawn loses nothing: the archive is committed without it, and the
// error says so.
func finishArchive(w *archive.Writer, status core.RunStatus, ended time.Time) (dir string, tables report.Console, err error) {
	a, err := w.Finish(status, ended)
	if err != nil {
		return "", report.Console{}, err
	}
	files, tables, rerr := report.Render(a)
	for _, f := range files {
		if rerr != nil {
			break
		}
		rerr = w.AddFile(f.Name, f.Data)
	}
	if dir, err = w.Commit(); err != nil {
		return "", tables, errors.Join(err, rerr)
	}
	if rerr != nil {
		return dir, tables, fmt.Errorf("the archive %s keeps everything measured, but its report could not be drawn: %w", dir, rerr)
	}
	return dir, tables, nil
}

// header is what the archive records about the run before it starts.
func header(runID string, p *plan.Plan, systems *config.Systems, red *redact.Redactor) archive.Header {
	version, commit := core.BuildVersion()
	h := archive.Header{
		RunID:       runID,
		Started:     time.Now(),
		Cmpbench:    archive.BuildInfo{Version: version, Commit: commit},
		Host:        core.CollectHostFacts(),
		CommandLine: red.Strings(os.Args),
		Seed:        p.Seed,
		Scale:       p.Scale,
		Repeat:      p.Repeat,
		Suite:       archive.SuiteInfo{Name: p.Suite.Name, Description: p.Suite.Description, Source: p.Suite.Source, YAML: string(p.Suite.Text)},
	}
	for _, n := range p.Systems {
		s, _ := systems.Get(n)
		si := archive.SystemInfo{Name: n, Adapter: s.Adapter, Description: s.Description, DefinedIn: s.Source, Definition: s.Raw, Cluster: s.Cluster,
			Profile: red.String(string(s.ProfileData))}
		if t := s.TLS; t != nil && t.Enabled {
			si.TLS = t.Summary()
		}
		if s.Cost != nil {
			si.CostPerMonth = s.Cost.USDPerMonth
		}
		h.Systems = append(h.Systems, si)
	}
	return h
}

// launcher starts adapters through the catalog, built-in or third-party alike:
// processes plugin processes for each system (one Driver, runner.Multi, when more
// than one), process i pinned to cpus[i] when given.
func launcher(cat *catalog.Catalog, processes int, cpus [][]int) runner.Launcher {
	one := launchOne(cat)
	if processes <= 1 && cpus == nil {
		return one
	}
	return func(ctx context.Context, adapter string) (runner.Driver, core.PluginRef, error) {
		var drivers []runner.Driver
		var ref core.PluginRef
		for i := range max(1, processes) {
			d, r, err := one(ctx, adapter)
			if err == nil && cpus != nil {
				if err = sampler.Pin(d.Pid(), cpus[i]); err != nil {
					d.Kill()
				}
			}
			if err != nil {
				for _, d := range drivers {
					d.Kill()
				}
				return nil, core.PluginRef{}, err
			}
			drivers, ref = append(drivers, d), r
		}
		if len(drivers) == 1 {
			return drivers[0], ref, nil
		}
		return runner.NewMulti(drivers), ref, nil
	}
}

// launchOne starts one plugin process for an adapter.
func launchOne(cat *catalog.Catalog) runner.Launcher {
	return func(ctx context.Context, adapter string) (runner.Driver, core.PluginRef, error) {
		e, err := cat.Lookup(adapter)
		if err != nil {
			return nil, core.PluginRef{}, err
		}
		d, err := cat.Launch(ctx, e)
		if err != nil {
			return nil, core.PluginRef{}, err
		}
		return d, core.PluginRef{
			Adapter: e.Name, Builtin: e.Builtin, Path: e.Path, SHA256: e.SHA256,
			Version: d.Info().Version, SDKVersion: d.SDKVersion(), Protocol: d.Protocol(),
		}, nil
	}
}

func newRunID(t time.Time, suite string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%s-%s", t.UTC().Format("20060102-150405"), suite, hex.EncodeToString(b[:]))
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

// sharding is what --shard, --start-at and --sync-dir ask for.
type sharding struct {
	startAt time.Time
}

// shardOf reads the shard flags and makes p this shard's part of the plan; nil
// when the run is not sharded.
func shardOf(f *runFlags, p *plan.Plan, systems *config.Systems) (*sharding, error) {
	if f.shard == "" {
		if f.startAt != "" || f.syncDir != "" {
			return nil, inputErr("--start-at and --sync-dir go with --shard I/N")
		}
		return nil, nil
	}
	s, err := plan.ParseShard(f.shard)
	if err != nil {
		return nil, badInput{err}
	}
	if f.startAt == "" {
		return nil, inputErr("--shard %s needs --start-at: the time at which every shard starts its first phase (RFC 3339, e.g. %s)", f.shard, time.Now().Add(3*time.Minute).UTC().Format(time.RFC3339))
	}
	at, err := time.Parse(time.RFC3339, f.startAt)
	if err != nil {
		return nil, inputErr("--start-at %q: want RFC 3339, e.g. 2026-12-03T10:00:00Z (%v)", f.startAt, err)
	}
	if time.Until(at) > engine.MaxStartWait {
		return nil, inputErr("--start-at %s is more than %s from now", f.startAt, engine.MaxStartWait)
	}
	for _, n := range p.Systems {
		if sys, _ := systems.Get(n); sys != nil && sys.Provisioned() {
			return nil, inputErr("--shard: system %s is started by cmpbench (provision:), but the shards of a run must all drive one server: start it yourself and give the system its endpoint", n)
		}
	}
	if err := p.ForShard(s); err != nil {
		return nil, badInput{err}
	}
	return &sharding{startAt: at.UTC()}, nil
}

// processesOf checks --processes and --client-cpus against the plan, and returns
// each process's CPUs (nil: not pinned).
func processesOf(f *runFlags, p *plan.Plan) ([][]int, error) {
	k := f.processes
	if k < 1 || k > 64 {
		return nil, inputErr("--processes must be between 1 and 64, got %d", k)
	}
	if k > 1 {
		var errs []error
		for _, st := range p.Steps {
			if st.Uses.Kind != "" {
				continue // its connections are known when the phase it uses has run
			}
			if _, err := plan.SplitSpec(st.Spec, plan.Shard{Index: 0, Count: k}, 1); err != nil {
				errs = append(errs, fmt.Errorf("phase %q cannot run on --processes %d: %w", st.Spec.Name, k, err))
			}
		}
		if len(errs) > 0 {
			return nil, badInput{errors.Join(errs...)}
		}
	}
	if f.clientCPUs == "" {
		return nil, nil
	}
	cpus, err := sampler.ParseCPUList(f.clientCPUs)
	if err != nil {
		return nil, inputErr("--client-cpus: %w", err)
	}
	// Every CPU must be one this process may run on (and so its plugins): a CPU
	// that does not exist is found here, at --dry-run too, not once a server
	// has started.
	if allowed := sampler.CPUsAllowed(os.Getpid()); len(allowed) > 0 {
		var missing []string
		for _, c := range cpus {
			if !slices.Contains(allowed, c) {
				missing = append(missing, strconv.Itoa(c))
			}
		}
		if len(missing) > 0 {
			return nil, inputErr("--client-cpus %s: CPU %s is not one cmpbench may run on here (allowed: %s)", f.clientCPUs, strings.Join(missing, ", "), cpuRanges(allowed))
		}
	}
	if len(cpus) < k {
		return nil, inputErr("--client-cpus %s has %d CPUs for %d processes: each needs one at least", f.clientCPUs, len(cpus), k)
	}
	groups := make([][]int, k)
	for i := range k {
		start, n := core.Split(int64(len(cpus)), k, i)
		groups[i] = cpus[start : start+n]
	}
	return groups, nil
}

// processesWarning says when --processes asks for more load processes than the
// CPUs cmpbench may run on here (cpus, runtime.NumCPU): they then wait for CPUs,
// and the numbers measure the client's own contention as much as the systems'.
// The run goes on (two processes on one core still split one process's work),
// but it is said at --dry-run and in the run, and the archive records it
// (manifest processes) so that the report says it too.
func processesWarning(k, cpus int) string {
	if k <= cpus {
		return ""
	}
	return fmt.Sprintf("--processes %d runs %d load processes per system on %d CPUs (runtime.NumCPU): with more load processes than cores "+
		"they wait for CPUs, and the numbers measure the client's own contention as much as the systems'; the report says so (--processes %d or fewer here)", k, k, cpus, cpus)
}

// cpuRanges writes sorted CPU numbers as a taskset list: 0-3,6.
func cpuRanges(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
