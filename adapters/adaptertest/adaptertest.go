// Package adaptertest is the conformance suite every adapter passes: connect, each op
// kind it claims, miss against error, updates of missing records, key count, reading records back, capture
// without credentials, stats, and emptying. Call Run from the adapter's tests against
// a real server (or, where none can run, a wire-protocol test server).
package adaptertest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

// Setup is an adapter and a fresh, empty system to open with it.
type Setup struct {
	Adapter core.Adapter
	System  core.SystemConfig
	// Secret, when set, is a credential the system uses; no capture or stats value may
	// contain it.
	Secret string
	// Ready is how long Open is retried while the system is not ready (default
	// DefaultReady), as cmpbench retries it: a server just started may accept
	// connections before it can serve them.
	Ready time.Duration
}

// DefaultReady is how long Open is retried when Setup.Ready is zero.
const DefaultReady = 30 * time.Second

// OpenWhenReady opens the system as cmpbench does: as the adapter receives it
// (core.SystemConfig.Received: the options it declares filled in with their
// defaults, Nodes at least Endpoint), and retried every 100 ms until Ready has
// passed while it fails — a server just started may accept connections before it
// can serve (etcd without a leader, Redis loading its data). A refusal
// (core.ErrRefused: a wrong password, a bad certificate) is not retried.
func OpenWhenReady(ctx context.Context, s Setup) (core.Target, error) {
	ready := s.Ready
	if ready <= 0 {
		ready = DefaultReady
	}
	sys := s.System.Received(s.Adapter.Info().Options)
	deadline := time.Now().Add(ready)
	for {
		octx, cancel := context.WithDeadline(ctx, deadline)
		tg, err := s.Adapter.Open(octx, sys)
		cancel()
		if err == nil || errors.Is(err, core.ErrRefused) || ctx.Err() != nil || time.Now().After(deadline) {
			return tg, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Run runs the conformance suite.
func Run(t *testing.T, s Setup) {
	su := open(t, s)
	defer su.tg.Close(su.ctx)
	defer su.c.Close()
	t.Run("GET and SET", su.getAndSet)
	t.Run("DELETE", su.delete)
	t.Run("INCR", su.incr)
	t.Run("TTL", su.ttl)
	t.Run("records", su.records)
	t.Run("count", su.count)
	t.Run("capture and stats", su.captureAndStats)
	t.Run("flush", su.flush)
}

// suite is what the checks share: the target and connection under test, the keys
// written so far, and the records they write.
type suite struct {
	Setup
	ctx  context.Context
	info core.Info
	tg   core.Target
	c    core.Conn
	keys int

	spec           ycsb.Spec
	fields, values [][]byte
}

// open checks the adapter's Info, opens the system and connects to it.
func open(t *testing.T, s Setup) *suite {
	su := &suite{Setup: s, ctx: context.Background(), info: s.Adapter.Info()}
	if su.info.Name == "" || len(su.info.Ops) == 0 {
		t.Fatalf("Info() = %+v: an adapter names itself and its ops", su.info)
	}
	tg, err := OpenWhenReady(su.ctx, s)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	su.tg = tg
	c, err := tg.Connect(su.ctx)
	if err != nil {
		tg.Close(su.ctx)
		t.Fatalf("Connect: %v", err)
	}
	su.c = c
	su.spec = ycsb.Spec{RecordCount: 3, FieldCount: 4, FieldLength: 16, InsertOrder: ycsb.InsertHashed, KeyPrefix: "conformance:user"}
	su.fields = make([][]byte, su.spec.FieldCount)
	su.values = make([][]byte, su.spec.FieldCount)
	return su
}

// getAndSet checks a GET miss, a SET and the GET that reads it back.
func (su *suite) getAndSet(t *testing.T) {
	if !su.info.Supports(core.OpGet) || !su.info.Supports(core.OpSet) {
		t.Skip("adapter does not claim GET and SET")
	}
	get := &core.Op{Kind: core.OpGet, Key: []byte("conformance:kv")}
	if err := su.c.Do(su.ctx, get); !errors.Is(err, core.ErrMiss) {
		t.Fatalf("GET of a missing key returned %v; a miss is core.ErrMiss (or an error wrapping it), not an error", err)
	}
	if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpSet, Key: get.Key, Value: []byte("value-123")}); err != nil {
		t.Fatalf("SET: %v", err)
	}
	su.keys++
	get = &core.Op{Kind: core.OpGet, Key: get.Key}
	if err := su.c.Do(su.ctx, get); err != nil || get.RespBytes != len("value-123") {
		t.Fatalf("GET after SET: %v, %d bytes", err, get.RespBytes)
	}
}

// delete checks a DELETE of a key removes it, and one of a key that is not
// there is a miss.
func (su *suite) delete(t *testing.T) {
	if !su.info.Supports(core.OpDelete) || !su.info.Supports(core.OpSet) || !su.info.Supports(core.OpGet) {
		t.Skip("adapter does not claim DELETE, GET and SET")
	}
	key := []byte("conformance:deleted")
	if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpSet, Key: key, Value: []byte("x")}); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpDelete, Key: key}); err != nil {
		t.Fatalf("DELETE of a key there: %v", err)
	}
	if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpDelete, Key: key}); !errors.Is(err, core.ErrMiss) {
		t.Fatalf("DELETE of a key not there returned %v; it is a miss (core.ErrMiss)", err)
	}
	if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpGet, Key: key}); !errors.Is(err, core.ErrMiss) {
		t.Fatalf("GET after DELETE returned %v, want a miss", err)
	}
}

