package aerospike

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/pkg/ripemd160"

	"github.com/cmpbench/cmpbench/adapters/aerospike/asdtest"
	"github.com/cmpbench/cmpbench/adapters/aerospike/astest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

// The digest and partition of a key are the client's: the codec's requests go to
// the records the official client reads.
func TestDigestAndPartitionAreTheClients(t *testing.T) {
	var h ripemd160.Digest
	for _, tc := range []struct{ set, key string }{
		{"usertable", "user1"}, {"usertable", "user6284781860667377211"}, {"", "kv_1"}, {"s", ""},
		{"a-set-name-of-some-length", string(bytes.Repeat([]byte("k"), 300))},
	} {
		k, err := as.NewKey("ycsb", tc.set, tc.key)
		if err != nil {
			t.Fatal(err)
		}
		var d [digestSize]byte
		Digest(&h, &d, tc.set, []byte(tc.key))
		if !bytes.Equal(d[:], k.Digest()) {
			t.Errorf("%s/%q: digest %x, the client's %x", tc.set, tc.key, d, k.Digest())
		}
		if p := PartitionOf(&d); p != k.PartitionId() {
			t.Errorf("%s/%q: partition %d, the client's %d", tc.set, tc.key, p, k.PartitionId())
		}
		c := newCodec("ycsb", tc.set, time.Second)
		req := c.AppendRequest(nil, &core.Op{Kind: core.OpGet, Key: []byte(tc.key)})
		if !bytes.Contains(req, d[:]) {
			t.Errorf("%s/%q: the request does not carry the key's digest", tc.set, tc.key)
		}
	}
}

// A reply is whole or not there yet: every shorter prefix of one parses as
// nothing, and a reply that is not an AS_MSG, or whose parts overrun it, is a
// protocol error that consumes it.
func TestParseReplyFraming(t *testing.T) {
	c := newCodec("ycsb", "usertable", time.Second)
	reply := msgReply(0, []replyOp{{"f0", []byte("abc")}, {"f1", []byte("de")}})
	for i := range len(reply) {
		op := &core.Op{Kind: core.OpRead}
		if n, err := c.ParseReply(reply[:i], op); n != 0 || err != nil {
			t.Fatalf("%d of %d bytes: n %d, %v", i, len(reply), n, err)
		}
	}
	op := &core.Op{Kind: core.OpRead, Fields: [][]byte{[]byte("f0"), []byte("f1")}}
	two := append(append([]byte{}, reply...), reply...)
	if n, err := c.ParseReply(two, op); n != len(reply) || err != nil || op.RespBytes != 5 {
		t.Fatalf("a whole reply and the next: n %d of %d, %v, %d bytes of values", n, len(reply), err, op.RespBytes)
	}
	bad := func(edit func(b []byte)) []byte {
		b := append([]byte{}, reply...)
		edit(b)
		return b
	}
	for name, b := range map[string][]byte{
		"a RESP error":       []byte("-ERR unknown command\r\n"),
		"size under 22":      {2, 3, 0, 0, 0, 0, 0, 10},
		"size over the cap":  {2, 3, 0, 0, 0x10, 0, 0, 0},
		"version 3":          bad(func(b []byte) { b[0] = 3 }),
		"info reply":         bad(func(b []byte) { b[1] = 1 }),
		"header size 40":     bad(func(b []byte) { b[8] = 40 }),
		"op overruns":        bad(func(b []byte) { b[8+msgHeaderSize+3] = 200 }),
		"bin name overruns":  bad(func(b []byte) { b[8+msgHeaderSize+7] = 100 }),
		"more ops than sent": bad(func(b []byte) { b[8+21] = 3 }),
	} {
		n, err := c.ParseReply(b, &core.Op{Kind: core.OpRead})
		var oe *core.OpError
		if n == 0 || n > len(b) || !errors.As(err, &oe) || oe.Class != core.ErrClassProtocol {
			t.Errorf("%s: n %d, %v; want a protocol error", name, n, err)
		}
	}
}

type replyOp struct {
	bin   string
	value []byte
}

