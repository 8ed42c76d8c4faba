package astest

import (
	"strings"
	"testing"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"
)

// TestRealClient drives the server with aerospike-client-go itself: if the client
// accepts the cluster and gets the documented results, the server speaks enough of
// the protocol.
func TestRealClient(t *testing.T) {
	s, err := Start("ycsb")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cp := as.NewClientPolicy()
	c, aerr := as.NewClientWithPolicyAndHost(cp, as.NewHost("127.0.0.1", s.Port()))
	if aerr != nil {
		t.Fatal(aerr)
	}
	defer c.Close()
	key, _ := as.NewKey("ycsb", "usertable", "user1")
	create := as.NewWritePolicy(0, 0)
	create.RecordExistsAction = as.CREATE_ONLY
	replace := as.NewWritePolicy(0, 0)
	replace.RecordExistsAction = as.REPLACE_ONLY

	if err := c.Put(replace, key, as.BinMap{"a": []byte("x")}); err == nil || !err.Matches(types.KEY_NOT_FOUND_ERROR) {
		t.Fatalf("REPLACE_ONLY of a missing record: %v", err)
	}
	if err := c.Put(create, key, as.BinMap{"a": []byte("1"), "b": "two"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(create, key, as.BinMap{"a": []byte("1")}); err == nil || !err.Matches(types.KEY_EXISTS_ERROR) {
		t.Fatalf("CREATE_ONLY of an existing record: %v", err)
	}
	if err := c.Put(replace, key, as.BinMap{"c": []byte("3")}); err != nil {
		t.Fatal(err)
	}
	rec, err := c.Get(nil, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Bins) != 1 || string(rec.Bins["c"].([]byte)) != "3" {
		t.Fatalf("REPLACE_ONLY must replace the whole record: %v", rec.Bins)
	}
	if err := c.Put(nil, key, as.BinMap{"d": "four"}); err != nil {
		t.Fatal(err)
	}
	rec, _ = c.Get(nil, key, "d")
	if rec.Bins["d"] != "four" || len(rec.Bins) != 1 {
		t.Fatalf("named bin read: %v", rec.Bins)
	}
	rec, _ = c.Get(nil, key)
	if len(rec.Bins) != 2 {
		t.Fatalf("UPDATE merges bins: %v", rec.Bins)
	}
	missing, _ := as.NewKey("ycsb", "usertable", "nobody")
	if _, err := c.Get(nil, missing); err == nil || !err.Matches(types.KEY_NOT_FOUND_ERROR) {
		t.Fatalf("get of a missing record: %v", err)
	}
	node := c.GetNodes()[0]
	info, err := node.RequestInfo(as.NewInfoPolicy(), "namespace/ycsb", "build")
	if err != nil || info["build"] != Build || !strings.Contains(info["namespace/ycsb"], ";objects=1;") {
		t.Fatalf("info: %v %v", info, err)
	}
	if err := c.Truncate(nil, "ycsb", "usertable", nil); err != nil {
		t.Fatal(err)
	}
	if s.Count() != 0 {
		t.Fatalf("%d records after truncate", s.Count())
	}
}
