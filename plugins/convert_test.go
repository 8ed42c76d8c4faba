package plugins

import (
	"reflect"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/protobuf/proto"

	"github.com/cmpbench/cmpbench/core"
	pluginv1 "github.com/cmpbench/cmpbench/plugins/proto/v1"
	"github.com/cmpbench/cmpbench/workloads/memtier"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

func TestIntervalRoundTripIsExact(t *testing.T) {
	resp, svc, lag := core.NewHistogram(), core.NewHistogram(), core.NewHistogram()
	for i := range int64(5000) {
		resp.RecordValue(1000 + i*37)
		svc.RecordValue(900 + i*31)
		lag.RecordValue(10 + i%70)
	}
	sum := func(h *hdrhistogram.Histogram) core.Latency {
		l, err := core.Summarize(h)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	r, s, l := sum(resp), sum(svc), sum(lag)
	in := core.IntervalReport{Index: 3, Start: 3 * time.Second, End: 4 * time.Second, Ops: []core.OpInterval{
		{Op: core.OpGet, OK: 5000, Hits: 4000, Misses: 1000, Bytes: 123, Errors: [core.NumErrorClasses]int64{1, 2, 3, 4, 5}, Response: r, Service: s, Lag: l},
		{Op: core.OpSet, OK: 5000, Response: s, Service: s}, // closed loop: one histogram
	}, Probe: []core.ProbeRecord{{Intended: 1, Start: 2, End: 3, Op: core.OpGet, Outcome: core.OutcomeMiss}},
		Conns: &core.Conns{Open: 9, Opened: 2, Lost: 3}}
	m := IntervalToProto(in)
	if m.Ops[1].Service != nil || m.Ops[1].Lag != nil {
		t.Fatal("closed-loop service histogram sent twice")
	}
	out, err := IntervalFromProto(m)
	if err != nil {
		t.Fatal(err)
	}
	g, st := out.Ops[0], out.Ops[1]
	if g.OK != 5000 || g.Hits != 4000 || g.Misses != 1000 || g.Bytes != 123 || g.Errors != in.Ops[0].Errors {
		t.Fatalf("counts %+v", g)
	}
	if !reflect.DeepEqual(g.Response, r) || !reflect.DeepEqual(g.Service, s) || !reflect.DeepEqual(g.Lag, l) ||
		!reflect.DeepEqual(st.Response, s) || !reflect.DeepEqual(st.Service, s) || st.Lag.Count != 0 {
		t.Fatal("latencies changed crossing the boundary")
	}
	if out.Index != 3 || out.End != 4*time.Second || len(out.Probe) != 1 || out.Probe[0] != in.Probe[0] {
		t.Fatalf("%+v", out)
	}
	if out.Conns == nil || *out.Conns != *in.Conns {
		t.Fatalf("connections %+v, sent %+v", out.Conns, *in.Conns)
	}
}

// A plugin built before engine.conns says nothing of its connections, which is
// not zero of them; none open is said, on the wire too.
func TestIntervalWithoutConnections(t *testing.T) {
	wire := func(r core.IntervalReport) core.IntervalReport {
		t.Helper()
		b, err := proto.Marshal(IntervalToProto(r))
		if err != nil {
			t.Fatal(err)
		}
		var m pluginv1.Interval
		if err := proto.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out, err := IntervalFromProto(&m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := wire(core.IntervalReport{Ops: []core.OpInterval{{Op: core.OpGet}}}); out.Conns != nil {
		t.Fatalf("connections %+v from a plugin that did not count them", *out.Conns)
	}
	if zero := wire(core.IntervalReport{Conns: &core.Conns{}}); zero.Conns == nil || *zero.Conns != (core.Conns{}) {
		t.Fatalf("none open: %v", zero.Conns)
	}
}

func TestIntervalFromAPluginWithoutLag(t *testing.T) {
	// A plugin built before engine.lag sends bare encoded histograms; the host reads
	// the percentiles from them.
	resp := core.NewHistogram()
	for i := range int64(1000) {
		resp.RecordValue(1000 + i)
	}
	enc, _ := core.EncodeHist(resp)
	m := &pluginv1.Interval{Ops: []*pluginv1.OpInterval{{Op: uint32(core.OpGet), Ok: 1000, ResponseHdr: enc}}}
	out, err := IntervalFromProto(m)
	if err != nil {
		t.Fatal(err)
	}
	o := out.Ops[0]
	if o.Response.Count != 1000 || o.Response.P50 != resp.ValueAtQuantile(50) || o.Service.P99 != resp.ValueAtQuantile(99) || o.Lag.Count != 0 {
		t.Fatalf("%+v", o)
	}
}

func TestUnknownErrorClassesCountAsOther(t *testing.T) {
	m := IntervalToProto(core.IntervalReport{Ops: []core.OpInterval{{Op: core.OpGet}}})
	m.Ops[0].Errors = append(m.Ops[0].Errors, 9) // a class from a newer plugin
	out, err := IntervalFromProto(m)
	if err != nil || out.Ops[0].Errors[core.ErrClassOther] != 9 {
		t.Fatalf("%v %+v", err, out.Ops[0].Errors)
	}
}

func TestPhaseSpecRoundTrip(t *testing.T) {
	in := core.PhaseSpec{Name: "p", Kind: core.PhaseMeasured, Connections: 7, Rate: 5000, Poisson: true, Duration: time.Second, Ops: 9, Interval: time.Second, Seed: 42,
		ConnBase: 14, ConnTotal: 21, StartAt: time.Unix(0, 1_780_000_000_123_456_789),
		Workload: memtier.Spec{SetRatio: 1, GetRatio: 10, SetPattern: 'P', GetPattern: 'G', KeyMin: 1, KeyMax: 100, KeyPrefix: "kv_", GaussMedian: 50, GaussStddev: 5, ValueMin: 1, ValueMax: 4, MissFraction: 0.1}}
	out := roundTrip(t, in)
	if out.Workload != in.Workload {
		t.Fatalf("%+v", out.Workload)
	}
	out.Workload, in.Workload = nil, nil
	if out != in {
		t.Fatalf("%+v", out)
	}
	y := ycsb.Spec{RecordCount: 100, FieldCount: 10, FieldLength: 128, Read: 0.95, Insert: 0.05, WriteAllFields: true, Distribution: ycsb.DistLatest,
		InsertOrder: ycsb.InsertHashed, KeyPrefix: "user", InsertStart: 2_000_000_000_000, MaxScanLength: 7}
	yo := roundTrip(t, core.PhaseSpec{Workload: y})
	if yo.Workload != core.Workload(y) {
		t.Fatalf("ycsb %+v", yo.Workload)
	}
	ps := core.PubSubSpec{Channels: 10, Subscribers: 20, PayloadSize: 128, ChannelPrefix: "c:"}
	po := roundTrip(t, core.PhaseSpec{Workload: ps})
	if po.Workload != core.Workload(ps) {
		t.Fatalf("pubsub %+v", po.Workload)
	}
}

func roundTrip(t *testing.T, p core.PhaseSpec) core.PhaseSpec {
	t.Helper()
	m, err := PhaseToProto(p)
	if err != nil {
		t.Fatal(err)
	}
	out, err := PhaseFromProto(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPubSubCountsRoundTrip(t *testing.T) {
	in := core.PhaseEnd{Status: core.StatusOK, PubSub: &core.PubSubCounts{Published: 1, Expected: 2, Delivered: 3, Lost: 4, Duplicates: 5, Foreign: 6, Drain: 7}}
	out, err := PhaseEndFromProto(PhaseEndToProto(in))
	if err != nil || out.PubSub == nil || *out.PubSub != *in.PubSub {
		t.Fatalf("%+v, %v", out.PubSub, err)
	}
	if out, _ := PhaseEndFromProto(PhaseEndToProto(core.PhaseEnd{})); out.PubSub != nil {
		t.Fatalf("no counts became %+v", out.PubSub)
	}
}

// A system crosses the boundary unchanged, every node's address in order; a
// host older than the nodes field sends none, and none arrive.
func TestSystemRoundTrip(t *testing.T) {
	full := core.SystemConfig{
		Name: "c", Adapter: "resp", Profile: "valkey", ProfileData: []byte("commands: {}\n"),
		Endpoint: "127.0.0.1:7000", Nodes: []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"},
		TLS:  core.TLSConfig{Enabled: true, CAFile: "ca.pem", CertFile: "c.pem", KeyFile: "k.pem", ServerName: "db", MinVersion: "1.3", InsecureSkipVerify: true},
		Auth: core.AuthConfig{Username: "u", Password: "p"}, Timeout: 2 * time.Second,
		Options: map[string]string{"cluster": "true"}, Concurrency: 51,
	}
	for _, tc := range []struct {
		name string
		in   core.SystemConfig
	}{
		{"a cluster", full},
		{"one server", core.SystemConfig{Name: "s", Endpoint: "127.0.0.1:6379", Nodes: []string{"127.0.0.1:6379"}}},
		{"not started yet", core.SystemConfig{Name: "p"}}, // a provisioned system checked before its run
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SystemFromProto(SystemToProto(tc.in)); !reflect.DeepEqual(got, tc.in) {
				t.Fatalf("crossed as %+v, want %+v", got, tc.in)
			}
		})
	}
	old := SystemToProto(full)
	old.Nodes = nil // what a host older than field 11 sends
	if got := SystemFromProto(old); got.Endpoint != full.Endpoint || got.Nodes != nil {
		t.Fatalf("from an older host: endpoint %q nodes %q", got.Endpoint, got.Nodes)
	}
}

// A capture's facts cross the boundary unchanged, an unknown fact included; a
// capture without facts (an adapter that reads none, a plugin older than the
// field) arrives without.
func TestCaptureRoundTrip(t *testing.T) {
	facts := &core.Facts{
		Durability:  core.Fact{Words: "appendfsync everysec: up to 1 s of writes lost on power loss", Class: "1s"},
		Replication: core.Fact{Words: "master, no replica", Class: "1"},
		Threads:     core.Fact{Words: "io-threads 1"},
	}
	for _, tc := range []struct {
		name string
		in   core.Capture
	}{
		{"with facts", core.Capture{Product: "valkey", Version: "8.0.1", VersionField: "INFO server.valkey_version",
			Sections: map[string]string{"info": "role:master\n"}, Refused: []string{"DEBUG"}, Facts: facts}},
		{"without facts", core.Capture{Product: "x", Sections: map[string]string{"info": "x:1\n"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CaptureFromProto(CaptureToProto(tc.in)); !reflect.DeepEqual(got, tc.in) {
				t.Fatalf("crossed as %+v, want %+v", got, tc.in)
			}
		})
	}
}
