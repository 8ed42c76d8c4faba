package aerospike

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aerospike/aerospike-client-go/v8/types"

	"github.com/cmpbench/cmpbench/adapters/aerospike/astest"
	"github.com/cmpbench/cmpbench/core"
)

// What a published comparison relies on, on a cluster as it runs in production: 3
// nodes, replication factor 2, another set in the namespace, on astest: for what
// a real server cannot be made to do on demand (result codes injected, replies
// held, a node's connections counted as they open, records put in another set).
// The same facts on real asd processes: *_integration_test.go.

func cluster(t *testing.T, opt astest.ClusterOptions) *astest.Cluster {
	t.Helper()
	c, err := astest.StartCluster("ycsb", opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func openAt(t *testing.T, seed string, concurrency int, timeout time.Duration) core.Target {
	t.Helper()
	tg, err := Adapter{}.Open(context.Background(), core.SystemConfig{Name: "as", Endpoint: seed, Timeout: timeout,
		Concurrency: concurrency, Options: map[string]string{"namespace": "ycsb"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg
}

var twoFields = [][]byte{[]byte("field0"), []byte("field1")}

func insert(t *testing.T, tg core.Target, from, n int) {
	t.Helper()
	c, _ := tg.Connect(context.Background())
	defer c.Close()
	for i := from; i < from+n; i++ {
		op := &core.Op{Kind: core.OpInsert, Key: []byte(fmt.Sprintf("user%d", i)), Fields: twoFields, Values: [][]byte{[]byte("a"), []byte("b")}}
		if err := c.Do(context.Background(), op); err != nil {
			t.Fatalf("insert user%d: %v", i, err)
		}
	}
}

func TestClusterCountFlushAndForeignSet(t *testing.T) {
	c := cluster(t, astest.ClusterOptions{Nodes: 3, ReplicationFactor: 2, TruncateDelay: 300 * time.Millisecond})
	for i := range 50 {
		c.Put("other", fmt.Sprintf("foreign%d", i), map[string][]byte{"v": []byte("x")})
	}
	tg := openAt(t, c.Seed(), 4, 2*time.Second)
	insert(t, tg, 0, 1000)
	ctx := context.Background()
	// Every copy on every node is counted once per record: exactly what was loaded,
	// not one node's share, and not the other set's records.
	if n, err := tg.(core.Counter).Count(ctx); err != nil || n != 1000 {
		t.Fatalf("count %d, %v; want 1000", n, err)
	}
	// Flush truncates this set only, and waits out the asynchronous truncation.
	if err := tg.(core.Flusher).Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, other := c.Records("usertable"), c.Records("other"); got != 0 || other != 50 {
		t.Fatalf("after the flush: %d records of the set, %d of the other set (want 0 and 50)", got, other)
	}
	if n, err := tg.(core.Counter).Count(ctx); err != nil || n != 0 {
		t.Fatalf("count after the flush %d, %v", n, err)
	}
}

// The validation a load gets (count and sample records) is exact on the cluster.
func TestClusterValidation(t *testing.T) {
	c := cluster(t, astest.ClusterOptions{Nodes: 3, ReplicationFactor: 2})
	c.Put("other", "foreign", map[string][]byte{"v": []byte("x")})
	tg := openAt(t, c.Seed(), 4, 2*time.Second)
	insert(t, tg, 0, 300)
	rec, err := tg.(core.RecordReader).ReadRecord(context.Background(), []byte("user299"))
	if err != nil || string(rec["field0"]) != "a" || len(rec) != 2 {
		t.Fatalf("record user299: %q %v", rec, err)
	}
	if n, err := tg.(core.Counter).Count(context.Background()); err != nil || n != 300 {
		t.Fatalf("count %d %v", n, err)
	}
}

func TestClusterStatsAndCaptureCoverEveryNode(t *testing.T) {
	c := cluster(t, astest.ClusterOptions{Nodes: 3, ReplicationFactor: 2})
	tg := openAt(t, c.Seed(), 5, 2*time.Second)
	ctx := context.Background()
	st0, err := tg.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	insert(t, tg, 0, 200)
	conn, _ := tg.Connect(ctx)
	for i := range 100 {
		if err := conn.Do(ctx, &core.Op{Kind: core.OpRead, Key: []byte(fmt.Sprintf("user%d", i)), Fields: twoFields}); err != nil {
			t.Fatal(err)
		}
	}
	st1, err := tg.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	calls := func(st map[string]string, ops string) (sum int64, nodes int) {
		for k, v := range st {
			if strings.HasPrefix(k, core.StatCalls+ops+"@") {
				n, _ := strconv.ParseInt(v, 10, 64)
				sum, nodes = sum+n, nodes+1
			}
		}
		return sum, nodes
	}
	w0, _ := calls(st0, "SET+UPDATE+INSERT")
	w1, nw := calls(st1, "SET+UPDATE+INSERT")
	r0, _ := calls(st0, "GET+READ")
	r1, nr := calls(st1, "GET+READ")
	if nw != 3 || nr != 3 || w1-w0 != 200 || r1-r0 != 100 {
		t.Fatalf("the nodes counted %d writes and %d reads (over %d and %d nodes), want 200 and 100 over 3", w1-w0, r1-r0, nw, nr)
	}
	var conns, uptimes, proxied int
	for k, v := range st1 {
		n, _ := strconv.Atoi(v)
		switch {
		case strings.HasPrefix(k, core.StatConnections+"@"):
			conns += n
		case strings.HasPrefix(k, core.StatUptime+"@"):
			uptimes++
		case strings.HasPrefix(k, "namespace.client_proxy_complete@"):
			proxied += n
		}
	}
	// Driver wire: the reads' connection has a socket to every node, beside the
	// client's tend connection; every command went to its partition's master, none
	// through a proxy.
	if conns != 3*2 || uptimes != 3 || proxied != 0 {
		t.Fatalf("%d client connections over the nodes (want 3 x (1 + 1)), %d uptimes, %d commands proxied", conns, uptimes, proxied)
	}
	cp, err := tg.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stats := 0
	for name := range cp.Sections {
		if strings.HasPrefix(name, "info-statistics@") {
			stats++
		}
	}
	if stats != 3 || cp.Version != astest.Build {
		t.Fatalf("capture of %d nodes' statistics, version %q: %v", stats, cp.Version, cp.Refused)
	}
}

// Connections mean concurrency: as many per node as operations in flight, opened
// before any is timed, and no more however busy the workers are. The client's
// tend connection (cluster map, info requests) is one more on every node, and
// counts against the client's cap: a pool capped at the concurrency holds one
// connection too few, and with one worker none at all.
// Driver wire opens a worker's sockets, one to each node, when it connects.
func TestConnectionsAreTheConcurrency(t *testing.T) {
	for _, driver := range []string{driverClient, driverWire} {
		for _, workers := range []int{1, 12} {
			t.Run(fmt.Sprintf("%s %d workers", driver, workers), func(t *testing.T) { connectionsAreTheConcurrency(t, driver, workers) })
		}
	}
}

func connectionsAreTheConcurrency(t *testing.T, driver string, workers int) {
	c := cluster(t, astest.ClusterOptions{Nodes: 2, ReplicationFactor: 2})
	tg, err := Adapter{}.Open(context.Background(), core.SystemConfig{Name: "as", Endpoint: c.Seed(), Timeout: 2 * time.Second,
		Concurrency: workers, Options: map[string]string{"namespace": "ycsb", "driver": driver}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	up := workers + 1 // opened up front
	if driver == driverWire {
		up = 1
	}
	// The client's connections are open when Open returns; the test server counts
	// each once its accept loop has taken it, a moment later.
	opened := make([]int, 2)
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		opened[0], opened[1] = c.Node(0).Connections(), c.Node(1).Connections()
		if min(opened[0], opened[1]) >= up || time.Now().After(deadline) {
			break
		}
	}
	var failed atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			conn, _ := tg.Connect(context.Background())
			for i := range 200 {
				key := []byte(fmt.Sprintf("user%d-%d", w, i))
				if err := conn.Do(context.Background(), &core.Op{Kind: core.OpInsert, Key: key, Fields: twoFields, Values: [][]byte{[]byte("a"), []byte("b")}}); err != nil {
					failed.Add(1)
					return // each would wait out its timeout
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("the inserts of %d of %d workers failed", n, workers)
	}
	for i, n := range opened {
		after := c.Node(i).Connections()
		if n != up || after != workers+1 {
			t.Errorf("node %d: %d connections once open, %d after %d busy workers; want %d, then %d and the tend connection", i, n, after, workers, up, workers)
		}
	}
}

// Result codes land in the classes the README's table gives.
func TestErrorClassesByInjection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  string
		code  types.ResultCode
		op    core.OpKind
		class core.ErrorClass
	}{
		{"server timeout of a read", "read", types.TIMEOUT, core.OpRead, core.ErrClassTimeout},
		{"server timeout of a write is in doubt", "write", types.TIMEOUT, core.OpUpdate, core.ErrClassInDoubt},
		{"KEY_BUSY is back-pressure", "write", types.KEY_BUSY, core.OpUpdate, core.ErrClassOverload},
		{"DEVICE_OVERLOAD is back-pressure, not capacity", "write", types.DEVICE_OVERLOAD, core.OpInsert, core.ErrClassOverload},
		{"FAIL_FORBIDDEN (a set at its stop-writes-count) is capacity", "write", types.FAIL_FORBIDDEN, core.OpInsert, core.ErrClassOOM},
		{"SERVER_MEM_ERROR (namespace stop-writes, a full storage file) is capacity", "write", types.SERVER_MEM_ERROR, core.OpSet, core.ErrClassOOM},
		{"RECORD_TOO_BIG is other", "write", types.RECORD_TOO_BIG, core.OpSet, core.ErrClassOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, tg := open(t)
			conn, _ := tg.Connect(context.Background())
			if err := conn.Do(context.Background(), &core.Op{Kind: core.OpInsert, Key: []byte("k"), Fields: twoFields, Values: [][]byte{[]byte("a"), []byte("b")}}); err != nil {
				t.Fatal(err)
			}
			srv.Inject(tc.kind, int(tc.code), 1)
			op := &core.Op{Kind: tc.op, Key: []byte("k"), Fields: twoFields, Values: [][]byte{[]byte("c"), []byte("d")}, WholeRecord: true, Value: []byte("v")}
			if tc.op == core.OpInsert {
				op.Key = []byte("k2")
			}
			err := conn.Do(context.Background(), op)
			if core.ClassOf(err) != tc.class {
				t.Fatalf("%v: class %s, want %s", err, core.ClassOf(err), tc.class)
			}
		})
	}
	// A record bigger than the server's limit, for real.
	srv, tg := open(t)
	_ = srv
	conn, _ := tg.Connect(context.Background())
	err := conn.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte("big"), Value: make([]byte, 2<<20)})
	if core.ClassOf(err) != core.ErrClassOther || !strings.Contains(err.Error(), "RECORD_TOO_BIG") && !strings.Contains(err.Error(), "too big") {
		t.Fatalf("a 2 MiB record: %v (class %s)", err, core.ClassOf(err))
	}
}

// When the server pushes back (a storage stall: DEVICE_OVERLOAD), every error
// counted is one the server returned: the client's circuit breaker, which counts
// such errors per node, never fails commands itself without asking the server.
func TestOverloadStormHasNoCircuitBreakerFailures(t *testing.T) {
	c := cluster(t, astest.ClusterOptions{Nodes: 1})
	// More writes in flight than the default breaker's limit (100 errors a node
	// between two commands), all pushed back at once.
	const workers, overloads, each = 160, 1000, 10
	tg := openAt(t, c.Seed(), workers, time.Second)
	cp, err := tg.Capture(context.Background())
	if err != nil || !strings.Contains(cp.Sections["client-policy"], "max_error_rate=0 ") {
		t.Fatalf("the client's circuit breaker is on: %q %v", cp.Sections["client-policy"], err)
	}
	c.Node(0).Inject("write", int(types.DEVICE_OVERLOAD), overloads)
	var mu sync.Mutex
	classes := map[core.ErrorClass]int{}
	var ok int
	var breaker []error
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			conn, _ := tg.Connect(context.Background())
			for i := range each {
				err := conn.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte(fmt.Sprintf("k%d-%d", w, i)), Value: []byte("v")})
				mu.Lock()
				if err == nil {
					ok++
				} else {
					classes[core.ClassOf(err)]++
					var ae interface {
						Matches(...types.ResultCode) bool
					}
					if errors.As(err, &ae) && ae.Matches(types.MAX_ERROR_RATE) {
						breaker = append(breaker, err)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(breaker) > 0 || classes[core.ErrClassOverload] != overloads || ok != workers*each-overloads {
		t.Fatalf("%d commands failed by the client's circuit breaker (first: %v); %d ok, errors by class %v; want %d overload errors, as injected", len(breaker), first(breaker), ok, classes, overloads)
	}
}

// During a server stall (replies held) every command waits for the server and
// times out on its own: none is failed by the client's circuit breaker, and the
// server is asked again once it answers.
func TestStallTimesOutWithoutCircuitBreakerFailures(t *testing.T) {
	c := cluster(t, astest.ClusterOptions{Nodes: 1})
	const workers = 160
	tg := openAt(t, c.Seed(), workers, 150*time.Millisecond)
	c.Node(0).Stall(time.Second) // every reply held a second, until Stall(0)
	var mu sync.Mutex
	classes := map[core.ErrorClass]int{}
	var breaker []error
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			conn, _ := tg.Connect(context.Background())
			deadline := time.Now().Add(time.Second)
			for i := 0; time.Now().Before(deadline); i++ {
				err := conn.Do(context.Background(), &core.Op{Kind: core.OpGet, Key: []byte(fmt.Sprintf("k%d-%d", w, i))})
				if err == nil || err == core.ErrMiss {
					continue
				}
				mu.Lock()
				classes[core.ClassOf(err)]++
				var ae interface {
					Matches(...types.ResultCode) bool
				}
				if errors.As(err, &ae) && ae.Matches(types.MAX_ERROR_RATE) {
					breaker = append(breaker, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(breaker) > 0 || classes[core.ErrClassTimeout] < workers || len(classes) != 1 {
		t.Fatalf("%d commands failed by the client's circuit breaker (first: %v); errors by class %v", len(breaker), first(breaker), classes)
	}
	c.Node(0).Stall(0)
	// The client may have dropped the node while its tend went unanswered; it finds
	// it again from the seed.
	conn, _ := tg.Connect(context.Background())
	start := time.Now()
	for {
		err := conn.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte("after"), Value: []byte("v")})
		if err == nil {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("5 s after the stall: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func first(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// A node still cold-starting is not ready: Open fails and is retried, until the
// cluster has its cluster_size nodes again (without it, two nodes are a stable
// cluster of two, as the server says); a namespace the nodes do not have is
// refused at once.
func TestOpenWaitsForAColdStart(t *testing.T) {
	c := cluster(t, astest.ClusterOptions{Nodes: 3, ReplicationFactor: 2})
	tg := openAt(t, c.Seed(), 2, time.Second)
	insert(t, tg, 0, 100)
	done := make(chan error, 1)
	go func() { done <- c.Node(2).Restart(800 * time.Millisecond) }()
	time.Sleep(100 * time.Millisecond)
	sys := core.SystemConfig{Name: "as", Endpoint: c.Seed(), Timeout: time.Second, Options: map[string]string{"namespace": "ycsb", "cluster_size": "3"}}
	var notReady error
	var opened core.Target
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		tg2, err := Adapter{}.Open(context.Background(), sys)
		if err == nil {
			opened = tg2
			break
		}
		if errors.Is(err, core.ErrRefused) {
			t.Fatalf("a cold start is refused: %v", err)
		}
		notReady = err
		time.Sleep(100 * time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if opened == nil || notReady == nil {
		t.Fatalf("opened %v after %v: want at least one not-ready answer, then an open", opened != nil, notReady)
	}
	defer opened.Close(context.Background())
	if n, err := opened.(core.Counter).Count(context.Background()); err != nil || n != 100 {
		t.Fatalf("count after the cold start: %d %v", n, err)
	}
	sys.Options = map[string]string{"namespace": "nosuch"}
	if _, err := (Adapter{}).Open(context.Background(), sys); !errors.Is(err, core.ErrRefused) || !strings.Contains(err.Error(), `no namespace "nosuch"`) {
		t.Fatalf("an unknown namespace: %v", err)
	}
}
