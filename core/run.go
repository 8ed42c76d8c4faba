package core

import (
	"fmt"
	"strings"
	"time"
)

// RunStatus is how a whole run ended.
type RunStatus string

// Run statuses.
const (
	RunComplete    RunStatus = "complete"    // every phase ran and ended ok
	RunFailed      RunStatus = "failed"      // the run finished, but a phase or system failed
	RunInterrupted RunStatus = "interrupted" // stopped by a signal; finished phases are kept
)

// PluginRef identifies the plugin binary that drove a system.
type PluginRef struct {
	Adapter    string
	Builtin    bool
	Path       string
	SHA256     string
	Version    string // the adapter's version
	SDKVersion string // the cmpbench version the plugin was built with
	Protocol   int
}

// SystemRun is what a run learned about one system. Every text in it is redacted.
type SystemRun struct {
	Name        string
	Adapter     string
	Endpoint    string
	Provisioned bool
	// Launch is the server's command line when cmpbench started it (the first node's,
	// for a cluster); Nodes lists a provisioned cluster's nodes.
	Launch               []string
	Nodes                []string
	Binary, BinarySHA256 string
	Plugin               PluginRef
	Capture              Capture
	CaptureError         string
	// ServerLog is the end of a provisioned server's output.
	ServerLog string
	// Error says why the system could not be run at all.
	Error string
}

// PhaseRun is one phase of one system as it ran. Its intervals are not kept: they
// go to the archive as they arrive, and Totals sums them.
type PhaseRun struct {
	System     string
	Index      int // the phase's position in the suite
	Repetition int
	Spec       PhaseSpec
	// Shape describes the phase's load in words ("20000 ops/s, 50 conns"), as the plan
	// printed it; the archive records it as written.
	Shape string
	// Method is the method the phase is a step of (Step.Method); Uses the phase
	// whose result gave it its connections (Step.Uses).
	Method MethodStep
	Uses   MethodRef
	End    PhaseEnd
	// Totals holds one OpInterval per op kind, in OpKind order: every interval merged.
	Totals []OpInterval
	// Intervals is how many intervals arrived.
	Intervals int
	// ServerStats are the system's counters before, during and after the phase.
	ServerStats []StatsSample
	// ClientStats are the load-generating processes' CPU and memory, per interval.
	ClientStats []ProcessSample
	// ClientCores is the CPU the plugin process used, in cores, averaged over the
	// phase; CoresAllowed is how many it could use. Above ClientBoundFraction of
	// them, the phase measured the client, not the server.
	ClientCores  float64
	CoresAllowed int
	ClientBound  bool
	// HostCPU is the CPU the cmpbench process itself used during the phase: the
	// client's cost is the plugin's and the host's together.
	HostCPU time.Duration
	// ClientLagged is set when the client's own send delay is a material share of
	// the response time (see ClientLagged).
	ClientLagged bool
	// Unsteady says how a measured phase drifted across its window, when it
	// did (the archive's sink judges it from the intervals it holds, as it
	// records the phase, before anyone is told the phase ended): "" when steady.
	Unsteady string
	// Host is what the whole machine did during the phase (nil when it could not
	// be read, or the phase was shorter than a second): the servers under test
	// share it with the client on loopback.
	Host *HostLoad
	// Partial is set on a phase recovered from a run that died during it: its
	// numbers cover the intervals that reached the disk.
	Partial bool
}

// HostLoad is the CPU use of the machine the load generator ran on during a phase,
// in cores averaged from its first interval (every connection open by then) to its
// end, or over the whole phase when that leaves less than a second.
type HostLoad struct {
	// Cores are the CPUs counted: those the load generator may run on (all the
	// machine's unless it is pinned), and BusyCores how many of them were busy.
	Cores      int     `json:"cores"`
	BusyCores  float64 `json:"busy_cores"` // every process and the kernel
	StealCores float64 `json:"steal_cores,omitempty"`
	// Others are the busiest processes that were not the client's own (the host
	// process and its plugins), the servers under test among them: at most three,
	// each named by its process name (never its command line, which may hold a
	// password), from 0.05 cores up.
	Others []ProcessCPU `json:"others,omitempty"`
	// UnseenCores is the busy time charged to no process readable at both ends of
	// the phase: processes that came and went (a loop forking short commands),
	// processes that could not be read, the kernel's own work. Told only from a
	// quarter of a core up, and only of the whole machine.
	UnseenCores float64 `json:"unseen_cores,omitempty"`
	// Saturated: the CPUs were busy (or stolen by a hypervisor) above
	// HostSaturatedFraction of the time, so the client and any server on the
	// machine waited for a CPU, and the numbers describe the shared machine. (An
	// archive records it beside the load, as it does client-bound.)
	Saturated bool `json:"-"`
}

