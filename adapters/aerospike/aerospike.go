// Package aerospike is the adapter for Aerospike, on aerospike-client-go/v8: one bin
// per field; READ gets every bin, UPDATE replaces the record (REPLACE_ONLY) or, for
// some fields, changes their bins (UPDATE_ONLY), INSERT creates it (CREATE_ONLY);
// GET and SET use a single bin. No retries, explicit
// timeouts, errors classified from result codes.
package aerospike

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"

	"github.com/cmpbench/cmpbench/core"
)

// Name is the adapter name used in system definitions.
const Name = "aerospike"

// Defaults.
const (
	DefaultTimeout = 5 * time.Second
	DefaultSet     = "usertable" // YCSB's table
	// DefaultConnectionQueue is the per-node connection cap; it must be at least a
	// phase's connections, or workers wait for each other inside the client.
	DefaultConnectionQueue = 1024
	// singleBin holds the value of GET and SET.
	singleBin = "value"
)

// Adapter opens Aerospike targets.
type Adapter struct{}

func init() { core.RegisterAdapter(Name, func() core.Adapter { return Adapter{} }) }

// Info implements core.Adapter.
func (Adapter) Info() core.Info {
	return core.Info{
		Name:         Name,
		Version:      "1",
		Ops:          []core.OpKind{core.OpGet, core.OpSet, core.OpRead, core.OpUpdate, core.OpInsert},
		Capabilities: []string{"capture", "stats", "count", "records", "flush"},
	}
}

// Open connects to the cluster. Options: namespace (required), set (default
// usertable), connection_queue_size. A configuration that cannot work and
// credentials the server rejects are refusals (core.ErrRefused): cmpbench does not
// retry them.
func (Adapter) Open(ctx context.Context, sys core.SystemConfig) (core.Target, error) {
	t, err := openTarget(sys)
	var aerr as.Error
	if errors.As(err, &aerr) && aerr.Matches(types.INVALID_USER, types.INVALID_PASSWORD, types.EXPIRED_PASSWORD,
		types.INVALID_CREDENTIAL, types.NOT_AUTHENTICATED, types.SECURITY_NOT_ENABLED, types.SECURITY_NOT_SUPPORTED) {
		return nil, core.Refused(err)
	}
	return t, err
}

func openTarget(sys core.SystemConfig) (core.Target, error) {
	ns := sys.Options["namespace"]
	if ns == "" {
		return nil, core.Refused(errors.New("aerospike needs a namespace (namespace: ycsb)"))
	}
	host, portStr, err := net.SplitHostPort(sys.Endpoint)
	if err != nil {
		return nil, core.Refused(fmt.Errorf("endpoint %q: %w", sys.Endpoint, err))
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, core.Refused(fmt.Errorf("endpoint %q: bad port", sys.Endpoint))
	}
	timeout := sys.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cp := as.NewClientPolicy()
	cp.Timeout = timeout
	cp.ConnectionQueueSize = DefaultConnectionQueue
	if v := sys.Options["connection_queue_size"]; v != "" {
		if cp.ConnectionQueueSize, err = strconv.Atoi(v); err != nil || cp.ConnectionQueueSize < 1 {
			return nil, core.Refused(fmt.Errorf("connection_queue_size %q is not a positive number", v))
		}
	}
	// Enterprise-only features, passed through as given.
	cp.User, cp.Password = sys.Auth.Username, sys.Auth.Password
	h := as.NewHost(host, port)
	if sys.TLS.Enabled {
		tc, err := sys.TLS.ClientConfig(host)
		if err != nil {
			return nil, core.Refused(err)
		}
		cp.TlsConfig = tc
		h.TLSName = tc.ServerName
	}
	client, aerr := as.NewClientWithPolicyAndHost(cp, h)
	if aerr != nil {
		return nil, fmt.Errorf("connect %s: %w", sys.Endpoint, aerr)
	}
	t := &target{client: client, ns: ns, set: DefaultSet, timeout: timeout}
	if s, ok := sys.Options["set"]; ok {
		t.set = s
	}
	base := as.NewPolicy()
	base.MaxRetries, base.TotalTimeout, base.SocketTimeout = 0, timeout, timeout
	t.read = base
	t.set1 = writePolicy(base, as.UPDATE)
	t.update = writePolicy(base, as.REPLACE_ONLY)
	t.updateBins = writePolicy(base, as.UPDATE_ONLY)
	t.insert = writePolicy(base, as.CREATE_ONLY)
	return t, nil
}

