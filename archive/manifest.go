// Package archive is cmpbench's archive format, version 1: one self-contained
// directory per run with manifest.json, Parquet tables, system captures, a generated
// report and SHA256SUMS. It writes archives atomically, reads them back, and verifies
// them. Readers refuse a format version newer than they know.
package archive

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// FormatVersion is the archive format this code writes and the newest it reads.
// Version 1 grew within itself before any release: columns and manifest fields added
// since its first archives are optional, so every version 1 archive still reads.
// Version 2 names the method a phase is a step of as one field, PhaseInfo.Method
// (and the phase whose result it used, Uses); format1.go reads version 1's.
// Version 3 says how sure each number is: the summary's confidence intervals
// (throughput_lo, resp_p99_lo_ns, ..., ci_note) and a measured phase's drift
// (PhaseInfo.Unsteady, the summary's unsteady); a report of an archive before
// it shows neither, as it did.
const FormatVersion = 3

// StatusInProgress is the status of a run's manifest until the archive is finished:
// a directory that says so is a run still going, or one whose cmpbench died
// (`cmpbench recover` finishes it). A finished archive never says it.
const StatusInProgress core.RunStatus = "in_progress"

// File names inside an archive.
const (
	ManifestFile   = "manifest.json"
	SumsFile       = "SHA256SUMS"
	SummaryFile    = "summary.parquet"
	IntervalsFile  = "intervals.parquet"
	ProbeFile      = "probe.parquet"
	ServerStats    = "server_stats.parquet"
	ClientStats    = "client_stats.parquet"
	ReportFile     = "report.md"
	ValidationFile = "validation.json"
	SystemsDir     = "systems"
	// FactsFile is, under a system's directory in SystemsDir, the facts its
	// adapter read of its captures (core.Facts); an archive written before
	// facts were kept, or of an adapter that reads none, has none.
	FactsFile = "facts.json"
)

// Manifest describes a run: what ran where, with which versions, and how it ended.
type Manifest struct {
	FormatVersion int            `json:"format_version"`
	RunID         string         `json:"run_id"`
	Status        core.RunStatus `json:"status"`
	Cmpbench      BuildInfo      `json:"cmpbench"`
	Host          core.HostFacts `json:"host"`
	// CommandLine is the cmpbench command line, secrets redacted.
	CommandLine []string     `json:"command_line"`
	Started     time.Time    `json:"started"`
	Ended       time.Time    `json:"ended"`
	Seed        uint64       `json:"seed"`
	Scale       float64      `json:"scale"`
	Repeat      int          `json:"repeat"`
	Suite       SuiteInfo    `json:"suite"`
	Systems     []SystemInfo `json:"systems"`
	Plugins     []PluginInfo `json:"plugins"`
	Phases      []PhaseInfo  `json:"phases"`
	// Recovered says the archive was finished by `cmpbench recover` from the
	// in-progress directory of a run whose cmpbench stopped.
	Recovered bool `json:"recovered,omitempty"`
	// Shard is set on the archive of a shard of a run (cmpbench run --shard) and on
	// a merge of such archives (cmpbench merge).
	Shard *ShardInfo `json:"shard,omitempty"`
	// Imported says the run was not measured by cmpbench but imported from another
	// tool's output (`cmpbench import`); absent in the archives of cmpbench's runs.
	Imported *ImportInfo `json:"imported,omitempty"`
	// Processes is how many plugin processes generated each system's load
	// together (run --processes); absent for one, and in older archives.
	Processes int `json:"processes,omitempty"`
	// Live says the run was served as it went (run --live): the host's work
	// for the page and its metrics shared the client's machine with the load.
	Live bool `json:"live,omitempty"`
}

// ShardInfo places an archive among the shards of one plan.
type ShardInfo struct {
	Count int `json:"count"`
	// Shards are the shards whose results the archive holds: its own for a
	// shard's archive, every shard merged for a merge.
	Shards []int `json:"shards"`
	// PlanHash identifies the plan every shard ran (PlanHash); StartAt is when
	// their first phase started.
	PlanHash string    `json:"plan_hash"`
	StartAt  time.Time `json:"start_at"`
	// Parts are the shard archives a merge was made of, one per shard.
	Parts []ShardPart `json:"parts,omitempty"`
}

// Complete says the archive holds every shard of its plan.
func (s *ShardInfo) Complete() bool { return s != nil && len(s.Shards) == s.Count }

