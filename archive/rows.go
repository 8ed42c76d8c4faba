package archive

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// SustainedFraction is the share of the target rate a fixed-rate phase must achieve
// to count; below it the phase is reported as NS (not sustained).
const SustainedFraction = core.SustainedFraction

// Counts are the outcome counters of an op kind, shared by both tables.
type Counts struct {
	Count       int64 `parquet:"count"` // successes, hits and misses included
	Hits        int64 `parquet:"hits"`
	Misses      int64 `parquet:"misses"`
	Bytes       int64 `parquet:"bytes"`
	Errors      int64 `parquet:"errors"`
	ErrOOM      int64 `parquet:"errors_oom"`
	ErrTimeout  int64 `parquet:"errors_timeout"`
	ErrConn     int64 `parquet:"errors_connection"`
	ErrProtocol int64 `parquet:"errors_protocol"`
	ErrOther    int64 `parquet:"errors_other"`
	ErrNotFound int64 `parquet:"errors_not_found"`
	ErrExists   int64 `parquet:"errors_exists"`
	ErrOverload int64 `parquet:"errors_overload,optional"`
	ErrInDoubt  int64 `parquet:"errors_in_doubt,optional"`
}

func countsOf(o *core.OpInterval) Counts {
	return Counts{
		Count: o.OK, Hits: o.Hits, Misses: o.Misses, Bytes: o.Bytes, Errors: o.ErrorTotal(),
		ErrOOM: o.Errors[core.ErrClassOOM], ErrTimeout: o.Errors[core.ErrClassTimeout], ErrConn: o.Errors[core.ErrClassConnection],
		ErrProtocol: o.Errors[core.ErrClassProtocol], ErrOther: o.Errors[core.ErrClassOther],
		ErrNotFound: o.Errors[core.ErrClassNotFound], ErrExists: o.Errors[core.ErrClassExists],
		ErrOverload: o.Errors[core.ErrClassOverload], ErrInDoubt: o.Errors[core.ErrClassInDoubt],
	}
}

// errorsOf is the inverse of countsOf for the error classes.
func (c Counts) errorsOf() (e [core.NumErrorClasses]int64) {
	e[core.ErrClassOOM], e[core.ErrClassTimeout], e[core.ErrClassConnection] = c.ErrOOM, c.ErrTimeout, c.ErrConn
	e[core.ErrClassProtocol], e[core.ErrClassOther] = c.ErrProtocol, c.ErrOther
	e[core.ErrClassNotFound], e[core.ErrClassExists] = c.ErrNotFound, c.ErrExists
	e[core.ErrClassOverload], e[core.ErrClassInDoubt] = c.ErrOverload, c.ErrInDoubt
	return e
}