func writePolicy(base *as.BasePolicy, action as.RecordExistsAction) *as.WritePolicy {
	wp := as.NewWritePolicy(0, 0)
	wp.BasePolicy = *base
	wp.RecordExistsAction = action
	return wp
}

type target struct {
	client       *as.Client
	ns, set      string
	timeout      time.Duration
	read         *as.BasePolicy
	set1, insert *as.WritePolicy
	// update replaces a record (an UPDATE of every field); updateBins changes the
	// bins it writes and keeps the others.
	update, updateBins *as.WritePolicy
}

// Connect returns a worker's handle; the client pools connections itself.
func (t *target) Connect(context.Context) (core.Conn, error) { return &conn{t: t}, nil }

func (t *target) Close(context.Context) error {
	t.client.Close()
	return nil
}

type conn struct {
	t    *target
	bins []*as.Bin // reused for the fields of a record
}

// Do runs one operation; ctx is not used: every command is bounded by the policies'
// timeouts and the client has no per-call cancellation.
func (c *conn) Do(_ context.Context, op *core.Op) error {
	t := c.t
	key, aerr := as.NewKey(t.ns, t.set, string(op.Key))
	if aerr != nil {
		return &core.OpError{Class: core.ErrClassOther, Err: aerr}
	}
	switch op.Kind {
	case core.OpGet:
		rec, err := t.client.Get(t.read, key, singleBin)
		if err != nil {
			if err.Matches(types.KEY_NOT_FOUND_ERROR) {
				return core.ErrMiss
			}
			return classify(err)
		}
		if v, ok := rec.Bins[singleBin].([]byte); ok {
			op.RespBytes = len(v)
		}
		return nil
	case core.OpSet:
		return classify(t.client.PutBins(t.set1, key, as.NewBin(singleBin, op.Value)))
	case core.OpRead:
		rec, err := t.client.Get(t.read, key)
		if err != nil {
			return classify(err)
		}
		if len(rec.Bins) < len(op.Fields) {
			return &core.OpError{Class: core.ErrClassOther, Err: fmt.Errorf("record %s has %d of %d bins", op.Key, len(rec.Bins), len(op.Fields))}
		}
		for _, v := range rec.Bins {
			if b, ok := v.([]byte); ok {
				op.RespBytes += len(b)
			}
		}
		return nil
	case core.OpUpdate:
		policy := t.updateBins
		if op.WholeRecord {
			policy = t.update
		}
		return classify(t.client.PutBins(policy, key, c.record(op)...))
	case core.OpInsert:
		return classify(t.client.PutBins(t.insert, key, c.record(op)...))
	}
	return &core.OpError{Class: core.ErrClassOther, Err: fmt.Errorf("%s: %w", op.Kind, core.ErrUnsupported)}
}

// record turns op's fields into bins, reusing the bin structs.
func (c *conn) record(op *core.Op) []*as.Bin {
	for len(c.bins) < len(op.Fields) {
		c.bins = append(c.bins, &as.Bin{})
	}
	for i, f := range op.Fields {
		c.bins[i].Name = string(f)
		c.bins[i].Value = as.BytesValue(op.Values[i])
	}
	return c.bins[:len(op.Fields)]
}

func (c *conn) Close() error { return nil }

// classify maps a client error to an error class; nil stays nil.
func classify(err as.Error) error {
	if err == nil {
		return nil
	}
	class := core.ErrClassOther
	switch {
	case err.Matches(types.KEY_NOT_FOUND_ERROR):
		class = core.ErrClassNotFound
	case err.Matches(types.KEY_EXISTS_ERROR):
		class = core.ErrClassExists
	case err.Matches(types.TIMEOUT):
		class = core.ErrClassTimeout
	case err.Matches(types.SERVER_MEM_ERROR, types.DEVICE_OVERLOAD):
		class = core.ErrClassOOM
	case err.Matches(types.NETWORK_ERROR, types.NO_RESPONSE, types.INVALID_NODE_ERROR, types.SERVER_NOT_AVAILABLE, types.NO_AVAILABLE_CONNECTIONS_TO_NODE):
		class = core.ErrClassConnection
		if errors.Is(err, os.ErrDeadlineExceeded) {
			class = core.ErrClassTimeout
		}
	case err.Matches(types.PARSE_ERROR):
		class = core.ErrClassProtocol
	}
	return &core.OpError{Class: class, Err: err}
}

