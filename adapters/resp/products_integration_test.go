package resp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/core/provision"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

// The product profiles against the real servers (README "Tests"): each test
// starts its server on a free loopback port with one thread where the server
// lets it, and checks what cmpbench reads from it — product and version, the
// INFO fields its stats and the report use, exact key counts (after a clean
// restart too, for those that keep their data), request counts that match the
// client's, and YCSB's READ, UPDATE and INSERT (the conformance suite).

// realServer is one product's server under test and what cmpbench must make of it.
type realServer struct {
	sys          core.SystemConfig // endpoint, profile, TLS, cluster
	srv          *provision.Server // restarted when persists
	product      string            // the capture's product, with and without the profile
	version      string
	versionField string
	instance     bool // INFO server has run_id: core.StatInstance
	persists     bool // a clean restart keeps the data
}

// checkProduct runs every check on a fresh, empty server; conformance says
// whether the conformance suite runs (Pika's records are checked by
// checkPikaRecords instead: see there).
func checkProduct(t *testing.T, rs realServer, conformance bool) {
	if conformance {
		t.Run("conformance", func(t *testing.T) {
			adaptertest.Run(t, adaptertest.Setup{Adapter: Adapter{}, System: rs.sys})
		})
	}
	t.Run("capture", func(t *testing.T) { checkCapture(t, rs) })
	keys := int64(-1)
	t.Run("ycsb", func(t *testing.T) { keys = checkYCSB(t, rs) })
	if rs.persists && keys >= 0 {
		t.Run("restart", func(t *testing.T) { checkRestart(t, rs, keys) })
	}
}