// incr checks INCR counts from 0 on a missing key, adds its delta (negative
// too), and increments a number SET wrote.
func (su *suite) incr(t *testing.T) {
	if !su.info.Supports(core.OpIncr) || !su.info.Supports(core.OpGet) || !su.info.Supports(core.OpSet) {
		t.Skip("adapter does not claim INCR, GET and SET")
	}
	key := []byte("conformance:counter")
	for _, d := range []int64{5, -7} {
		if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpIncr, Key: key, Delta: d}); err != nil {
			t.Fatalf("INCR by %d: %v", d, err)
		}
	}
	su.keys++
	get := &core.Op{Kind: core.OpGet, Key: key}
	if err := su.c.Do(su.ctx, get); err != nil || get.RespBytes != len("-2") {
		t.Fatalf("GET of 5-7: %v, %d bytes, want the 2 of -2", err, get.RespBytes)
	}
	if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpSet, Key: key, Value: []byte("99")}); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpIncr, Key: key, Delta: 1}); err != nil {
		t.Fatalf("INCR of a number SET wrote: %v", err)
	}
	if err := su.c.Do(su.ctx, get); err != nil || get.RespBytes != len("100") {
		t.Fatalf("GET of 99+1: %v, %d bytes, want the 3 of 100", err, get.RespBytes)
	}
}

// ttl checks a SET with a TTL is read until it expires, and not after; one
// without keeps its key.
func (su *suite) ttl(t *testing.T) {
	if !su.info.TTL {
		t.Skip("adapter keeps no TTL (Info.TTL)")
	}
	key := []byte("conformance:expiring")
	const ttl = 300 * time.Millisecond
	set := time.Now()
	if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpSet, Key: key, Value: []byte("x"), TTL: ttl}); err != nil {
		t.Fatalf("SET with a TTL: %v", err)
	}
	if err := su.c.Do(su.ctx, &core.Op{Kind: core.OpGet, Key: key}); err != nil && time.Since(set) < ttl {
		t.Fatalf("GET before the TTL: %v", err)
	}
	for deadline := set.Add(ttl + 3*time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := su.c.Do(su.ctx, &core.Op{Kind: core.OpGet, Key: key})
		if errors.Is(err, core.ErrMiss) {
			if since := time.Since(set); since < ttl-10*time.Millisecond {
				t.Fatalf("the key was gone %s after a SET with a TTL of %s", since, ttl)
			}
			return
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("GET %s after a SET with a TTL of %s: %v, want a miss", time.Since(set).Round(time.Millisecond), ttl, err)
		}
	}
}

// record is record n's fields and values as YCSB loads them with seed, in the
// suite's shared field and value slices.
func (su *suite) record(n int64, seed uint64) *core.Op {
	for i := range su.fields {
		su.fields[i] = ycsb.FieldName(i)
		su.values[i] = make([]byte, su.spec.FieldLength)
		ycsb.LoadValue(su.values[i], seed, n, i)
	}
	return &core.Op{Key: ycsb.Key(nil, &su.spec, n), Fields: su.fields, Values: su.values}
}

// records checks READ and UPDATE of missing records, INSERT and READ, and, where the
// target reads records back, what UPDATE leaves in them.
func (su *suite) records(t *testing.T) {
	if !su.info.Supports(core.OpRead) || !su.info.Supports(core.OpInsert) || !su.info.Supports(core.OpUpdate) {
		t.Skip("adapter does not claim READ, INSERT and UPDATE")
	}
	su.missingRecords(t)
	su.insertAndRead(t)
	if rr, ok := su.tg.(core.RecordReader); ok {
		su.readBack(t, rr)
	}
}

// missingRecords checks that a READ, and an UPDATE of the whole record or of one
// field, of a record that does not exist is an error.
func (su *suite) missingRecords(t *testing.T) {
	read := &core.Op{Kind: core.OpRead, Key: ycsb.Key(nil, &su.spec, 0), Fields: su.fields}
	if err := su.c.Do(su.ctx, read); err == nil || errors.Is(err, core.ErrMiss) {
		t.Fatalf("READ of a missing record returned %v; it must be an error", err)
	}
	// A write that finds no record is an error of class not_found, never a
	// success: Aerospike's REPLACE_ONLY and UPDATE_ONLY, a RESP update whose
	// reply says there was no record. (Some commands, HSET among them, have
	// created a partial record by then: the INSERTs below complete it, so each
	// check takes a record of its own.)
	for n, whole := range []bool{true, false} {
		upd := su.record(int64(n), 7)
		upd.Kind, upd.WholeRecord = core.OpUpdate, whole
		if !whole {
			upd.Fields, upd.Values = upd.Fields[:1], upd.Values[:1]
		}
		if err := su.c.Do(su.ctx, upd); err == nil || errors.Is(err, core.ErrMiss) || core.ClassOf(err) != core.ErrClassNotFound {
			t.Fatalf("UPDATE (whole record %v) of a missing record returned %v; it must be an error of class not_found", whole, err)
		}
	}
}

