// Package aerospike is the adapter for Aerospike, on aerospike-client-go/v8: one bin
// per field; READ gets every bin, UPDATE replaces the record (REPLACE_ONLY) or, for
// some fields, changes their bins (UPDATE_ONLY), INSERT creates it (CREATE_ONLY);
// GET and SET use a single bin. No retries, explicit
// timeouts, errors classified from result codes.
package aerospike

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
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
	// DefaultConnectionQueue is the per-node connection cap when the run does not
	// say how many operations it keeps in flight (SystemConfig.Concurrency).
	DefaultConnectionQueue = 1024
	// DefaultPort is asd's service port (aerospike.conf: service { port 3000 }).
	DefaultPort = 3000
	// singleBin holds the value of GET and SET.
	singleBin = "value"
	// tendConnections is the connection the client keeps to every node for its
	// tend (cluster map, info requests), one of those its pool cap counts.
	tendConnections = 1
	// The drivers of operations: the engine on its loops through the codec, or
	// the official client.
	driverWire, driverClient = "wire", "client"
)

// Adapter opens Aerospike targets.
type Adapter struct{}

func init() { core.RegisterAdapter(Name, func() core.Adapter { return Adapter{} }) }

// Info implements core.Adapter.
func (Adapter) Info() core.Info {
	return core.Info{
		Name:    Name,
		Version: "1",
		Ops:     []core.OpKind{core.OpGet, core.OpSet, core.OpRead, core.OpUpdate, core.OpInsert},
		Options: []core.Option{
			{Name: "namespace", Type: core.OptionString, Required: true, TopLevel: true, Doc: "the namespace records go to; the server must have it"},
			{Name: "set", Type: core.OptionString, Default: DefaultSet, Doc: "the set records go to"},
			{Name: "connection_queue_size", Type: core.OptionInt, Doc: "connections per node, the client's tend connection among them; default the run's concurrency plus that one, opened before the first phase"},
			{Name: "cluster_size", Type: core.OptionInt, Doc: "the nodes the cluster must have before a run starts (cluster-stable with this size on every node)"},
			{Name: "driver", Type: core.OptionString, Values: []string{driverWire, driverClient}, Default: driverWire,
				Doc: "wire: the engine drives plain sockets to every node itself, on its event loops, through cmpbench's AS_MSG codec, each command to its partition's node by the client's partition map (TLS and authentication go through the client, and the capture says so); client: every operation through aerospike-client-go"},
		},
	}
}

