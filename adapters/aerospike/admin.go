package aerospike

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/cmpbench/cmpbench/core"
)

// What the adapter asks every node outside the measured path: capture, stats, key
// counts, truncation and readiness. Every fact that is per node on a real server
// (objects, connections, counters) is read from every node the client knows and
// summed or compared, never taken from one node.

// node is one node's answers to info commands.
type node struct {
	addr string // host:port, the suffix of its stats keys in a cluster
	m    map[string]string
}

// infoAll asks every node of the cluster, in address order.
func (t *target) infoAll(names ...string) ([]node, error) {
	nodes := t.client.GetNodes()
	if len(nodes) == 0 {
		return nil, errors.New("no node in the cluster")
	}
	p := as.NewInfoPolicy()
	p.Timeout = t.timeout
	out := make([]node, 0, len(nodes))
	for _, n := range nodes {
		m, err := n.RequestInfo(p, names...)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.GetHost(), err)
		}
		out = append(out, node{addr: n.GetHost().String(), m: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out, nil
}

// suffix is what a node's stats keys carry: nothing for a single node (as in
// archives of single-node runs), "@host:port" in a cluster.
func suffix(nodes []node, n node) string {
	if len(nodes) == 1 {
		return ""
	}
	return "@" + n.addr
}

// fields splits an info value of key=value pairs separated by ';' (namespace,
// statistics) or ':' (sets).
func fields(v string) map[string]string { return pairs(v, ";:") }

// pairs splits text of key=value pairs separated by any of seps.
func pairs(v, seps string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		if k, val, ok := strings.Cut(kv, "="); ok {
			out[k] = val
		}
	}
	return out
}

// Capture reads build, release (edition, version, OS), the service and namespace
// configuration, the namespace's statistics and the node's, of every node; in a
// cluster each node's answers are a section of their own
// ("info-statistics@10.0.0.1-3000"). asd 8.1 counts 'edition', 'version' and
// get-config's 'id' as deprecated requests ("use 'release'", "use 'namespace'"):
// they are asked only of a node that does not answer the new forms.
func (t *target) Capture(context.Context) (core.Capture, error) {
	cp := core.Capture{Product: "aerospike", Sections: map[string]string{"client-policy": t.policy}}
	nsConfig := "get-config:context=namespace;namespace=" + t.ns
	names := []string{"build", "release", "get-config:context=service", nsConfig, "namespace/" + t.ns, "sets/" + t.ns, "statistics"}
	legacy := map[string][]string{"release": {"edition", "version"}, nsConfig: {"get-config:context=namespace;id=" + t.ns}}
	nodes, err := t.infoAll(names...)
	if err != nil {
		return cp, err
	}
	var older []string
	for _, n := range nodes {
		for name, old := range legacy {
			if !answered(n.m, name) || n.m[name] == "" {
				older = append(older, old...)
			}
		}
	}
	if len(older) > 0 {
		slices.Sort(older)
		older = slices.Compact(older)
		answers, err := t.infoAll(older...)
		if err != nil {
			return cp, err
		}
		for _, a := range answers {
			for i := range nodes {
				if nodes[i].addr == a.addr {
					maps.Copy(nodes[i].m, a.m)
				}
			}
		}
		names = append(names, older...)
	}
	first := nodes[0].m
	cp.Version, cp.VersionField = first["build"], "info build"
	if e := cmp.Or(fields(first["release"])["edition"], first["edition"]); e != "" && !strings.HasPrefix(e, "ERROR") {
		cp.Product = "aerospike (" + e + ")"
	}
	for _, n := range nodes {
		sfx := strings.ReplaceAll(suffix(nodes, n), ":", "-")
		if b := n.m["build"]; b != cp.Version {
			cp.Refused = append(cp.Refused, fmt.Sprintf("node %s runs build %s, node %s build %s", nodes[0].addr, cp.Version, n.addr, b))
		}
		for _, name := range names {
			v := n.m[name]
			if !answered(n.m, name) {
				if !slices.ContainsFunc(legacy[name], func(old string) bool { return answered(n.m, old) }) {
					cp.Refused = append(cp.Refused, name+suffix(nodes, n)+": "+v)
				}
				continue
			}
			if slices.ContainsFunc(names, func(modern string) bool { return slices.Contains(legacy[modern], name) && answered(n.m, modern) }) {
				continue // an older form, asked of another node
			}
			cp.Sections[sectionName(name)+sfx] = strings.ReplaceAll(v, ";", "\n") + "\n"
		}
	}
	return cp, nil
}

