package main

import (
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/cmd/cmpbench/internal/live"
	"github.com/cmpbench/cmpbench/cmd/cmpbench/internal/progress"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/runner"
)

// liveFlag adds --live [ADDR] to cmd: without an address, loopback and a free
// port. The address may follow as the next word (`--live 0.0.0.0:9464`),
// which pflag would take for an argument: runArgs takes it back.
func liveFlag(cmd *cobra.Command, addr *string) {
	cmd.Flags().StringVar(addr, "live", "", "serve the run as it goes on ADDR (default "+live.DefaultAddr+": loopback, a free port): a live page, and /metrics for Prometheus")
	cmd.Flags().Lookup("live").NoOptDefVal = live.DefaultAddr
}

// runArgs accepts no argument but the address of a --live given without `=`.
func runArgs(addr *string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 && cmd.Flags().Changed("live") && *addr == live.DefaultAddr && isAddr(args[0]) {
			*addr = args[0]
			return nil
		}
		return cobra.NoArgs(cmd, args)
	}
}

// isAddr says whether s is host:port with a port number.
func isAddr(s string) bool {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

// liveRun is a run served as it goes: its state, fed beside the progress
// display, and the server.
type liveRun struct {
	l   *live.Live
	srv *live.Server
}

// startLive listens on addr before anything of the run starts (an address
// that cannot be listened on is bad input) and says where, plainly when it is
// not loopback.
func startLive(addr string, o live.Options, stderr io.Writer) (*liveRun, error) {
	l := live.New(o)
	srv, err := live.Serve(l, addr)
	if err != nil {
		return nil, badInput(err)
	}
	fmt.Fprintf(stderr, "Live:    %s (the run's page; %smetrics for Prometheus)\n", srv.URL(), srv.URL())
	if !srv.Loopback() {
		fmt.Fprintf(stderr, "warning: --live %s is not loopback: anyone who can reach this machine on that port can read the run's page and metrics (read-only, secrets redacted as in the archive)\n", addr)
	}
	return &liveRun{l: l, srv: srv}, nil
}

// ended tells the pages how the run ended and where its report is, and stops
// serving once they were sent it.
func (lr *liveRun) ended(status core.RunStatus, reportPath string) {
	if lr == nil {
		return
	}
	lr.l.Ended(status, reportPath)
	_ = lr.srv.Close()
}

// withLive is the progress display with the live state fed beside it.
type withLive struct {
	*progress.Progress
	l *live.Live
}

var (
	_ runner.ClientObserver = withLive{}
	_ runner.Prompter       = withLive{}
)

func (w withLive) SystemStarted(s core.SystemRun, pid int) {
	w.Progress.SystemStarted(s, pid)
	w.l.SystemStarted(s, pid)
}

func (w withLive) PhaseStarted(st plan.Step, pid int) {
	w.Progress.PhaseStarted(st, pid)
	w.l.PhaseStarted(st, pid)
}

func (w withLive) Interval(st plan.Step, r core.IntervalReport) {
	w.Progress.Interval(st, r)
	w.l.Interval(st, r)
}

func (w withLive) PhaseEnded(st plan.Step, p *core.PhaseRun) {
	w.Progress.PhaseEnded(st, p)
	w.l.PhaseEnded(st, p)
}

func (w withLive) Note(msg string) {
	w.Progress.Note(msg)
	w.l.Note(msg)
}

func (w withLive) Warn(msg string) {
	w.Progress.Warn(msg)
	w.l.Warn(msg)
}

func (w withLive) Prompt(msg string) {
	w.Progress.Prompt(msg)
	w.l.Note(msg)
}

func (w withLive) ClientSampled(system string, s core.ProcessSample) { w.l.ClientSampled(system, s) }
