package astest

import (
	"encoding/base64"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ClusterName is the cluster-name the nodes are configured with.
const ClusterName = "cmpbench-test"

// features is the server's (deprecated) features answer, base/thr_info.c
// cmd_features, without build-specific additions.
const features = "batch-any;batch-index;blob-bits;cdt-index;cdt-list;cdt-map;cluster-stable;float;geo;" +
	"sindex-exists;peers;pipelining;pquery;pscans;query-show;relaxed-sc;replicas;replicas-all;" +
	"replicas-master;replicas-max;truncate-namespace;udf"

// defaultPort is the service port the server strips from peer addresses
// (fabric/service_list.c DEFAULT_PORT).
const defaultPort = 3000

// clepochMs is the Citrusleaf epoch, 2010-01-01 UTC, in Unix milliseconds: the
// server's last-update times and truncate_lut count from it.
const clepochMs = 1262304000_000

// The info commands of the server's command table (base/thr_info.c SPECS): a name
// astest does not emulate answers "unsupported"; a name not in the table
// "unrecognized command", as the server does. Those marked ee_only answer
// "enterprise only" on Community Edition.
var (
	realCommands = words(`features node compatibility-id edition build_ee_sha build_sha build_arch
		build_time build_os build version statistics services-alumni services partition-generation
		admin-clear-std admin-tls-std alumni-clear-alt alumni-clear-std alumni-tls-alt alumni-tls-std
		best-practices cluster-name cluster-stable config-get config-set connection debug-record
		debug-record-meta digests dump-cluster dump-fabric dump-hb dump-hlc dump-migrates dump-rw
		dump-skew dump-wb-summary endpoints eviction-reset feature-key get-config get-sl get-stats
		health-outliers health-stats help histogram index-pressure jem-stats latencies log
		log-message log-set logs masking masking-show mcast mesh name namespace namespaces objects
		partition-info partitions peers-clear-alt peers-clear-std peers-generation peers-tls-alt
		peers-tls-std physical-devices query-abort query-abort-all query-show quiesce quiesce-undo
		rack-ids racks rebalance-generation recluster release replicas replicas-all replicas-master
		revive roster roster-set service service-clear-alt service-clear-std service-tls-alt
		service-tls-std services-alternate services-alumni-reset set-config set-log sets sindex
		sindex-create sindex-delete sindex-exists sindex-list sindex-stat smd-info smd-show status
		thread-traces tip tip-clear truncate truncate-namespace truncate-namespace-undo truncate-undo
		udf-clear-cache udf-get udf-list udf-put udf-remove user-agent-set user-agents xdr-dc-state
		xdr-get-filter xdr-set-filter`)
	enterpriseOnly = words(`alumni-tls-alt alumni-tls-std feature-key masking masking-show
		peers-tls-alt peers-tls-std quiesce quiesce-undo rack-ids racks revive roster roster-set
		service-tls-alt service-tls-std xdr-dc-state xdr-get-filter xdr-set-filter`)
)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// info answers "command\tvalue\n" for each command, echoing the command as sent.
func (s *Server) info(body []byte) []byte {
	var b strings.Builder
	for _, cmd := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
		if cmd == "" {
			continue
		}
		b.WriteString(cmd + "\t" + s.infoValue(cmd) + "\n")
	}
	return []byte(b.String())
}

func infoError(code int, msg string) string {
	if code == 1 { // AS_ERR_UNKNOWN prints no number
		return "ERROR::" + msg
	}
	return fmt.Sprintf("ERROR:%d:%s", code, msg)
}

// splitCommand splits "name/arg:k=v;k=v" as base/thr_info.c parse_cmd: the name
// ends at the first '/', ':' or ';'.
func splitCommand(cmd string) (name, params string) {
	if i := strings.IndexAny(cmd, "/:;"); i >= 0 {
		return cmd[:i], cmd[i+1:]
	}
	return cmd, ""
}