// msgReply is an AS_MSG reply with result code code and ops, as asd writes one.
func msgReply(code byte, ops []replyOp) []byte {
	b := make([]byte, protoHeaderSize+msgHeaderSize)
	h := b[protoHeaderSize:]
	h[0], h[5] = msgHeaderSize, code
	h[21] = byte(len(ops))
	for _, o := range ops {
		b = appendOp(b, opRead, blobType, o.bin, o.value)
	}
	size := uint64(len(b) - protoHeaderSize)
	for i := range 8 {
		b[i] = byte((size | protoVersion<<56 | protoTypeMsg<<48) >> (56 - 8*i))
	}
	return b
}

// A successful operation costs the codec no allocation, encoding and parsing.
func TestCodecAllocatesNothing(t *testing.T) {
	c := newCodec("ycsb", "usertable", time.Second)
	fields := [][]byte{[]byte("field0"), []byte("field1")}
	values := [][]byte{bytes.Repeat([]byte("v"), 100), bytes.Repeat([]byte("w"), 100)}
	reply := msgReply(0, []replyOp{{"field0", values[0]}, {"field1", values[1]}})
	buf := make([]byte, 0, 4096)
	for _, kind := range []core.OpKind{core.OpGet, core.OpSet, core.OpRead, core.OpUpdate, core.OpInsert} {
		op := &core.Op{Kind: kind, Key: []byte("user12345"), Value: values[0], Fields: fields, Values: values}
		if n := testing.AllocsPerRun(100, func() {
			buf = c.AppendRequest(buf[:0], op)
			if _, err := c.ParseReply(reply, op); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %.1f allocations per operation", kind, n)
		}
	}
}

// The codec's requests and replies against servers: the emulator, and asd
// (TestCodecIntegration); what they wrote is what the official client reads.
func TestCodecAgainstTheEmulator(t *testing.T) {
	srv, err := astest.Start("ycsb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	checkCodec(t, srv.Addr(), "ycsb")
	// Result codes the server is not made to return on demand, injected.
	c := newCodec("ycsb", "usertable", time.Second)
	conn := dialRaw(t, srv.Addr())
	for _, tc := range []struct {
		kind  string
		code  int
		op    core.OpKind
		class core.ErrorClass
	}{
		{"read", 14, core.OpRead, core.ErrClassOverload}, // KEY_BUSY
		{"write", 18, core.OpSet, core.ErrClassOverload}, // DEVICE_OVERLOAD
		{"write", 8, core.OpInsert, core.ErrClassOOM},    // SERVER_MEM_ERROR
		{"write", 22, core.OpUpdate, core.ErrClassOOM},   // FAIL_FORBIDDEN
		{"read", 9, core.OpGet, core.ErrClassTimeout},    // TIMEOUT
		{"write", 13, core.OpSet, core.ErrClassOther},    // RECORD_TOO_BIG
	} {
		srv.Inject(tc.kind, tc.code, 1)
		op := &core.Op{Kind: tc.op, Key: []byte("k"), Value: []byte("v"), Fields: [][]byte{[]byte("f")}, Values: [][]byte{[]byte("v")}}
		err := roundTrip(t, conn, c, op)
		var oe *core.OpError
		if !errors.As(err, &oe) || oe.Class != tc.class {
			t.Errorf("%s %d: %v, want class %s", tc.op, tc.code, err, tc.class)
		}
	}
}

// TestCodecIntegration is TestCodecAgainstTheEmulator's check against a real asd.
func TestCodecIntegration(t *testing.T) {
	t.Parallel()
	srv := asdtest.Start(t, asdtest.Single, nil)
	sc := srv.Config()
	tg := srv.Open(t, Adapter{}, sc) // ready: the namespace's partitions are available
	checkCodec(t, sc.Endpoint, sc.Options["namespace"])
	// A one-node cluster's connections are the engine's to drive, by default,
	// and the capture says so; driver client keeps the client's.
	for _, driver := range []string{"", driverClient} {
		sc.Options["driver"] = driver
		if driver != "" {
			tg = srv.Open(t, Adapter{}, sc)
		}
		cp, err := tg.Capture(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c, err := tg.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rc, ok := c.(core.RawConn)
		if ok {
			_, ok = rc.Raw()
		}
		want := cmp.Or(driver, driverWire)
		if ok != (want == driverWire) || !strings.Contains(cp.Sections["client-policy"], "driver="+want) {
			t.Errorf("driver %q: raw %v; capture %q", driver, ok, cp.Sections["client-policy"])
		}
		c.Close()
	}
}

// checkCodec sends each kind of operation through the codec on a plain socket
// and checks its outcome, and what it wrote through the official client.
func checkCodec(t *testing.T, addr, ns string) {
	t.Helper()
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	client, err := as.NewClient(host, port)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	set := fmt.Sprintf("codec%d", time.Now().UnixNano()%1e6)
	c := newCodec(ns, set, 5*time.Second)
	conn := dialRaw(t, addr)
	f := func(s ...string) [][]byte {
		var out [][]byte
		for _, x := range s {
			out = append(out, []byte(x))
		}
		return out
	}
	rec := func(op *core.Op, bins ...string) {
		t.Helper()
		k, _ := as.NewKey(ns, set, string(op.Key))
		r, err := client.Get(nil, k)
		if err != nil {
			t.Fatalf("after %s %s: the client reads %v", op.Kind, op.Key, err)
		}
		for i := 0; i < len(bins); i += 2 {
			if got, _ := r.Bins[bins[i]].([]byte); string(got) != bins[i+1] {
				t.Errorf("after %s %s: bin %s is %q, want %q (record %v)", op.Kind, op.Key, bins[i], got, bins[i+1], r.Bins)
			}
		}
		if len(r.Bins) != len(bins)/2 {
			t.Errorf("after %s %s: bins %v, want %d", op.Kind, op.Key, r.Bins, len(bins)/2)
		}
	}
	for _, tc := range []struct {
		name  string
		op    core.Op
		want  error // nil, core.ErrMiss, or an *core.OpError of the class
		bytes int
		bins  []string // the record after it, bin and value
	}{
		{"SET", core.Op{Kind: core.OpSet, Key: []byte("kv_1"), Value: []byte("hello")}, nil, 0, []string{"value", "hello"}},
		{"GET", core.Op{Kind: core.OpGet, Key: []byte("kv_1")}, nil, 5, []string{"value", "hello"}},
		{"GET a missing key", core.Op{Kind: core.OpGet, Key: []byte("kv_2")}, core.ErrMiss, 0, nil},
		{"INSERT", core.Op{Kind: core.OpInsert, Key: []byte("user1"), Fields: f("field0", "field1"), Values: f("aaa", "bbbb")}, nil, 0, []string{"field0", "aaa", "field1", "bbbb"}},
		{"INSERT it again", core.Op{Kind: core.OpInsert, Key: []byte("user1"), Fields: f("field0"), Values: f("x")}, errClass(core.ErrClassExists), 0, []string{"field0", "aaa", "field1", "bbbb"}},
		{"UPDATE a field", core.Op{Kind: core.OpUpdate, Key: []byte("user1"), Fields: f("field1"), Values: f("cc")}, nil, 0, []string{"field0", "aaa", "field1", "cc"}},
		{"UPDATE the record", core.Op{Kind: core.OpUpdate, WholeRecord: true, Key: []byte("user1"), Fields: f("field0"), Values: f("dd")}, nil, 0, []string{"field0", "dd"}},
		{"UPDATE a missing record", core.Op{Kind: core.OpUpdate, WholeRecord: true, Key: []byte("user2"), Fields: f("field0"), Values: f("x")}, errClass(core.ErrClassNotFound), 0, nil},
		{"READ", core.Op{Kind: core.OpRead, Key: []byte("user1"), Fields: f("field0")}, nil, 2, []string{"field0", "dd"}},
		{"READ a missing record", core.Op{Kind: core.OpRead, Key: []byte("user2"), Fields: f("field0")}, errClass(core.ErrClassNotFound), 0, nil},
		{"READ a record short of bins", core.Op{Kind: core.OpRead, Key: []byte("user1"), Fields: f("field0", "field1")}, errClass(core.ErrClassOther), 0, []string{"field0", "dd"}},
	} {
		op := tc.op
		err := roundTrip(t, conn, c, &op)
		if !sameOutcome(err, tc.want) || op.RespBytes != tc.bytes {
			t.Errorf("%s: %v, %d bytes; want %v, %d", tc.name, err, op.RespBytes, tc.want, tc.bytes)
		}
		if tc.bins != nil {
			rec(&op, tc.bins...)
		}
	}
}

func errClass(c core.ErrorClass) error { return &core.OpError{Class: c} }

func sameOutcome(got, want error) bool {
	var g, w *core.OpError
	if errors.As(want, &w) {
		return errors.As(got, &g) && g.Class == w.Class
	}
	return errors.Is(got, want) && (want != nil || got == nil)
}

func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// roundTrip writes op's request and reads until the codec has its reply.
func roundTrip(t *testing.T, conn net.Conn, c *codec, op *core.Op) error {
	t.Helper()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(c.AppendRequest(nil, op)); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	chunk := make([]byte, 4096)
	for {
		n, err := conn.Read(chunk)
		if err != nil {
			t.Fatalf("%s %s: %v", op.Kind, op.Key, err)
		}
		buf = append(buf, chunk[:n]...)
		if used, err := c.ParseReply(buf, op); used > 0 {
			if used != len(buf) {
				t.Fatalf("%s %s: the reply was %d bytes, %d came", op.Kind, op.Key, used, len(buf))
			}
			return err
		}
	}
}

// Whatever arrives, ParseReply takes no more than it was given, takes nothing
// only without an error, and never panics: the engine slices its buffer by it.
func FuzzParseReply(f *testing.F) {
	f.Add(msgReply(0, []replyOp{{"f0", []byte("abc")}}))
	f.Add(msgReply(2, nil))
	f.Add([]byte("-ERR unknown command\r\n"))
	f.Add([]byte{2, 3, 0, 0, 0, 0, 0, 10})
	c := newCodec("ycsb", "usertable", time.Second)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, kind := range []core.OpKind{core.OpGet, core.OpRead, core.OpSet} {
			op := &core.Op{Kind: kind, Fields: [][]byte{[]byte("f0")}}
			n, err := c.ParseReply(b, op)
			if n < 0 || n > len(b) || (n == 0 && err != nil) || op.RespBytes < 0 {
				t.Fatalf("%s of %x: n %d of %d, %v, %d bytes", kind, b, n, len(b), err, op.RespBytes)
			}
		}
	})
}

// A read the server answers with its own TIMEOUT is a timeout error whose
// connection stays: the stream is in step, and reconnecting would charge a dial
// to the next operation.
func TestServerTimeoutReplyKeepsTheConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer conn.Close()
				hdr := make([]byte, protoHeaderSize)
				for {
					if _, err := io.ReadFull(conn, hdr); err != nil {
						return
					}
					if _, err := io.CopyN(io.Discard, conn, int64(binary.BigEndian.Uint64(hdr)&(1<<48-1))); err != nil {
						return
					}
					conn.Write(msgReply(9, nil)) // TIMEOUT
				}
			}()
		}
	}()
	tg := &target{routes: fixedRouter(ln.Addr().String()), ns: "ycsb", set: "usertable", timeout: 2 * time.Second}
	spec := core.PhaseSpec{Name: "reads", Kind: core.PhaseMeasured, Connections: 2, Duration: 10 * time.Second, Ops: 200, Seed: 1,
		Workload: ycsb.Spec{RecordCount: 100, FieldCount: 1, FieldLength: 10, Read: 1, Distribution: ycsb.DistUniform, InsertOrder: ycsb.InsertHashed, KeyPrefix: "user"}}
	streams := ycsb.NewPhase(spec.Workload.(ycsb.Spec), spec.Seed, spec.Connections, false)
	end := engine.Run(context.Background(), engine.Config{Spec: spec, Executor: engine.ExecLoops, Connect: tg.Connect,
		NewSource: func(w int) (core.OpSource, error) { return streams.Source(w), nil }})
	var timeouts int64
	for _, o := range end.Totals {
		timeouts += o.Errors[core.ErrClassTimeout]
	}
	if timeouts != 200 || accepted.Load() != 2 {
		t.Fatalf("%d timeouts of 200 reads, %d connections for 2 workers (%s %s)", timeouts, accepted.Load(), end.Status, end.Error)
	}
}
