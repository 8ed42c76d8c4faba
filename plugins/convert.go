package plugins

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cmpbench/cmpbench/core"
	pluginv1 "github.com/cmpbench/cmpbench/plugins/proto/v1"
)

// InfoToProto and the functions below are the only conversions between core types
// and protobuf messages.
func InfoToProto(i core.Info, sdkVersion string) *pluginv1.DescribeResponse {
	ops := make([]uint32, len(i.Ops))
	for n, o := range i.Ops {
		ops[n] = uint32(o)
	}
	m := &pluginv1.DescribeResponse{Name: i.Name, Version: i.Version, Ops: ops, Capabilities: i.Capabilities, SdkVersion: sdkVersion, Workloads: i.Workloads, Pipeline: i.Pipeline, Ttl: i.TTL}
	for _, o := range i.Options {
		m.Options = append(m.Options, &pluginv1.OptionSpec{Name: o.Name, Type: string(o.Type), DefaultValue: o.Default, Doc: o.Doc,
			Required: o.Required, Values: o.Values, TopLevel: o.TopLevel})
	}
	return m
}

// InfoFromProto is the inverse of InfoToProto.
func InfoFromProto(m *pluginv1.DescribeResponse) core.Info {
	ops := make([]core.OpKind, len(m.GetOps()))
	for n, o := range m.GetOps() {
		ops[n] = core.OpKind(o)
	}
	i := core.Info{Name: m.GetName(), Version: m.GetVersion(), Ops: ops, Capabilities: m.GetCapabilities(), Workloads: m.GetWorkloads(), Pipeline: m.GetPipeline(), TTL: m.GetTtl()}
	for _, o := range m.GetOptions() {
		i.Options = append(i.Options, core.Option{Name: o.GetName(), Type: core.OptionType(o.GetType()), Default: o.GetDefaultValue(), Doc: o.GetDoc(),
			Required: o.GetRequired(), Values: o.GetValues(), TopLevel: o.GetTopLevel()})
	}
	return i
}

// SystemToProto converts a system; it carries credentials and is never logged.
func SystemToProto(s core.SystemConfig) *pluginv1.SystemConfig {
	return &pluginv1.SystemConfig{
		Name: s.Name, Adapter: s.Adapter, Profile: s.Profile, Endpoint: s.Endpoint, Nodes: s.Nodes,
		Tls: &pluginv1.TLS{
			Enabled: s.TLS.Enabled, CaFile: s.TLS.CAFile, CertFile: s.TLS.CertFile, KeyFile: s.TLS.KeyFile,
			ServerName: s.TLS.ServerName, InsecureSkipVerify: s.TLS.InsecureSkipVerify, MinVersion: s.TLS.MinVersion,
		},
		Auth:        &pluginv1.Auth{Username: s.Auth.Username, Password: s.Auth.Password},
		TimeoutNs:   int64(s.Timeout),
		Options:     s.Options,
		ProfileData: s.ProfileData,
		Concurrency: int32(s.Concurrency),
	}
}

// SystemFromProto is the inverse of SystemToProto.
func SystemFromProto(m *pluginv1.SystemConfig) core.SystemConfig {
	t, a := m.GetTls(), m.GetAuth()
	return core.SystemConfig{
		Name: m.GetName(), Adapter: m.GetAdapter(), Profile: m.GetProfile(), Endpoint: m.GetEndpoint(), Nodes: m.GetNodes(),
		TLS: core.TLSConfig{
			Enabled: t.GetEnabled(), CAFile: t.GetCaFile(), CertFile: t.GetCertFile(), KeyFile: t.GetKeyFile(),
			ServerName: t.GetServerName(), InsecureSkipVerify: t.GetInsecureSkipVerify(), MinVersion: t.GetMinVersion(),
		},
		Auth:        core.AuthConfig{Username: a.GetUsername(), Password: a.GetPassword()},
		Timeout:     time.Duration(m.GetTimeoutNs()),
		Options:     m.GetOptions(),
		ProfileData: m.GetProfileData(),
		Concurrency: int(m.GetConcurrency()),
	}
}

// CaptureToProto converts a capture.
func CaptureToProto(c core.Capture) *pluginv1.CaptureResponse {
	m := &pluginv1.CaptureResponse{Product: c.Product, Version: c.Version, VersionField: c.VersionField, Sections: c.Sections, Refused: c.Refused}
	if f := c.Facts; f != nil {
		fact := func(f core.Fact) *pluginv1.Fact { return &pluginv1.Fact{Words: f.Words, Class: f.Class} }
		m.Facts = &pluginv1.Facts{Durability: fact(f.Durability), Replication: fact(f.Replication), Memory: fact(f.Memory), Threads: fact(f.Threads)}
	}
	return m
}

