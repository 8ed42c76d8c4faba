package resp

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

// pikaConf is the least configuration pika 4.0.1 starts with here (the stock
// maxclients of 20000 aborts at start: "your 'limit -n ' of 20000 is not enough").
const pikaConf = `port : %d
network-interface : lo
thread-num : 1
maxclients : 10000
db-instance-num : 3
databases : 1
daemonize : no
log-path : {dir}/log/
db-path : {dir}/db/
dump-path : {dir}/dump/
db-sync-path : {dir}/dbsync/
pidfile : {dir}/pika.pid
`

// startPika starts pika on a port of the test's choosing: pika reads it from its
// configuration file and listens on port+2000 (on every interface) and
// port+10001 too, both hard-coded, so the port is one whose neighbours are free.
// A clean stop takes pika about 9 s: the test's last stop kills it after 1 s.
func startPika(t *testing.T) (*provision.Server, core.SystemConfig) {
	t.Helper()
	provisiontest.Need(t, "pika")
	var last error
	for range 3 {
		port := pikaPort(t)
		srv, err := provision.Start(provision.Spec{Name: "pika", Command: []string{"pika", "-c", "{dir}/pika.conf"},
			Files: map[string]string{"pika.conf": fmt.Sprintf(pikaConf, port)}, StopTimeout: 20 * time.Second}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			srv.SetStopTimeout(time.Second)
			_ = srv.Stop()
		})
		endpoint := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if got := ask(endpoint, "PING"); got == "+PONG" {
				sys := sysAt(endpoint)
				sys.Name, sys.Profile = "pika", "pika"
				return srv, sys
			}
			if exited, _ := srv.Exited(); exited {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = srv.Stop()
		last = fmt.Errorf("pika on port %d did not answer: %s", port, srv.Why())
	}
	t.Fatal(last)
	return nil, core.SystemConfig{}
}

// pikaPort is a free loopback port whose neighbours at +2000 and +10001 are free.
func pikaPort(t *testing.T) int {
	t.Helper()
	for range 100 {
		p, err := provision.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p+10001 > 65535 {
			continue
		}
		free := true
		for _, addr := range []string{fmt.Sprintf(":%d", p+2000), fmt.Sprintf("127.0.0.1:%d", p+10001)} {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return p
		}
	}
	t.Fatal("no free port for pika")
	return 0
}