// SummaryRow is one phase x op of summary.parquet. Latencies are nanoseconds; only
// successful operations are in them.
type SummaryRow struct {
	System       string  `parquet:"system"`
	PhaseIndex   int     `parquet:"phase_index"`
	Phase        string  `parquet:"phase"`
	Repetition   int     `parquet:"repetition"`
	Kind         string  `parquet:"kind"`
	Workload     string  `parquet:"workload"`
	Shape        string  `parquet:"shape"`
	Op           string  `parquet:"op"`
	Connections  int     `parquet:"connections"`
	TargetRate   float64 `parquet:"target_rate"`   // total ops/s of the phase; 0 = closed loop
	AchievedRate float64 `parquet:"achieved_rate"` // successful ops/s of the phase, all ops
	Sustained    *bool   `parquet:"sustained"`     // fixed-rate phases only
	Status       string  `parquet:"status"`
	DurationS    float64 `parquet:"duration_s"`
	Counts
	Throughput  float64 `parquet:"throughput"` // successful ops/s of this op
	RespP50     int64   `parquet:"resp_p50_ns"`
	RespP90     int64   `parquet:"resp_p90_ns"`
	RespP99     int64   `parquet:"resp_p99_ns"`
	RespP999    int64   `parquet:"resp_p999_ns"`
	RespP9999   int64   `parquet:"resp_p9999_ns"`
	RespMax     int64   `parquet:"resp_max_ns"`
	SvcP50      int64   `parquet:"svc_p50_ns"`
	SvcP90      int64   `parquet:"svc_p90_ns"`
	SvcP99      int64   `parquet:"svc_p99_ns"`
	SvcP999     int64   `parquet:"svc_p999_ns"`
	SvcP9999    int64   `parquet:"svc_p9999_ns"`
	SvcMax      int64   `parquet:"svc_max_ns"`
	RespHDR     []byte  `parquet:"resp_hdr"`
	SvcHDR      []byte  `parquet:"svc_hdr"`      // empty when equal to resp_hdr (closed loop)
	ClientCPUS  float64 `parquet:"client_cpu_s"` // CPU of the load-generating process in the phase
	ClientBound bool    `parquet:"client_bound"` // it used more than 90% of the cores it may use
	// Send lag (fixed-rate phases): the client's own delay before each send.
	LagP50       int64  `parquet:"lag_p50_ns,optional"`
	LagP90       int64  `parquet:"lag_p90_ns,optional"`
	LagP99       int64  `parquet:"lag_p99_ns,optional"`
	LagP999      int64  `parquet:"lag_p999_ns,optional"`
	LagP9999     int64  `parquet:"lag_p9999_ns,optional"`
	LagMax       int64  `parquet:"lag_max_ns,optional"`
	LagHDR       []byte `parquet:"lag_hdr,optional"`
	ClientLagged bool   `parquet:"client_lagged,optional"` // see core.ClientLagged
	// ClientStalledS is how long the client process was not running in the phase;
	// a closed loop's rates count the rest of duration_s (core.RateWindow).
	ClientStalledS float64 `parquet:"client_stalled_s,optional"`
	HostCPUS       float64 `parquet:"host_cpu_s,optional"` // CPU of the cmpbench host process in the phase
	// The machine the client ran on (core.HostLoad): its CPUs, how many were busy
	// on average (every process; a hypervisor's steal is not in it), and whether
	// that, with the steal, saturated it.
	HostCores     int64   `parquet:"host_cores,optional"`
	HostBusyCores float64 `parquet:"host_busy_cores,optional"`
	HostSaturated bool    `parquet:"host_saturated,optional"`
	// How sure the numbers are (format 3; zero in archives before it): the
	// 95 % confidence intervals of Throughput and of the response time's
	// percentiles, from the phase's intervals (core/confidence, confidence.go).
	// Zero where there is none, and CINote says why ("too few intervals",
	// "p99.99: too few operations").
	ThroughputLo float64 `parquet:"throughput_lo,optional"`
	ThroughputHi float64 `parquet:"throughput_hi,optional"`
	RespP50Lo    int64   `parquet:"resp_p50_lo_ns,optional"`
	RespP50Hi    int64   `parquet:"resp_p50_hi_ns,optional"`
	RespP99Lo    int64   `parquet:"resp_p99_lo_ns,optional"`
	RespP99Hi    int64   `parquet:"resp_p99_hi_ns,optional"`
	RespP999Lo   int64   `parquet:"resp_p999_lo_ns,optional"`
	RespP999Hi   int64   `parquet:"resp_p999_hi_ns,optional"`
	RespP9999Lo  int64   `parquet:"resp_p9999_lo_ns,optional"`
	RespP9999Hi  int64   `parquet:"resp_p9999_hi_ns,optional"`
	CINote       string  `parquet:"ci_note,optional"`
	// Unsteady: the measured phase drifted across its window (PhaseInfo.Unsteady).
	Unsteady bool `parquet:"unsteady,optional"`
}