// CaptureFromProto is the inverse of CaptureToProto.
func CaptureFromProto(m *pluginv1.CaptureResponse) core.Capture {
	c := core.Capture{Product: m.GetProduct(), Version: m.GetVersion(), VersionField: m.GetVersionField(), Sections: m.GetSections(), Refused: m.GetRefused()}
	if f := m.GetFacts(); f != nil {
		fact := func(f *pluginv1.Fact) core.Fact { return core.Fact{Words: f.GetWords(), Class: f.GetClass()} }
		c.Facts = &core.Facts{Durability: fact(f.GetDurability()), Replication: fact(f.GetReplication()), Memory: fact(f.GetMemory()), Threads: fact(f.GetThreads())}
	}
	return c
}

// PhaseToProto converts a phase specification; its workload crosses as its kind
// and JSON.
func PhaseToProto(p core.PhaseSpec) (*pluginv1.PhaseSpec, error) {
	m := &pluginv1.PhaseSpec{
		Name: p.Name, Kind: string(p.Kind), Connections: int32(p.Connections), Rate: p.Rate, Poisson: p.Poisson,
		DurationNs: int64(p.Duration), Ops: p.Ops, IntervalNs: int64(p.Interval), Seed: p.Seed,
		ConnBase: int32(p.ConnBase), ConnTotal: int32(p.ConnTotal), Pipeline: int32(p.Pipeline),
	}
	if !p.StartAt.IsZero() {
		m.StartAtUnixNs = p.StartAt.UnixNano()
	}
	if p.Probe != nil {
		m.ProbeRate, m.ProbeOp = p.Probe.Rate, uint32(p.Probe.Op)
	}
	if p.Workload != nil {
		spec, err := json.Marshal(p.Workload)
		if err != nil {
			return nil, fmt.Errorf("phase %q: workload %s: %w", p.Name, p.Workload.Kind(), err)
		}
		m.WorkloadKind, m.WorkloadSpec = p.Workload.Kind(), spec
	}
	return m, nil
}

// PhaseFromProto is the inverse of PhaseToProto. A workload kind this binary does
// not register, or a spec with fields its kind does not know, is an error: the
// plugin was built with another cmpbench than the host.
func PhaseFromProto(m *pluginv1.PhaseSpec) (core.PhaseSpec, error) {
	p := core.PhaseSpec{
		Name: m.GetName(), Kind: core.PhaseKind(m.GetKind()), Connections: int(m.GetConnections()), Rate: m.GetRate(),
		Poisson: m.GetPoisson(), Duration: time.Duration(m.GetDurationNs()), Ops: m.GetOps(),
		Interval: time.Duration(m.GetIntervalNs()), Seed: m.GetSeed(),
		ConnBase: int(m.GetConnBase()), ConnTotal: int(m.GetConnTotal()), Pipeline: int(m.GetPipeline()),
	}
	if ns := m.GetStartAtUnixNs(); ns != 0 {
		p.StartAt = time.Unix(0, ns)
	}
	if m.GetProbeRate() > 0 {
		p.Probe = &core.ProbeSpec{Rate: m.GetProbeRate(), Op: core.OpKind(m.GetProbeOp())}
	}
	if kind := m.GetWorkloadKind(); kind != "" {
		w, err := core.DecodeWorkload(kind, m.GetWorkloadSpec(), true)
		if err != nil {
			return p, fmt.Errorf("phase %q: %w", p.Name, err)
		}
		p.Workload = w
	}
	return p, nil
}

// IntervalToProto converts an interval; its histograms are already encoded.
func IntervalToProto(r core.IntervalReport) *pluginv1.Interval {
	m := &pluginv1.Interval{Index: int64(r.Index), StartNs: int64(r.Start), EndNs: int64(r.End), Ops: opsToProto(r.Ops)}
	m.Probe = make([]*pluginv1.ProbeRecord, len(r.Probe))
	for i, p := range r.Probe {
		m.Probe[i] = &pluginv1.ProbeRecord{
			IntendedNs: int64(p.Intended), StartNs: int64(p.Start), EndNs: int64(p.End),
			Op: uint32(p.Op), Outcome: uint32(p.Outcome), Class: uint32(p.Class),
		}
	}
	if c := r.Conns; c != nil {
		m.Conns = &pluginv1.Conns{Open: int64(c.Open), Opened: int64(c.Opened), Lost: int64(c.Lost)}
	}
	return m
}

