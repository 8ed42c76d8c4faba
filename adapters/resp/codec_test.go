package resp

import (
	"errors"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

func TestParseReply(t *testing.T) {
	redis, err := LoadProfile("redis", nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &core.Op{Kind: core.OpRead, Fields: make([][]byte, 2)}
	upd := &core.Op{Kind: core.OpUpdate, Key: []byte("user1"), Fields: make([][]byte, 2), WholeRecord: true}
	updOne := &core.Op{Kind: core.OpUpdate, Key: []byte("user1"), Fields: make([][]byte, 1)}
	tests := []struct {
		name  string
		op    *core.Op
		reply string
		n     int // 0: needs more
		err   error
		class core.ErrorClass
		bytes int
	}{
		{"bulk", &core.Op{Kind: core.OpGet}, "$5\r\nhello\r\n", 11, nil, 0, 5},
		{"bulk cut short", &core.Op{Kind: core.OpGet}, "$5\r\nhel", 0, nil, 0, 0},
		{"header cut short", &core.Op{Kind: core.OpGet}, "$5", 0, nil, 0, 0},
		{"null bulk is a miss", &core.Op{Kind: core.OpGet}, "$-1\r\n", 5, core.ErrMiss, 0, 0},
		{"RESP3 null is a miss", &core.Op{Kind: core.OpGet}, "_\r\n", 3, core.ErrMiss, 0, 0},
		{"OK", &core.Op{Kind: core.OpSet}, "+OK\r\n", 5, nil, 0, 0},
		{"OOM", &core.Op{Kind: core.OpSet}, "-OOM command not allowed\r\n", 26, errors.New(""), core.ErrClassOOM, 0},
		{"other error", &core.Op{Kind: core.OpSet}, "-WRONGTYPE x\r\n", 14, errors.New(""), core.ErrClassOther, 0},
		{"BUSY is overload", &core.Op{Kind: core.OpGet}, "-BUSY Redis is busy running a script.\r\n", 39, errors.New(""), core.ErrClassOverload, 0},
		{"LOADING is overload", &core.Op{Kind: core.OpGet}, "-LOADING Redis is loading the dataset in memory\r\n", 49, errors.New(""), core.ErrClassOverload, 0},
		{"a code that only starts like OOM", &core.Op{Kind: core.OpSet}, "-OOMPH x\r\n", 10, errors.New(""), core.ErrClassOther, 0},
		{"integer", &core.Op{Kind: core.OpInsert}, ":10\r\n", 5, nil, 0, 0},
		{"DEL removed the key", &core.Op{Kind: core.OpDelete}, ":1\r\n", 4, nil, 0, 0},
		{"DEL removed nothing: a miss", &core.Op{Kind: core.OpDelete}, ":0\r\n", 4, core.ErrMiss, 0, 0},
		{"INCRBY's new value", &core.Op{Kind: core.OpIncr}, ":0\r\n", 4, nil, 0, 0},
		{"INCRBY of a value that is not a number", &core.Op{Kind: core.OpIncr}, "-ERR value is not an integer or out of range\r\n", 46, errors.New(""), core.ErrClassOther, 0},
		{"nil reply to an UPDATE: no record", upd, "$-1\r\n", 5, errors.New(""), core.ErrClassNotFound, 0},
		{"RESP3 null to an UPDATE", updOne, "_\r\n", 3, errors.New(""), core.ErrClassNotFound, 0},
		{"nil reply to a SET: nothing written", &core.Op{Kind: core.OpSet}, "$-1\r\n", 5, errors.New(""), core.ErrClassOther, 0},
		{"HSET created every field it wrote: no record", upd, ":2\r\n", 4, errors.New(""), core.ErrClassNotFound, 0},
		{"HSET of one field created it: no record", updOne, ":1\r\n", 4, errors.New(""), core.ErrClassNotFound, 0},
		{"HSET created nothing: an update", upd, ":0\r\n", 4, nil, 0, 0},
		{"HSET created some fields: the record was there", upd, ":1\r\n", 4, nil, 0, 0},
		{"record", rec, "*4\r\n$2\r\nf1\r\n$3\r\nabc\r\n$2\r\nf2\r\n$1\r\nx\r\n", 36, nil, 0, 4},
		{"RESP3 map", rec, "%2\r\n$2\r\nf1\r\n$3\r\nabc\r\n$2\r\nf2\r\n$1\r\nx\r\n", 36, nil, 0, 4},
		{"record cut short", rec, "*4\r\n$2\r\nf1\r\n$3\r\nabc\r\n$2\r\nf2\r\n$1\r\n", 0, nil, 0, 0},
		{"record missing fields", rec, "*2\r\n$2\r\nf1\r\n$3\r\nabc\r\n", 21, errors.New(""), core.ErrClassOther, 3},
		{"empty record", rec, "*0\r\n", 4, errors.New(""), core.ErrClassOther, 0},
		{"attribute before the reply", &core.Op{Kind: core.OpSet}, "|1\r\n+a\r\n+b\r\n+OK\r\n", 17, nil, 0, 0},
		{"not RESP", &core.Op{Kind: core.OpGet}, "hello\r\n", 7, errors.New(""), core.ErrClassProtocol, 0},
		{"a bulk length no reply has", &core.Op{Kind: core.OpGet}, "$9223372036854775807\r\nx", 23, errors.New(""), core.ErrClassProtocol, 0},
		{"a bulk length past int64", &core.Op{Kind: core.OpGet}, "$99999999999999999999\r\nx", 24, errors.New(""), core.ErrClassProtocol, 0},
		{"an array too long for a reply", &core.Op{Kind: core.OpRead}, "*999999999999\r\n", 15, errors.New(""), core.ErrClassProtocol, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := *tc.op
			op.RespBytes = 0
			n, err := codec{profile: redis}.ParseReply([]byte(tc.reply), &op)
			if n != tc.n {
				t.Fatalf("took %d bytes, want %d (%v)", n, tc.n, err)
			}
			switch {
			case tc.err == nil && err != nil, tc.err != nil && err == nil:
				t.Fatalf("err %v, want %v", err, tc.err)
			case tc.err == core.ErrMiss && err != core.ErrMiss:
				t.Fatalf("err %v, want a miss", err)
			case tc.err != core.ErrMiss && err == core.ErrMiss:
				t.Fatalf("a miss, want an error of class %s", tc.class)
			case tc.err != nil && tc.err != core.ErrMiss && core.ClassOf(err) != tc.class:
				t.Fatalf("err %v of class %s, want %s", err, core.ClassOf(err), tc.class)
			}
			if op.RespBytes != tc.bytes {
				t.Fatalf("%d payload bytes, want %d", op.RespBytes, tc.bytes)
			}
		})
	}
}

func TestAppendRequest(t *testing.T) {
	p, err := LoadProfile("lavik", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := codec{profile: p}
	op := &core.Op{Kind: core.OpUpdate, Key: []byte("user1"), Fields: [][]byte{[]byte("f0")}, Values: [][]byte{[]byte("v")}, WholeRecord: true}
	got := string(c.AppendRequest(nil, op))
	want := "*4\r\n$14\r\nLAVIK.HREPLACE\r\n$5\r\nuser1\r\n$2\r\nf0\r\n$1\r\nv\r\n"
	if got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	op.WholeRecord = false // one field: the record's others stay, so never a replace
	if got := string(c.AppendRequest(nil, op)); got != "*4\r\n$4\r\nHSET\r\n$5\r\nuser1\r\n$2\r\nf0\r\n$1\r\nv\r\n" {
		t.Fatalf("UPDATE of one field: %q", got)
	}
	if got := string(c.AppendRequest(nil, &core.Op{Kind: core.OpSet, Key: []byte("k"), Value: []byte("")})); got != "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n" {
		t.Fatalf("SET with an empty value: %q", got)
	}
	for _, tc := range []struct {
		op   core.Op
		want string
	}{
		{core.Op{Kind: core.OpSet, Key: []byte("k"), Value: []byte("v"), TTL: time.Hour}, "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nEX\r\n$4\r\n3600\r\n"},
		{core.Op{Kind: core.OpSet, Key: []byte("k"), Value: []byte("v"), TTL: 1500 * time.Millisecond}, "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nPX\r\n$4\r\n1500\r\n"},
		{core.Op{Kind: core.OpSet, Key: []byte("k"), Value: []byte("v"), TTL: time.Microsecond}, "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nPX\r\n$1\r\n1\r\n"},
		{core.Op{Kind: core.OpDelete, Key: []byte("k")}, "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"},
		{core.Op{Kind: core.OpIncr, Key: []byte("k"), Delta: -5}, "*3\r\n$6\r\nINCRBY\r\n$1\r\nk\r\n$2\r\n-5\r\n"},
	} {
		if got := string(c.AppendRequest(nil, &tc.op)); got != tc.want {
			t.Errorf("%s (TTL %s, delta %d): %q, want %q", tc.op.Kind, tc.op.TTL, tc.op.Delta, got, tc.want)
		}
	}
}

// An UPDATE sent with a command that answers nil for a missing record
// (LAVIK.HREPLACE) is not judged by its integer reply.
func TestParseReplyOfAReplacingUpdate(t *testing.T) {
	lavik, err := LoadProfile("lavik", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := codec{profile: lavik}
	whole := &core.Op{Kind: core.OpUpdate, Fields: make([][]byte, 2), WholeRecord: true}
	if _, err := c.ParseReply([]byte(":2\r\n"), whole); err != nil {
		t.Fatalf("LAVIK.HREPLACE answering 2: %v", err)
	}
	if _, err := c.ParseReply([]byte("$-1\r\n"), whole); core.ClassOf(err) != core.ErrClassNotFound {
		t.Fatalf("LAVIK.HREPLACE answering nil: %v", err)
	}
	one := &core.Op{Kind: core.OpUpdate, Fields: make([][]byte, 1)} // update_field: HSET
	if _, err := c.ParseReply([]byte(":1\r\n"), one); core.ClassOf(err) != core.ErrClassNotFound {
		t.Fatalf("HSET of one field creating it: %v", err)
	}
}
