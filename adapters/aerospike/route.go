package aerospike

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/rawsock"
)

const (
	// routeEvery is how often the routing map is rebuilt from the client's
	// partition map, which its tend refreshes every second
	// (ClientPolicy.TendInterval).
	routeEvery = 100 * time.Millisecond
	// retryNodeAfter is how long a connection that could not reach a node of
	// its map fails that node's commands before it opens again to retry it.
	retryNodeAfter = time.Second
)

// routes is where driver wire sends the commands of each partition of the
// namespace: the node the client would send a write to (the master, or the
// first replica the client holds active).
type routes struct {
	nodes []string          // host:port of the nodes that serve a partition
	owner [Partitions]int16 // index in nodes; -1: no node serves the partition now
}

// router keeps the routing map of a target, rebuilt from the client's
// partition map until stopped.
type router struct {
	client *as.Client
	ns     string
	policy *as.BasePolicy
	cur    atomic.Pointer[routes]
	next   *routes    // the rebuild's scratch, until it differs from cur
	found  []*as.Node // the rebuild's nodes, in the order of their first partition
	stop   chan struct{}
	done   sync.WaitGroup
	closed sync.Once
}

// newRouter builds the map once and keeps it from then on; a namespace the
// client has no map of is an error.
func newRouter(client *as.Client, ns string) (*router, error) {
	r := &router{client: client, ns: ns, policy: as.NewPolicy(), stop: make(chan struct{})}
	if err := r.rebuild(); err != nil {
		return nil, err
	}
	if len(r.cur.Load().nodes) == 0 {
		return nil, fmt.Errorf("no node serves a partition of namespace %q", ns)
	}
	r.done.Add(1)
	go r.keep()
	return r, nil
}

// fixedRouter sends every partition to one node, for the tests of a server
// that has no cluster to tend.
func fixedRouter(addr string) *router {
	m := &routes{nodes: []string{addr}} // every partition's owner: 0
	r := &router{stop: make(chan struct{})}
	r.cur.Store(m)
	return r
}

func (r *router) keep() {
	defer r.done.Done()
	tick := time.NewTicker(routeEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		_ = r.rebuild() // an error keeps the last map; the client's tend retries

	}
}

// close stops the rebuilding; closing again does nothing.
func (r *router) close() {
	r.closed.Do(func() { close(r.stop) })
	r.done.Wait()
}

// rebuild reads the client's partition map, each partition's node for a write
// as the client's own commands choose it (GetNodeWrite of the default replica
// policy), and makes it the routing map when it differs. It allocates nothing
// but the map while nothing changes.
func (r *router) rebuild() error {
	cluster := r.client.Cluster()
	key, err := as.NewKeyWithDigest(r.ns, "", "", make([]byte, digestSize))
	if err != nil {
		return err
	}
	p0, err := as.PartitionForWrite(cluster, r.policy, key)
	if err != nil {
		return err
	}
	if r.next == nil {
		r.next = &routes{}
	}
	m := r.next
	r.found = r.found[:0]
	var p as.Partition
	for pid := range Partitions {
		p = *p0 // GetNodeWrite moves a partition's replica sequence on
		p.PartitionId = pid
		node, err := p.GetNodeWrite(cluster)
		if err != nil {
			m.owner[pid] = -1
			continue
		}
		i := slices.Index(r.found, node)
		if i < 0 {
			i, r.found = len(r.found), append(r.found, node)
		}
		m.owner[pid] = int16(i)
	}
	m.nodes = m.nodes[:0]
	for _, n := range r.found {
		h := n.GetHost()
		m.nodes = append(m.nodes, net.JoinHostPort(h.Name, strconv.Itoa(h.Port)))
	}
	if !m.same(r.cur.Load()) {
		r.cur.Store(m)
		r.next = nil // cur's now: never written again
	}
	return nil
}

func (m *routes) same(o *routes) bool {
	return o != nil && slices.Equal(m.nodes, o.nodes) && m.owner == o.owner
}

// route is a codec's routing: the partition of its last request, the map and
// the connection's sockets (their nodes).
type route struct {
	r        *router
	seen     *routes
	socks    []string // the nodes of the connection's sockets
	remap    []int    // index in seen.nodes -> index in socks, -1 for none
	opened   *routes  // the map the connection was opened on
	openedAt time.Time
}