func opsToProto(ops []core.OpInterval) []*pluginv1.OpInterval {
	out := make([]*pluginv1.OpInterval, len(ops))
	for i := range ops {
		o := &ops[i]
		po := &pluginv1.OpInterval{Op: uint32(o.Op), Ok: o.OK, Hits: o.Hits, Misses: o.Misses, Bytes: o.Bytes, Errors: o.Errors[:],
			Response: latencyToProto(o.Response), Lag: latencyToProto(o.Lag)}
		if !sameLatency(o.Response, o.Service) {
			po.Service = latencyToProto(o.Service)
		}
		out[i] = po
	}
	return out
}

func sameLatency(a, b core.Latency) bool {
	return a.Count == b.Count && len(a.HDR) == len(b.HDR) && (len(a.HDR) == 0 || &a.HDR[0] == &b.HDR[0])
}

func latencyToProto(l core.Latency) *pluginv1.Latency {
	if l.Count == 0 {
		return nil
	}
	return &pluginv1.Latency{Hdr: l.HDR, Count: l.Count, P50Ns: l.P50, P90Ns: l.P90, P99Ns: l.P99, P999Ns: l.P999, P9999Ns: l.P9999, MaxNs: l.Max}
}

func latencyFromProto(m *pluginv1.Latency) core.Latency {
	if m == nil {
		return core.Latency{}
	}
	return core.Latency{HDR: m.GetHdr(), Count: m.GetCount(), P50: m.GetP50Ns(), P90: m.GetP90Ns(), P99: m.GetP99Ns(),
		P999: m.GetP999Ns(), P9999: m.GetP9999Ns(), Max: m.GetMaxNs()}
}

// latencyFromHDR reads an encoded histogram of a plugin built before capability
// engine.lag, which sent no percentiles.
func latencyFromHDR(b []byte) (core.Latency, error) {
	h, err := core.DecodeHist(b)
	if err != nil {
		return core.Latency{}, err
	}
	return core.Summarize(h)
}

// IntervalFromProto is the inverse of IntervalToProto. Histograms stay encoded.
func IntervalFromProto(m *pluginv1.Interval) (core.IntervalReport, error) {
	r := core.IntervalReport{Index: int(m.GetIndex()), Start: time.Duration(m.GetStartNs()), End: time.Duration(m.GetEndNs())}
	var err error
	if r.Ops, err = opsFromProto(m.GetOps()); err != nil {
		return r, fmt.Errorf("interval %d: %w", r.Index, err)
	}
	if len(m.GetProbe()) > 0 {
		r.Probe = make([]core.ProbeRecord, len(m.GetProbe()))
		for i, p := range m.GetProbe() {
			r.Probe[i] = core.ProbeRecord{
				Intended: time.Duration(p.GetIntendedNs()), Start: time.Duration(p.GetStartNs()), End: time.Duration(p.GetEndNs()),
				Op: core.OpKind(p.GetOp()), Outcome: core.Outcome(p.GetOutcome()), Class: core.ErrorClass(p.GetClass()),
			}
		}
	}
	if c := m.GetConns(); c != nil { // nil from a plugin before engine.conns: not said
		r.Conns = &core.Conns{Open: int(c.GetOpen()), Opened: int(c.GetOpened()), Lost: int(c.GetLost())}
	}
	return r, nil
}

