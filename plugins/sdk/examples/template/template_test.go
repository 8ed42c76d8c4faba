package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// system is a systems-file entry as cmpbench hands it to the adapter
// (core.SystemConfig.Received): its nodes, the first as its Endpoint, and the
// declared options' defaults.
func system(nodes ...string) core.SystemConfig {
	sys := core.SystemConfig{Name: "t", Adapter: name, Endpoint: nodes[0], Nodes: nodes, Timeout: 2 * time.Second}
	return sys.Received(adapter{}.Info().Options)
}

// The conformance suite every cmpbench adapter passes, against a real redis-server
// started on a free loopback port (the test is skipped, saying how to install it,
// only when redis-server is not installed).
func TestConformanceIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	adaptertest.Run(t, adaptertest.Setup{Adapter: adapter{}, System: system(srv.Endpoint())})
}

// With a password and a database of its own: the suite again, no capture or stat
// holding the password, and the server's other databases neither counted nor
// emptied.
func TestPasswordAndDatabaseIntegration(t *testing.T) {
	const secret = "template-s3cret-91ab"
	srv := provisiontest.Redis(t, "--requirepass", secret)
	ctx := context.Background()

	db0 := system(srv.Endpoint())
	db0.Auth.Password = secret
	other, err := adapter{}.Open(ctx, db0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := other.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, &core.Op{Kind: core.OpSet, Key: []byte("not-ours"), Value: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	c.Close()

	sys := system(srv.Endpoint())
	sys.Auth.Password = secret
	sys.Options["db"] = "5"
	adaptertest.Run(t, adaptertest.Setup{Adapter: adapter{}, System: sys, Secret: secret})

	if n, err := other.(core.Counter).Count(ctx); err != nil || n != 1 {
		t.Fatalf("database 0 holds %d keys (%v) after the suite flushed database 5; want its 1 key kept", n, err)
	}
}

// What waiting cannot fix is refused at once; what it can (nothing listening yet)
// is a plain error, which cmpbench retries while a server starts.
func TestRefusalsIntegration(t *testing.T) {
	const secret = "template-s3cret-91ab"
	srv := provisiontest.Redis(t, "--requirepass", secret)
	ctx := context.Background()
	for _, tc := range []struct {
		name, password, db, want string
	}{
		{"wrong password", "not-the-password", "", "AUTH: WRONGPASS"},
		{"no password", "", "", "the server wants a password"},
		{"no such database", secret, "99", "SELECT: ERR DB index is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := system(srv.Endpoint())
			sys.Auth.Password = tc.password
			if tc.db != "" {
				sys.Options["db"] = tc.db
			}
			_, err := adapter{}.Open(ctx, sys)
			if !errors.Is(err, core.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v; want a refusal saying %q", err, tc.want)
			}
			if tc.password != "" && strings.Contains(err.Error(), tc.password) {
				t.Fatalf("the error holds the password: %v", err)
			}
		})
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	if _, err := (adapter{}).Open(ctx, system(closed)); err == nil || errors.Is(err, core.ErrRefused) {
		t.Fatalf("Open of a port nothing listens on: %v; want a plain error, retried while a server starts", err)
	}
}

// The facts the adapter reads of its capture: the first node's INFO, what it
// does not show left unknown.
func TestFacts(t *testing.T) {
	info := "# Memory\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n# Replication\r\nrole:master\r\nconnected_slaves:1\r\n"
	for _, sections := range []map[string]string{
		{"info": info},
		{"info@127.0.0.1:7001": "# Replication\r\nrole:slave\r\n", "info@127.0.0.1:7000": info},
	} {
		f := adapter{}.Facts(sections)
		if f.Replication != (core.Fact{Words: "`master`, 1 replica(s)", Class: "2"}) || f.Memory != (core.Fact{Words: "no limit", Class: "unlimited"}) || f.Durability.Known() {
			t.Errorf("facts of %q: %+v", sections, f)
		}
	}
	if f := (adapter{}).Facts(map[string]string{}); f != (core.Facts{}) {
		t.Errorf("facts of nothing: %+v", f)
	}
}

// Options are checked in Open, before anything is dialled, every problem at once.
func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want []string
	}{
		{map[string]string{"db": "x"}, []string{`option db: "x" is not a database number`}},
		{map[string]string{"db": "-1", "client_name": "two words"}, []string{`option db: "-1"`, `option client_name: "two words" must be one word`}},
		{map[string]string{"dbb": "1"}, []string{`unknown option "dbb"`}},
	} {
		sys := system("127.0.0.1:1")
		sys.Options = tc.opts
		_, err := adapter{}.Open(context.Background(), sys)
		if !errors.Is(err, core.ErrRefused) {
			t.Errorf("options %v: %v; want a refusal", tc.opts, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("options %v: %q does not say %q", tc.opts, err, w)
			}
		}
	}
	sys := system("127.0.0.1:1")
	sys.TLS.Enabled = true
	if _, err := (adapter{}).Open(context.Background(), sys); !errors.Is(err, core.ErrRefused) {
		t.Errorf("TLS: %v; want a refusal, never TLS silently off", err)
	}
	if o, err := parseOptions(map[string]string{"db": "3", "client_name": "bench-1"}); err != nil || o.db != 3 || o.clientName != "bench-1" {
		t.Errorf("parseOptions = %+v, %v", o, err)
	}
}