// answered reports whether a node answered an info request, if only with
// nothing (sets of a namespace without any): not an error.
func answered(m map[string]string, name string) bool {
	v, ok := m[name]
	return ok && !strings.HasPrefix(v, "ERROR")
}

func sectionName(info string) string {
	r := strings.NewReplacer(":", "-", ";", "-", "=", "-", "/", "-")
	return "info-" + r.Replace(info)
}

// Stats is every node's namespace and node statistics (namespace.<k>,
// statistics.<k>, with the node's suffix in a cluster), and the keys cmpbench
// reads from every product: the node's uptime and client connections, the
// requests it counted of reads (GET, READ) and of writes (SET, UPDATE, INSERT),
// whatever their outcome — the server does not tell an update from an insert —
// and what the report charts over a phase (core.StatTimeline).
func (t *target) Stats(context.Context) (map[string]string, error) {
	nodes, err := t.infoAll("namespace/"+t.ns, "statistics")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var tl []string
	for _, n := range nodes {
		sfx := suffix(nodes, n)
		ns, st := fields(n.m["namespace/"+t.ns]), fields(n.m["statistics"])
		for k, v := range ns {
			out["namespace."+k+sfx] = v
		}
		for k, v := range st {
			out["statistics."+k+sfx] = v
		}
		if up := st["uptime"]; up != "" {
			out[core.StatUptime+sfx] = up // a node that restarted counts from 0 again
		}
		if c := st["client_connections"]; c != "" {
			out[core.StatConnections+sfx] = c
		}
		for _, k := range timeline(ns) {
			if !slices.Contains(tl, k) {
				tl = append(tl, k)
			}
		}
		for _, calls := range []struct {
			ops      []core.OpKind
			counters []string
		}{
			{[]core.OpKind{core.OpGet, core.OpRead}, readCounters},
			{[]core.OpKind{core.OpSet, core.OpUpdate, core.OpInsert}, writeCounters},
		} {
			if sum, ok := sumOf(ns, calls.counters); ok {
				out[core.CallsKey(calls.ops...)+sfx] = strconv.FormatInt(sum, 10)
			}
		}
	}
	if len(tl) > 0 {
		out[core.StatTimeline] = strings.Join(tl, ",")
	}
	out[core.StatCallsSource] = "namespace " + t.ns + " statistics of every node: GET+READ = " + strings.Join(readCounters, " + ") +
		"; SET+UPDATE+INSERT = " + strings.Join(writeCounters, " + ")
	return out, nil
}

// timeline is what the report charts over a phase from a node's namespace
// statistics (server 7.0 and later): the data in use and each storage device's
// defragmentation queue (storage-engine.device[0].defrag_q, file[...] or
// stripe[...]): Aerospike's garbage collection, whose reads and writes compete
// with the clients'.
func timeline(ns map[string]string) []string {
	var keys []string
	if _, ok := ns["data_used_bytes"]; ok {
		keys = append(keys, "namespace.data_used_bytes")
	}
	var defrag []string
	for k := range ns {
		if strings.HasPrefix(k, "storage-engine.") && strings.HasSuffix(k, "].defrag_q") {
			defrag = append(defrag, "namespace."+k)
		}
	}
	sort.Strings(defrag)
	return append(keys, defrag...)
}

// The namespace counters of client reads and writes, every outcome (server 5.x and
// later; as/src/base/namespace statistics).
var (
	readCounters  = []string{"client_read_success", "client_read_error", "client_read_not_found", "client_read_timeout", "client_read_filtered_out"}
	writeCounters = []string{"client_write_success", "client_write_error", "client_write_timeout", "client_write_filtered_out"}
)

// sumOf adds the counters present; false when none is.
func sumOf(m map[string]string, keys []string) (int64, bool) {
	var sum int64
	found := false
	for _, k := range keys {
		if v, ok := m[k]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, false
			}
			sum, found = sum+n, true
		}
	}
	return sum, found
}

// stableWait bounds how long Count and Flush wait for a cluster to settle.
const stableWait = 2 * time.Minute

