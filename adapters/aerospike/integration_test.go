package aerospike

import (
	"bytes"
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"

	"github.com/cmpbench/cmpbench/adapters/aerospike/asdtest"
	"github.com/cmpbench/cmpbench/adapters/aerospike/astest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

// Tests against real asd processes, started from cmpbench's built-in systems
// (asdtest). Each test starts its servers once and shares them across its
// subtests; the tests run beside each other (t.Parallel), so that the seconds
// asd spends forming a cluster and cold-starting overlap.

// loaded is the YCSB data the integration tests load: a few thousand records of
// four 100-byte fields, and a mix of reads of them and inserts after them.
var loaded = ycsb.Spec{RecordCount: 3000, FieldCount: 4, FieldLength: 100, Read: 0.5, Insert: 0.5,
	Distribution: ycsb.DistUniform, InsertOrder: ycsb.InsertHashed, KeyPrefix: "user", InsertStart: 3000}

const loadSeed = 7

// runPhase runs a YCSB phase through the engine, as a run's plugin does, and
// returns how it ended and its totals per op kind.
func runPhase(t *testing.T, tg core.Target, spec core.PhaseSpec) (core.PhaseEnd, map[core.OpKind]core.OpInterval) {
	t.Helper()
	y := spec.Workload.(ycsb.Spec)
	streams := ycsb.NewPhase(y, spec.Seed, spec.Connections, spec.Kind == core.PhaseLoad)
	end := engine.Run(context.Background(), engine.Config{
		Spec:      spec,
		Connect:   tg.Connect,
		NewSource: func(w int) (core.OpSource, error) { return streams.Source(w), nil },
	})
	tot := map[core.OpKind]core.OpInterval{}
	for _, o := range end.Totals {
		tot[o.Op] = o
	}
	return end, tot
}

// load writes the records of loaded through the engine's load phase and fails
// the test unless every insert succeeded.
func load(t *testing.T, tg core.Target) {
	t.Helper()
	end, tot := runPhase(t, tg, core.PhaseSpec{Name: "load", Kind: core.PhaseLoad, Connections: 8, Duration: time.Minute,
		Ops: loaded.RecordCount, Seed: loadSeed, Workload: loaded})
	if ins := tot[core.OpInsert]; end.Status != core.StatusOK || ins.OK != loaded.RecordCount || ins.ErrorTotal() != 0 {
		t.Fatalf("load: %s %s: %d inserted, errors %v %q", end.Status, end.Error, ins.OK, ins.Errors, end.ErrorSamples)
	}
}

// sumStat sums a stats key over the nodes (key, or key@node in a cluster) and
// says over how many.
func sumStat(t *testing.T, st map[string]string, key string) (sum int64, nodes int) {
	t.Helper()
	for k, v := range st {
		if k != key && !strings.HasPrefix(k, key+"@") {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("stats %s=%q: %v", k, v, err)
		}
		sum, nodes = sum+n, nodes+1
	}
	return sum, nodes
}

func stats(t *testing.T, tg core.Target) map[string]string {
	t.Helper()
	st, err := tg.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func count(t *testing.T, tg core.Target) int64 {
	t.Helper()
	n, err := tg.(core.Counter).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// requestsReconcile sends a known mix of requests, every outcome among them, and
// checks that the nodes' request counters (core.StatCalls, summed over the nodes)
// moved by exactly what was sent, with none lost or counted twice. It changes
// record 102 of loaded (not a sample record, core.SampleRecords) and adds two.
func requestsReconcile(t *testing.T, tg core.Target, nodes int) {
	ctx := context.Background()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := stats(t, tg)
	field := [][]byte{ycsb.FieldName(0)}
	key := func(n int) []byte { return ycsb.Key(nil, &loaded, int64(n)) }
	type req struct {
		op   core.Op
		want error // nil, core.ErrMiss, or an OpError of the class wanted
	}
	reqs := []req{
		{core.Op{Kind: core.OpRead, Key: key(101), Fields: field}, nil},
		{core.Op{Kind: core.OpRead, Key: []byte("absent"), Fields: field}, &core.OpError{Class: core.ErrClassNotFound}},
		{core.Op{Kind: core.OpGet, Key: []byte("absent")}, core.ErrMiss},
		{core.Op{Kind: core.OpUpdate, Key: key(102), Fields: field, Values: [][]byte{[]byte("changed")}}, nil},
		{core.Op{Kind: core.OpUpdate, Key: []byte("absent"), Fields: field, Values: [][]byte{[]byte("x")}}, &core.OpError{Class: core.ErrClassNotFound}},
		{core.Op{Kind: core.OpInsert, Key: key(103), Fields: field, Values: [][]byte{[]byte("x")}}, &core.OpError{Class: core.ErrClassExists}},
		{core.Op{Kind: core.OpInsert, Key: []byte("reconcile-new"), Fields: field, Values: [][]byte{[]byte("x")}}, nil},
		{core.Op{Kind: core.OpSet, Key: []byte("reconcile-kv"), Value: []byte("v")}, nil},
	}
	const rounds = 50
	var reads, writes int64
	for r := range rounds {
		for _, q := range reqs {
			op := q.op
			if r > 0 && string(op.Key) == "reconcile-new" {
				op.Kind = core.OpUpdate // the insert succeeded in round 0
			}
			err := c.Do(ctx, &op)
			switch want := q.want.(type) {
			case nil:
				if err != nil {
					t.Fatalf("%s %s: %v", op.Kind, op.Key, err)
				}
			case *core.OpError:
				if core.ClassOf(err) != want.Class {
					t.Fatalf("%s %s: %v, want class %s", op.Kind, op.Key, err, want.Class)
				}
			default:
				if err != want {
					t.Fatalf("%s %s: %v, want %v", op.Kind, op.Key, err, want)
				}
			}
			if op.Kind == core.OpRead || op.Kind == core.OpGet {
				reads++
			} else {
				writes++
			}
		}
	}
	after := countedCalls(t, tg, before, map[string]int64{
		core.CallsKey(core.OpGet, core.OpRead):                  reads,
		core.CallsKey(core.OpSet, core.OpUpdate, core.OpInsert): writes,
	}, nodes)
	if src := after[core.StatCallsSource]; !strings.Contains(src, "client_read_not_found") {
		t.Errorf("calls source %q", src)
	}
	// Every command went to the node that serves its partition: none was
	// proxied by another.
	proxied0, _ := sumStat(t, before, "namespace.client_proxy_complete")
	proxied, n := sumStat(t, after, "namespace.client_proxy_complete")
	if n != nodes || proxied != proxied0 {
		t.Errorf("%d commands proxied over %d nodes", proxied-proxied0, n)
	}
}

// countedCalls checks that the nodes' request counters (sent: StatCalls key to
// requests) moved from before by exactly what was sent, over every node, and
// returns the stats that show it. asd counts a request just after it has sent
// the answer (transaction/write.c send_write_response: as_msg_send_reply, then
// client_write_update_stats): a sample taken the moment the last answer arrived
// may miss it, so the counters are read again until they reach what was sent,
// for up to a second, and must then be exactly that.
func countedCalls(t *testing.T, tg core.Target, before map[string]string, sent map[string]int64, nodes int) map[string]string {
	t.Helper()
	moved := func(after map[string]string, key string) (int64, int) {
		b, _ := sumStat(t, before, key)
		a, n := sumStat(t, after, key)
		return a - b, n
	}
	after := stats(t, tg)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); after = stats(t, tg) {
		short := false
		for key, want := range sent {
			if m, _ := moved(after, key); m < want {
				short = true
			}
		}
		if !short {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for key, want := range sent {
		if m, n := moved(after, key); n != nodes || m != want {
			t.Errorf("%s moved by %d over %d nodes; sent %d to %d nodes", key, m, n, want, nodes)
		}
	}
	return after
}

// TestSingleNodeIntegration drives the built-in system aerospike (one asd,
// replication factor 1, a 1 GiB storage file) through the adapter.
func TestSingleNodeIntegration(t *testing.T) {
	t.Parallel()
	srv := asdtest.Start(t, asdtest.Single, nil)
	sc := srv.Config()
	if sc.Options["namespace"] != "ycsb" || sc.Options["cluster_size"] != "" {
		t.Fatalf("the built-in aerospike gives the adapter %v", sc.Options)
	}
	sc.Concurrency = 8
	tg := srv.Open(t, Adapter{}, sc)

	t.Run("load and exact count", func(t *testing.T) {
		before := stats(t, tg)
		load(t, tg)
		if n := count(t, tg); n != loaded.RecordCount {
			t.Fatalf("count %d after loading %d records", n, loaded.RecordCount)
		}
		// The node counted the load's inserts, no more and no fewer.
		countedCalls(t, tg, before, map[string]int64{core.CallsKey(core.OpSet, core.OpUpdate, core.OpInsert): loaded.RecordCount}, 1)
	})
	t.Run("request counters reconcile", func(t *testing.T) { requestsReconcile(t, tg, 1) })
	t.Run("capture asks nothing deprecated", func(t *testing.T) {
		// asd counts the info requests it has deprecated (and logs each the first
		// time); the client's own 'features', asked once per node it finds, is
		// counted before this.
		deprecated := func() string { return stats(t, tg)["statistics.deprecated_requests"] }
		before := deprecated()
		cp, err := tg.Capture(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		count(t, tg)
		if after := deprecated(); before == "" || after != before {
			t.Errorf("deprecated requests went from %q to %q", before, after)
		}
		release := fields(strings.ReplaceAll(cp.Sections["info-release"], "\n", ";"))
		nsConfig := cp.Sections["info-get-config-context-namespace-namespace-ycsb"]
		if len(cp.Refused) > 0 || cp.Version == "" || cp.Version != release["version"] || cp.Product != "aerospike (Aerospike Community Edition)" ||
			!strings.Contains(nsConfig, "\nreplication-factor=1\n") || !strings.Contains(nsConfig, "\nmax-record-size=1048576\n") {
			t.Errorf("capture: product %q, version %q, release %v, refused %q, namespace configuration:\n%s", cp.Product, cp.Version, release, cp.Refused, nsConfig)
		}
	})
	t.Run("connections are the concurrency", func(t *testing.T) { connectionsAreConcurrency(t, srv, tg) })
	t.Run("record size limit", func(t *testing.T) { recordSizeLimit(t, tg) })
	t.Run("info answers of the test server", func(t *testing.T) { infoAnswers(t, tg) })
	t.Run("paused server", func(t *testing.T) { pausedServer(t, srv) })
	t.Run("clean stop and cold restart", func(t *testing.T) {
		checks, problems := ycsb.VerifySamples(context.Background(), tg.(core.RecordReader), loaded, loadSeed)
		if len(problems) > 0 || len(checks) == 0 {
			t.Fatalf("sample records before the restart: %v", problems)
		}
		tg.Close(context.Background())
		restarted := time.Now()
		if err := srv.Restart(); err != nil {
			t.Fatalf("restart: %v%s", err, srv.Why())
		}
		tg = srv.Open(t, Adapter{}, sc) // once the device scan is over
		startedSince(t, stats(t, tg), restarted, 1)
		// The load's records and those the subtests added: reconcile-new,
		// reconcile-kv and largest.
		if n := count(t, tg); n != loaded.RecordCount+3 {
			t.Fatalf("count %d after the restart, want %d", n, loaded.RecordCount+3)
		}
		after, problems := ycsb.VerifySamples(context.Background(), tg.(core.RecordReader), loaded, loadSeed)
		if len(problems) > 0 || len(after) != len(checks) {
			t.Fatalf("sample records after the restart: %v", problems)
		}
		for i := range checks {
			if after[i].SHA256 != checks[i].SHA256 {
				t.Errorf("record %s: SHA-256 %s before the restart, %s after", checks[i].Key, checks[i].SHA256, after[i].SHA256)
			}
		}
	})
}

// startedSince checks that every node of a stats sample (nodes of them) says by
// its uptime that it started after t0.
func startedSince(t *testing.T, st map[string]string, t0 time.Time, nodes int) {
	t.Helper()
	limit := int64(time.Since(t0)/time.Second) + 1 // uptime is whole seconds
	n := 0
	for k, v := range st {
		if k != core.StatUptime && !strings.HasPrefix(k, core.StatUptime+"@") {
			continue
		}
		n++
		if up, err := strconv.ParseInt(v, 10, 64); err != nil || up > limit {
			t.Errorf("%s=%s s, %s after the restart began: not restarted", k, v, time.Since(t0).Round(time.Millisecond))
		}
	}
	if n != nodes {
		t.Errorf("the uptime of %d nodes, want %d", n, nodes)
	}
}

// connectionsAreConcurrency opens more targets, for runs of one and of six
// connections, with each driver, and checks the node's client connections: one
// per operation in flight and the client's tend connection for each, all open
// before the first operation, no more however busy the workers are, and none
// left once the targets close. Driver client opens its pool with the target;
// driver wire its sockets as the engine connects its workers, and closes them
// with the phase. A run of one connection works. tg is the only other target
// open, driver wire, between phases.
func connectionsAreConcurrency(t *testing.T, srv *asdtest.Server, tg core.Target) {
	// asd counts a connection once a service thread has taken it, a moment after the
	// client's dial returned, and a closed one a moment after it closed (the
	// failed opens of a starting server leave some): wait for the count to settle.
	settled := func(want int64) int64 {
		var n int64
		for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if n, _ = sumStat(t, stats(t, tg), core.StatConnections); n == want || time.Now().After(deadline) {
				return n
			}
		}
	}
	const others = 1 // tg's tend connection
	if n := settled(others); n != others {
		t.Fatalf("%d client connections with one wire target open between phases, want %d", n, others)
	}
	busy := core.PhaseSpec{Name: "busy", Kind: core.PhaseMeasured, Duration: 10 * time.Second, Seed: 3,
		Workload: ycsb.Spec{RecordCount: loaded.RecordCount, FieldCount: loaded.FieldCount, FieldLength: loaded.FieldLength, Read: 1,
			Distribution: ycsb.DistUniform, InsertOrder: ycsb.InsertHashed, KeyPrefix: loaded.KeyPrefix}}
	for _, driver := range []string{driverClient, driverWire} {
		runs := []int{1, 6}
		targets := make([]core.Target, len(runs))
		want := int64(others)
		for i, workers := range runs {
			sc := srv.Config()
			sc.Concurrency, sc.Options["driver"] = workers, driver
			targets[i] = srv.Open(t, Adapter{}, sc)
			want += 1 // the tend connection
			if driver == driverClient {
				want += int64(workers) // the pool, filled at once
			}
		}
		if opened := settled(want); opened != want {
			t.Fatalf("%s: %d client connections once the targets opened, want %d", driver, opened, want)
		}
		for i, workers := range runs {
			if driver == driverWire {
				// The engine connects every worker before the phase's clock starts.
				var conns []core.Conn
				for range workers {
					c, err := targets[i].Connect(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					conns = append(conns, c)
				}
				if n := settled(want + int64(workers)); n != want+int64(workers) {
					t.Fatalf("wire: %d client connections with %d workers connected, want %d", n, workers, want+int64(workers))
				}
				for _, c := range conns {
					c.Close()
				}
			}
			spec := busy
			spec.Connections, spec.Ops = workers, int64(200*workers)
			end, tot := runPhase(t, targets[i], spec)
			if r := tot[core.OpRead]; end.Status != core.StatusOK || r.OK != int64(200*workers) {
				t.Fatalf("%s, %d workers: %s %s, %d reads, errors %v %q", driver, workers, end.Status, end.Error, r.OK, r.Errors, end.ErrorSamples)
			}
		}
		if after := settled(want); after != want {
			t.Fatalf("%s: %d client connections after the busy workers, want %d", driver, after, want)
		}
		for _, tg2 := range targets {
			tg2.Close(context.Background())
		}
		if left := settled(others); left != others {
			t.Fatalf("%s: %d client connections after the targets closed, want %d", driver, left, others)
		}
	}
}

// recordSizeLimit writes records at asd 8.1's default max-record-size (1 MiB,
// counted as storage/flat.c stores the record): the largest single-bin value it
// takes is 1 MiB less 61 bytes, one byte more is RECORD_TOO_BIG (13), class
// other, and the test server draws the line at the same byte.
func recordSizeLimit(t *testing.T, tg core.Target) {
	em, err := astest.Start("ycsb")
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	emu, err := Adapter{}.Open(context.Background(), core.SystemConfig{Name: "astest", Endpoint: em.Addr(), Timeout: 2 * time.Second, Options: map[string]string{"namespace": "ycsb"}})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close(context.Background())
	const largest = 1<<20 - 61
	for _, server := range []struct {
		name string
		tg   core.Target
	}{{"asd", tg}, {"astest", emu}} {
		before, _ := sumStat(t, stats(t, server.tg), "namespace.fail_record_too_big")
		c, _ := server.tg.Connect(context.Background())
		if err := c.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte("largest"), Value: make([]byte, largest)}); err != nil {
			t.Errorf("%s: a record of %d bytes: %v", server.name, largest, err)
		}
		err := c.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte("too-big"), Value: make([]byte, largest+1)})
		if core.ClassOf(err) != core.ErrClassOther || commandCode(err) != types.RECORD_TOO_BIG {
			t.Errorf("%s: a record of %d bytes: %v (class %s), want RECORD_TOO_BIG, class other", server.name, largest+1, err, core.ClassOf(err))
		}
		if after, _ := sumStat(t, stats(t, server.tg), "namespace.fail_record_too_big"); after != before+1 {
			t.Errorf("%s: fail_record_too_big went from %d to %d", server.name, before, after)
		}
	}
}

// infoAnswers asks asd and the test server the info requests the client and the
// adapter make, and their errors, and wants the same answers word for word. Not
// asked: what differs for reasons that do not matter (cluster key and name,
// partition and peers generations, sindex-list) and what changes either server.
func infoAnswers(t *testing.T, tg core.Target) {
	em, err := astest.Start("ycsb")
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	emu, err := Adapter{}.Open(context.Background(), core.SystemConfig{Name: "astest", Endpoint: em.Addr(), Timeout: 2 * time.Second, Options: map[string]string{"namespace": "ycsb"}})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close(context.Background())
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixNano(), 10)
	requests := []string{
		"namespaces", "namespace/nope", "sets/nope", "sets/ycsb/never-written", "features", "status", "services", "replicas",
		"cluster-stable:size=2", "cluster-stable:size=x", "cluster-stable:size=1000", "cluster-stable:size=",
		"cluster-stable:ignore-migrations=maybe", "cluster-stable:namespace=nope",
		"get-config:context=namespace", "get-config:context=bogus", "get-config:context=namespace;namespace=nope",
		"truncate:namespace=ycsb", "truncate:set=x", "truncate-namespace:namespace=ycsb;set=x",
		"truncate:namespace=ycsb;set=x;lut=1", "truncate:namespace=ycsb;set=x;lut=" + future,
		"rack-ids", "peers-tls-std", "no-such-command",
	}
	p := as.NewInfoPolicy()
	real, err := tg.(*target).client.GetNodes()[0].RequestInfo(p, requests...)
	if err != nil {
		t.Fatal(err)
	}
	test, err := emu.(*target).client.GetNodes()[0].RequestInfo(p, requests...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range requests {
		if real[r] != test[r] {
			t.Errorf("%s: asd answers %q, the test server %q", r, real[r], test[r])
		}
	}
}

// pausedServer stops the node with SIGSTOP: every read times out (timeout), every
// write is in doubt (in_doubt) — sent, and maybe applied — and none is failed by
// the client itself; once the node runs again the same target works, and asd has
// applied none of the writes it was sent while stopped (the client closed their
// connections at the timeout).
func pausedServer(t *testing.T, srv *asdtest.Server) {
	sc := srv.Config()
	sc.Concurrency, sc.Timeout = 2, 200*time.Millisecond
	tg := srv.Open(t, Adapter{}, sc)
	c, _ := tg.Connect(context.Background())
	rr := tg.(core.RecordReader)
	field := [][]byte{ycsb.FieldName(0)}
	keys := [][]byte{ycsb.Key(nil, &loaded, 110), ycsb.Key(nil, &loaded, 111)}
	before := map[string]map[string][]byte{}
	for _, k := range append(keys, []byte("reconcile-kv"), []byte("paused-new")) {
		rec, err := rr.ReadRecord(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		before[string(k)] = rec
	}
	resume := srv.Pause(t, 0)
	for _, key := range keys { // twice: a second timeout is the server's too, not the client's breaker
		for _, tc := range []struct {
			op    core.Op
			class core.ErrorClass
		}{
			{core.Op{Kind: core.OpRead, Key: key, Fields: field}, core.ErrClassTimeout},
			{core.Op{Kind: core.OpGet, Key: key}, core.ErrClassTimeout},
			{core.Op{Kind: core.OpUpdate, Key: key, Fields: field, Values: [][]byte{[]byte("paused")}}, core.ErrClassInDoubt},
			{core.Op{Kind: core.OpSet, Key: []byte("reconcile-kv"), Value: []byte("paused")}, core.ErrClassInDoubt},
			{core.Op{Kind: core.OpSet, Key: []byte("paused-new"), Value: []byte("paused")}, core.ErrClassInDoubt},
		} {
			start := time.Now()
			err := c.Do(context.Background(), &tc.op)
			if core.ClassOf(err) != tc.class || time.Since(start) < sc.Timeout {
				t.Errorf("%s of a paused server: %v (class %s) after %s; want class %s after the %s timeout",
					tc.op.Kind, err, core.ClassOf(err), time.Since(start).Round(time.Millisecond), tc.class, sc.Timeout)
			}
		}
	}
	resume()
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err = c.Do(context.Background(), &core.Op{Kind: core.OpRead, Key: ycsb.Key(nil, &loaded, 120), Fields: field}); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("5 s after the server resumed: %v", err)
	}
	for k, was := range before {
		rec, err := rr.ReadRecord(context.Background(), []byte(k))
		if err != nil || !maps.EqualFunc(rec, was, bytes.Equal) {
			t.Errorf("record %s: %q before the pause, %q after it (%v)", k, was, rec, err)
		}
	}
}