// ShardPart is one shard's archive in a merge: which run, on which host, by which
// cmpbench, with which command line.
type ShardPart struct {
	Shard       int            `json:"shard"`
	RunID       string         `json:"run_id"`
	Host        core.HostFacts `json:"host"`
	Cmpbench    BuildInfo      `json:"cmpbench"`
	CommandLine []string       `json:"command_line"`
	Status      core.RunStatus `json:"status"`
}

// ImportInfo says where an imported run's numbers come from and what its source
// does not tell, which the report lists among its caveats.
type ImportInfo struct {
	Tool    string `json:"tool"`              // memtier_benchmark or ycsb
	Version string `json:"version,omitempty"` // when the source says
	// Source is the file imported (its base name) and SourceSHA256 its SHA-256;
	// Files the other files read with it (HdrHistogram logs).
	Source       string         `json:"source"`
	SourceSHA256 string         `json:"source_sha256"`
	Files        []ImportedFile `json:"files,omitempty"`
	// ResponseTime says what the response-time columns hold: the tool measured
	// service time only.
	ResponseTime string `json:"response_time"`
	// Caveats are what a reader must know about the imported numbers.
	Caveats []string `json:"caveats,omitempty"`
}

// ImportedFile is one more file an import read.
type ImportedFile struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// BuildInfo identifies the cmpbench that wrote the archive.
type BuildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

// SuiteInfo is the suite as run; YAML is its text before --scale.
type SuiteInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"`
	YAML        string `json:"yaml"`
}

// SystemInfo is one system: its definition as written (secrets unexpanded) and what
// the run learned about it.
type SystemInfo struct {
	Name         string         `json:"name"`
	Adapter      string         `json:"adapter"`
	Description  string         `json:"description,omitempty"`
	DefinedIn    string         `json:"defined_in"`
	Definition   map[string]any `json:"definition"`
	Endpoint     string         `json:"endpoint"`
	Provisioned  bool           `json:"provisioned"`
	Launch       []string       `json:"launch,omitempty"`
	Nodes        []string       `json:"nodes,omitempty"`
	TLS          string         `json:"tls,omitempty"` // "verified[, client certificate, ...]", or "NOT VERIFIED (insecure_skip_verify)[, ...]"
	Cluster      bool           `json:"cluster,omitempty"`
	Binary       string         `json:"binary,omitempty"`
	BinarySHA256 string         `json:"binary_sha256,omitempty"`
	Product      string         `json:"product,omitempty"`
	Version      string         `json:"version,omitempty"`
	VersionField string         `json:"version_field,omitempty"`
	Refused      []string       `json:"refused,omitempty"`
	CaptureError string         `json:"capture_error,omitempty"`
	Error        string         `json:"error,omitempty"`
	CostPerMonth float64        `json:"cost_usd_per_month,omitempty"`
	// Files are the captures under systems/<name>/.
	Files []string `json:"files"`
	// Profile is the profile (YAML) the systems file defined under the
	// system's profile name, adding to or overriding its adapter's built-in
	// ones: what rerun needs that cmpbench itself does not hold.
	Profile string `json:"profile_definition,omitempty"`
}

// PluginInfo is a plugin binary that drove a system.
type PluginInfo struct {
	Adapter    string `json:"adapter"`
	System     string `json:"system"`
	Builtin    bool   `json:"builtin"`
	Path       string `json:"path"`
	SHA256     string `json:"sha256"`
	Version    string `json:"version"`
	SDKVersion string `json:"sdk_version"`
	Protocol   int    `json:"protocol"`
}

