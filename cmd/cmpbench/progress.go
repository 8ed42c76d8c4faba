package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/cmpbench/cmpbench/cmd/cmpbench/internal/progress"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// newProgress shows a run's progress on w (stderr): live bars when it is a
// terminal, timestamped lines otherwise, only what went wrong when quiet.
func newProgress(w io.Writer, p *plan.Plan, red *redact.Redactor, quiet bool) *progress.Progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = isatty.IsTerminal(f.Fd())
	}
	return progress.New(w, progress.Options{Plan: p, Redactor: red, Terminal: tty, Quiet: quiet})
}