// IntervalRow is one phase x interval x op of intervals.parquet. StartNs and EndNs
// are phase time, from the phase's start (manifest phases[].started); WallStart is
// the interval's start as a time of day, that start plus StartNs, for joins with
// the server and client stats by time.
type IntervalRow struct {
	System     string    `parquet:"system"`
	PhaseIndex int       `parquet:"phase_index"`
	Phase      string    `parquet:"phase"`
	Repetition int       `parquet:"repetition"`
	Interval   int       `parquet:"interval"`
	StartNs    int64     `parquet:"start_ns"`
	EndNs      int64     `parquet:"end_ns"`
	WallStart  time.Time `parquet:"t_start,optional" json:"-"` // see setWallStart
	Op         string    `parquet:"op"`
	Counts
	RespP50  int64  `parquet:"resp_p50_ns"`
	RespP99  int64  `parquet:"resp_p99_ns"`
	RespP999 int64  `parquet:"resp_p999_ns"`
	RespMax  int64  `parquet:"resp_max_ns"`
	SvcP50   int64  `parquet:"svc_p50_ns"`
	SvcP99   int64  `parquet:"svc_p99_ns"`
	SvcP999  int64  `parquet:"svc_p999_ns"`
	SvcMax   int64  `parquet:"svc_max_ns"`
	RespHDR  []byte `parquet:"resp_hdr"`
	SvcHDR   []byte `parquet:"svc_hdr"` // empty when equal to resp_hdr (closed loop)
	LagP50   int64  `parquet:"lag_p50_ns,optional"`
	LagP99   int64  `parquet:"lag_p99_ns,optional"`
	LagP999  int64  `parquet:"lag_p999_ns,optional"`
	LagMax   int64  `parquet:"lag_max_ns,optional"`
	LagHDR   []byte `parquet:"lag_hdr,optional"`
	// The client's connections in the interval (core.Conns), the same on each
	// of its op rows, as start_ns is: open at its end, opened and lost in it.
	// Null where nothing counted them: a plugin built before engine.conns, an
	// archive written before these columns, an imported run.
	ConnsOpen   *int64 `parquet:"conns_open,optional"`
	ConnsOpened *int64 `parquet:"conns_opened,optional"`
	ConnsLost   *int64 `parquet:"conns_lost,optional"`
}

// conns is the row's connections, or nil when it has none.
func (r *IntervalRow) conns() *core.Conns {
	if r.ConnsOpen == nil || r.ConnsOpened == nil || r.ConnsLost == nil {
		return nil
	}
	return &core.Conns{Open: int(*r.ConnsOpen), Opened: int(*r.ConnsOpened), Lost: int(*r.ConnsLost)}
}

// setConns sets the row's connections (nil: none counted).
func (r *IntervalRow) setConns(c *core.Conns) {
	if c == nil {
		r.ConnsOpen, r.ConnsOpened, r.ConnsLost = nil, nil, nil
		return
	}
	open, opened, lost := int64(c.Open), int64(c.Opened), int64(c.Lost)
	r.ConnsOpen, r.ConnsOpened, r.ConnsLost = &open, &opened, &lost
}

// summaryRows lays out a phase's totals.
func summaryRows(pi *PhaseInfo, totals []core.OpInterval) []SummaryRow {
	if len(totals) == 0 {
		return nil
	}
	secs, rateSecs := float64(pi.ElapsedNs)/1e9, pi.RateWindow().Seconds()
	var ok int64
	for _, t := range totals {
		if t.Op.Issued() {
			ok += t.OK
		}
	}
	achieved := 0.0
	if rateSecs > 0 {
		achieved = float64(ok) / rateSecs
	}
	open := pi.Rate > 0
	var sustained *bool
	if open {
		s := pi.Status == core.StatusOK && achieved >= SustainedFraction*pi.Rate
		sustained = &s
	}
	rows := make([]SummaryRow, 0, len(totals))
	for _, t := range totals {
		r := SummaryRow{
			System: pi.System, PhaseIndex: pi.Index, Phase: pi.Name, Repetition: pi.Repetition, Kind: string(pi.Kind),
			Workload: pi.Workload, Shape: pi.Shape, Op: t.Op.String(),
			Connections: pi.Connections, TargetRate: pi.Rate, AchievedRate: achieved, Sustained: sustained,
			Status: string(pi.Status), DurationS: secs, Counts: countsOf(&t),
			RespP50: t.Response.P50, RespP90: t.Response.P90, RespP99: t.Response.P99,
			RespP999: t.Response.P999, RespP9999: t.Response.P9999, RespMax: t.Response.Max,
			SvcP50: t.Service.P50, SvcP90: t.Service.P90, SvcP99: t.Service.P99,
			SvcP999: t.Service.P999, SvcP9999: t.Service.P9999, SvcMax: t.Service.Max,
			RespHDR: t.Response.HDR, SvcHDR: t.Service.HDR,
			LagP50: t.Lag.P50, LagP90: t.Lag.P90, LagP99: t.Lag.P99, LagP999: t.Lag.P999, LagP9999: t.Lag.P9999, LagMax: t.Lag.Max, LagHDR: t.Lag.HDR,
			ClientCPUS: float64(pi.CPUUserNs+pi.CPUSystemNs) / 1e9, ClientBound: pi.ClientBound,
			ClientLagged: pi.ClientLagged, HostCPUS: float64(pi.HostCPUNs) / 1e9, ClientStalledS: float64(pi.ClientStalledNs) / 1e9,
		}
		if h := pi.Host; h != nil {
			r.HostCores, r.HostBusyCores = int64(h.Cores), h.BusyCores
		}
		r.HostSaturated = pi.HostSaturated
		if !open {
			r.SvcHDR = nil // equal to resp_hdr
		}
		if rateSecs > 0 {
			r.Throughput = float64(t.OK) / rateSecs
		}
		rows = append(rows, r)
	}
	return rows
}