// openSys opens sys and closes it when the test ends.
func openSys(t *testing.T, sys core.SystemConfig) core.Target {
	t.Helper()
	tg, err := Adapter{}.Open(context.Background(), sys)
	if err != nil {
		t.Fatalf("Open %s (profile %q): %v", sys.Endpoint, sys.Profile, err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg
}

// checkCapture: the product and version, with the profile and without one.
func checkCapture(t *testing.T, rs realServer) {
	ctx := context.Background()
	cp, err := openSys(t, rs.sys).Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Product != rs.product || cp.Version != rs.version || cp.VersionField != rs.versionField {
		t.Errorf("capture names %q %q (%s), want %q %q (%s)", cp.Product, cp.Version, cp.VersionField, rs.product, rs.version, rs.versionField)
	}
	for _, want := range []string{"info", "config"} {
		found := false
		for name, text := range cp.Sections {
			found = found || (name == want || strings.HasPrefix(name, want+"-")) && text != "" // info-<host>-<port> in a cluster
		}
		if !found {
			t.Errorf("capture sections %v, refused %q: no %s", keysOf(cp.Sections), cp.Refused, want)
		}
	}
	bare := rs.sys
	bare.Profile = ""
	cp, err = openSys(t, bare).Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Product != rs.product || cp.Version != rs.version {
		t.Errorf("without a profile the capture names %q %q, want %q %q", cp.Product, cp.Version, rs.product, rs.version)
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ycsbSpec is the records checkYCSB loads: small, so that every product's test
// takes a second or two.
var ycsbSpec = ycsb.Spec{RecordCount: 2000, FieldCount: 4, FieldLength: 32, InsertOrder: ycsb.InsertHashed,
	KeyPrefix: "user", Distribution: ycsb.DistUniform, MaxScanLength: 1, Insert: 1}

// runYCSB runs one YCSB phase through the engine and returns the client's
// operations (successes and errors) per op kind.
func runYCSB(t *testing.T, tg core.Target, name string, kind core.PhaseKind, spec ycsb.Spec, ops int64) map[core.OpKind]core.OpInterval {
	t.Helper()
	ps := core.PhaseSpec{Name: name, Kind: kind, Connections: 4, Duration: 30 * time.Second, Ops: ops, Seed: 11, Workload: spec}
	streams, err := core.NewStreams(ps)
	if err != nil {
		t.Fatal(err)
	}
	end := engine.Run(context.Background(), engine.Config{
		Spec:      ps,
		Connect:   tg.Connect,
		NewSource: func(w int) (core.OpSource, error) { return streams.Source(w), nil },
	})
	out := map[core.OpKind]core.OpInterval{}
	var done int64
	for _, o := range end.Totals {
		out[o.Op] = o
		done += o.OK + o.ErrorTotal()
		if o.ErrorTotal() > 0 {
			t.Errorf("%s: %d %s errors: %v", name, o.ErrorTotal(), o.Op, end.ErrorSamples)
		}
	}
	if end.Status != core.StatusOK || done != ops {
		t.Fatalf("%s: %s %s, %d of %d operations", name, end.Status, end.Error, done, ops)
	}
	return out
}

// checkYCSB sends a few GETs and SETs, loads records and runs two YCSB phases
// (UPDATE of one field, then of every field), then checks the key count and
// that the server counted the requests the client sent, per group of op kinds
// (core.StatCalls). It returns the key count.
func checkYCSB(t *testing.T, rs realServer) int64 {
	ctx := context.Background()
	tg := openSys(t, rs.sys)
	if err := tg.(core.Flusher).Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := tg.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := map[core.OpKind]int64{}
	add := func(m map[core.OpKind]core.OpInterval) {
		for op, o := range m {
			client[op] += o.OK + o.ErrorTotal()
		}
	}
	// GET and SET, a few, on one connection: hits, misses and writes.
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		key := fmt.Appendf(nil, "kv_%d", i%20)
		if err := c.Do(ctx, &core.Op{Kind: core.OpSet, Key: key, Value: []byte("value")}); err != nil {
			t.Fatal(err)
		}
		if err := c.Do(ctx, &core.Op{Kind: core.OpGet, Key: fmt.Appendf(nil, "kv_%d", i)}); err != nil && err != core.ErrMiss {
			t.Fatal(err)
		}
	}
	c.Close()
	client[core.OpSet], client[core.OpGet] = 30, 30
	add(runYCSB(t, tg, "load", core.PhaseLoad, ycsbSpec, ycsbSpec.RecordCount))
	one := ycsbSpec
	one.Read, one.Update, one.Insert, one.InsertStart = 0.5, 0.3, 0.2, ycsbSpec.RecordCount
	add(runYCSB(t, tg, "one field", core.PhaseMeasured, one, 1500))
	all := one
	all.WriteAllFields, all.InsertStart = true, one.InsertStart+1500
	add(runYCSB(t, tg, "every field", core.PhaseMeasured, all, 1000))
	after, err := tg.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Each group the server counted, summed over its nodes.
	groups := map[string]int64{}
	for k, v := range after {
		if name, ok := strings.CutPrefix(k, core.StatCalls); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			b, _ := strconv.ParseInt(before[k], 10, 64)
			name, _, _ = strings.Cut(name, "@")
			groups[name] += n - b
		}
	}
	for _, g := range []string{"GET", "SET", "READ", "UPDATE+INSERT"} {
		var want int64
		for _, op := range strings.Split(g, "+") {
			kind, err := core.ParseOpKind(op)
			if err != nil {
				t.Fatal(err)
			}
			want += client[kind]
		}
		if got, ok := groups[g]; !ok || got != want {
			t.Errorf("the server counted %d %s requests (present %v), the client sent %d (%s)", got, g, ok, want, after[core.StatCallsSource])
		}
	}
	keys := 20 + client[core.OpInsert] // kv_0 to kv_19, the load's records and the phases' inserts
	n, err := tg.(core.Counter).Count(ctx)
	if err != nil || n != keys {
		t.Errorf("Count = %d, %v; want %d (20 strings, %d records loaded, %d inserted after)", n, err, keys, ycsbSpec.RecordCount, keys-20-ycsbSpec.RecordCount)
	}
	checkStats(t, rs, tg)
	return keys
}

// checkStats: the INFO fields cmpbench's samples and the report read. Run after a
// count, which fills Kvrocks' and Pika's keyspace sections.
func checkStats(t *testing.T, rs realServer, tg core.Target) {
	st, err := tg.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{core.StatUptime, core.StatConnections, core.StatCallsSource, "keyspace.", "commandstats.cmdstat_hgetall"}
	if rs.instance {
		want = append(want, core.StatInstance)
	}
	for _, w := range want {
		found := false
		for k := range st {
			if k == w || strings.HasPrefix(k, w) && (strings.HasSuffix(w, ".") || k[len(w)] == '@') {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("stats have no %s", w)
		}
	}
	if tl := st[core.StatTimeline]; tl == "" {
		t.Errorf("stats name no timeline field: the profile's %v are not in INFO", tg.(*target).profile.Timeline)
	}
}

// checkRestart stops the server cleanly, starts it again on the same data and
// counts the keys.
func checkRestart(t *testing.T, rs realServer, keys int64) {
	if err := rs.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitRestarted(t, rs.srv, rs.sys.Endpoint)
	tg := openSys(t, rs.sys)
	if n, err := tg.(core.Counter).Count(context.Background()); err != nil || n != keys {
		t.Errorf("after a restart Count = %d, %v; want %d", n, err, keys)
	}
	rec, err := tg.(core.RecordReader).ReadRecord(context.Background(), ycsb.Key(nil, &ycsbSpec, 7))
	if err != nil || len(rec) != ycsbSpec.FieldCount {
		t.Errorf("after a restart record 7 has %d fields, %v", len(rec), err)
	}
}

// waitReady waits until a (re)started server answers PING and DBSIZE: a server
// loading its data answers LOADING until it is done.
func waitReady(t *testing.T, endpoint string) {
	t.Helper()
	if last, ok := ready(endpoint, nil); !ok {
		t.Fatalf("%s is not ready: %q", endpoint, last)
	}
}

// ready polls endpoint for up to 20 s, or until srv (when given) has exited.
func ready(endpoint string, srv *provision.Server) (last string, ok bool) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if last = ask(endpoint, "PING", "DBSIZE"); strings.HasPrefix(last, "+PONG|:") {
			return last, true
		}
		if srv != nil {
			if exited, _ := srv.Exited(); exited {
				return last, false
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return last, false
}

// waitRestarted waits until a restarted server answers. A server that exited
// at once is started again, up to twice, as an operator would: pika also binds
// its port+2000 and port+10001, which nothing holds for it between its stop and
// its start, and a connection's ephemeral port can take one for a moment (a CI
// run saw it refuse connections after a restart). A server that runs but does
// not answer fails the test.
func waitRestarted(t *testing.T, srv *provision.Server, endpoint string) {
	t.Helper()
	for try := 1; ; try++ {
		last, ok := ready(endpoint, srv)
		if ok {
			return
		}
		if exited, _ := srv.Exited(); !exited || try == 3 {
			t.Fatalf("%s is not ready after a restart (try %d): %q; the server: %s", endpoint, try, last, srv.Why())
		}
		t.Logf("%s exited after a restart (%s): starting it again", endpoint, srv.Why())
		if err := srv.Relaunch(0); err != nil {
			t.Fatal(err)
		}
	}
}

// ask sends inline commands over a new connection and returns the first lines of
// their replies joined with "|", or the error.
func ask(endpoint string, cmds ...string) string {
	c, err := net.DialTimeout("tcp", endpoint, time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(c)
	var out []string
	for _, cmd := range cmds {
		if _, err := fmt.Fprintf(c, "%s\r\n", cmd); err != nil {
			return err.Error()
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return err.Error()
		}
		out = append(out, strings.TrimSpace(line))
	}
	return strings.Join(out, "|")
}

// startReal starts a server as cmpbench starts a provisioned system and waits
// until it answers.
func startReal(t *testing.T, name string, cmd ...string) (*provision.Server, core.SystemConfig) {
	t.Helper()
	provisiontest.Need(t, cmd[0])
	srv := provisiontest.Start(t, name, cmd)
	waitReady(t, srv.Endpoint())
	sys := sysAt(srv.Endpoint())
	sys.Name = name
	return srv, sys
}

func TestValkeyIntegration(t *testing.T) {
	t.Parallel()
	valkey := []string{"valkey-server", "--bind", "127.0.0.1", "--dir", "{dir}", "--save", "", "--appendonly", "no"}
	want := realServer{product: "valkey", version: "8.0.1", versionField: "INFO server.valkey_version", instance: true}
	t.Run("plain", func(t *testing.T) {
		rs := want
		rs.srv, rs.sys = startReal(t, "valkey", append(valkey, "--port", "{port}")...)
		rs.sys.Profile = "valkey"
		checkProduct(t, rs, true)
	})
	t.Run("tls", func(t *testing.T) {
		provisiontest.Need(t, "valkey-server")
		files := provisiontest.TLS(t, t.TempDir())
		rs := want
		rs.srv = provisiontest.Start(t, "valkey-tls", append(valkey, "--port", "0", "--tls-port", "{port}",
			"--tls-cert-file", files.ServerCert, "--tls-key-file", files.ServerKey, "--tls-ca-cert-file", files.CA, "--tls-auth-clients", "no"))
		rs.sys = sysAt(rs.srv.Endpoint())
		rs.sys.Profile = "valkey"
		rs.sys.TLS = core.TLSConfig{Enabled: true, CAFile: files.CA}
		checkProduct(t, rs, true)
		t.Run("plaintext to the TLS port fails", func(t *testing.T) {
			if _, err := (Adapter{}).Open(context.Background(), sysAt(rs.srv.Endpoint())); err == nil {
				t.Fatal("a plaintext client reached a TLS-only valkey-server")
			}
		})
	})
	t.Run("cluster", func(t *testing.T) {
		provisiontest.Need(t, "valkey-server")
		provisiontest.Need(t, "valkey-cli")
		srv, err := provision.Start(provision.Spec{
			Name: "valkey-cluster", Nodes: 3, StopTimeout: 10 * time.Second, ReadyTimeout: 10 * time.Second,
			Command: append(valkey, "--port", "{port}", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"),
			Setup:   []string{"valkey-cli", "--cluster", "create", "{endpoints}", "--cluster-replicas", "0", "--cluster-yes"},
		}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Stop() })
		rs := want
		rs.srv, rs.sys = srv, sysAt(srv.Endpoint())
		rs.sys.Profile = "valkey"
		rs.sys.Options["cluster"] = "true"
		checkProduct(t, rs, true)
		cp, err := openSys(t, rs.sys).Capture(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range srv.Endpoints() {
			if cp.Sections[sectionName("info", "@"+ep)] == "" {
				t.Errorf("no INFO of node %s in the capture: %v", ep, keysOf(cp.Sections))
			}
		}
	})
}

func TestKeyDBIntegration(t *testing.T) {
	t.Parallel()
	rs := realServer{product: "keydb", version: "6.3.4", versionField: "INFO server.redis_version", instance: true}
	rs.srv, rs.sys = startReal(t, "keydb", "keydb-server", "--port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}",
		"--save", "", "--appendonly", "no", "--server-threads", "1")
	rs.sys.Profile = "keydb"
	checkProduct(t, rs, true)
}

func TestKeyDBFlashIntegration(t *testing.T) {
	t.Parallel()
	flash := []string{"keydb-flash-server", "--port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}", "--save", "", "--appendonly", "no", "--server-threads", "1"}
	rs := realServer{product: "keydb-flash", version: "6.3.4", versionField: "INFO server.redis_version", instance: true, persists: true}
	rs.srv, rs.sys = startReal(t, "keydb-flash", append(flash, "--storage-provider", "flash", "{dir}/flash")...)
	rs.sys.Profile = "keydb-flash"
	t.Run("profile keydb refuses a FLASH server", func(t *testing.T) {
		sys := rs.sys
		sys.Profile = "keydb"
		_, err := Adapter{}.Open(context.Background(), sys)
		if err == nil || !errors.Is(err, core.ErrRefused) || !strings.Contains(err.Error(), "says storage_provider:flash") || !strings.Contains(err.Error(), "use profile keydb-flash") {
			t.Fatalf("Open: %v", err)
		}
	})
	checkProduct(t, rs, true)
	t.Run("profile keydb-flash refuses a server in memory", func(t *testing.T) {
		_, sys := startReal(t, "keydb-flash-memory", flash...)
		sys.Profile = "keydb-flash"
		_, err := Adapter{}.Open(context.Background(), sys)
		if err == nil || !errors.Is(err, core.ErrRefused) || !strings.Contains(err.Error(), "profile keydb-flash needs INFO memory storage_provider:flash; "+sys.Endpoint+" says storage_provider:none") {
			t.Fatalf("Open: %v", err)
		}
	})
}

func TestKvrocksIntegration(t *testing.T) {
	t.Parallel()
	rs := realServer{product: "kvrocks", version: "2.10.1", versionField: "INFO server.kvrocks_version", persists: true}
	rs.srv, rs.sys = startReal(t, "kvrocks", "kvrocks", "--port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}", "--workers", "1")
	rs.sys.Profile = "kvrocks"
	// The profile's comment: HELLO 3 is not refused, it answers proto 2.
	if got := ask(rs.sys.Endpoint, "HELLO 3"); !strings.HasPrefix(got, "*") {
		t.Errorf("HELLO 3: %q, want a RESP2 array", got)
	} else if r := helloProto(t, rs.sys.Endpoint); r != "2" {
		t.Errorf("HELLO 3 answers proto %s", r)
	}
	checkProduct(t, rs, true)
	// A scan that runs when the count starts is waited for, never taken: the
	// trigger's refusal must be what the profile calls busy.
	t.Run("a second DBSIZE SCAN during a scan is what the profile calls busy", func(t *testing.T) {
		tg := openSys(t, rs.sys)
		c := tg.(*target).client
		var err error
		for range 50 { // the scan of a few thousand keys takes a few milliseconds
			if err = c.Do(context.Background(), c.B().Arbitrary("DBSIZE", "SCAN").Build()).Error(); err != nil {
				break
			}
		}
		if err == nil || !tg.(*target).profile.Count.busy(err) {
			t.Fatalf("DBSIZE SCAN twice: %v; the profile's busy is %q", err, tg.(*target).profile.Count.Busy)
		}
	})
}

// helloProto sends HELLO 3 and returns the proto field of its reply.
func helloProto(t *testing.T, endpoint string) string {
	t.Helper()
	tg := openSys(t, sysAt(endpoint))
	c := tg.(*target).client
	m, err := c.Do(context.Background(), c.B().Arbitrary("HELLO", "3").Build()).AsMap()
	if err != nil {
		t.Fatal(err)
	}
	proto := m["proto"]
	v, err := proto.ToInt64()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(v, 10)
}

func TestDragonflyIntegration(t *testing.T) {
	t.Parallel()
	rs := realServer{product: "dragonfly", version: "df-v1.26.4", versionField: "INFO server.dragonfly_version", persists: true}
	rs.srv, rs.sys = startReal(t, "dragonfly", "dragonfly", "--port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}",
		"--proactor_threads", "1", "--logtostderr")
	rs.sys.Profile = "dragonfly"
	checkProduct(t, rs, true)
}