// opsFromProto reads the counts and latencies of op kinds.
func opsFromProto(ms []*pluginv1.OpInterval) ([]core.OpInterval, error) {
	var out []core.OpInterval
	for _, po := range ms {
		o := core.OpInterval{Op: core.OpKind(po.GetOp()), OK: po.GetOk(), Hits: po.GetHits(), Misses: po.GetMisses(), Bytes: po.GetBytes()}
		if o.Op >= core.NumOpKinds {
			return nil, fmt.Errorf("unknown op kind %d", po.GetOp())
		}
		// Classes this host does not know yet are counted as "other", never dropped.
		for c, n := range po.GetErrors() {
			if c < int(core.NumErrorClasses) {
				o.Errors[c] += n
			} else {
				o.Errors[core.ErrClassOther] += n
			}
		}
		o.Response, o.Lag = latencyFromProto(po.GetResponse()), latencyFromProto(po.GetLag())
		o.Service = o.Response
		if po.GetService() != nil {
			o.Service = latencyFromProto(po.GetService())
		}
		if po.GetResponse() == nil && len(po.GetResponseHdr()) > 0 {
			var err error
			if o.Response, err = latencyFromHDR(po.GetResponseHdr()); err != nil {
				return nil, fmt.Errorf("%s response histogram: %w", o.Op, err)
			}
			o.Service = o.Response
			if len(po.GetServiceHdr()) > 0 {
				if o.Service, err = latencyFromHDR(po.GetServiceHdr()); err != nil {
					return nil, fmt.Errorf("%s service histogram: %w", o.Op, err)
				}
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// PhaseEndToProto converts how a phase ended.
func PhaseEndToProto(e core.PhaseEnd) *pluginv1.PhaseEnd {
	return &pluginv1.PhaseEnd{
		Status: string(e.Status), Error: e.Error,
		StartedUnixNs: e.Started.UnixNano(), EndedUnixNs: e.Ended.UnixNano(), ElapsedNs: int64(e.Elapsed),
		CpuUserNs: int64(e.CPUUser), CpuSystemNs: int64(e.CPUSystem), ErrorSamples: e.ErrorSamples, Notes: e.Notes,
		Totals: opsToProto(e.Totals), Pubsub: pubSubToProto(e.PubSub),
		Stalls: spansToProto(e.Stalls), StalledNs: int64(e.Stalled),
	}
}

func spansToProto(spans []core.Span) []*pluginv1.Span {
	out := make([]*pluginv1.Span, len(spans))
	for i, s := range spans {
		out[i] = &pluginv1.Span{StartNs: int64(s.Start), EndNs: int64(s.End)}
	}
	return out
}

func spansFromProto(ms []*pluginv1.Span) []core.Span {
	var out []core.Span
	for _, m := range ms {
		out = append(out, core.Span{Start: time.Duration(m.GetStartNs()), End: time.Duration(m.GetEndNs())})
	}
	return out
}

func pubSubToProto(c *core.PubSubCounts) *pluginv1.PubSubCounts {
	if c == nil {
		return nil
	}
	return &pluginv1.PubSubCounts{Published: c.Published, Expected: c.Expected, Delivered: c.Delivered, Lost: c.Lost,
		Duplicates: c.Duplicates, Foreign: c.Foreign, DrainNs: c.Drain}
}

func pubSubFromProto(m *pluginv1.PubSubCounts) *core.PubSubCounts {
	if m == nil {
		return nil
	}
	return &core.PubSubCounts{Published: m.GetPublished(), Expected: m.GetExpected(), Delivered: m.GetDelivered(), Lost: m.GetLost(),
		Duplicates: m.GetDuplicates(), Foreign: m.GetForeign(), Drain: m.GetDrainNs()}
}

// PhaseEndFromProto is the inverse of PhaseEndToProto.
func PhaseEndFromProto(m *pluginv1.PhaseEnd) (core.PhaseEnd, error) {
	totals, err := opsFromProto(m.GetTotals())
	if err != nil {
		return core.PhaseEnd{}, fmt.Errorf("phase totals: %w", err)
	}
	return core.PhaseEnd{
		Status: core.PhaseStatus(m.GetStatus()), Error: m.GetError(),
		Started: time.Unix(0, m.GetStartedUnixNs()), Ended: time.Unix(0, m.GetEndedUnixNs()),
		Elapsed: time.Duration(m.GetElapsedNs()),
		CPUUser: time.Duration(m.GetCpuUserNs()), CPUSystem: time.Duration(m.GetCpuSystemNs()),
		ErrorSamples: m.GetErrorSamples(), Notes: m.GetNotes(), Totals: totals, PubSub: pubSubFromProto(m.GetPubsub()),
		Stalls: spansFromProto(m.GetStalls()), Stalled: time.Duration(m.GetStalledNs()),
	}, nil
}

// ValidationToProto converts a validation's findings.
func ValidationToProto(v core.Validation) *pluginv1.ValidateResponse {
	m := &pluginv1.ValidateResponse{Counted: v.Counted, CountError: v.CountError, Problems: v.Problems}
	for _, s := range v.Samples {
		m.Samples = append(m.Samples, &pluginv1.SampleCheck{Record: s.Record, Key: s.Key, Fields: int32(s.Fields), Sha256: s.SHA256, Problem: s.Problem})
	}
	return m
}

// ValidationFromProto is the inverse of ValidationToProto.
func ValidationFromProto(m *pluginv1.ValidateResponse) core.Validation {
	v := core.Validation{Counted: m.GetCounted(), CountError: m.GetCountError(), Problems: m.GetProblems()}
	for _, s := range m.GetSamples() {
		v.Samples = append(v.Samples, core.SampleCheck{Record: s.GetRecord(), Key: s.GetKey(), Fields: int(s.GetFields()), SHA256: s.GetSha256(), Problem: s.GetProblem()})
	}
	return v
}
