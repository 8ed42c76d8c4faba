// Package adaptertest is the conformance suite every adapter passes: connect, each op
// kind it claims, miss against error, updates of missing records, key count, reading records back, capture
// without credentials, stats, and emptying. Call Run from the adapter's tests against
// a real server (or, where none can run, a wire-protocol test server).
package adaptertest

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
}

// Run runs the conformance suite.
func Run(t *testing.T, s Setup) {
	ctx := context.Background()
	info := s.Adapter.Info()
	if info.Name == "" || len(info.Ops) == 0 {
		t.Fatalf("Info() = %+v: an adapter names itself and its ops", info)
	}
	tg, err := s.Adapter.Open(ctx, s.System)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer tg.Close(ctx)
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	keys := 0

	t.Run("GET and SET", func(t *testing.T) {
		if !info.Supports(core.OpGet) || !info.Supports(core.OpSet) {
			t.Skip("adapter does not claim GET and SET")
		}
		get := &core.Op{Kind: core.OpGet, Key: []byte("conformance:kv")}
		if err := c.Do(ctx, get); err != core.ErrMiss {
			t.Fatalf("GET of a missing key returned %v; a miss is core.ErrMiss, not an error", err)
		}
		if err := c.Do(ctx, &core.Op{Kind: core.OpSet, Key: get.Key, Value: []byte("value-123")}); err != nil {
			t.Fatalf("SET: %v", err)
		}
		keys++
		get = &core.Op{Kind: core.OpGet, Key: get.Key}
		if err := c.Do(ctx, get); err != nil || get.RespBytes != len("value-123") {
			t.Fatalf("GET after SET: %v, %d bytes", err, get.RespBytes)
		}
	})

	spec := ycsb.Spec{RecordCount: 3, FieldCount: 4, FieldLength: 16, InsertOrder: ycsb.InsertHashed, KeyPrefix: "conformance:user"}
	fields := make([][]byte, spec.FieldCount)
	values := make([][]byte, spec.FieldCount)
	record := func(n int64, seed uint64) *core.Op {
		for i := range fields {
			fields[i] = ycsb.FieldName(i)
			values[i] = make([]byte, spec.FieldLength)
			ycsb.LoadValue(values[i], seed, n, i)
		}
		return &core.Op{Key: ycsb.Key(nil, &spec, n), Fields: fields, Values: values}
	}
	t.Run("records", func(t *testing.T) {
		if !info.Supports(core.OpRead) || !info.Supports(core.OpInsert) || !info.Supports(core.OpUpdate) {
			t.Skip("adapter does not claim READ, INSERT and UPDATE")
		}
		read := &core.Op{Kind: core.OpRead, Key: ycsb.Key(nil, &spec, 0), Fields: fields}
		if err := c.Do(ctx, read); err == nil || err == core.ErrMiss {
			t.Fatalf("READ of a missing record returned %v; it must be an error", err)
		}
		// A write that finds no record is an error of class not_found, never a
		// success: Aerospike's REPLACE_ONLY and UPDATE_ONLY, a RESP update whose
		// reply says there was no record. (Some commands, HSET among them, have
		// created a partial record by then: the INSERTs below complete it, so each
		// check takes a record of its own.)
		for n, whole := range []bool{true, false} {
			upd := record(int64(n), 7)
			upd.Kind, upd.WholeRecord = core.OpUpdate, whole
			if !whole {
				upd.Fields, upd.Values = upd.Fields[:1], upd.Values[:1]
			}
			if err := c.Do(ctx, upd); err == nil || err == core.ErrMiss || core.ClassOf(err) != core.ErrClassNotFound {
				t.Fatalf("UPDATE (whole record %v) of a missing record returned %v; it must be an error of class not_found", whole, err)
			}
		}
		for n := range spec.RecordCount {
			op := record(n, 1)
			op.Kind = core.OpInsert
			if err := c.Do(ctx, op); err != nil {
				t.Fatalf("INSERT record %d: %v", n, err)
			}
			keys++
		}
		read = &core.Op{Kind: core.OpRead, Key: ycsb.Key(nil, &spec, 1), Fields: fields}
		if err := c.Do(ctx, read); err != nil || read.RespBytes != spec.FieldCount*spec.FieldLength {
			t.Fatalf("READ: %v, %d bytes of %d", err, read.RespBytes, spec.FieldCount*spec.FieldLength)
		}
		if rr, ok := tg.(core.RecordReader); ok {
			checks, problems := ycsb.VerifySamples(ctx, rr, spec, 1)
			if len(problems) > 0 || len(checks) != int(spec.RecordCount) {
				t.Fatalf("records read back: %v", problems)
			}
			upd := record(2, 99)
			upd.Kind, upd.WholeRecord = core.OpUpdate, true
			if err := c.Do(ctx, upd); err != nil {
				t.Fatalf("UPDATE of the whole record: %v", err)
			}
			got, err := rr.ReadRecord(ctx, upd.Key)
			if err != nil || !bytes.Equal(got["field3"], values[3]) || len(got) != spec.FieldCount {
				t.Fatalf("record after UPDATE: %v %v", got, err)
			}
			if _, problems := ycsb.VerifySamples(ctx, rr, spec, 1); len(problems) != 1 || !strings.Contains(problems[0], string(upd.Key)) {
				t.Fatalf("an updated record must fail the check naming it: %v", problems)
			}
			// YCSB's default UPDATE writes one field; the record's others stay.
			one := &core.Op{Kind: core.OpUpdate, Key: upd.Key, Fields: [][]byte{ycsb.FieldName(1)}, Values: [][]byte{[]byte("one-field-update")}}
			if err := c.Do(ctx, one); err != nil {
				t.Fatalf("UPDATE of one field: %v", err)
			}
			got, err = rr.ReadRecord(ctx, upd.Key)
			if err != nil || len(got) != spec.FieldCount || string(got["field1"]) != "one-field-update" || !bytes.Equal(got["field3"], values[3]) {
				t.Fatalf("record after an UPDATE of field1 alone (want field1 changed, the other %d fields kept): %q %v", spec.FieldCount-1, got, err)
			}
		}
	})

	t.Run("count", func(t *testing.T) {
		cn, ok := tg.(core.Counter)
		if !ok {
			t.Skip("adapter cannot count")
		}
		if n, err := cn.Count(ctx); err != nil || n != int64(keys) {
			t.Fatalf("Count = %d, %v; wrote %d keys", n, err, keys)
		}
	})

	t.Run("capture and stats", func(t *testing.T) {
		cp, err := tg.Capture(ctx)
		if err != nil {
			t.Fatalf("Capture: %v", err)
		}
		if cp.Product == "" || cp.Version == "" || len(cp.Sections) == 0 {
			t.Fatalf("capture names no product, version or sections: %+v", cp)
		}
		st, err := tg.Stats(ctx)
		if err != nil || len(st) == 0 {
			t.Fatalf("Stats: %d values, %v", len(st), err)
		}
		if s.Secret == "" {
			return
		}
		for name, text := range cp.Sections {
			if strings.Contains(text, s.Secret) {
				t.Fatalf("capture %s holds the credential", name)
			}
		}
		for k, v := range st {
			if strings.Contains(v, s.Secret) {
				t.Fatalf("stat %s holds the credential", k)
			}
		}
	})

	t.Run("flush", func(t *testing.T) {
		f, ok := tg.(core.Flusher)
		if !ok {
			t.Skip("adapter cannot empty the system")
		}
		if err := f.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if cn, ok := tg.(core.Counter); ok {
			if n, err := cn.Count(ctx); err != nil || n != 0 {
				t.Fatalf("Count after Flush = %d, %v", n, err)
			}
		}
	})
}
