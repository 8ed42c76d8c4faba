package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// progress prints what a run does, one line per event, to stderr.
type progress struct {
	w   io.Writer
	red *redact.Redactor
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

func (p *progress) Interval(plan.Step, core.IntervalReport) {}

func (p *progress) PhaseEnded(st plan.Step, r *core.PhaseRun) {
	var ok, errs int64
	var parts []string
	for _, t := range r.Total() {
		ok += t.OK
		errs += t.ErrorTotal()
		if t.Response != nil && t.Response.TotalCount() > 0 {
			parts = append(parts, fmt.Sprintf("%s p99 %.3f ms", t.Op, float64(t.Response.ValueAtQuantile(99))/1e6))
		}
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
	fmt.Fprintln(p.w, p.red.String(line))
}

func (p *progress) Warn(msg string) { fmt.Fprintln(p.w, "warning:", p.red.String(msg)) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