func TestPikaIntegration(t *testing.T) {
	t.Parallel()
	rs := realServer{product: "pika", version: "4.0.0", versionField: "INFO server.pika_version", instance: true, persists: true}
	rs.srv, rs.sys = startPika(t)
	t.Run("records", func(t *testing.T) { checkPikaRecords(t, rs.sys) })
	checkProduct(t, rs, false)
	t.Run("caveats", func(t *testing.T) {
		cp, err := openSys(t, rs.sys).Capture(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c := cp.Sections["caveats"]; !strings.Contains(c, "with HMSET cannot tell a missing record from an existing one") {
			t.Errorf("the capture does not say that an UPDATE of every field cannot tell a missing record: %q", c)
		}
	})
}

// checkPikaRecords is the conformance suite's "records" and "count" on Pika, but
// for one item Pika cannot pass: an UPDATE of every field of a missing record is
// not_found in the suite, and on Pika it succeeds and writes the record, since
// its HSET takes one field/value pair and HMSET answers OK either way (profile
// pika: update_not_found: unchecked, which the capture's caveats say). The
// suite itself is left as it is.
func checkPikaRecords(t *testing.T, sys core.SystemConfig) {
	ctx := context.Background()
	tg := openSys(t, sys)
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rr := tg.(core.RecordReader)
	spec := ycsb.Spec{RecordCount: 3, FieldCount: 4, FieldLength: 16, InsertOrder: ycsb.InsertHashed, KeyPrefix: "conformance:user"}
	record := func(kind core.OpKind, n int64, seed uint64) *core.Op {
		op := &core.Op{Kind: kind, Key: ycsb.Key(nil, &spec, n)}
		for i := range spec.FieldCount {
			v := make([]byte, spec.FieldLength)
			ycsb.LoadValue(v, seed, n, i)
			op.Fields, op.Values = append(op.Fields, ycsb.FieldName(i)), append(op.Values, v)
		}
		return op
	}
	if err := c.Do(ctx, &core.Op{Kind: core.OpGet, Key: []byte("conformance:kv")}); err != core.ErrMiss {
		t.Fatalf("GET of a missing key: %v, want a miss", err)
	}
	if err := c.Do(ctx, record(core.OpRead, 0, 1)); err == nil || err == core.ErrMiss {
		t.Fatalf("READ of a missing record returned %v; it must be an error", err)
	}
	one := record(core.OpUpdate, 0, 7)
	one.Fields, one.Values = one.Fields[:1], one.Values[:1]
	if err := c.Do(ctx, one); core.ClassOf(err) != core.ErrClassNotFound {
		t.Fatalf("UPDATE (HSET) of one field of a missing record: %v, want not_found", err)
	}
	whole := record(core.OpUpdate, 1, 7)
	whole.WholeRecord = true
	if err := c.Do(ctx, whole); err != nil {
		t.Fatalf("UPDATE (HMSET) of every field of a missing record: %v; Pika answers OK, and the profile says it cannot tell", err)
	}
	if got, err := rr.ReadRecord(ctx, whole.Key); err != nil || len(got) != spec.FieldCount {
		t.Fatalf("the UPDATE of a missing record wrote %d fields, %v; want the record written", len(got), err)
	}
	for n := range spec.RecordCount {
		if err := c.Do(ctx, record(core.OpInsert, n, 1)); err != nil {
			t.Fatalf("INSERT record %d: %v", n, err)
		}
	}
	read := record(core.OpRead, 1, 1)
	if err := c.Do(ctx, read); err != nil || read.RespBytes != spec.FieldCount*spec.FieldLength {
		t.Fatalf("READ: %v, %d bytes of %d", err, read.RespBytes, spec.FieldCount*spec.FieldLength)
	}
	if _, problems := ycsb.VerifySamples(ctx, rr, spec, 1); len(problems) > 0 {
		t.Fatalf("records read back: %v", problems)
	}
	upd := record(core.OpUpdate, 2, 99)
	upd.WholeRecord = true
	if err := c.Do(ctx, upd); err != nil {
		t.Fatalf("UPDATE of the whole record: %v", err)
	}
	if got, err := rr.ReadRecord(ctx, upd.Key); err != nil || string(got["field3"]) != string(upd.Values[3]) || len(got) != spec.FieldCount {
		t.Fatalf("record after UPDATE: %q %v", got, err)
	}
	field1 := &core.Op{Kind: core.OpUpdate, Key: upd.Key, Fields: [][]byte{ycsb.FieldName(1)}, Values: [][]byte{[]byte("one-field-update")}}
	if err := c.Do(ctx, field1); err != nil {
		t.Fatalf("UPDATE of one field: %v", err)
	}
	if got, err := rr.ReadRecord(ctx, upd.Key); err != nil || len(got) != spec.FieldCount || string(got["field1"]) != "one-field-update" || string(got["field3"]) != string(upd.Values[3]) {
		t.Fatalf("record after an UPDATE of field1 alone: %q %v", got, err)
	}
	// Records 0 to 2; 0 and 1 were also written by the UPDATEs of missing records.
	if n, err := tg.(core.Counter).Count(ctx); err != nil || n != spec.RecordCount {
		t.Fatalf("Count = %d, %v; want %d", n, err, spec.RecordCount)
	}
	if err := tg.(core.Flusher).Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := tg.(core.Counter).Count(ctx); err != nil || n != 0 {
		t.Fatalf("Count after Flush = %d, %v", n, err)
	}
}
