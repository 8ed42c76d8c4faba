package core

import "time"

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

// PhaseRun is one phase of one system as it ran.
type PhaseRun struct {
	System     string
	Index      int // the phase's position in the suite
	Repetition int
	Spec       PhaseSpec
	End        PhaseEnd
	Intervals  []IntervalReport
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

// Total merges every interval into one OpInterval per op kind, in OpKind order.
func (p *PhaseRun) Total() []OpInterval {
	var byKind [NumOpKinds]*OpInterval
	for _, r := range p.Intervals {
		for i := range r.Ops {
			o := &r.Ops[i]
			if byKind[o.Op] == nil {
				byKind[o.Op] = &OpInterval{Op: o.Op}
			}
			byKind[o.Op].Merge(o)
		}
	}
	var out []OpInterval
	for _, o := range byKind {
		if o != nil {
			out = append(out, *o)
		}
	}
	return out
}

// RunResult is everything a run measured and captured, before it is archived.
type RunResult struct {
	RunID          string
	Status         RunStatus
	Started, Ended time.Time
	Systems        []SystemRun
	Phases         []PhaseRun
	Validations    []Validation
}
