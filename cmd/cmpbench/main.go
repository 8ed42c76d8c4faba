// Command cmpbench benchmarks key-value systems side by side and archives every run
// so that any report can be regenerated and audited. The CLI is thin: flags in, core
// out. See README.md.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	_ "github.com/cmpbench/cmpbench/adapters/all" // built-in adapters, served by `cmpbench plugin serve`
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/gotrace"
	_ "github.com/cmpbench/cmpbench/methods"   // built-in methods: suites, archives
	_ "github.com/cmpbench/cmpbench/workloads" // built-in workloads: suites, the plugin boundary, archives
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1 // a run or a check failed
	exitBadInput = 2 // the command line, a config or a suite is wrong
)

// badInput marks errors caused by what the user gave us (exit 2), here and in
// the packages below that find them.
func badInput(err error) error { return core.BadInput{Err: err} }

func inputErr(format string, a ...any) error { return core.BadInputf(format, a...) }

// failed marks a run or check that completed but did not pass; its details have
// already been printed.
var errFailed = errors.New("failed")

type globals struct {
	config     string
	out        string
	pluginDirs []string
}

func main() {
	os.Exit(traced(os.Args[1:]))
}

// traced runs the command, writing an execution trace of this process when
// CMPBENCH_TRACE names a directory (core/gotrace). `plugin serve` traces itself
// as a plugin (plugins/sdk).
func traced(args []string) int {
	if len(args) > 0 && args[0] == "plugin" {
		return run(args)
	}
	if err := (output{name: gotrace.EnvVar, path: os.Getenv(gotrace.EnvVar), dir: true}).check(); err != nil {
		fmt.Fprintln(os.Stderr, "cmpbench:", err)
		return exitBadInput
	}
	stop, err := gotrace.Start("host")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmpbench:", err)
		return exitBadInput
	}
	code := run(args)
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "cmpbench:", err)
	}
	return code
}

func run(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.Execute()
	var bi core.BadInput
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errFailed):
		return exitFailed
	case errors.As(err, &bi):
		printErr(err)
		return exitBadInput
	default:
		printErr(err)
		return exitFailed
	}
}

// printErr says why cmpbench stopped, on stderr. An error may quote a server's
// log or a plugin's words: their control characters are shown, never acted on
// by the terminal (core.Printable).
func printErr(err error) {
	fmt.Fprintln(os.Stderr, "cmpbench:", core.Printable(err.Error()))
}

func newRoot() *cobra.Command {
	g := &globals{}
	version, commit := core.BuildVersion()
	full := fmt.Sprintf("%s (commit %s)", version, commit)
	if commit == "unknown" {
		full += "; this build records no commit: `make build` stamps it, as does `go build` in a clone (not a linked git worktree) without -buildvcs=false"
	}
	root := &cobra.Command{
		Use:           "cmpbench",
		Short:         "Benchmark key-value systems side by side and archive every run",
		Version:       full,
		SilenceUsage:  true,
		SilenceErrors: true,
		// What a command writes is checked before it runs (outputs.go).
		PersistentPreRunE: checkOutputs,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return badInput(err) })
	pf := root.PersistentFlags()
	pf.StringVar(&g.config, "config", "", "systems file (default ./cmpbench.yaml when it exists, else built-in systems only)")
	pf.StringVar(&g.out, "out", "results", "directory that receives run archives")
	pf.StringSliceVar(&g.pluginDirs, "plugin-dir", nil, "directories with third-party adapter plugins (default ./plugins.d and ~/.cmpbench/plugins)")
	root.AddCommand(
		newRunCmd(g),
		newRerunCmd(g),
		newReportCmd(g),
		newCompareCmd(g),
		newVerifyCmd(g),
		newAuditCmd(g),
		newRecoverCmd(g),
		newMergeCmd(g),
		newSystemsCmd(g),
		newSuitesCmd(),
		newAdaptersCmd(g),
		newExportCmd(g),
		newImportCmd(g),
		newTraceCmd(),
		newPluginCmd(),
	)
	argsAreInput(root)
	return root
}

// argsAreInput makes a wrong number of arguments bad input (exit 2) on every
// command, naming the command and its usage: cobra's own errors would exit 1.
func argsAreInput(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		// A group of commands (the root, export, import) run without one of
		// them: help when given nothing at all, bad input otherwise.
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			if len(args) > 0 {
				return badInput(fmt.Errorf("%s: unknown command %q (commands: %s)", cmd.CommandPath(), args[0], strings.Join(names, ", ")))
			}
			if cmd.HasParent() {
				return badInput(fmt.Errorf("%s needs a command: %s (see %s --help)", cmd.CommandPath(), strings.Join(names, ", "), cmd.CommandPath()))
			}
			return cmd.Help()
		}
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return badInput(fmt.Errorf("%s: %w (usage: %s)", cmd.CommandPath(), err, cmd.UseLine()))
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		argsAreInput(sub)
	}
}
