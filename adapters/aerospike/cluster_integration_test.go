package aerospike

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/aerospike/asdtest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

// TestClusterIntegration drives the built-in system aerospike-cluster (three asd
// over loopback, replication factor 2) through the adapter: a load counted per
// record, request counters of every node, a node killed during a phase and
// brought back, and a clean restart of every node.
func TestClusterIntegration(t *testing.T) {
	t.Parallel()
	srv := asdtest.Start(t, asdtest.Cluster, nil)
	sc := srv.Config()
	if sc.Options["namespace"] != "ycsb" || sc.Options["cluster_size"] != "3" || len(srv.Endpoints()) != 3 {
		t.Fatalf("the built-in aerospike-cluster gives the adapter %v, %d nodes", sc.Options, len(srv.Endpoints()))
	}
	sc.Concurrency, sc.Timeout = 8, time.Second
	tg := srv.Open(t, Adapter{}, sc)
	cp, err := tg.Capture(context.Background())
	if err != nil || !strings.Contains(cp.Sections["client-policy"], "driver=wire (the engine drives a socket per connection to each of the 3 nodes") {
		t.Fatalf("the cluster's connections are not the engine's: %v %q", err, cp.Sections["client-policy"])
	}

	t.Run("load counted per record", func(t *testing.T) {
		load(t, tg)
		if n := count(t, tg); n != loaded.RecordCount {
			t.Fatalf("count %d after loading %d records", n, loaded.RecordCount)
		}
		// Each node counts the copies it holds: every record twice over the nodes,
		// once as a master.
		st := stats(t, tg)
		copies, nodes := sumStat(t, st, "namespace.objects")
		masters, _ := sumStat(t, st, "namespace.master_objects")
		if nodes != 3 || copies != 2*loaded.RecordCount || masters != loaded.RecordCount {
			t.Fatalf("%d nodes hold %d copies, %d as masters; want 3 nodes, %d and %d", nodes, copies, masters, 2*loaded.RecordCount, loaded.RecordCount)
		}
	})
	t.Run("request counters reconcile", func(t *testing.T) { requestsReconcile(t, tg, 3) })

	// A phase of reads of the loaded records and inserts of new ones, with node 1
	// killed a second in and started again a second later.
	var issued, inserted, inDoubt int64
	t.Run("node killed during a phase", func(t *testing.T) {
		const connections = 8
		done := make(chan error, 1)
		go func() {
			time.Sleep(time.Second)
			if err := srv.Kill(1); err != nil {
				done <- err
				return
			}
			time.Sleep(time.Second)
			done <- srv.Relaunch(1)
		}()
		end, tot := runPhase(t, tg, core.PhaseSpec{Name: "node lost", Kind: core.PhaseMeasured, Connections: connections,
			Duration: 4 * time.Second, Seed: 11, Workload: loaded})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		reads, inserts := tot[core.OpRead], tot[core.OpInsert]
		t.Logf("%s: reads %d ok, errors %v; inserts %d ok, errors %v", end.Status, reads.OK, reads.Errors, inserts.OK, inserts.Errors)
		if end.Status != core.StatusOK || reads.OK == 0 || inserts.OK == 0 {
			t.Fatalf("%s %s: %d reads, %d inserts", end.Status, end.Error, reads.OK, inserts.OK)
		}
		// Losing a node costs the operations in flight to it and those sent to it
		// before the client's next tend: errors, never successes.
		if reads.ErrorTotal()+inserts.ErrorTotal() == 0 {
			t.Fatal("no operation failed while a node was killed")
		}
		// A read fails for want of the node, never of the record (every read is of a
		// loaded record, held twice); an insert that was sent is in doubt. The node
		// started again answers PARTITION_UNAVAILABLE (class other) until it has
		// joined the cluster.
		allowed := map[core.OpKind][]core.ErrorClass{
			core.OpRead:   {core.ErrClassConnection, core.ErrClassTimeout, core.ErrClassOther},
			core.OpInsert: {core.ErrClassInDoubt, core.ErrClassConnection, core.ErrClassTimeout, core.ErrClassOther},
		}
		for kind, o := range tot {
			for class, n := range o.Errors {
				if n > 0 && !slices.Contains(allowed[kind], core.ErrorClass(class)) {
					t.Errorf("%d %s errors of class %s: %.2000q", n, kind, core.ErrorClass(class), end.ErrorSamples)
				}
			}
		}
		for _, sample := range end.ErrorSamples {
			if strings.HasPrefix(sample, core.ErrClassOther.String()+":") && !strings.Contains(sample, "PARTITION_UNAVAILABLE") {
				t.Errorf("an error of class other: %.2000s", sample)
			}
		}
		if reads.Hits != reads.OK || reads.Misses != 0 {
			t.Errorf("reads: %d ok, %d hits, %d misses", reads.OK, reads.Hits, reads.Misses)
		}
		issued, inserted, inDoubt = inserts.OK+inserts.ErrorTotal(), inserts.OK, inserts.Errors[core.ErrClassInDoubt]

		// Once the node has joined the cluster again (every node counts three; the
		// migrations that follow take seconds more) the adapter works as before.
		joined := func() bool {
			st, err := tg.Stats(context.Background())
			if err != nil {
				return false
			}
			sum, nodes := sumStat(t, st, "statistics.cluster_size")
			return nodes == 3 && sum == 9
		}
		deadline := time.Now().Add(30 * time.Second)
		for !joined() {
			if time.Now().After(deadline) {
				t.Fatalf("node 1 has not joined the cluster 30 s after it started again%s", srv.Why())
			}
			time.Sleep(100 * time.Millisecond)
		}
		reads1 := loaded
		reads1.Read, reads1.Insert = 1, 0
		end, tot = runPhase(t, tg, core.PhaseSpec{Name: "node back", Kind: core.PhaseMeasured, Connections: connections,
			Duration: 10 * time.Second, Ops: 2000, Seed: 12, Workload: reads1})
		if r := tot[core.OpRead]; end.Status != core.StatusOK || r.OK != 2000 || r.Hits != 2000 {
			t.Fatalf("after node 1 came back: %s %s, %d reads, %d hits, errors %v %q", end.Status, end.Error, r.OK, r.Hits, r.Errors, end.ErrorSamples)
		}
	})

	t.Run("clean stop and cold restart of every node", func(t *testing.T) {
		if inserted == 0 {
			t.Skip("the phase with a node killed failed")
		}
		checks, problems := ycsb.VerifySamples(context.Background(), tg.(core.RecordReader), loaded, loadSeed)
		if len(problems) > 0 || len(checks) == 0 {
			t.Fatalf("sample records before the restart: %v", problems)
		}
		tg.Close(context.Background())
		restarted := time.Now()
		if err := srv.Restart(); err != nil {
			t.Fatalf("restart: %v%s", err, srv.Why())
		}
		// Open waits until every node is back and no partition migrates.
		tg = srv.Open(t, Adapter{}, sc)
		startedSince(t, stats(t, tg), restarted, 3)
		// The load's records, the reconciliation's two, and every insert the phase
		// counted as a success; of those in doubt, some may have been applied.
		n := count(t, tg)
		low := loaded.RecordCount + 2 + inserted
		t.Logf("%d records: %d of the %d inserts in doubt were applied", n, n-low, inDoubt)
		if n < low || n > low+inDoubt {
			t.Fatalf("count %d after the restart; want %d (load, reconciliation and %d inserts that succeeded) to %d (and %d in doubt)",
				n, low, inserted, low+inDoubt, inDoubt)
		}
		st := stats(t, tg)
		if copies, nodes := sumStat(t, st, "namespace.objects"); nodes != 3 || copies != 2*n {
			t.Fatalf("%d nodes hold %d copies of %d records", nodes, copies, n)
		}
		again, problems := ycsb.VerifySamples(context.Background(), tg.(core.RecordReader), loaded, loadSeed)
		if len(problems) > 0 || len(again) != len(checks) {
			t.Fatalf("sample records after the restart: %v", problems)
		}
		for i := range checks {
			if again[i].SHA256 != checks[i].SHA256 {
				t.Errorf("record %s: SHA-256 %s before the restart, %s after", checks[i].Key, checks[i].SHA256, again[i].SHA256)
			}
		}
		// The phase's records are those counted: its inserts numbered the records
		// after the loaded ones, one each, failed or not.
		rr := tg.(core.RecordReader)
		var found int64
		for i := loaded.InsertStart; i < loaded.InsertStart+issued+10; i++ {
			rec, err := rr.ReadRecord(context.Background(), ycsb.Key(nil, &loaded, i))
			if err != nil {
				t.Fatal(err)
			}
			if len(rec) > 0 {
				found++
			}
		}
		if found != n-loaded.RecordCount-2 {
			t.Fatalf("%d of the phase's records exist, %d counted", found, n-loaded.RecordCount-2)
		}
	})
}