// ProcessCPU is one process's CPU use over a phase, in cores.
type ProcessCPU struct {
	Name  string  `json:"name"`
	Pid   int     `json:"pid"`
	Cores float64 `json:"cores"`
}

// String says how busy the machine was and who kept it busy, for a caveat:
// "1.98 of 2 cores busy (0.05 stolen by the hypervisor); other processes: bash
// (pid 4711) 0.91, redis-server (pid 4702) 0.44".
func (h HostLoad) String() string { return h.Format(func(name string) string { return name }) }

// Format is String with each other process's name as name makes it: report.md
// quotes it, the name being what the process calls itself.
func (h HostLoad) Format(name func(string) string) string {
	var b strings.Builder
	unit := "cores"
	if h.Cores == 1 {
		unit = "core"
	}
	fmt.Fprintf(&b, "%.2f of %d %s busy", h.BusyCores+h.StealCores, h.Cores, unit)
	if h.StealCores >= 0.01 {
		fmt.Fprintf(&b, " (%.2f stolen by the hypervisor)", h.StealCores)
	}
	for i, o := range h.Others {
		sep := ", "
		if i == 0 {
			sep = "; other processes: "
		}
		fmt.Fprintf(&b, "%s%s (pid %d) %.2f", sep, name(o.Name), o.Pid, o.Cores)
	}
	if h.UnseenCores > 0 {
		fmt.Fprintf(&b, "; %.2f cores busy in no process seen (short-lived processes, unreadable ones, the kernel)", h.UnseenCores)
	}
	return b.String()
}

// HostSaturatedFraction of the machine's cores, busy on average, marks a phase
// host-saturated.
const HostSaturatedFraction = 0.9

// LagFloor is the send lag below which a phase is never called client-lagged: on
// loopback, scheduling noise alone reaches tens of microseconds.
const LagFloor = 200 * time.Microsecond

// ClientLagged reports whether, for some op, the client's send lag p99 exceeds
// both the service time p99 and LagFloor. Response time is lag plus queueing plus
// service time; when the client's own delay outweighs the server's service time at
// the 99th percentile, the response-time tail describes the client, not the server.
func ClientLagged(totals []OpInterval) bool {
	for _, t := range totals {
		if t.Lag.Count > 0 && t.Lag.P99 > max(t.Service.P99, int64(LagFloor)) {
			return true
		}
	}
	return false
}

// LongCallBound bounds the control calls of a plugin that may scan a whole store
// (Count, Flush, Validate: a Kvrocks DBSIZE SCAN, an Aerospike truncate); the
// runner says while it waits for one.
const LongCallBound = 30 * time.Minute

// StallGap is the shortest stretch in which the client process not running is
// counted as a stall of it (PhaseEnd.Stalls): shorter ones are a scheduler's
// ordinary delays.
const StallGap = 100 * time.Millisecond

// A measured phase whose client process was not running (PhaseEnd.Stalled) for
// ClientStalledFraction of its window, and at least StallFailFloor, fails: its
// numbers cover a client that stood still, not a system that was measured. A
// shorter stall marks it client-stalled: a tenth of a second of a starved client
// on a busy machine is a caveat, not a failed measurement. A load or a warm-up
// is never failed for it: its rate is not a result.
const (
	ClientStalledFraction = 0.02
	StallFailFloor        = 500 * time.Millisecond
)

// RateWindow is the time a phase's rates are computed over: its elapsed time,
// less, in a closed loop, the time the client was not running, when it sent
// nothing (its rate is the system's while the client ran). A fixed-rate phase
// sends what it owes late, so its rate counts over the whole of it.
func RateWindow(elapsed, stalled time.Duration, open bool) time.Duration {
	if open || stalled <= 0 || stalled >= elapsed {
		return elapsed
	}
	return elapsed - stalled
}