// A SET whose reply does not come in time is in doubt (it was sent and may have been
// applied), a GET's is a timeout; the connection then dials again by itself, as the
// engine expects (it keeps calling Do on the same Conn).
func TestTimeoutsAndReconnectIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	ctx := context.Background()
	sys := system(srv.Endpoint())
	sys.Timeout = 200 * time.Millisecond
	tg, err := adapter{}.Open(ctx, sys)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]core.Conn
	for i := range conns {
		if conns[i], err = tg.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
	}
	paused := time.Now()
	if _, err := tg.(*target).control(ctx, srv.Endpoint(), "CLIENT", "PAUSE", "1000", "ALL"); err != nil {
		t.Fatal(err)
	}
	set := &core.Op{Kind: core.OpSet, Key: []byte("k"), Value: []byte("v")}
	if err := conns[0].Do(ctx, set); core.ClassOf(err) != core.ErrClassInDoubt {
		t.Fatalf("SET against a paused server: %v; want class in_doubt", err)
	}
	if err := conns[1].Do(ctx, &core.Op{Kind: core.OpGet, Key: []byte("k")}); core.ClassOf(err) != core.ErrClassTimeout {
		t.Fatalf("GET against a paused server: %v; want class timeout", err)
	}
	time.Sleep(time.Until(paused.Add(1200 * time.Millisecond))) // the pause is over
	get := &core.Op{Kind: core.OpGet, Key: []byte("k")}
	if err := conns[0].Do(ctx, get); err != nil || get.RespBytes != 1 {
		t.Fatalf("GET after the pause: %v, %d bytes; want the value the SET in doubt wrote after all, on a new connection", err, get.RespBytes)
	}
}

// The declared default of client_name reaches every connection: the code reads
// the option, the default is written once, in Info.
func TestClientNameDefaultIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	ctx := context.Background()
	tg, err := adapter{}.Open(ctx, system(srv.Endpoint()))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tg.(*target).control(ctx, srv.Endpoint(), "CLIENT", "GETNAME"); err != nil || got != "cmpbench" {
		t.Fatalf("CLIENT GETNAME = %q, %v; want the declared default, cmpbench", got, err)
	}
}

// A system of three redis-servers (core.SystemConfig.Nodes, as cmpbench hands
// it a provisioned system of three nodes): the conformance suite passes over
// them, every node holds a share of the keys, Count sums them, and every stats
// key of a node carries its @node suffix.
func TestShardsIntegration(t *testing.T) {
	var nodes []string
	for range 3 {
		nodes = append(nodes, provisiontest.Redis(t).Endpoint())
	}
	sys := system(nodes...)
	adaptertest.Run(t, adaptertest.Setup{Adapter: adapter{}, System: sys})

	ctx := context.Background()
	tg, err := adapter{}.Open(ctx, sys)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const keys = 300
	for i := range keys {
		if err := c.Do(ctx, &core.Op{Kind: core.OpSet, Key: fmt.Appendf(nil, "key:%d", i), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := tg.(core.Counter).Count(ctx); err != nil || n != keys {
		t.Fatalf("Count = %d, %v; want %d", n, err, keys)
	}
	st, err := tg.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range nodes {
		n, err := tg.(*target).control(ctx, addr, "DBSIZE")
		if err != nil || n == "0" {
			t.Errorf("node %s holds %s keys (%v); want a share of them", addr, n, err)
		}
		if st[core.StatInstance+"@"+addr] == "" || st["keyspace.db0@"+addr] == "" {
			t.Errorf("no stats of node %s", addr)
		}
	}
	if _, ok := st[core.StatInstance]; ok {
		t.Errorf("a stats key without its node's suffix: %s", core.StatInstance)
	}
}

// The node of a key depends on the key alone, and every node gets keys.
func TestShardOf(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		seen := make([]int, n)
		for i := range 1000 {
			key := fmt.Appendf(nil, "memtier-%d", i)
			s := shardOf(key, n)
			if s != shardOf(slices.Clone(key), n) {
				t.Fatalf("key %s: two nodes", key)
			}
			seen[s]++
		}
		if slices.Contains(seen, 0) {
			t.Errorf("%d nodes: keys per node %v", n, seen)
		}
	}
}