// stable reports whether every node the client knows agrees on one cluster of
// the size it must have (options.cluster_size, else the nodes the client sees)
// with no migrations left for the namespace (info cluster-stable); else why not.
func (t *target) stable() error {
	size := t.size
	if size == 0 {
		size = len(t.client.GetNodes())
	} else if n := len(t.client.GetNodes()); n != size {
		return fmt.Errorf("the client sees %d of the cluster's %d nodes (cluster_size)", n, size)
	}
	cmd := fmt.Sprintf("cluster-stable:size=%d;ignore-migrations=false;namespace=%s", size, t.ns)
	answers, err := t.infoAll(cmd)
	if err != nil {
		return err
	}
	key := ""
	for _, n := range answers {
		v := strings.TrimSpace(n.m[cmd])
		switch {
		case v == "" || strings.HasPrefix(v, "ERROR"):
			return fmt.Errorf("node %s: cluster-stable: %s", n.addr, orNothing(v))
		case key == "":
			key = v
		case v != key:
			return fmt.Errorf("nodes disagree on the cluster (keys %s and %s)", key, v)
		}
	}
	return nil
}

func orNothing(v string) string {
	if v == "" {
		return "no answer"
	}
	return v
}

// waitStable polls stable until it holds or wait passes.
func (t *target) waitStable(ctx context.Context, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := t.stable()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster is not stable after %s: %w", wait, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// setObjects is the set's records over the cluster: every node's objects of the set
// (each copy of a record is counted on the node holding it) divided by the
// namespace's effective replication factor; truncating reports a node still
// truncating the set.
func (t *target) setObjects() (records int64, truncating bool, err error) {
	setCmd, nsCmd := "sets/"+t.ns+"/"+t.set, "namespace/"+t.ns
	nodes, err := t.infoAll(setCmd, nsCmd)
	if err != nil {
		return 0, false, err
	}
	var copies int64
	rf := int64(0)
	for _, n := range nodes {
		if v := n.m[setCmd]; strings.HasPrefix(v, "ERROR") {
			return 0, false, fmt.Errorf("node %s: %s: %s", n.addr, setCmd, v)
		}
		set := fields(n.m[setCmd]) // empty when the set has never held a record
		if v, ok := set["objects"]; ok {
			c, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil {
				return 0, false, fmt.Errorf("node %s: %s: objects=%q", n.addr, setCmd, v)
			}
			copies += c
		}
		truncating = truncating || set["truncating"] == "true"
		ns := fields(n.m[nsCmd])
		r := ns["effective_replication_factor"]
		if r == "" {
			r = ns["replication-factor"]
		}
		f, perr := strconv.ParseInt(r, 10, 64)
		if perr != nil || f < 1 {
			return 0, false, fmt.Errorf("node %s: namespace %s reports no replication factor", n.addr, t.ns)
		}
		if rf != 0 && f != rf {
			return 0, false, fmt.Errorf("nodes disagree on the replication factor (%d and %d): the cluster is changing", rf, f)
		}
		rf = f
	}
	rf = min(rf, int64(len(nodes)))
	if copies%rf != 0 {
		return 0, truncating, fmt.Errorf("the nodes hold %d copies of set %s's records, not a multiple of the replication factor %d: the cluster is migrating", copies, t.set, rf)
	}
	return copies / rf, truncating, nil
}

// Count is the set's records over the cluster, once it is stable (every node
// agrees and no partition is migrating): a per-node or mid-migration count is not
// the number of records.
func (t *target) Count(ctx context.Context) (int64, error) {
	if err := t.waitStable(ctx, stableWait); err != nil {
		return 0, err
	}
	n, _, err := t.setObjects()
	return n, err
}

// Flush truncates the set — never the namespace, which may hold other sets — and
// waits until no node holds or is still truncating a record of it: truncation is
// asynchronous on a real server. The wait grows with the records there were.
func (t *target) Flush(ctx context.Context) error {
	if err := t.waitStable(ctx, stableWait); err != nil {
		return err
	}
	before, _, err := t.setObjects()
	if err != nil {
		return err
	}
	if err := t.client.Truncate(nil, t.ns, t.set, nil); err != nil {
		return err
	}
	wait := time.Minute + time.Duration(before/100_000)*time.Second
	deadline := time.Now().Add(wait)
	for {
		n, truncating, err := t.setObjects()
		if err == nil && n == 0 && !truncating {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("set %s of namespace %s: %w, %s after the truncation", t.set, t.ns, err, wait)
			}
			return fmt.Errorf("set %s of namespace %s still holds %d records %s after the truncation", t.set, t.ns, n, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
