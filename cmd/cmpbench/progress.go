package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// progress prints what a run does to stderr: a line per system and phase, and while a
// phase runs, its throughput per interval — on one updating line on a terminal, every
// tenth interval otherwise.
type progress struct {
	w   io.Writer
	red *redact.Redactor
	tty bool
}

func newProgress(w io.Writer, red *redact.Redactor) *progress {
	p := &progress{w: w, red: red}
	if f, ok := w.(*os.File); ok {
		p.tty = isatty.IsTerminal(f.Fd())
	}
	return p
}

func (p *progress) SystemStarted(s core.SystemRun, serverPid int) {
	what := "endpoint " + s.Endpoint
	if s.Provisioned {
		what = fmt.Sprintf("started %s (pid %d) on %s", s.Binary, serverPid, s.Endpoint)
	}
	fmt.Fprintf(p.w, "%s: %s; %s %s\n", s.Name, what, orDash(s.Capture.Product), orDash(s.Capture.Version))
}

func (p *progress) PhaseStarted(st plan.Step, _ int) {
	fmt.Fprintf(p.w, "%s: %s (%s; %s; %s)\n", st.System, st.Spec.Name, st.Spec.Workload.Describe(), plan.Shape(st.Spec), plan.Bound(st.Spec))
}

func (p *progress) Interval(st plan.Step, r core.IntervalReport) {
	if !p.tty && (r.Index+1)%10 != 0 {
		return
	}
	var ok, errs int64
	for i := range r.Ops {
		if r.Ops[i].Op.Issued() {
			ok += r.Ops[i].OK
		}
		errs += r.Ops[i].ErrorTotal()
	}
	rate := 0.0
	if d := (r.End - r.Start).Seconds(); d > 0 {
		rate = float64(ok) / d
	}
	line := fmt.Sprintf("  %s %s: %s of %s, %.0f ops/s, %d errors", st.System, st.Spec.Name,
		r.End.Round(time.Second), st.Spec.Duration, rate, errs)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) PhaseEnded(st plan.Step, r *core.PhaseRun) {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	var ok, errs int64
	var parts []string
	for _, t := range r.Totals {
		if t.Op.Issued() {
			ok += t.OK
		}
		errs += t.ErrorTotal()
		if t.Response.Count > 0 {
			parts = append(parts, fmt.Sprintf("%s p99 %.3f ms", t.Op, float64(t.Response.P99)/1e6))
		}
	}
	if r.ClientLagged {
		parts = append(parts, "CLIENT-LAGGED: the client's own send delay is a material part of the response time")
	}
	if r.End.Elapsed == 0 && r.Intervals == 0 && len(r.Totals) == 0 {
		// It never ran: no numbers to show, only why.
		fmt.Fprintln(p.w, p.red.String(fmt.Sprintf("%s: %s %s, did not run: %s", st.System, st.Spec.Name, r.End.Status, r.End.Error)))
		return
	}
	rate := 0.0
	if s := r.End.Elapsed.Seconds(); s > 0 {
		rate = float64(ok) / s
	}
	line := fmt.Sprintf("%s: %s %s in %s: %d ops ok (%.0f ops/s), %d errors", st.System, st.Spec.Name, r.End.Status,
		r.End.Elapsed.Round(time.Millisecond), ok, rate, errs)
	if len(parts) > 0 {
		line += "; " + strings.Join(parts, ", ")
	}
	if r.End.Error != "" {
		line += "; " + r.End.Error
	}
	if len(r.End.ErrorSamples) > 0 {
		line += "; first errors: " + strings.Join(r.End.ErrorSamples, " | ")
	}
	for _, n := range r.End.Notes {
		line += "; " + n
	}
	fmt.Fprintln(p.w, p.red.String(line))
}

func (p *progress) Note(msg string) { fmt.Fprintln(p.w, p.red.String(msg)) }

func (p *progress) Warn(msg string) { fmt.Fprintln(p.w, "warning:", p.red.String(msg)) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
