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
	// Ladder names the fixed-rate ladder the phase is a step of, as the suite wrote
	// it; "" for other phases. LadderCombine is how the report combines the step's
	// repetitions: LadderPooled or LadderMean.
	Ladder        string
	LadderCombine string
	// Sweep names the concurrency sweep the phase is a step of, with its knee rule
	// (core.Knee's gain and p99 bound); KneeOf the sweep at whose knee the phase ran.
	Sweep         string
	SweepGain     float64
	SweepP99Bound time.Duration
	KneeOf        string
	End           PhaseEnd
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