// param is base/thr_info.c as_info_parameter_get: the value of the first
// name=value pair among ';'-separated pairs.
func param(params, name string) (string, bool) {
	for _, kv := range strings.Split(params, ";") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// optionalParam is as_info_optional_param_is_ok: found and non-empty and shorter
// than the server's buffer (max bytes with the NUL), or an error answer.
func optionalParam(params, name string, max int) (v string, found bool, errAnswer string) {
	v, found = param(params, name)
	if !found {
		return "", false, ""
	}
	code := rcParameter
	if name == "namespace" {
		code = rcNamespace
	}
	switch {
	case v == "":
		return "", true, infoError(code, "missing '"+name+"' value")
	case len(v) >= max:
		return "", true, infoError(code, "'"+name+"' value too long")
	}
	return v, true, ""
}

// requiredParam is as_info_required_param_is_ok.
func requiredParam(params, name string, max int) (string, string) {
	v, found, e := optionalParam(params, name, max)
	if e != "" {
		return "", e
	}
	if !found {
		code := rcParameter
		if name == "namespace" {
			code = rcNamespace
		}
		return "", infoError(code, "missing '"+name+"'")
	}
	return v, ""
}

// kv builds the server's "k=v;k=v" answers.
type kv struct{ strings.Builder }

func (b *kv) add(k string, v any) {
	switch x := v.(type) {
	case bool:
		if x {
			v = "true"
		} else {
			v = "false"
		}
	}
	fmt.Fprintf(&b.Builder, "%s=%v;", k, v)
}

// chomped is the answer without its last separator (cf_dyn_buf_chomp).
func (b *kv) chomped() string { return strings.TrimSuffix(b.String(), ";") }

func (s *Server) infoValue(cmd string) string {
	name, params := splitCommand(cmd)
	if enterpriseOnly[name] {
		return infoError(rcEnterprise, "enterprise only")
	}
	c := s.c
	conns := s.Connections()
	c.mu.Lock()
	defer c.mu.Unlock()
	ready := s.state == stateReady
	ns := s.Namespace
	switch name {
	case "node", "name":
		return fmt.Sprintf("%X", s.id)
	case "build":
		return Build
	case "edition":
		return Edition
	case "version":
		return Edition + " build " + Build
	case "release":
		arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
		return "edition=" + Edition + ";version=" + Build + ";os=linux;arch=" + arch + ";sha=cmpbench-astest"
	case "cluster-name":
		return ClusterName
	case "features":
		return features
	case "status":
		return "ok"
	case "partition-generation":
		return strconv.FormatInt(s.partGen, 10)
	case "rebalance-generation":
		if !ready {
			return "0"
		}
		return strconv.FormatUint(c.gen, 10)
	case "peers-generation":
		return strconv.FormatUint(s.peersGen, 10)
	case "peers-clear-std", "peers-clear-alt":
		return c.peers(s, params)
	case "service-clear-std", "service-clear-alt", "service":
		return s.addr
	case "services", "services-alternate":
		var l []string
		if ready {
			for _, i := range c.live() {
				if i != s.idx {
					l = append(l, c.nodes[i].addr)
				}
			}
		}
		return strings.Join(l, ";")
	case "replicas":
		return c.replicasInfo(s, params)
	case "namespaces":
		return ns
	case "namespace":
		if params != ns {
			return "type=unknown" // base/thr_info.c cmd_namespace: "clients won't handle error"
		}
		return strings.TrimSuffix(c.namespaceInfo(s)+c.namespaceConfig(), ";")
	case "sets":
		return c.setsInfo(s, params)
	case "statistics":
		return c.statistics(s, conns)
	case "get-config", "config-get":
		return c.getConfig(s, params)
	case "cluster-stable":
		return c.clusterStable(s, params)
	case "truncate", "truncate-namespace":
		return c.truncateCmd(name == "truncate-namespace", params)
	case "truncate-undo", "truncate-namespace-undo":
		return c.truncateUndo(name == "truncate-namespace-undo", params)
	}
	if realCommands[name] {
		return infoError(1, "unsupported by the cmpbench test server")
	}
	return infoError(rcParameter, "unrecognized command")
}

// peers is the peers-clear-* answer (fabric/service_list.c build_peers):
// "<peers-generation>,3000,[[<node-id>,<tls-name>,[<addr:port>,...]],...]" listing
// the other nodes in the cluster; an address on port 3000 drops ":3000". With
// "generation=<g>" only peers that changed since <g> are listed; astest lists all
// of them unless <g> is current. The -alt variants answer as if
// alternate-access-address were configured to the same address.
func (c *Cluster) peers(s *Server, params string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d,%d,[", s.peersGen, defaultPort)
	since, delta := strings.CutPrefix(params, "generation=")
	if g, err := strconv.ParseUint(since, 10, 64); s.state == stateReady && !(delta && err == nil && g >= s.peersGen) {
		n := 0
		for _, i := range c.live() {
			if i == s.idx {
				continue
			}
			p := c.nodes[i]
			if n > 0 {
				b.WriteByte(',')
			}
			addr := strings.TrimSuffix(p.addr, fmt.Sprintf(":%d", defaultPort))
			fmt.Fprintf(&b, "[%X,,[%s]]", p.id, addr)
			n++
		}
	}
	b.WriteByte(']')
	return b.String()
}

// replicasInfo is the replicas answer (fabric/partition.c
// as_partition_get_replicas_all_str with the regime, as the client's
// partition_parser.go reads it): "<ns>:<regime>,<n>,<bitmap 0>,...,<bitmap n-1>",
// n the effective replication factor, bitmap k the base64 of 4096 bits, partition p
// at bit 0x80>>(p%8) of byte p/8, set where this node is replica k (0 master). A
// node not yet in the cluster reports one column and owns nothing. The regime is
// 0: it moves only in strong-consistency namespaces. max=<m> caps the columns.
func (c *Cluster) replicasInfo(s *Server, params string) string {
	n := 1
	if s.state == stateReady && c.effRF > 0 {
		n = c.effRF
	}
	if v, found, e := optionalParam(params, "max", 4); e != "" {
		return e
	} else if found {
		m, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return infoError(rcParameter, "bad max")
		}
		if m != 0 && int(m) < n {
			n = int(m)
		}
	}
	var b strings.Builder
	b.WriteString(s.Namespace + ":0," + strconv.Itoa(n))
	for k := range n {
		bitmap := make([]byte, partitions/8)
		if s.state == stateReady {
			for p := range partitions {
				if c.role(s.idx, p) == k {
					bitmap[p>>3] |= 0x80 >> (p & 7)
				}
			}
		}
		b.WriteString("," + base64.StdEncoding.EncodeToString(bitmap))
	}
	return b.String()
}

// nodeObjects is what node s reports holding: its master and prole objects and
// its device bytes; a node restarting reports what it loaded from its device at
// the restart, as neither master nor prole.
func (c *Cluster) nodeObjects(s *Server, si *setInfo) (master, prole, nonReplica int, bytes int64) {
	if s.state != stateReady {
		if si == nil {
			return 0, 0, s.cold.objects, s.cold.bytes
		}
		return 0, 0, s.cold.setObjects[si.name], s.cold.setBytes[si.name]
	}
	master, prole, bytes = c.nodeCounts(s.idx, si)
	return master, prole, 0, bytes
}

// namespaceInfo is the statistics part of namespace/<ns> (base/thr_info.c
// info_get_namespace_info), the fields astest can give meaning to, in the server's
// order and names.
func (c *Cluster) namespaceInfo(s *Server) string {
	ready := s.state == stateReady
	var b kv
	size, eff, unavailable := 0, 0, partitions
	if ready {
		size, eff, unavailable = len(c.live()), c.effRF, 0
	}
	master, prole, nonReplica, bytes := c.nodeObjects(s, nil)
	objects := master + prole + nonReplica
	b.add("ns_cluster_size", size)
	b.add("effective_replication_factor", eff)
	b.add("objects", objects)
	b.add("tombstones", 0)
	b.add("master_objects", master)
	b.add("master_tombstones", 0)
	b.add("prole_objects", prole)
	b.add("prole_tombstones", 0)
	b.add("non_replica_objects", nonReplica)
	b.add("non_replica_tombstones", 0)
	b.add("unreplicated_records", 0)
	b.add("dead_partitions", 0)
	b.add("unavailable_partitions", unavailable)
	b.add("clock_skew_stop_writes", false)
	b.add("stop_writes", false)
	b.add("hwm_breached", false)
	b.add("truncate_lut", lutMs(c.nsTrunc))
	b.add("truncating", c.nsTrunct)
	b.add("index_used_bytes", objects*64) // sizeof(as_index)
	b.add("set_index_used_bytes", 0)
	b.add("sindex_used_bytes", 0)
	b.add("data_used_bytes", bytes)
	tx, rx := c.migrating(s.idx)
	b.add("migrate_tx_partitions_remaining", tx)
	b.add("migrate_rx_partitions_remaining", rx)
	ctr := s.ctr.Load()
	for _, n := range counterNames {
		b.add(n, ctr.get(n))
	}
	return b.String()
}

// namespaceConfig is the namespace's configuration (base/cfg_info.c
// cfg_get_namespace), the fields astest emulates, in the server's order, with the
// trailing ';'.
func (c *Cluster) namespaceConfig() string {
	var b kv
	b.add("conflict-resolution-policy", "generation")
	b.add("default-ttl", 0)
	b.add("max-record-size", c.opt.RecordSizeLimit)
	b.add("replication-factor", c.opt.ReplicationFactor)
	b.add("strong-consistency", false)
	b.add("storage-engine", "device")
	return b.String()
}

// lutMs is a truncate time as the server reports it: milliseconds since the
// Citrusleaf epoch, 0 for none.
func lutMs(unixNs int64) int64 {
	if unixNs == 0 {
		return 0
	}
	return unixNs/1e6 - clepochMs
}

// setsInfo is the sets answer (base/thr_info.c cmd_sets, base/namespace.c
// as_namespace_get_set_info and append_set_props): "sets" and "sets/<ns>" list
// "ns=<ns>:set=<set>:<props>;" for every set the namespace has seen (a set stays
// listed, with objects=0, once emptied), "sets/<ns>/<set>" gives "<props>;" or ""
// for an unknown set, an unknown namespace "ns_type=unknown". A set's objects are
// the node's: every record of it this node holds, master or prole
// (namespace.c as_namespace_set_set_w_len counts each record in the node's index),
// so summed over the nodes they are the set's records times the effective
// replication factor. During a truncation the set reports truncating=true and
// truncate_lut (ms since 2010-01-01) and its records still count; truncate_lut
// stays after it is done.
func (c *Cluster) setsInfo(s *Server, params string) string {
	nsName, setName, hasSet := strings.Cut(params, "/")
	if params != "" && nsName != s.Namespace {
		return "ns_type=unknown"
	}
	if hasSet {
		si := c.sets[setName]
		if si == nil || setName == "" {
			return ""
		}
		return c.setProps(s, si)
	}
	var b strings.Builder
	for _, si := range c.setList {
		b.WriteString("ns=" + s.Namespace + ":set=" + si.name + ":" + c.setProps(s, si))
	}
	return b.String()
}

func (c *Cluster) setProps(s *Server, si *setInfo) string {
	master, prole, nonReplica, bytes := c.nodeObjects(s, si)
	return fmt.Sprintf("objects=%d:tombstones=0:data_used_bytes=%d:truncate_lut=%d:sindexes=0:index_populating=false:"+
		"truncating=%t:default-read-touch-ttl-pct=0:default-ttl=0:disable-eviction=false:enable-index=false:"+
		"stop-writes-count=0:stop-writes-size=0;",
		master+prole+nonReplica, bytes, lutMs(si.trunc), si.truncing)
}

// statistics is the node's statistics (base/thr_info.c cmd_statistics,
// fabric/exchange.c as_exchange_cluster_info), the fields astest can give meaning
// to, in the server's order. A node not in the cluster is an orphan: size 0, key 0.
func (c *Cluster) statistics(s *Server, conns int) string {
	ready := s.state == stateReady
	var b kv
	b.add("failed_best_practices", false)
	size, key, gen, principal := 0, uint64(0), uint64(0), uint64(0)
	if ready {
		for _, i := range c.live() {
			principal = max(principal, c.nodes[i].id)
		}
		size, key, gen = len(c.live()), c.key, c.gen
	}
	b.add("cluster_size", size)
	b.add("cluster_key", fmt.Sprintf("%X", key))
	b.add("cluster_generation", gen)
	b.add("cluster_principal", fmt.Sprintf("%X", principal))
	b.add("cluster_integrity", ready)
	b.add("cluster_is_member", ready)
	b.add("uptime", int64(time.Since(s.started)/time.Second))
	master, prole, nonReplica, _ := c.nodeObjects(s, nil)
	b.add("objects", master+prole+nonReplica)
	b.add("tombstones", 0)
	b.add("client_connections", conns)
	b.add("client_connections_opened", s.connsOpened.Load())
	b.add("client_connections_closed", s.connsClosed.Load())
	b.add("migrate_allowed", ready)
	tx, rx := c.migrating(s.idx)
	b.add("migrate_partitions_remaining", tx+rx)
	return b.chomped()
}

// getConfig is get-config (base/cfg_info.c as_cfg_info_cmd_get_config):
// context=service, context=namespace;id=<ns> (or namespace=<ns>), or, without
// parameters, the service's.
func (c *Cluster) getConfig(s *Server, params string) string {
	service := func() string {
		var b kv
		b.add("cluster-name", ClusterName)
		b.add("node-id", fmt.Sprintf("%X", s.id))
		b.add("proto-fd-max", 15000)
		b.add("service-threads", runtime.NumCPU()*5) // the default with a device namespace
		b.add("transaction-max-ms", 1000)
		return b.chomped()
	}
	if params == "" {
		return service()
	}
	ctx, e := requiredParam(params, "context", 1024)
	if e != "" {
		return e
	}
	switch ctx {
	case "service":
		return service()
	case "namespace":
		id, found, e := optionalParam(params, "namespace", 32)
		if !found {
			id, found, e = optionalParam(params, "id", 32)
		}
		switch {
		case e != "":
			return e
		case !found:
			return infoError(rcNamespace, "missing 'namespace'")
		case id != s.Namespace:
			return infoError(rcNamespace, "namespace not found on node")
		}
		return strings.TrimSuffix(c.namespaceConfig(), ";")
	case "network", "security", "xdr":
		return infoError(1, "unsupported by the cmpbench test server")
	}
	return infoError(rcParameter, "invalid context")
}

// clusterStable is cluster-stable:[size=<n>];[ignore-migrations=<bool>];[namespace=<ns>]
// (base/thr_info.c cmd_cluster_stable): the cluster key in hex, or
// "ERROR:7:unstable cluster" on a node not in the cluster or, unless migrations
// are ignored, with migrations pending, "ERROR:7:cluster not specified size" when
// the cluster this node is in has another size, "ERROR:4:bad size",
// "ERROR:4:bad ignore migrations", "ERROR:20:namespace not found on node". A node
// that left makes the others a smaller cluster, stable once migrated: only size=
// tells it.
func (c *Cluster) clusterStable(s *Server, params string) string {
	if s.state != stateReady {
		return infoError(rcClusterKey, "unstable cluster")
	}
	if v, found, e := optionalParam(params, "size", 4); e != "" {
		return e
	} else if found {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return infoError(rcParameter, "bad size")
		}
		if int(n) != len(c.live()) {
			return infoError(rcClusterKey, "cluster not specified size")
		}
	}
	ignore := false
	if v, found, e := optionalParam(params, "ignore-migrations", 6); e != "" {
		return e
	} else if found {
		switch v {
		case "true":
			ignore = true
		case "false":
		default:
			return infoError(rcParameter, "bad ignore migrations")
		}
	}
	if !ignore {
		if v, found, e := optionalParam(params, "namespace", 32); e != "" {
			return e
		} else if found && v != s.Namespace {
			return infoError(rcNamespace, "namespace not found on node")
		}
		if tx, rx := c.migrating(s.idx); tx+rx > 0 {
			return infoError(rcClusterKey, "unstable cluster")
		}
	}
	return fmt.Sprintf("%X", c.key)
}