// ClientStalled says why a phase whose client stood still too long
// (StalledTooLong) is not a measurement of the system, and "" for one whose
// client ran.
func ClientStalled(end *PhaseEnd) string {
	if !StalledTooLong(end.Elapsed, end.Stalled) {
		return ""
	}
	return fmt.Sprintf("the client was not running for %s of the phase's %s (%s): the load-generating process was stopped or starved of CPU, "+
		"so what it measured is not the system's; what it sent is kept", round(end.Stalled), round(end.Elapsed), DescribeStalls(end.Stalls))
}

// JudgeStalls fails an ok measured phase whose client stood still too long
// (ClientStalled), and notes any other stall: a stall the side probe saw then
// was the client's.
func JudgeStalls(end *PhaseEnd, kind PhaseKind) {
	why := ClientStalled(end)
	switch {
	case why != "" && end.Status == StatusOK && kind == PhaseMeasured:
		end.Status, end.Error = StatusFailed, why
	case why != "":
		end.Notes = append(end.Notes, why)
	case end.Stalled > 0:
		end.Notes = append(end.Notes, fmt.Sprintf("the client was not running for %s (%s): a stall of the side probe's then was the client's, not the server's",
			round(end.Stalled), DescribeStalls(end.Stalls)))
	}
}

// JudgeErrors fails an ok phase in which most operations of some kind failed (a
// load fails on any error already): its successes are timed, but they are the
// few, and its mix is not the one asked for. An Aerospike namespace at
// stop-writes failed 87% of a phase's writes, which ended ok.
func JudgeErrors(end *PhaseEnd, totals []OpInterval) {
	if end.Status != StatusOK {
		return
	}
	for _, t := range totals {
		errs := t.ErrorTotal()
		if !t.Op.Issued() || errs <= t.OK {
			continue
		}
		worst := ErrorClass(0)
		for c, n := range t.Errors {
			if n > t.Errors[worst] {
				worst = ErrorClass(c)
			}
		}
		end.Status = StatusFailed
		end.Error = fmt.Sprintf("%.0f%% of its %s operations failed (%d of %d; %d %s): most of what the phase asked for failed, so its numbers do not describe its workload",
			100*float64(errs)/float64(errs+t.OK), t.Op, errs, errs+t.OK, t.Errors[worst], worst)
		return
	}
}

// StalledTooLong says whether a client not running for stalled of a phase of
// elapsed stood still too long for it to be a measurement: for
// ClientStalledFraction of it, and at least StallFailFloor.
func StalledTooLong(elapsed, stalled time.Duration) bool {
	return stalled >= StallFailFloor && float64(stalled) >= ClientStalledFraction*float64(elapsed)
}

// DescribeStalls says how many stalls there were and the longest, for a caveat.
func DescribeStalls(spans []Span) string {
	if len(spans) == 0 {
		return "no stop"
	}
	longest := spans[0]
	for _, s := range spans[1:] {
		if s.End-s.Start > longest.End-longest.Start {
			longest = s
		}
	}
	what := "1 stop"
	switch {
	case len(spans) >= MaxStallSpans:
		what = fmt.Sprintf("%d or more stops, the longest", len(spans))
	case len(spans) > 1:
		what = fmt.Sprintf("%d stops, the longest", len(spans))
	}
	return fmt.Sprintf("%s %s from %s into it", what, round(longest.End-longest.Start), round(longest.Start))
}

func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// ClientBoundFraction of the allowed cores, used on average, marks a phase
// client-bound.
const ClientBoundFraction = 0.9

// StatsSample is one reading of a system's counters; Point is "before", "during" or
// "after" the phase.
type StatsSample struct {
	At    time.Time
	Point string
	Stats map[string]string
}

// ProcessSample is one reading of a client process.
type ProcessSample struct {
	At         time.Time
	Process    string // "cmpbench" (the host) or "plugin"
	Pid        int
	CPUPercent float64 // 100 = one core
	RSSBytes   uint64
}

// RunResult is what a run did: its systems, phases (totals, not intervals) and
// validations, for the end-of-run summary; the archive has the rest.
type RunResult struct {
	RunID          string
	Status         RunStatus
	Started, Ended time.Time
	Systems        []SystemRun
	Phases         []PhaseRun
	Validations    []Validation
	// SinkError says why keeping the results failed (a full disk), which stopped
	// the run.
	SinkError string
}