// phaseID names a phase in every table.
type phaseID struct {
	System     string
	Index      int
	Name       string
	Repetition int
}

func idOf(p *core.PhaseRun) phaseID {
	return phaseID{System: p.System, Index: p.Index, Name: p.Spec.Name, Repetition: p.Repetition}
}

// intervalRows lays out one interval.
func intervalRows(id phaseID, iv *core.IntervalReport, open bool) []IntervalRow {
	rows := make([]IntervalRow, 0, len(iv.Ops))
	for i := range iv.Ops {
		o := &iv.Ops[i]
		r := IntervalRow{
			System: id.System, PhaseIndex: id.Index, Phase: id.Name, Repetition: id.Repetition, Interval: iv.Index,
			StartNs: int64(iv.Start), EndNs: int64(iv.End), Op: o.Op.String(), Counts: countsOf(o),
			RespP50: o.Response.P50, RespP99: o.Response.P99, RespP999: o.Response.P999, RespMax: o.Response.Max,
			SvcP50: o.Service.P50, SvcP99: o.Service.P99, SvcP999: o.Service.P999, SvcMax: o.Service.Max,
			RespHDR: o.Response.HDR, SvcHDR: o.Service.HDR,
			LagP50: o.Lag.P50, LagP99: o.Lag.P99, LagP999: o.Lag.P999, LagMax: o.Lag.Max, LagHDR: o.Lag.HDR,
		}
		if !open {
			r.SvcHDR = nil // equal to resp_hdr
		}
		r.setConns(iv.Conns)
		rows = append(rows, r)
	}
	return rows
}

// phaseStarts are the wall-clock starts of a manifest's phases (the first entry of
// a phase listed twice, as verify reads it).
func phaseStarts(m *Manifest) map[phaseKey]time.Time {
	starts := make(map[phaseKey]time.Time, len(m.Phases))
	for i := range m.Phases {
		p := &m.Phases[i]
		if _, dup := starts[keyOfPhase(p)]; !dup {
			starts[keyOfPhase(p)] = p.Started
		}
	}
	return starts
}

// setWallStart sets the interval's wall-clock start, when it has none (a spooled
// row, or one of a table written before t_start was), from its phase's start.
func (r *IntervalRow) setWallStart(starts map[phaseKey]time.Time) {
	if s := starts[phaseKey{r.System, r.PhaseIndex, r.Repetition}]; r.WallStart.IsZero() && !s.IsZero() {
		r.WallStart = s.Add(time.Duration(r.StartNs)).UTC()
	}
}

// opInterval is the inverse of intervalRows for one row, with the histograms that
// recovery merges (percentiles are not needed for that).
func (r *IntervalRow) opInterval() (core.OpInterval, error) {
	return opIntervalOf(r.Op, r.Counts, r.RespHDR, r.SvcHDR, r.LagHDR)
}

// ProbeRow is one side-probe request of probe.parquet; times are ns from the phase
// start (manifest phases[].started), response = end - intended, service = end - start.
type ProbeRow struct {
	System     string `parquet:"system"`
	PhaseIndex int    `parquet:"phase_index"`
	Phase      string `parquet:"phase"`
	Repetition int    `parquet:"repetition"`
	IntendedNs int64  `parquet:"intended_ns"`
	StartNs    int64  `parquet:"start_ns"`
	EndNs      int64  `parquet:"end_ns"`
	Op         string `parquet:"op"`
	Outcome    string `parquet:"outcome"` // hit, ok, miss, or the error class
	ResponseNs int64  `parquet:"response_ns"`
	ServiceNs  int64  `parquet:"service_ns"`
}