// truncateCmd is truncate:namespace=<ns>;set=<set>[;lut=<ns since 1970>] and
// truncate-namespace:namespace=<ns>[;lut=...] (base/thr_info.c cmd_truncate,
// base/truncate.c as_truncate_cmd): "ok", then the truncation runs in the
// background (ClusterOptions.TruncateDelay) on every node.
func (c *Cluster) truncateCmd(wholeNS bool, params string) string {
	ns, set, e := truncateTarget(wholeNS, params)
	if e != "" {
		return e
	}
	lut := time.Now().UnixNano()
	if v, found, e := optionalParam(params, "lut", 24); e != "" {
		return e
	} else if found {
		u, _ := strconv.ParseUint(v, 0, 64) // strtoul(lut, NULL, 0)
		switch {
		case int64(u/1e6)-clepochMs <= 0:
			return infoError(rcParameter, "would truncate to 0")
		case int64(u) > lut:
			return infoError(rcParameter, "would truncate in the future")
		}
		lut = int64(u)
	}
	if ns == c.ns { // the server's SMD accepts it and every node ignores an unknown namespace
		c.truncate(set, wholeNS, lut)
	}
	return "ok"
}

// truncateTarget reads the namespace and, unless wholeNS, the set a truncate
// command or its undo names; e is the error reply, "" when they are well formed.
func truncateTarget(wholeNS bool, params string) (ns, set, e string) {
	if ns, e = requiredParam(params, "namespace", 32); e != "" {
		return "", "", e
	}
	if wholeNS {
		if _, found := param(params, "set"); found {
			return "", "", infoError(rcParameter, "unexpected set name")
		}
		return ns, "", ""
	}
	if set, e = requiredParam(params, "set", 64); e != "" {
		return "", "", e
	}
	return ns, set, ""
}

// truncateUndo is truncate-undo and truncate-namespace-undo: the truncate time
// goes back to 0 (records already removed stay removed).
func (c *Cluster) truncateUndo(wholeNS bool, params string) string {
	ns, set, e := truncateTarget(wholeNS, params)
	if e != "" {
		return e
	}
	if ns != c.ns {
		return "ok"
	}
	if wholeNS {
		c.nsTrunc, c.nsTrunct = 0, false
	} else if si := c.sets[set]; si != nil {
		si.trunc, si.truncing = 0, false
	}
	return "ok"
}