// Route implements core.Router for the codec: the socket of the last request's
// partition. When the connection has none to its node: core.RouteReopen if the
// map changed since it was opened, or a second has passed (to retry a node
// that did not answer then), else core.RouteNone.
func (c *codec) Route() int {
	rt := &c.route
	m := rt.r.cur.Load()
	if m != rt.seen {
		rt.bind(m)
	}
	o := m.owner[c.pid]
	if o < 0 {
		return core.RouteNone
	}
	if i := rt.remap[o]; i >= 0 {
		return i
	}
	if m != rt.opened || time.Since(rt.openedAt) >= retryNodeAfter {
		return core.RouteReopen
	}
	return core.RouteNone
}

func (rt *route) bind(m *routes) {
	rt.seen = m
	rt.remap = rt.remap[:0]
	for _, n := range m.nodes {
		rt.remap = append(rt.remap, slices.Index(rt.socks, n))
	}
}

// wireConn is a worker's connection under driver wire: a socket to every node
// that serves a partition, driven by the engine's loops (core.RawConn, each
// request on its partition's node) or, for callers that do not drive it, by Do.
type wireConn struct {
	t      *target
	codec  *codec
	socks  []*rawsock.Socket
	wbuf   []byte
	reopen bool // the map changed: Redial opens the connection again
}

// dialWire opens a socket to every node of the routing map. A node that does
// not answer is left out (a request for its partitions opens a new
// connection, and fails when that one cannot reach it either); none is an
// error.
func (t *target) dialWire(ctx context.Context) (*wireConn, error) {
	c := &wireConn{t: t, codec: newCodec(t.ns, t.set, t.timeout)}
	c.codec.route.r = t.routes
	return c, c.open(ctx)
}

func (c *wireConn) open(ctx context.Context) error {
	c.closeSocks()
	c.reopen = false
	m := c.t.routes.cur.Load()
	c.codec.route.opened, c.codec.route.openedAt = m, time.Now()
	var errs []error
	for _, n := range m.nodes {
		s := rawsock.New(n, c.t.timeout, c.codec, nil)
		if err := s.Redial(ctx); err != nil {
			errs = append(errs, err)
			continue
		}
		c.socks = append(c.socks, s)
		c.codec.route.socks = append(c.codec.route.socks, n)
	}
	c.codec.route.seen = nil
	if len(c.socks) == 0 {
		return errors.Join(append([]error{errors.New("no node of the cluster answers")}, errs...)...)
	}
	return nil
}

// Raw implements core.RawConn.
func (c *wireConn) Raw() (core.RawIO, bool) {
	fds := make([]int, len(c.socks))
	for i, s := range c.socks {
		io, ok := s.Raw()
		if !ok {
			return core.RawIO{}, false
		}
		fds[i] = io.FD
	}
	return core.RawIO{FDs: fds, Timeout: c.t.timeout, Codec: c.codec}, true
}

// Redial implements core.Redialer: it opens the connection again when a
// socket of it failed or the map moved a partition to a node it has no socket
// to.
func (c *wireConn) Redial(ctx context.Context) error {
	if c.reopen || len(c.socks) == 0 {
		return c.open(ctx)
	}
	for _, s := range c.socks {
		if _, ok := s.Raw(); !ok {
			return c.open(ctx)
		}
	}
	return nil
}

// Do sends op to its partition's node and reads the reply. A command whose
// node the connection has no socket to fails as a connection error; when the
// map changed, the next Redial (outside the timed span) opens the connection
// again.
func (c *wireConn) Do(ctx context.Context, op *core.Op) error {
	if err := c.Redial(ctx); err != nil {
		return &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	c.wbuf = c.codec.AppendRequest(c.wbuf[:0], op)
	i := c.codec.Route()
	if i < 0 {
		c.reopen = i == core.RouteReopen
		return &core.OpError{Class: core.ErrClassConnection, Err: fmt.Errorf("no connection to the node of partition %d", c.codec.pid)}
	}
	return c.socks[i].RoundTrip(c.wbuf, op)
}

// Close implements core.Conn.
func (c *wireConn) Close() error {
	c.closeSocks()
	return nil
}

func (c *wireConn) closeSocks() {
	for _, s := range c.socks {
		s.Close()
	}
	c.socks = c.socks[:0]
	c.codec.route.socks = c.codec.route.socks[:0]
}

var (
	_ core.RawConn  = (*wireConn)(nil)
	_ core.Redialer = (*wireConn)(nil)
	_ core.Router   = (*codec)(nil)
)