// insertAndRead inserts the suite's records and reads one back.
func (su *suite) insertAndRead(t *testing.T) {
	for n := range su.spec.RecordCount {
		op := su.record(n, 1)
		op.Kind = core.OpInsert
		if err := su.c.Do(su.ctx, op); err != nil {
			t.Fatalf("INSERT record %d: %v", n, err)
		}
		su.keys++
	}
	read := &core.Op{Kind: core.OpRead, Key: ycsb.Key(nil, &su.spec, 1), Fields: su.fields}
	if err := su.c.Do(su.ctx, read); err != nil || read.RespBytes != su.spec.FieldCount*su.spec.FieldLength {
		t.Fatalf("READ: %v, %d bytes of %d", err, read.RespBytes, su.spec.FieldCount*su.spec.FieldLength)
	}
}

// readBack checks the inserted records read back as loaded, then that an UPDATE of
// the whole record replaces it and an UPDATE of one field keeps the others.
func (su *suite) readBack(t *testing.T, rr core.RecordReader) {
	spec, values := su.spec, su.values
	checks, problems := ycsb.VerifySamples(su.ctx, rr, spec, 1)
	if len(problems) > 0 || len(checks) != int(spec.RecordCount) {
		t.Fatalf("records read back: %v", problems)
	}
	upd := su.record(2, 99)
	upd.Kind, upd.WholeRecord = core.OpUpdate, true
	if err := su.c.Do(su.ctx, upd); err != nil {
		t.Fatalf("UPDATE of the whole record: %v", err)
	}
	got, err := rr.ReadRecord(su.ctx, upd.Key)
	if err != nil || !bytes.Equal(got["field3"], values[3]) || len(got) != spec.FieldCount {
		t.Fatalf("record after UPDATE: %v %v", got, err)
	}
	if _, problems := ycsb.VerifySamples(su.ctx, rr, spec, 1); len(problems) != 1 || !strings.Contains(problems[0], string(upd.Key)) {
		t.Fatalf("an updated record must fail the check naming it: %v", problems)
	}
	// YCSB's default UPDATE writes one field; the record's others stay.
	one := &core.Op{Kind: core.OpUpdate, Key: upd.Key, Fields: [][]byte{ycsb.FieldName(1)}, Values: [][]byte{[]byte("one-field-update")}}
	if err := su.c.Do(su.ctx, one); err != nil {
		t.Fatalf("UPDATE of one field: %v", err)
	}
	got, err = rr.ReadRecord(su.ctx, upd.Key)
	if err != nil || len(got) != spec.FieldCount || string(got["field1"]) != "one-field-update" || !bytes.Equal(got["field3"], values[3]) {
		t.Fatalf("record after an UPDATE of field1 alone (want field1 changed, the other %d fields kept): %q %v", spec.FieldCount-1, got, err)
	}
}

// count checks the target counts the keys the suite wrote.
func (su *suite) count(t *testing.T) {
	cn, ok := su.tg.(core.Counter)
	if !ok {
		t.Skip("adapter cannot count")
	}
	if n, err := cn.Count(su.ctx); err != nil || n != int64(su.keys) {
		t.Fatalf("Count = %d, %v; wrote %d keys", n, err, su.keys)
	}
}

// captureAndStats checks the capture names the product, version and sections, stats
// has values, and neither holds the credential, nor the facts the adapter reads
// of the capture.
func (su *suite) captureAndStats(t *testing.T) {
	cp, err := su.tg.Capture(su.ctx)
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	if cp.Product == "" || cp.Version == "" || len(cp.Sections) == 0 {
		t.Fatalf("capture names no product, version or sections: %+v", cp)
	}
	st, err := su.tg.Stats(su.ctx)
	if err != nil || len(st) == 0 {
		t.Fatalf("Stats: %d values, %v", len(st), err)
	}
	checkFacts(t, su.Adapter, cp.Sections, su.Secret)
	if su.Secret == "" {
		return
	}
	for name, text := range cp.Sections {
		if strings.Contains(text, su.Secret) {
			t.Fatalf("capture %s holds the credential", name)
		}
	}
	for k, v := range st {
		if strings.Contains(v, su.Secret) {
			t.Fatalf("stat %s holds the credential", k)
		}
	}
}

// flush checks the target empties the system, and counts nothing after.
func (su *suite) flush(t *testing.T) {
	f, ok := su.tg.(core.Flusher)
	if !ok {
		t.Skip("adapter cannot empty the system")
	}
	if err := f.Flush(su.ctx); err != nil {
		t.Fatal(err)
	}
	if cn, ok := su.tg.(core.Counter); ok {
		if n, err := cn.Count(su.ctx); err != nil || n != 0 {
			t.Fatalf("Count after Flush = %d, %v", n, err)
		}
	}
}