// PhaseInfo is one phase of one system.
type PhaseInfo struct {
	Index       int            `json:"index"`
	Repetition  int            `json:"repetition"`
	System      string         `json:"system"`
	Name        string         `json:"name"`
	Kind        core.PhaseKind `json:"kind"`
	Workload    string         `json:"workload"`
	Shape       string         `json:"shape"`
	Connections int            `json:"connections"`
	Rate        float64        `json:"rate"`
	Poisson     bool           `json:"poisson"`
	// Pipeline is the requests each connection kept in flight (absent: one).
	Pipeline   int    `json:"pipeline,omitempty"`
	DurationNs int64  `json:"duration_ns"`
	Ops        int64  `json:"ops"`
	IntervalNs int64  `json:"interval_ns"`
	Seed       uint64 `json:"seed"`
	// Method is the method the phase is a step of (core.Method: its kind, the
	// phase as the suite wrote it, its parameters); nil for other phases. Uses
	// names the phase whose result gave this one its connections (a sweep's knee).
	Method *core.MethodStep `json:"method,omitempty"`
	Uses   *core.MethodRef  `json:"uses,omitempty"`
	// Spec is the workload as resolved (--scale applied, insert ranges set),
	// archived under its kind's key ("memtier", "ycsb", "pubsub": whatever
	// registered it, core.RegisterWorkload); nil when this binary does not know
	// the kind an archive holds.
	Spec core.Workload `json:"-"`
	// unknown holds the keys read that are neither PhaseInfo's nor a registered
	// kind's, written back as they were.
	unknown map[string]json.RawMessage
	// Messages is what a pub/sub phase's messages did.
	Messages  *core.PubSubCounts `json:"messages,omitempty"`
	ProbeRate float64            `json:"probe_rate,omitempty"`
	ProbeOp   string             `json:"probe_op,omitempty"`
	Status    core.PhaseStatus   `json:"status"`
	Error     string             `json:"error,omitempty"`
	// ErrorSamples are the first distinct operation errors, "class: message".
	ErrorSamples []string  `json:"error_samples,omitempty"`
	Started      time.Time `json:"started"`
	Ended        time.Time `json:"ended"`
	ElapsedNs    int64     `json:"elapsed_ns"`
	CPUUserNs    int64     `json:"cpu_user_ns"`
	CPUSystemNs  int64     `json:"cpu_system_ns"`
	Intervals    int       `json:"intervals"`
	// ClientCores is the plugin process's average CPU use in cores; CoresAllowed how
	// many it could use; ClientBound is set above 90% of them.
	ClientCores  float64 `json:"client_cores"`
	CoresAllowed int     `json:"cores_allowed"`
	ClientBound  bool    `json:"client_bound"`
	// HostCPUNs is the CPU the cmpbench host process used during the phase.
	HostCPUNs int64 `json:"host_cpu_ns,omitempty"`
	// ClientLagged: the client's own send delay was a material share of the
	// response time (core.ClientLagged).
	ClientLagged bool `json:"client_lagged,omitempty"`
	// ClientStalledNs is how long the client process was not running during the
	// phase (stopped, or starved of CPU: core.PhaseEnd.Stalled), ClientStalls the
	// longest such spans; a closed loop's rates count the time it ran
	// (RateWindow).
	ClientStalledNs int64       `json:"client_stalled_ns,omitempty"`
	ClientStalls    []core.Span `json:"client_stalls,omitempty"`
	// Host is what the machine the client ran on did during the phase (absent in
	// archives from before it, and for phases too short to tell).
	// HostSaturated is Host.Saturated; a merged phase sets it when a shard's host
	// was, and has no Host of its own (its shards each have theirs).
	Host          *core.HostLoad `json:"host,omitempty"`
	HostSaturated bool           `json:"host_saturated,omitempty"`
	// Confidence is how sure the phase's own numbers are, every op merged
	// (format 3; the summary's rows have each op's). Unsteady says how a
	// measured phase drifted across its window: absent when it was steady, or
	// too short to tell.
	Confidence *PhaseConfidence `json:"confidence,omitempty"`
	Unsteady   *Drift           `json:"unsteady,omitempty"`
	// Partial marks a phase recovered from a run that died during it.
	Partial bool `json:"partial,omitempty"`
	// Notes are facts about the phase worth a line (the open-file limit, ...).
	Notes []string `json:"notes,omitempty"`
	// ProbeStallNs is the side probe's response time above which the report
	// counts a stall; absent (archives written before it) means
	// core.DefaultStallThreshold.
	ProbeStallNs int64 `json:"probe_stall_ns,omitempty"`
	// A shard's phase: its window of the phase's connections (core.PhaseSpec
	// ConnBase, ConnTotal) and the time the shards agreed it starts.
	ConnBase       int        `json:"conn_base,omitempty"`
	ConnTotal      int        `json:"conn_total,omitempty"`
	ScheduledStart *time.Time `json:"scheduled_start,omitempty"`
	// A merged phase: each shard's part of it, and how far apart their phase
	// clocks started (the latest start minus the earliest).
	Shards      []ShardPhase `json:"shards,omitempty"`
	StartSkewNs int64        `json:"start_skew_ns,omitempty"`
}

