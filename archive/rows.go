package archive

import (
	"sort"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// SustainedFraction is the share of the target rate a fixed-rate phase must achieve
// to count; below it the phase is reported as NS (not sustained).
const SustainedFraction = 0.97

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
}

func countsOf(o *core.OpInterval) Counts {
	return Counts{
		Count: o.OK, Hits: o.Hits, Misses: o.Misses, Bytes: o.Bytes, Errors: o.ErrorTotal(),
		ErrOOM: o.Errors[core.ErrClassOOM], ErrTimeout: o.Errors[core.ErrClassTimeout], ErrConn: o.Errors[core.ErrClassConnection],
		ErrProtocol: o.Errors[core.ErrClassProtocol], ErrOther: o.Errors[core.ErrClassOther],
		ErrNotFound: o.Errors[core.ErrClassNotFound], ErrExists: o.Errors[core.ErrClassExists],
	}
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
	SvcHDR      []byte  `parquet:"svc_hdr"`
	ClientCPUS  float64 `parquet:"client_cpu_s"` // CPU of the load-generating process in the phase
	ClientBound bool    `parquet:"client_bound"` // it used more than 90% of the cores it may use
}

// IntervalRow is one phase x interval x op of intervals.parquet.
type IntervalRow struct {
	System     string `parquet:"system"`
	PhaseIndex int    `parquet:"phase_index"`
	Phase      string `parquet:"phase"`
	Repetition int    `parquet:"repetition"`
	Interval   int    `parquet:"interval"`
	StartNs    int64  `parquet:"start_ns"`
	EndNs      int64  `parquet:"end_ns"`
	Op         string `parquet:"op"`
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
}

func quantile(h *hdrhistogram.Histogram, q float64) int64 {
	if h == nil || h.TotalCount() == 0 {
		return 0
	}
	return h.ValueAtQuantile(q)
}

func maxOf(h *hdrhistogram.Histogram) int64 {
	if h == nil || h.TotalCount() == 0 {
		return 0
	}
	return h.Max()
}