// info asks the first node.
func (t *target) info(names ...string) (map[string]string, error) {
	nodes := t.client.GetNodes()
	if len(nodes) == 0 {
		return nil, errors.New("no node in the cluster")
	}
	p := as.NewInfoPolicy()
	p.Timeout = t.timeout
	m, err := nodes[0].RequestInfo(p, names...)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Capture reads build, edition, version, the service and namespace configuration, the
// namespace's statistics and the node's.
func (t *target) Capture(context.Context) (core.Capture, error) {
	cp := core.Capture{Product: "aerospike", Sections: map[string]string{}}
	names := []string{"build", "edition", "version", "get-config:context=service",
		"get-config:context=namespace;id=" + t.ns, "namespace/" + t.ns, "statistics"}
	m, err := t.info(names...)
	if err != nil {
		return cp, err
	}
	cp.Version, cp.VersionField = m["build"], "info build"
	if e := m["edition"]; e != "" {
		cp.Product = "aerospike (" + e + ")"
	}
	for _, n := range names {
		v, ok := m[n]
		if !ok || strings.HasPrefix(v, "ERROR") {
			cp.Refused = append(cp.Refused, n+": "+v)
			continue
		}
		cp.Sections[sectionName(n)] = strings.ReplaceAll(v, ";", "\n") + "\n"
	}
	return cp, nil
}

func sectionName(info string) string {
	r := strings.NewReplacer(":", "-", ";", "-", "=", "-", "/", "-")
	return "info-" + r.Replace(info)
}

// Stats is the namespace's and the node's statistics, as namespace.<k> and
// statistics.<k>.
func (t *target) Stats(context.Context) (map[string]string, error) {
	m, err := t.info("namespace/"+t.ns, "statistics")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for prefix, v := range map[string]string{"namespace": m["namespace/"+t.ns], "statistics": m["statistics"]} {
		for _, kv := range strings.Split(v, ";") {
			if k, val, ok := strings.Cut(kv, "="); ok {
				out[prefix+"."+k] = val
			}
		}
	}
	if up := out["statistics.uptime"]; up != "" {
		out[core.StatUptime] = up // a node that restarted counts from 0 again
	}
	return out, nil
}

// Count is the namespace's master objects (objects when the server does not say).
func (t *target) Count(ctx context.Context) (int64, error) {
	st, err := t.Stats(ctx)
	if err != nil {
		return 0, err
	}
	for _, k := range []string{"namespace.master_objects", "namespace.objects"} {
		if v, ok := st[k]; ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("namespace statistics have no objects count")
}

// ReadRecord gets every bin of a record.
func (t *target) ReadRecord(_ context.Context, key []byte) (map[string][]byte, error) {
	k, err := as.NewKey(t.ns, t.set, string(key))
	if err != nil {
		return nil, err
	}
	rec, aerr := t.client.Get(t.read, k)
	if aerr != nil {
		if aerr.Matches(types.KEY_NOT_FOUND_ERROR) {
			return map[string][]byte{}, nil
		}
		return nil, aerr
	}
	out := make(map[string][]byte, len(rec.Bins))
	names := make([]string, 0, len(rec.Bins))
	for n := range rec.Bins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		switch v := rec.Bins[n].(type) {
		case []byte:
			out[n] = v
		case string:
			out[n] = []byte(v)
		default:
			out[n] = []byte(fmt.Sprint(v))
		}
	}
	return out, nil
}

// Flush truncates the set and waits, bounded, until the namespace reports it empty:
// truncation is asynchronous on a real server.
func (t *target) Flush(ctx context.Context) error {
	if err := t.client.Truncate(nil, t.ns, t.set, nil); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := t.Count(ctx)
		if err == nil && n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s still holds %d objects 60 s after the truncation", t.ns, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
