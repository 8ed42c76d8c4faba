package astest

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"
)

const ns = "ycsb"

func startCluster(t *testing.T, opt ClusterOptions) *Cluster {
	t.Helper()
	c, err := StartCluster(ns, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newClient is the real client on the cluster's seed, tending every 50 ms.
func newClient(t *testing.T, seed string) *as.Client {
	t.Helper()
	host, port := splitAddr(t, seed)
	cp := as.NewClientPolicy()
	cp.Timeout = 3 * time.Second
	cp.TendInterval = 50 * time.Millisecond
	cl, err := as.NewClientWithPolicyAndHost(cp, as.NewHost(host, port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func splitAddr(t *testing.T, addr string) (string, int) {
	t.Helper()
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(p)
	return host, port
}

// infoAt asks one node over a connection of its own, as tools do.
func infoAt(t *testing.T, s *Server, cmds ...string) map[string]string {
	t.Helper()
	m, err := tryInfo(s, cmds...)
	if err != nil {
		t.Fatalf("info %v on node %d: %v", cmds, s.idx, err)
	}
	return m
}

func tryInfo(s *Server, cmds ...string) (map[string]string, error) {
	host, p, _ := net.SplitHostPort(s.Addr())
	port, _ := strconv.Atoi(p)
	cp := as.NewClientPolicy()
	cp.Timeout = 3 * time.Second
	conn, err := as.NewConnection(cp, as.NewHost(host, port))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	m, err := conn.RequestInfo(cmds...)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// fields splits "k=v<sep>k=v".
func fields(s string, sep string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(s, ";"), sep) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func num(t *testing.T, m map[string]string, k string) int {
	t.Helper()
	v, ok := m[k]
	if !ok {
		t.Fatalf("no %s in %v", k, m)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q", k, v)
	}
	return n
}

// sum adds a namespace statistic over the given nodes.
func sum(t *testing.T, c *Cluster, stat string, nodes ...int) int {
	t.Helper()
	n := 0
	for _, i := range nodes {
		n += num(t, fields(infoAt(t, c.Node(i), "namespace/"+ns)["namespace/"+ns], ";"), stat)
	}
	return n
}

// setSum adds a set's objects over the given nodes.
func setSum(t *testing.T, c *Cluster, set string, nodes ...int) int {
	t.Helper()
	n := 0
	for _, i := range nodes {
		n += num(t, fields(infoAt(t, c.Node(i), "sets/"+ns+"/"+set)["sets/"+ns+"/"+set], ":"), "objects")
	}
	return n
}

func eventually(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, d)
		}
	}
}

func writeRecords(t *testing.T, cl *as.Client, set string, n int) {
	t.Helper()
	for i := range n {
		k, _ := as.NewKey(ns, set, fmt.Sprintf("user%d", i))
		if err := cl.Put(nil, k, as.BinMap{"field0": []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestClusterDiscoveryAndReplicas(t *testing.T) {
	c := startCluster(t, ClusterOptions{Nodes: 3, ReplicationFactor: 2})
	cl := newClient(t, c.Seed())
	if n := len(cl.GetNodes()); n != 3 {
		t.Fatalf("the client found %d nodes from the seed", n)
	}
	names := map[string]bool{}
	for _, n := range cl.GetNodes() {
		names[n.GetName()] = true
	}
	for i := range 3 {
		if !names[c.Node(i).NodeID()] {
			t.Errorf("node %d (%s) not among the client's %v", i, c.Node(i).NodeID(), names)
		}
	}
	// peers-clear-std: the other nodes, service_list.c's format.
	peers := infoAt(t, c.Node(0), "peers-clear-std")["peers-clear-std"]
	want := fmt.Sprintf(`^\d+,3000,\[\[%s,,\[%s\]\],\[%s,,\[%s\]\]\]$`,
		c.Node(1).NodeID(), regexp.QuoteMeta(c.Node(1).Addr()), c.Node(2).NodeID(), regexp.QuoteMeta(c.Node(2).Addr()))
	if !regexp.MustCompile(want).MatchString(peers) {
		t.Errorf("peers-clear-std %q, want %s", peers, want)
	}
	// replicas: every partition has master p%3 and prole (p+1)%3.
	owner := [2][partitions]int{}
	for k := range owner {
		for p := range owner[k] {
			owner[k][p] = -1
		}
	}
	for i := range 3 {
		v := infoAt(t, c.Node(i), "replicas")["replicas"]
		head, maps, _ := strings.Cut(v, ",")
		if head != ns+":0" {
			t.Fatalf("replicas %q", v)
		}
		cols := strings.Split(maps, ",")
		if cols[0] != "2" || len(cols) != 3 {
			t.Fatalf("replicas of node %d: %d columns: %q", i, len(cols)-1, v)
		}
		for k, col := range cols[1:] {
			bm, err := base64.StdEncoding.DecodeString(col)
			if err != nil || len(bm) != partitions/8 {
				t.Fatalf("bitmap %d: %v", k, err)
			}
			for p := range partitions {
				if bm[p>>3]&(0x80>>(p&7)) != 0 {
					if owner[k][p] >= 0 {
						t.Fatalf("partition %d replica %d on nodes %d and %d", p, k, owner[k][p], i)
					}
					owner[k][p] = i
				}
			}
		}
	}
	for p := range partitions {
		if owner[0][p] != p%3 || owner[1][p] != (p+1)%3 {
			t.Fatalf("partition %d: master %d prole %d", p, owner[0][p], owner[1][p])
		}
	}
	// The partition is the client's.
	k, _ := as.NewKey(ns, "usertable", "user1")
	var d [20]byte
	copy(d[:], k.Digest())
	if partitionOf(d) != k.PartitionId() {
		t.Fatalf("partition %d, the client's %d", partitionOf(d), k.PartitionId())
	}
}

func TestClusterCounts(t *testing.T) {
	c := startCluster(t, ClusterOptions{Nodes: 3, ReplicationFactor: 2})
	cl := newClient(t, c.Seed())
	writeRecords(t, cl, "usertable", 1000)
	all := []int{0, 1, 2}
	checks := []struct {
		name string
		got  int
		want int
	}{
		{"master_objects summed", sum(t, c, "master_objects", all...), 1000},
		{"prole_objects summed", sum(t, c, "prole_objects", all...), 1000},
		{"objects summed", sum(t, c, "objects", all...), 2000},
		{"client_write_success summed (the client writes to masters)", sum(t, c, "client_write_success", all...), 1000},
		{"client_proxy_complete summed", sum(t, c, "client_proxy_complete", all...), 0},
		{"effective_replication_factor", sum(t, c, "effective_replication_factor", 0), 2},
		{"replication-factor", sum(t, c, "replication-factor", 0), 2},
	}
	c.Put("foreign", "f1", map[string][]byte{"a": []byte("x")})
	c.Put("foreign", "f2", map[string][]byte{"a": []byte("y")})
	checks = append(checks, []struct {
		name string
		got  int
		want int
	}{
		{"set objects summed / effective RF", setSum(t, c, "usertable", all...) / 2, 1000},
		{"foreign set objects summed / effective RF", setSum(t, c, "foreign", all...) / 2, 2},
		{"master_objects with the foreign set", sum(t, c, "master_objects", all...), 1002},
		{"Records(usertable)", c.Records("usertable"), 1000},
		{"Records()", c.Records(""), 1002},
		{"Count summed", c.Node(0).Count() + c.Node(1).Count() + c.Node(2).Count(), 2004},
	}...)
	for _, tc := range checks {
		if tc.got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	sets := infoAt(t, c.Node(1), "sets/"+ns, "sets", "sets/"+ns+"/nope", "sets/nope", "namespace/nope")
	if !regexp.MustCompile(`^ns=ycsb:set=usertable:objects=\d+:tombstones=0:data_used_bytes=\d+:truncate_lut=0:.*truncating=false:.*;ns=ycsb:set=foreign:objects=\d+:.*;$`).MatchString(sets["sets/"+ns]) {
		t.Errorf("sets/ycsb: %q", sets["sets/"+ns])
	}
	for cmd, want := range map[string]string{"sets": sets["sets/"+ns], "sets/ycsb/nope": "", "sets/nope": "ns_type=unknown", "namespace/nope": "type=unknown"} {
		if sets[cmd] != want {
			t.Errorf("%s: %q, want %q", cmd, sets[cmd], want)
		}
	}
	// Reads go to masters too, and find what was written.
	for i := range 1000 {
		k, _ := as.NewKey(ns, "usertable", fmt.Sprintf("user%d", i))
		if _, err := cl.Get(nil, k); err != nil {
			t.Fatal(err)
		}
	}
	if got := sum(t, c, "client_read_success", all...); got != 1000 {
		t.Errorf("client_read_success summed: %d", got)
	}
}

func TestTruncateIsAsynchronous(t *testing.T) {
	const delay = 400 * time.Millisecond
	truncating := func(t *testing.T, c *Cluster, set string) bool {
		return fields(infoAt(t, c.Node(0), "sets/"+ns+"/"+set)["sets/"+ns+"/"+set], ":")["truncating"] == "true"
	}
	t.Run("set", func(t *testing.T) {
		c := startCluster(t, ClusterOptions{Nodes: 3, ReplicationFactor: 2, TruncateDelay: delay})
		cl := newClient(t, c.Seed())
		writeRecords(t, cl, "usertable", 100)
		c.Put("foreign", "f1", map[string][]byte{"a": []byte("x")})
		start := time.Now()
		if err := cl.Truncate(nil, ns, "usertable", nil); err != nil {
			t.Fatal(err)
		}
		props := fields(infoAt(t, c.Node(2), "sets/"+ns+"/usertable")["sets/"+ns+"/usertable"], ":")
		if time.Since(start) < delay/2 {
			if props["truncating"] != "true" || num(t, props, "truncate_lut") <= 0 {
				t.Errorf("while truncating: %v", props)
			}
			if n := setSum(t, c, "usertable", 0, 1, 2); n != 200 {
				t.Errorf("set objects while truncating: %d, want them still counted", n)
			}
			k, _ := as.NewKey(ns, "usertable", "user1")
			if _, err := cl.Get(nil, k); err == nil || !err.Matches(types.KEY_NOT_FOUND_ERROR) {
				t.Errorf("a read of a truncated record while truncating: %v", err)
			}
		}
		eventually(t, "truncation done", 5*time.Second, func() bool { return !truncating(t, c, "usertable") })
		if time.Since(start) < delay {
			t.Errorf("truncation done after %v", time.Since(start))
		}
		props = fields(infoAt(t, c.Node(2), "sets/"+ns+"/usertable")["sets/"+ns+"/usertable"], ":")
		if c.Records("usertable") != 0 || setSum(t, c, "usertable", 0, 1, 2) != 0 || num(t, props, "truncate_lut") <= 0 {
			t.Errorf("after: %d records, %v", c.Records("usertable"), props)
		}
		if c.Records("foreign") != 1 || setSum(t, c, "foreign", 0, 1, 2) != 2 {
			t.Errorf("the foreign set: %d records", c.Records("foreign"))
		}
	})
	t.Run("a write during the truncation survives it", func(t *testing.T) {
		c := startCluster(t, ClusterOptions{Nodes: 2, ReplicationFactor: 2, TruncateDelay: delay})
		cl := newClient(t, c.Seed())
		writeRecords(t, cl, "usertable", 10)
		if err := cl.Truncate(nil, ns, "usertable", nil); err != nil {
			t.Fatal(err)
		}
		k, _ := as.NewKey(ns, "usertable", "user3")
		create := as.NewWritePolicy(0, 0)
		create.RecordExistsAction = as.CREATE_ONLY
		if err := cl.Put(create, k, as.BinMap{"a": "new"}); err != nil {
			t.Fatalf("CREATE_ONLY over a truncated record: %v", err)
		}
		eventually(t, "truncation done", 5*time.Second, func() bool { return !truncating(t, c, "usertable") })
		if c.Records("usertable") != 1 {
			t.Fatalf("%d records", c.Records("usertable"))
		}
		if r, err := cl.Get(nil, k); err != nil || r.Bins["a"] != "new" {
			t.Fatalf("%v %v", r, err)
		}
	})
	t.Run("namespace", func(t *testing.T) {
		c := startCluster(t, ClusterOptions{Nodes: 2, ReplicationFactor: 2, TruncateDelay: delay})
		cl := newClient(t, c.Seed())
		writeRecords(t, cl, "usertable", 10)
		c.Put("foreign", "f1", nil)
		if err := cl.Truncate(nil, ns, "", nil); err != nil {
			t.Fatal(err)
		}
		st := fields(infoAt(t, c.Node(0), "namespace/"+ns)["namespace/"+ns], ";")
		if st["truncating"] != "true" || num(t, st, "truncate_lut") <= 0 || c.Records("") != 11 {
			t.Errorf("while truncating: truncating=%s truncate_lut=%s, %d records", st["truncating"], st["truncate_lut"], c.Records(""))
		}
		eventually(t, "namespace truncated", 5*time.Second, func() bool { return c.Records("") == 0 })
	})
	t.Run("no delay", func(t *testing.T) {
		s, err := Start(ns)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		cl := newClient(t, s.Addr())
		writeRecords(t, cl, "usertable", 10)
		if err := cl.Truncate(nil, ns, "usertable", nil); err != nil || s.Count() != 0 {
			t.Fatalf("%v, %d left", err, s.Count())
		}
	})
}

func TestRestartColdStart(t *testing.T) {
	const cold = time.Second
	c := startCluster(t, ClusterOptions{Nodes: 3, ReplicationFactor: 2})
	cl := newClient(t, c.Seed())
	writeRecords(t, cl, "usertable", 300)
	n1 := c.Node(1)
	key0 := infoAt(t, c.Node(0), "cluster-stable:size=3;ignore-migrations=false;namespace="+ns)
	restarted := make(chan error, 1)
	go func() { restarted <- n1.Restart(cold) }()

	eventually(t, "port refused", cold/2, func() bool {
		conn, err := net.DialTimeout("tcp", n1.Addr(), 100*time.Millisecond)
		if err == nil {
			conn.Close()
		}
		return errors.Is(err, syscall.ECONNREFUSED)
	})
	if n1.Connections() != 0 || n1.Ready() {
		t.Errorf("a stopped node: %d connections, ready %v", n1.Connections(), n1.Ready())
	}
	// The others are a 2-node cluster holding everything.
	m := infoAt(t, c.Node(0), "cluster-stable:size=3;ignore-migrations=false;namespace="+ns, "cluster-stable:namespace="+ns, "statistics")
	if got := m["cluster-stable:size=3;ignore-migrations=false;namespace="+ns]; got != "ERROR:7:cluster not specified size" {
		t.Errorf("cluster-stable size=3 with a node down: %q", got)
	}
	if got := m["cluster-stable:namespace="+ns]; got == key0["cluster-stable:size=3;ignore-migrations=false;namespace="+ns] || strings.HasPrefix(got, "ERROR") {
		t.Errorf("cluster-stable of the 2-node cluster: %q (3-node key %v)", got, key0)
	}
	if st := fields(m["statistics"], ";"); st["cluster_size"] != "2" {
		t.Errorf("cluster_size %s", st["cluster_size"])
	}
	if got := sum(t, c, "master_objects", 0, 2); got != 300 {
		t.Errorf("master_objects of the 2 live nodes: %d", got)
	}
	if got := sum(t, c, "prole_objects", 0, 2); got != 300 {
		t.Errorf("prole_objects of the 2 live nodes: %d", got)
	}
	eventually(t, "the client drops the node", 3*time.Second, func() bool { return len(cl.GetNodes()) == 2 })
	read := as.NewPolicy()
	read.MaxRetries, read.SleepBetweenRetries = 5, 50*time.Millisecond
	for i := range 300 {
		k, _ := as.NewKey(ns, "usertable", fmt.Sprintf("user%d", i))
		if _, err := cl.Get(read, k); err != nil {
			t.Fatalf("read with a node down: %v", err)
		}
	}

	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	// Warming: listening, but not in the cluster.
	m = infoAt(t, n1, "partition-generation", "cluster-stable:size=3;ignore-migrations=false;namespace="+ns, "statistics", "replicas", "namespace/"+ns, "peers-clear-std")
	if !n1.Ready() {
		st := fields(m["statistics"], ";")
		for _, tc := range []struct{ got, want string }{
			{m["partition-generation"], "-1"},
			{m["cluster-stable:size=3;ignore-migrations=false;namespace="+ns], "ERROR:7:unstable cluster"},
			{m["replicas"], ns + ":0,1," + base64.StdEncoding.EncodeToString(make([]byte, partitions/8))},
			{m["peers-clear-std"], "0,3000,[]"},
			{st["cluster_size"], "0"},
			{st["cluster_key"], "0"},
		} {
			if tc.got != tc.want {
				t.Errorf("warming: %q, want %q", tc.got, tc.want)
			}
		}
		if up := num(t, st, "uptime"); up > 2 {
			t.Errorf("uptime %d after a restart", up)
		}
		nsSt := fields(m["namespace/"+ns], ";")
		if num(t, nsSt, "master_objects") != 0 || num(t, nsSt, "unavailable_partitions") != partitions || num(t, nsSt, "objects") == 0 {
			t.Errorf("warming namespace: objects %s master %s unavailable %s", nsSt["objects"], nsSt["master_objects"], nsSt["unavailable_partitions"])
		}
		// AS_MSG: not yet.
		k, _ := as.NewKey(ns, "usertable", "user1")
		var d [20]byte
		copy(d[:], k.Digest())
		if code := rawCode(n1.message(rawMsg(ns, "usertable", d, info1Read|info1GetAll, 0, 0))); code != rcUnavailable {
			t.Errorf("a read on a warming node: %d", code)
		}
	} else {
		t.Log("warm-up over before it was checked: slow machine")
	}
	eventually(t, "node ready", 3*time.Second, n1.Ready)
	eventually(t, "the client has 3 nodes again", 3*time.Second, func() bool { return len(cl.GetNodes()) == 3 })
	keys := map[string]bool{}
	for i := range 3 {
		m := infoAt(t, c.Node(i), "cluster-stable:size=3;ignore-migrations=false;namespace="+ns, "partition-generation")
		keys[m["cluster-stable:size=3;ignore-migrations=false;namespace="+ns]] = true
		if g, _ := strconv.Atoi(m["partition-generation"]); g < 1 {
			t.Errorf("node %d partition-generation %d", i, g)
		}
	}
	if len(keys) != 1 || keys[""] {
		t.Errorf("cluster keys %v", keys)
	}
	for k := range keys {
		if strings.HasPrefix(k, "ERROR") {
			t.Errorf("cluster-stable: %s", k)
		}
	}
	if got := sum(t, c, "master_objects", 0, 1, 2); got != 300 {
		t.Errorf("master_objects after the restart: %d", got)
	}
}

func TestMigrationsMakeTheClusterUnstable(t *testing.T) {
	c := startCluster(t, ClusterOptions{Nodes: 2, ReplicationFactor: 2, MigrationDelay: 300 * time.Millisecond})
	start := time.Now()
	c.Node(1).Close()
	m := infoAt(t, c.Node(0), "cluster-stable:namespace="+ns, "cluster-stable:ignore-migrations=true", "statistics")
	if time.Since(start) < 200*time.Millisecond {
		if m["cluster-stable:namespace="+ns] != "ERROR:7:unstable cluster" || strings.HasPrefix(m["cluster-stable:ignore-migrations=true"], "ERROR") ||
			num(t, fields(m["statistics"], ";"), "migrate_partitions_remaining") == 0 {
			t.Errorf("migrating: %v", m)
		}
	}
	eventually(t, "migrations done", 2*time.Second, func() bool {
		return !strings.HasPrefix(infoAt(t, c.Node(0), "cluster-stable")["cluster-stable"], "ERROR")
	})
}

func TestInfoAnswers(t *testing.T) {
	c := startCluster(t, ClusterOptions{Nodes: 3, ReplicationFactor: 2, RecordSizeLimit: 4096})
	s := c.Node(0)
	hex := regexp.MustCompile(`^[0-9A-F]+$`)
	key := infoAt(t, s, "cluster-stable")["cluster-stable"]
	if !hex.MatchString(key) {
		t.Fatalf("cluster-stable %q", key)
	}
	tests := []struct{ cmd, want string }{
		{"cluster-stable:size=3;ignore-migrations=false;namespace=ycsb", key},
		{"cluster-stable:size=2", "ERROR:7:cluster not specified size"},
		{"cluster-stable:size=x", "ERROR:4:bad size"},
		{"cluster-stable:size=1000", "ERROR:4:'size' value too long"},
		{"cluster-stable:size=", "ERROR:4:missing 'size' value"},
		{"cluster-stable:ignore-migrations=maybe", "ERROR:4:bad ignore migrations"},
		{"cluster-stable:namespace=nope", "ERROR:20:namespace not found on node"},
		{"cluster-stable:ignore-migrations=true;namespace=nope", key},
		{"node", s.NodeID()},
		{"build", Build},
		{"edition", "Aerospike Community Edition"},
		{"version", "Aerospike Community Edition build " + Build},
		{"namespaces", ns},
		{"namespace/nope", "type=unknown"},
		{"service-clear-std", s.Addr()},
		{"get-config:context=namespace;id=nope", "ERROR:20:namespace not found on node"},
		{"get-config:context=namespace", "ERROR:20:missing 'namespace'"},
		{"get-config:context=bogus", "ERROR:4:invalid context"},
		{"get-config:context=namespace;id=ycsb", "conflict-resolution-policy=generation;default-ttl=0;max-record-size=4096;replication-factor=2;strong-consistency=false;storage-engine=device"},
		{"truncate:namespace=ycsb", "ERROR:4:missing 'set'"},
		{"truncate:set=x", "ERROR:20:missing 'namespace'"},
		{"truncate-namespace:namespace=ycsb;set=x", "ERROR:4:unexpected set name"},
		{"truncate:namespace=ycsb;set=x;lut=1", "ERROR:4:would truncate to 0"},
		{"truncate:namespace=ycsb;set=x;lut=" + strconv.FormatInt(time.Now().Add(time.Hour).UnixNano(), 10), "ERROR:4:would truncate in the future"},
		{"truncate:namespace=ycsb;set=never-written", "ok"},
		{"rack-ids", "ERROR:25:enterprise only"},
		{"peers-tls-std", "ERROR:25:enterprise only"},
		{"no-such-command", "ERROR:4:unrecognized command"},
		{"sindex-list", "ERROR::unsupported by the cmpbench test server"},
	}
	for _, tc := range tests {
		if got := infoAt(t, s, tc.cmd)[tc.cmd]; got != tc.want {
			t.Errorf("%s: %q, want %q", tc.cmd, got, tc.want)
		}
	}
	st := fields(infoAt(t, s, "statistics")["statistics"], ";")
	for k, want := range map[string]string{"cluster_size": "3", "cluster_key": key, "cluster_integrity": "true", "migrate_partitions_remaining": "0"} {
		if st[k] != want {
			t.Errorf("statistics %s=%q, want %q", k, st[k], want)
		}
	}
	nsSt := fields(infoAt(t, s, "namespace/"+ns)["namespace/"+ns], ";")
	for _, k := range append([]string{"ns_cluster_size", "effective_replication_factor", "stop_writes", "truncate_lut", "truncating", "replication-factor", "storage-engine"}, counterNames...) {
		if _, ok := nsSt[k]; !ok {
			t.Errorf("namespace/%s has no %s", ns, k)
		}
	}
}

func TestInjectedResultCodes(t *testing.T) {
	s, err := Start(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cl := newClient(t, s.Addr())
	k, _ := as.NewKey(ns, "usertable", "user1")
	if err := cl.Put(nil, k, as.BinMap{"a": 1}); err != nil {
		t.Fatal(err)
	}
	read := as.NewPolicy()
	read.MaxRetries = 0
	write := as.NewWritePolicy(0, 0)
	write.MaxRetries = 0
	tests := []struct {
		kind     string
		code     types.ResultCode
		counters []string
	}{
		{"write", types.TIMEOUT, []string{"client_write_timeout"}},
		{"write", types.KEY_BUSY, []string{"client_write_error", "fail_key_busy"}},
		{"write", types.DEVICE_OVERLOAD, []string{"client_write_error"}},
		{"write", types.FAIL_FORBIDDEN, []string{"client_write_error"}},
		{"write", types.SERVER_MEM_ERROR, []string{"client_write_error"}},
		{"read", types.TIMEOUT, []string{"client_read_timeout"}},
		{"read", types.KEY_BUSY, []string{"client_read_error", "fail_key_busy"}},
		{"read", types.DEVICE_OVERLOAD, []string{"client_read_error"}},
		{"delete", types.FAIL_FORBIDDEN, []string{"client_delete_error"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s %d", tc.kind, tc.code), func(t *testing.T) {
			before := fields(infoAt(t, s, "namespace/"+ns)["namespace/"+ns], ";")
			s.Inject(tc.kind, int(tc.code), 1)
			var err as.Error
			switch tc.kind {
			case "write":
				err = cl.Put(write, k, as.BinMap{"a": 2})
			case "read":
				_, err = cl.Get(read, k)
			case "delete":
				_, err = cl.Delete(write, k)
			}
			if err == nil || !err.Matches(tc.code) {
				t.Fatalf("got %v, want result code %d", err, tc.code)
			}
			after := fields(infoAt(t, s, "namespace/"+ns)["namespace/"+ns], ";")
			for _, ctr := range tc.counters {
				if num(t, after, ctr) != num(t, before, ctr)+1 {
					t.Errorf("%s: %s -> %s", ctr, before[ctr], after[ctr])
				}
			}
			// Only the next command fails.
			if _, err := cl.Get(read, k); err != nil {
				t.Fatalf("the command after: %v", err)
			}
		})
	}
}

// rawMsg encodes an AS_MSG of the client's layout (command.go), for what the
// client will not send.
func rawMsg(namespace, set string, digest [20]byte, info1, info2, info3 byte, ops ...op) []byte {
	b := make([]byte, headerSize)
	b[0], b[1], b[2], b[3] = headerSize, info1, info2, info3
	field := func(typ byte, data []byte) {
		b = binary.BigEndian.AppendUint32(b, uint32(1+len(data)))
		b = append(b, typ)
		b = append(b, data...)
	}
	field(fieldNamespace, []byte(namespace))
	field(fieldSet, []byte(set))
	field(fieldDigest, digest[:])
	binary.BigEndian.PutUint16(b[18:], 3)
	binary.BigEndian.PutUint16(b[20:], uint16(len(ops)))
	for _, o := range ops {
		b = binary.BigEndian.AppendUint32(b, uint32(4+len(o.name)+len(o.value)))
		b = append(b, o.kind, o.particle, 0, byte(len(o.name)))
		b = append(b, o.name...)
		b = append(b, o.value...)
	}
	return b
}

func rawCode(reply []byte) byte { return reply[5] }

func TestRecordLimits(t *testing.T) {
	c := startCluster(t, ClusterOptions{RecordSizeLimit: 1000})
	s := c.Node(0)
	cl := newClient(t, s.Addr())
	k, _ := as.NewKey(ns, "usertable", "user1")
	write := as.NewWritePolicy(0, 0)
	write.MaxRetries = 0
	// 35 + 1+9 (set) + 1 (bin count) + 1+1 (bin name) + 5+v (blob) + 4 (end mark)
	if err := cl.Put(write, k, as.BinMap{"a": make([]byte, 1000-57)}); err != nil {
		t.Fatalf("a record of exactly max-record-size: %v", err)
	}
	err := cl.Put(write, k, as.BinMap{"a": make([]byte, 1000-56)})
	if err == nil || !err.Matches(types.RECORD_TOO_BIG) {
		t.Fatalf("a record a byte too big: %v", err)
	}
	st := fields(infoAt(t, s, "namespace/"+ns)["namespace/"+ns], ";")
	if st["fail_record_too_big"] != "1" || st["client_write_error"] != "1" {
		t.Errorf("fail_record_too_big=%s client_write_error=%s", st["fail_record_too_big"], st["client_write_error"])
	}
	// An update that makes the record too big fails too.
	if err := cl.Put(write, k, as.BinMap{"b": []byte("x")}); err == nil || !err.Matches(types.RECORD_TOO_BIG) {
		t.Fatalf("an update over the limit: %v", err)
	}

	// The client refuses bin names over 15 bytes itself; the server would answer
	// BIN_NAME_TOO_LONG.
	writes := s.Requests("write")
	if err := cl.Put(write, k, as.BinMap{"sixteen-bytes-xx": 1}); err == nil || !err.Matches(types.BIN_NAME_TOO_LONG) {
		t.Fatalf("client: %v", err)
	}
	if s.Requests("write") != writes {
		t.Fatal("the client sent a bin name over 15 bytes")
	}
	var d [20]byte
	copy(d[:], k.Digest())
	for _, tc := range []struct {
		name string
		code byte
	}{{"fifteen-bytes-x", rcOK}, {"sixteen-bytes-xx", rcBinName}} {
		w := rawMsg(ns, "usertable", d, 0, info2Write, info3Replace, op{kind: opWrite, particle: particleBlob, name: tc.name, value: []byte("v")})
		if code := rawCode(s.message(w)); code != tc.code {
			t.Errorf("write of bin %q: %d, want %d", tc.name, code, tc.code)
		}
		r := rawMsg(ns, "usertable", d, info1Read, 0, 0, op{kind: opRead, name: tc.name})
		if code := rawCode(s.message(r)); code != tc.code {
			t.Errorf("read of bin %q: %d, want %d", tc.name, code, tc.code)
		}
	}
	if code := rawCode(s.message(rawMsg("nope", "usertable", d, info1Read|info1GetAll, 0, 0))); code != rcNamespace {
		t.Errorf("unknown namespace: %d", code)
	}
}

func TestProxiedCommandsCount(t *testing.T) {
	c := startCluster(t, ClusterOptions{Nodes: 3, ReplicationFactor: 2})
	k, _ := as.NewKey(ns, "usertable", "user1")
	var d [20]byte
	copy(d[:], k.Digest())
	master := k.PartitionId() % 3
	other := c.Node((master + 1) % 3)
	w := rawMsg(ns, "usertable", d, 0, info2Write, 0, op{kind: opWrite, particle: particleBlob, name: "a", value: []byte("v")})
	if code := rawCode(other.message(w)); code != rcOK {
		t.Fatalf("write on a non-master: %d", code)
	}
	if n := sum(t, c, "client_proxy_complete", other.idx); n != 1 {
		t.Errorf("client_proxy_complete on the receiving node: %d", n)
	}
	if n := sum(t, c, "from_proxy_write_success", master); n != 1 {
		t.Errorf("from_proxy_write_success on the master: %d", n)
	}
	if n := sum(t, c, "master_objects", master); n != 1 {
		t.Errorf("master_objects on the master: %d", n)
	}
}

func TestStallAndConnections(t *testing.T) {
	c := startCluster(t, ClusterOptions{Nodes: 2, ReplicationFactor: 2})
	s := c.Node(0)
	idle := s.Connections()
	host, port := splitAddr(t, s.Addr())
	conn, err := as.NewConnection(as.NewClientPolicy(), as.NewHost(host, port))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "a new connection counted", time.Second, func() bool { return s.Connections() == idle+1 })
	st, err := conn.RequestInfo("statistics")
	if err != nil {
		t.Fatal(err)
	}
	if got := fields(st["statistics"], ";")["client_connections"]; got != strconv.Itoa(idle+1) {
		t.Errorf("client_connections %s, Connections %d", got, idle+1)
	}
	conn.Close()
	eventually(t, "a closed connection uncounted", time.Second, func() bool { return s.Connections() == idle })

	cl := newClient(t, c.Seed())
	if s.Connections() == 0 || c.Node(1).Connections() == 0 {
		t.Errorf("a client's connections: %d %d", s.Connections(), c.Node(1).Connections())
	}
	k, _ := as.NewKey(ns, "usertable", "user1")
	if err := cl.Put(nil, k, as.BinMap{"a": 1}); err != nil {
		t.Fatal(err)
	}
	const d = 300 * time.Millisecond
	for i := range 2 {
		c.Node(i).Stall(d)
	}
	read := as.NewPolicy()
	read.TotalTimeout, read.SocketTimeout, read.MaxRetries = 3*time.Second, 3*time.Second, 0
	start := time.Now()
	if _, err := cl.Get(read, k); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < d {
		t.Errorf("a stalled read took %v", took)
	}
	for i := range 2 {
		c.Node(i).Stall(0)
	}
	start = time.Now()
	if _, err := cl.Get(read, k); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= d {
		t.Errorf("a read after the stall took %v", took)
	}
	cl.Close()
	eventually(t, "the client's connections closed", 2*time.Second, func() bool { return s.Connections() == 0 && c.Node(1).Connections() == 0 })
}