// summaryRows computes summary.parquet from the phases' intervals.
func summaryRows(phases []core.PhaseRun) ([]SummaryRow, error) {
	var rows []SummaryRow
	for i := range phases {
		p := &phases[i]
		totals := p.Total()
		if len(totals) == 0 {
			continue
		}
		secs := p.End.Elapsed.Seconds()
		var ok int64
		for _, t := range totals {
			ok += t.OK
		}
		achieved := 0.0
		if secs > 0 {
			achieved = float64(ok) / secs
		}
		var sustained *bool
		if p.Spec.OpenLoop() {
			s := p.End.Status == core.StatusOK && achieved >= SustainedFraction*p.Spec.Rate
			sustained = &s
		}
		for _, t := range totals {
			resp, err := core.EncodeHist(t.Response)
			if err != nil {
				return nil, err
			}
			var svc []byte
			if t.Service != t.Response {
				if svc, err = core.EncodeHist(t.Service); err != nil {
					return nil, err
				}
			}
			r := SummaryRow{
				System: p.System, PhaseIndex: p.Index, Phase: p.Spec.Name, Repetition: p.Repetition, Kind: string(p.Spec.Kind),
				Workload: p.Spec.Workload.Describe(), Shape: plan.Shape(p.Spec), Op: t.Op.String(),
				Connections: p.Spec.Connections, TargetRate: p.Spec.Rate, AchievedRate: achieved, Sustained: sustained,
				Status: string(p.End.Status), DurationS: secs, Counts: countsOf(&t),
				RespP50: quantile(t.Response, 50), RespP90: quantile(t.Response, 90), RespP99: quantile(t.Response, 99),
				RespP999: quantile(t.Response, 99.9), RespP9999: quantile(t.Response, 99.99), RespMax: maxOf(t.Response),
				SvcP50: quantile(t.Service, 50), SvcP90: quantile(t.Service, 90), SvcP99: quantile(t.Service, 99),
				SvcP999: quantile(t.Service, 99.9), SvcP9999: quantile(t.Service, 99.99), SvcMax: maxOf(t.Service),
				RespHDR: resp, SvcHDR: svc,
				ClientCPUS: (p.End.CPUUser + p.End.CPUSystem).Seconds(), ClientBound: p.ClientBound,
			}
			if secs > 0 {
				r.Throughput = float64(t.OK) / secs
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// intervalRows lays out every interval of every phase.
func intervalRows(phases []core.PhaseRun) ([]IntervalRow, error) {
	var rows []IntervalRow
	for _, p := range phases {
		for _, iv := range p.Intervals {
			for _, o := range iv.Ops {
				resp, err := core.EncodeHist(o.Response)
				if err != nil {
					return nil, err
				}
				var svc []byte
				if o.Service != o.Response {
					if svc, err = core.EncodeHist(o.Service); err != nil {
						return nil, err
					}
				}
				rows = append(rows, IntervalRow{
					System: p.System, PhaseIndex: p.Index, Phase: p.Spec.Name, Repetition: p.Repetition, Interval: iv.Index,
					StartNs: int64(iv.Start), EndNs: int64(iv.End), Op: o.Op.String(), Counts: countsOf(&o),
					RespP50: quantile(o.Response, 50), RespP99: quantile(o.Response, 99), RespP999: quantile(o.Response, 99.9), RespMax: maxOf(o.Response),
					SvcP50: quantile(o.Service, 50), SvcP99: quantile(o.Service, 99), SvcP999: quantile(o.Service, 99.9), SvcMax: maxOf(o.Service),
					RespHDR: resp, SvcHDR: svc,
				})
			}
		}
	}
	return rows, nil
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

func probeRows(phases []core.PhaseRun) []ProbeRow {
	var rows []ProbeRow
	for _, p := range phases {
		for _, iv := range p.Intervals {
			for _, r := range iv.Probe {
				rows = append(rows, ProbeRow{
					System: p.System, PhaseIndex: p.Index, Phase: p.Spec.Name, Repetition: p.Repetition,
					IntendedNs: int64(r.Intended), StartNs: int64(r.Start), EndNs: int64(r.End),
					Op: r.Op.String(), Outcome: r.OutcomeName(),
					ResponseNs: int64(r.End - r.Intended), ServiceNs: int64(r.End - r.Start),
				})
			}
		}
	}
	return rows
}

// ServerStatRow is one counter of one server-stats sample, in long format.
type ServerStatRow struct {
	TimeUnixNs int64    `parquet:"t_unix_ns"`
	System     string   `parquet:"system"`
	PhaseIndex int      `parquet:"phase_index"`
	Phase      string   `parquet:"phase"`
	Repetition int      `parquet:"repetition"`
	Point      string   `parquet:"point"` // before, during or after the phase
	Section    string   `parquet:"section"`
	Key        string   `parquet:"key"`
	Value      string   `parquet:"value"`
	ValueFloat *float64 `parquet:"value_float"` // when the value is a number
}

func serverStatRows(phases []core.PhaseRun) []ServerStatRow {
	var rows []ServerStatRow
	for _, p := range phases {
		for _, smp := range p.ServerStats {
			keys := make([]string, 0, len(smp.Stats))
			for k := range smp.Stats {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v := smp.Stats[k]
				section, key, ok := strings.Cut(k, ".")
				if !ok {
					section, key = "", k
				}
				row := ServerStatRow{TimeUnixNs: smp.At.UnixNano(), System: p.System, PhaseIndex: p.Index, Phase: p.Spec.Name,
					Repetition: p.Repetition, Point: smp.Point, Section: section, Key: key, Value: v}
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					row.ValueFloat = &f
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// ClientStatRow is one sample of a client process.
type ClientStatRow struct {
	TimeUnixNs int64   `parquet:"t_unix_ns"`
	System     string  `parquet:"system"`
	PhaseIndex int     `parquet:"phase_index"`
	Phase      string  `parquet:"phase"`
	Repetition int     `parquet:"repetition"`
	Process    string  `parquet:"process"` // cmpbench (the host) or plugin
	Pid        int     `parquet:"pid"`
	CPUPercent float64 `parquet:"cpu_percent"` // 100 = one core
	RSSBytes   int64   `parquet:"rss_bytes"`
}

func clientStatRows(phases []core.PhaseRun) []ClientStatRow {
	var rows []ClientStatRow
	for _, p := range phases {
		for _, s := range p.ClientStats {
			rows = append(rows, ClientStatRow{TimeUnixNs: s.At.UnixNano(), System: p.System, PhaseIndex: p.Index, Phase: p.Spec.Name,
				Repetition: p.Repetition, Process: s.Process, Pid: s.Pid, CPUPercent: s.CPUPercent, RSSBytes: int64(s.RSSBytes)})
		}
	}
	return rows
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