func probeRows(id phaseID, iv *core.IntervalReport) []ProbeRow {
	rows := make([]ProbeRow, len(iv.Probe))
	for i, r := range iv.Probe {
		rows[i] = ProbeRow{
			System: id.System, PhaseIndex: id.Index, Phase: id.Name, Repetition: id.Repetition,
			IntendedNs: int64(r.Intended), StartNs: int64(r.Start), EndNs: int64(r.End),
			Op: r.Op.String(), Outcome: r.OutcomeName(),
			ResponseNs: int64(r.End - r.Intended), ServiceNs: int64(r.End - r.Start),
		}
	}
	return rows
}

// ServerStatRow is one counter of one server-stats sample, in long format. The
// sample's time is in two columns: t_unix_ns, as every version 1 archive has it,
// and t, the same as a timestamp (ns, UTC) for analysis tools, added later.
type ServerStatRow struct {
	TimeUnixNs int64     `parquet:"t_unix_ns"`
	Time       time.Time `parquet:"t,optional" json:"-"` // derived from TimeUnixNs
	System     string    `parquet:"system"`
	PhaseIndex int       `parquet:"phase_index"`
	Phase      string    `parquet:"phase"`
	Repetition int       `parquet:"repetition"`
	Point      string    `parquet:"point"` // before, during or after the phase
	Section    string    `parquet:"section"`
	Key        string    `parquet:"key"`
	Value      string    `parquet:"value"`
	ValueFloat *float64  `parquet:"value_float"` // when the value is a number
}

func serverStatRows(p *core.PhaseRun) []ServerStatRow {
	var rows []ServerStatRow
	for _, smp := range p.ServerStats {
		for _, k := range sortedKeys(smp.Stats) {
			v := smp.Stats[k]
			section, key, ok := strings.Cut(k, ".")
			if !ok {
				section, key = "", k
			}
			row := ServerStatRow{TimeUnixNs: smp.At.UnixNano(), Time: smp.At.UTC(), System: p.System, PhaseIndex: p.Index, Phase: p.Spec.Name,
				Repetition: p.Repetition, Point: smp.Point, Section: section, Key: key, Value: v}
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				row.ValueFloat = &f
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// ClientStatRow is one sample of a client process; its time is in two columns, as
// a ServerStatRow's.
type ClientStatRow struct {
	TimeUnixNs int64     `parquet:"t_unix_ns"`
	Time       time.Time `parquet:"t,optional" json:"-"` // derived from TimeUnixNs
	System     string    `parquet:"system"`
	PhaseIndex int       `parquet:"phase_index"`
	Phase      string    `parquet:"phase"`
	Repetition int       `parquet:"repetition"`
	Process    string    `parquet:"process"` // cmpbench (the host) or plugin
	Pid        int       `parquet:"pid"`
	CPUPercent float64   `parquet:"cpu_percent"` // 100 = one core
	RSSBytes   int64     `parquet:"rss_bytes"`
}

func (r *ServerStatRow) derive() { r.Time = timeOf(r.Time, r.TimeUnixNs) }

func (r *ClientStatRow) derive() { r.Time = timeOf(r.Time, r.TimeUnixNs) }

// timeOf is t, or when that is zero the time of unixNs, in UTC.
func timeOf(t time.Time, unixNs int64) time.Time {
	if t.IsZero() {
		return time.Unix(0, unixNs).UTC()
	}
	return t
}

func clientStatRows(p *core.PhaseRun) []ClientStatRow {
	rows := make([]ClientStatRow, len(p.ClientStats))
	for i, s := range p.ClientStats {
		rows[i] = ClientStatRow{TimeUnixNs: s.At.UnixNano(), Time: s.At.UTC(), System: p.System, PhaseIndex: p.Index, Phase: p.Spec.Name,
			Repetition: p.Repetition, Process: s.Process, Pid: s.Pid, CPUPercent: s.CPUPercent, RSSBytes: int64(s.RSSBytes)}
	}
	return rows
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