// Example implements core.Exampler: one asd on this machine at its service port,
// with the namespace Open requires (ycsb, as in sample.yaml).
func (Adapter) Example(string) []string {
	return []string{
		"adapter: " + Name,
		fmt.Sprintf("endpoint: 127.0.0.1:%d", DefaultPort),
		"namespace: ycsb                # required: a namespace the server has",
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

// openTarget checks the configuration, connects, and returns the target once the
// cluster is ready and every node has its connections. Driver wire goes through
// the client where it cannot be (TLS, authentication), and the capture says why.
func openTarget(sys core.SystemConfig) (core.Target, error) {
	if sys.Options["namespace"] == "" {
		return nil, core.Refused(errors.New("aerospike needs a namespace (namespace: ycsb)"))
	}
	why := ""
	if driverOf(sys) == driverWire && (sys.TLS.Enabled || sys.Auth.Username != "") {
		why, sys = "TLS or authentication", withDriver(sys, driverClient)
	}
	t, err := connectTarget(sys)
	if err != nil {
		return nil, err
	}
	switch {
	case t.routes != nil:
		t.policy += fmt.Sprintf("driver=wire (the engine drives a socket per connection to each of the %d nodes through cmpbench's codec, each command to the node the client's partition map gives its partition, rebuilt every %s; the client serves the map, info, counts and record reads)\n",
			len(t.routes.cur.Load().nodes), routeEvery)
	case why != "":
		t.policy += "driver=client (wire asked for, but " + why + " goes through the client)\n"
	default:
		t.policy += "driver=client\n"
	}
	return t, nil
}

// withDriver is sys with its driver option set.
func withDriver(sys core.SystemConfig, driver string) core.SystemConfig {
	sys.Options = maps.Clone(sys.Options)
	sys.Options["driver"] = driver
	return sys
}

// connectTarget connects the client and opens the target on it.
func connectTarget(sys core.SystemConfig) (*target, error) {
	ns := sys.Options["namespace"]
	if ns == "" {
		return nil, core.Refused(errors.New("aerospike needs a namespace (namespace: ycsb)"))
	}
	host, port, err := splitEndpoint(sys.Endpoint)
	if err != nil {
		return nil, err
	}
	timeout := sys.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cp, err := clientPolicy(sys, timeout)
	if err != nil {
		return nil, err
	}
	h, err := seedHost(sys, host, port, cp)
	if err != nil {
		return nil, err
	}
	client, aerr := as.NewClientWithPolicyAndHost(cp, h)
	if aerr != nil {
		return nil, fmt.Errorf("connect %s: %w", sys.Endpoint, aerr)
	}
	t, err := newTarget(client, sys, ns, cp, timeout)
	if err != nil {
		client.Close()
		return nil, err
	}
	return t, nil
}

// splitEndpoint is the endpoint's host and port; one that is not host:port is a
// refusal.
func splitEndpoint(endpoint string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(endpoint)
	if err != nil {
		return "", 0, core.Refused(fmt.Errorf("endpoint %q: %w", endpoint, err))
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", 0, core.Refused(fmt.Errorf("endpoint %q: bad port", endpoint))
	}
	return host, port, nil
}

// clientPolicy is the client's settings: its connection pool sized to the run's
// concurrency (or connection_queue_size), no circuit breaker, the credentials.
func clientPolicy(sys core.SystemConfig, timeout time.Duration) (*as.ClientPolicy, error) {
	cp := as.NewClientPolicy()
	cp.Timeout = timeout
	// One connection per operation in flight, to every node, opened when the client
	// starts: a worker never waits for a connection inside a measured operation (the
	// client spins 1 ms at a time when its pool is exhausted) and the client never
	// dials more in the background, so the server's connections are the run's
	// concurrency. The pool is capped at that (LimitConnectionsToQueueSize). The
	// client's tend connection to each node (cluster map, info requests) counts
	// against the cap and the minimum: without one more, the pool held one
	// connection fewer than the workers, and a run of one connection none at all
	// (every operation timed out; found against a real asd).
	cp.ConnectionQueueSize = DefaultConnectionQueue
	if sys.Concurrency > 0 {
		cp.ConnectionQueueSize = sys.Concurrency + tendConnections
		cp.MinConnectionsPerNode = sys.Concurrency + tendConnections
	}
	if v := sys.Options["connection_queue_size"]; v != "" {
		var err error
		if cp.ConnectionQueueSize, err = strconv.Atoi(v); err != nil || cp.ConnectionQueueSize < 1 {
			return nil, core.Refused(fmt.Errorf("connection_queue_size %q is not a positive number", v))
		}
		cp.MinConnectionsPerNode = min(cp.MinConnectionsPerNode, cp.ConnectionQueueSize)
	}
	if driverOf(sys) == driverWire {
		// The engine's sockets carry the operations; the pool serves info
		// requests, counts and record reads, and opens what they need.
		cp.MinConnectionsPerNode = 0
	}
	cp.LimitConnectionsToQueueSize = true
	// No circuit breaker: during a server stall the client would otherwise fail
	// commands itself (MAX_ERROR_RATE) without asking the server, and the run would
	// count errors the server never returned.
	cp.MaxErrorRate = 0
	// Enterprise-only features, passed through as given.
	cp.User, cp.Password = sys.Auth.Username, sys.Auth.Password
	return cp, nil
}

// seedHost is the host the client starts from, with TLS (in the client policy too)
// when the system asks for it.
func seedHost(sys core.SystemConfig, host string, port int, cp *as.ClientPolicy) (*as.Host, error) {
	h := as.NewHost(host, port)
	if sys.TLS.Enabled {
		tc, err := sys.TLS.ClientConfig(host)
		if err != nil {
			return nil, core.Refused(err)
		}
		cp.TlsConfig = tc
		h.TLSName = tc.ServerName
	}
	return h, nil
}

// newTarget is the target on a connected client: its set and cluster size from the
// options, the cluster checked ready, every node's connections opened, and the
// operations' policies.
func newTarget(client *as.Client, sys core.SystemConfig, ns string, cp *as.ClientPolicy, timeout time.Duration) (*target, error) {
	t := &target{client: client, ns: ns, set: DefaultSet, timeout: timeout,
		policy: fmt.Sprintf("connection_queue_size=%d\nmin_connections_per_node=%d\nlimit_connections_to_queue_size=%v\nmax_error_rate=%d (0: no circuit breaker)\ntimeout=%s\nmax_retries=0\n",
			cp.ConnectionQueueSize, cp.MinConnectionsPerNode, cp.LimitConnectionsToQueueSize, cp.MaxErrorRate, timeout)}
	if s, ok := sys.Options["set"]; ok {
		t.set = s
	}
	if v := sys.Options["cluster_size"]; v != "" {
		var err error
		if t.size, err = strconv.Atoi(v); err != nil || t.size < 1 {
			return nil, core.Refused(fmt.Errorf("cluster_size %q is not a positive number", v))
		}
	}
	if err := t.ready(); err != nil {
		return nil, err
	}
	if driverOf(sys) == driverWire {
		var err error
		if t.routes, err = newRouter(client, ns); err != nil {
			return nil, fmt.Errorf("the partition map of %s: %w", sys.Endpoint, err)
		}
		t.setPolicies(timeout)
		return t, nil
	}
	// The client fills each node's pool to the minimum from its tend goroutine, a
	// node at a time: a node found a moment ago may not have them yet. Open them
	// now, so that none is dialled inside a measured operation (the pool's cap
	// bounds what both open together).
	if n := cp.MinConnectionsPerNode; n > 0 {
		if _, err := client.WarmUp(n); err != nil {
			return nil, fmt.Errorf("opening %d connections to every node of %s: %w", n, sys.Endpoint, err)
		}
	}
	t.setPolicies(timeout)
	return t, nil
}

// setPolicies sets the policies of reads and of each kind of write: no retries, the
// timeout on the whole command and on the socket.
func (t *target) setPolicies(timeout time.Duration) {
	base := as.NewPolicy()
	base.MaxRetries, base.TotalTimeout, base.SocketTimeout = 0, timeout, timeout
	t.read = base
	t.set1 = writePolicy(base, as.UPDATE)
	t.update = writePolicy(base, as.REPLACE_ONLY)
	t.updateBins = writePolicy(base, as.UPDATE_ONLY)
	t.insert = writePolicy(base, as.CREATE_ONLY)
}

func writePolicy(base *as.BasePolicy, action as.RecordExistsAction) *as.WritePolicy {
	wp := as.NewWritePolicy(0, 0)
	wp.BasePolicy = *base
	wp.RecordExistsAction = action
	return wp
}

type target struct {
	client       *as.Client
	routes       *router // driver wire's routing map; nil when connections go through the client
	ns, set      string
	size         int    // the nodes the cluster must have to be ready; 0: those the client sees
	policy       string // the client's settings, for the capture
	timeout      time.Duration
	read         *as.BasePolicy
	set1, insert *as.WritePolicy
	// update replaces a record (an UPDATE of every field); updateBins changes the
	// bins it writes and keeps the others.
	update, updateBins *as.WritePolicy
}

// ready checks that every node serves the namespace and that the cluster is
// stable: a node still cold-starting (its partitions not yet available) is not
// ready, and Open fails, to be retried until the system's ready timeout. A
// namespace no node has is a refusal.
func (t *target) ready() error {
	nodes, err := t.infoAll("namespaces")
	if err != nil {
		return err
	}
	for _, n := range nodes {
		have := strings.Split(n.m["namespaces"], ";")
		if !slices.Contains(have, t.ns) {
			return core.Refused(fmt.Errorf("node %s has no namespace %q (it has: %s)", n.addr, t.ns, strings.Join(have, ", ")))
		}
	}
	if err := t.stable(); err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	return nil
}

// Connect returns a worker's connection: sockets to the nodes that the engine
// drives through the codec (driver wire), else a handle on the client's pool.
func (t *target) Connect(ctx context.Context) (core.Conn, error) {
	if t.routes == nil {
		return &conn{t: t}, nil
	}
	c, err := t.dialWire(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// driverOf is the system's driver, wire unless it says client.
func driverOf(sys core.SystemConfig) string { return cmp.Or(sys.Options["driver"], driverWire) }

func (t *target) Close(context.Context) error {
	if t.routes != nil {
		t.routes.close()
	}
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
		return classifyWrite(t.client.PutBins(t.set1, key, as.NewBin(singleBin, op.Value)))
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
		return classifyWrite(t.client.PutBins(policy, key, c.record(op)...))
	case core.OpInsert:
		return classifyWrite(t.client.PutBins(t.insert, key, c.record(op)...))
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

// classify maps a client error to an error class; nil stays nil. The table is in
// README.md ("Errors").
func classify(err as.Error) error {
	if err == nil {
		return nil
	}
	class := classOf(commandCode(err))
	if class == core.ErrClassConnection && errors.Is(err, os.ErrDeadlineExceeded) {
		class = core.ErrClassTimeout
	}
	return &core.OpError{Class: class, Err: err}
}

// classOf is the error class of a result code, the server's or the client's.
func classOf(code types.ResultCode) core.ErrorClass {
	switch code {
	case types.KEY_NOT_FOUND_ERROR:
		return core.ErrClassNotFound
	case types.KEY_EXISTS_ERROR:
		return core.ErrClassExists
	case types.TIMEOUT, types.MAX_RETRIES_EXCEEDED:
		return core.ErrClassTimeout
	case types.SERVER_MEM_ERROR, types.FAIL_FORBIDDEN:
		// Capacity. 8 (the server's AS_ERR_OUT_OF_SPACE): a namespace at
		// stop-writes or a full storage file, to every write; 22: a set at its
		// stop-writes-count or -size, to new records only, or clock skew, which
		// the message says.
		return core.ErrClassOOM
	case types.DEVICE_OVERLOAD, types.KEY_BUSY:
		// Back-pressure: the device's write queue is full, or the record has too
		// many operations queued (a hot key).
		return core.ErrClassOverload
	case types.NETWORK_ERROR, types.NO_RESPONSE, types.INVALID_NODE_ERROR, types.SERVER_NOT_AVAILABLE, types.NO_AVAILABLE_CONNECTIONS_TO_NODE:
		return core.ErrClassConnection
	case types.PARSE_ERROR:
		return core.ErrClassProtocol
	}
	return core.ErrClassOther
}

// commandCode is the result code of the command: the outermost of the error's
// chain but the client's "retries exceeded" (with retries off, the wrapper of the
// one attempt's error). Matches would also match what an error wraps, such as a
// connection closed after a RECORD_TOO_BIG reply.
func commandCode(err error) types.ResultCode {
	var re resultError
	if errors.As(err, &re) { // the codec's
		return types.ResultCode(re)
	}
	code := types.ResultCode(types.COMMON_ERROR)
	for err != nil {
		var ae *as.AerospikeError
		if !errors.As(err, &ae) {
			break
		}
		code = ae.ResultCode
		if code != types.MAX_RETRIES_EXCEEDED {
			break
		}
		err = ae.Unwrap()
	}
	return code
}

// classifyWrite is classify for a write: a write the client sent and then timed
// out on or lost the connection of is in doubt (the client's IsInDoubt): it may
// have been applied.
func classifyWrite(err as.Error) error {
	oe, _ := classify(err).(*core.OpError)
	if oe == nil {
		return nil
	}
	if (oe.Class == core.ErrClassTimeout || oe.Class == core.ErrClassConnection) && err.IsInDoubt() {
		oe.Class = core.ErrClassInDoubt
	}
	return oe
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
