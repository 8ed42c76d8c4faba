package runner

import (
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// Sink receives what a run produces as it happens, to keep it: the archive writer.
// An error stops the run: nothing more could be kept.
type Sink interface {
	SystemStarted(core.SystemRun) error
	PhaseStarted(*core.PhaseRun) error
	Interval(*core.PhaseRun, *core.IntervalReport) error
	PhaseEnded(*core.PhaseRun) error
	// PhaseTotals merges the intervals the sink kept of the running phase: for a
	// plugin that crashed, or one built before the engine sent its totals.
	PhaseTotals(*core.PhaseRun) ([]core.OpInterval, error)
	Validation(core.Validation) error
	// AmendValidation replaces the last validation (a finding added after it).
	AmendValidation(core.Validation) error
	SystemEnded(core.SystemRun) error
}

// Observer is told what happens, for progress display and tests. Calls come from
// one goroutine.
type Observer interface {
	SystemStarted(sys core.SystemRun, serverPid int)
	PhaseStarted(step plan.Step, pluginPid int)
	Interval(step plan.Step, r core.IntervalReport)
	PhaseEnded(step plan.Step, p *core.PhaseRun)
	Note(msg string) // what happened, worth a line
	Warn(msg string) // what went wrong without failing the run
}

// ClientObserver is an Observer that is also told each sample of the client's
// processes (their CPU and memory, every interval) as it is kept for the
// archive. It is called from the sampler's goroutine, not the one the
// Observer's calls come from.
type ClientObserver interface {
	ClientSampled(system string, s core.ProcessSample)
}

// Prompter is an Observer that shows what the user must do now (restart a server
// by hand) apart from its notes, which it may not show: a quiet display. An
// Observer that is not one is told it as a Note.
type Prompter interface {
	Prompt(msg string)
}

// prompt tells the observer what the user must do now.
func prompt(o Observer, msg string) {
	if p, ok := o.(Prompter); ok {
		p.Prompt(msg)
		return
	}
	o.Note(msg)
}

type nopObserver struct{}

func (nopObserver) SystemStarted(core.SystemRun, int)       {}
func (nopObserver) PhaseStarted(plan.Step, int)             {}
func (nopObserver) Interval(plan.Step, core.IntervalReport) {}
func (nopObserver) PhaseEnded(plan.Step, *core.PhaseRun)    {}
func (nopObserver) Note(string)                             {}
func (nopObserver) Warn(string)                             {}

type nopSink struct{}

func (nopSink) SystemStarted(core.SystemRun) error                    { return nil }
func (nopSink) PhaseStarted(*core.PhaseRun) error                     { return nil }
func (nopSink) Interval(*core.PhaseRun, *core.IntervalReport) error   { return nil }
func (nopSink) PhaseEnded(*core.PhaseRun) error                       { return nil }
func (nopSink) PhaseTotals(*core.PhaseRun) ([]core.OpInterval, error) { return nil, nil }
func (nopSink) Validation(core.Validation) error                      { return nil }
func (nopSink) AmendValidation(core.Validation) error                 { return nil }
func (nopSink) SystemEnded(core.SystemRun) error                      { return nil }