// ShardPhase is one shard's part of a merged phase, with its own flags.
type ShardPhase struct {
	Shard           int              `json:"shard"`
	Connections     int              `json:"connections"`
	Rate            float64          `json:"rate"`
	Ops             int64            `json:"ops"`
	Status          core.PhaseStatus `json:"status"`
	Error           string           `json:"error,omitempty"`
	ScheduledStart  *time.Time       `json:"scheduled_start,omitempty"`
	Started         time.Time        `json:"started"`
	ElapsedNs       int64            `json:"elapsed_ns"`
	ClientCores     float64          `json:"client_cores"`
	CoresAllowed    int              `json:"cores_allowed"`
	ClientBound     bool             `json:"client_bound"`
	ClientLagged    bool             `json:"client_lagged,omitempty"`
	ClientStalledNs int64            `json:"client_stalled_ns,omitempty"`
	Host            *core.HostLoad   `json:"host,omitempty"`
	HostSaturated   bool             `json:"host_saturated,omitempty"`
	Notes           []string         `json:"notes,omitempty"`
}

// RateWindow is the time the phase's rates are computed over (core.RateWindow).
func (p PhaseInfo) RateWindow() time.Duration {
	return core.RateWindow(time.Duration(p.ElapsedNs), time.Duration(p.ClientStalledNs), p.Rate > 0)
}

// StallThreshold is the phase's probe stall threshold: the one recorded, or the
// default for archives written before it was.
func (p PhaseInfo) StallThreshold() time.Duration {
	if p.ProbeStallNs > 0 {
		return time.Duration(p.ProbeStallNs)
	}
	return core.DefaultStallThreshold
}

// MarshalJSON writes the phase with its workload under the kind's key, and
// keys it read that this binary does not know (a workload kind it does not
// register, fields of a newer cmpbench), so that rewriting a manifest (merge)
// loses nothing.
func (p PhaseInfo) MarshalJSON() ([]byte, error) {
	type plain PhaseInfo
	b, err := json.Marshal(plain(p))
	if err != nil {
		return nil, err
	}
	more := map[string]json.RawMessage{}
	for k, v := range p.unknown {
		more[k] = v
	}
	if p.Spec != nil {
		kind := p.Spec.Kind()
		if phaseKeys()[kind] {
			return nil, fmt.Errorf("phase %s: workload kind %q is also the name of a phase field in the archive", p.Name, kind)
		}
		if more[kind], err = json.Marshal(p.Spec); err != nil {
			return nil, fmt.Errorf("phase %s: workload %s: %w", p.Name, kind, err)
		}
	}
	out := b[: len(b)-1 : len(b)-1]
	for _, k := range slices.Sorted(maps.Keys(more)) {
		key, _ := json.Marshal(k)
		out = append(append(append(append(out, ','), key...), ':'), more[k]...)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads a phase and its workload, by the kind's key; at most one
// registered kind's key may be there.
func (p *PhaseInfo) UnmarshalJSON(b []byte) error {
	type plain PhaseInfo
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	p.Spec, p.unknown = nil, nil
	if err := p.readFormat1(raw); err != nil {
		return fmt.Errorf("phase %s: %w", p.Name, err)
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := raw[k]
		if phaseKeys()[k] || string(v) == "null" {
			continue
		}
		if _, ok := core.LookupWorkload(k); !ok {
			if p.unknown == nil {
				p.unknown = map[string]json.RawMessage{}
			}
			p.unknown[k] = v
			continue
		}
		if p.Spec != nil {
			return fmt.Errorf("phase %s: two workloads, %s and %s", p.Name, p.Spec.Kind(), k)
		}
		w, err := core.DecodeWorkload(k, v, false)
		if err != nil {
			return fmt.Errorf("phase %s: %w", p.Name, err)
		}
		p.Spec = w
	}
	return nil
}

// phaseKeys are the JSON keys of PhaseInfo's own fields, which no workload kind
// may take (reserved in init).
var phaseKeys = sync.OnceValue(func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[PhaseInfo]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
})

func init() {
	core.ReserveWorkloadNames("an archived phase (archive.PhaseInfo)", slices.Sorted(maps.Keys(phaseKeys()))...)
}
