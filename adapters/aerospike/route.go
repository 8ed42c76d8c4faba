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

// routeEvery is how often the routing map is rebuilt from the client's partition
// map, which its tend refreshes every second (ClientPolicy.TendInterval).
const routeEvery = 100 * time.Millisecond

// routes is where driver wire sends the commands of each partition of the
// namespace: the node the client would send a write to (the master, or the
// first replica the client holds active).
type routes struct {
	nodes []string          // host:port of the nodes that serve a partition, sorted
	owner [Partitions]int16 // index in nodes; -1: no node serves the partition now
}

// router keeps the routing map of a target, rebuilt from the client's
// partition map until stopped.
type router struct {
	client *as.Client
	ns     string
	policy *as.BasePolicy
	cur    atomic.Pointer[routes]
	stop   chan struct{}
	done   sync.WaitGroup
	closed sync.Once
}

// newRouter builds the map once and keeps it from then on; a namespace the
// client has no map of is an error.
func newRouter(client *as.Client, ns string) (*router, error) {
	r := &router{client: client, ns: ns, policy: as.NewPolicy(), stop: make(chan struct{})}
	m, err := r.build()
	if err != nil {
		return nil, err
	}
	if len(m.nodes) == 0 {
		return nil, fmt.Errorf("no node serves a partition of namespace %q", ns)
	}
	r.cur.Store(m)
	r.done.Add(1)
	go r.keep()
	return r, nil
}

// fixedRouter sends every partition to one node, for the tests of a server
// that has no cluster to tend.
func fixedRouter(addr string) *router {
	m := &routes{nodes: []string{addr}}
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
		if m, err := r.build(); err == nil && !m.same(r.cur.Load()) {
			r.cur.Store(m)
		}
	}
}

// close stops the rebuilding; closing again does nothing.
func (r *router) close() {
	r.closed.Do(func() { close(r.stop) })
	r.done.Wait()
}

// build reads the client's partition map: each partition's node for a write,
// as the client's own commands choose it (GetNodeWrite of the default replica
// policy).
func (r *router) build() (*routes, error) {
	cluster := r.client.Cluster()
	key, err := as.NewKeyWithDigest(r.ns, "", "", make([]byte, digestSize))
	if err != nil {
		return nil, err
	}
	p0, err := as.PartitionForWrite(cluster, r.policy, key)
	if err != nil {
		return nil, err
	}
	owners := make([]string, Partitions)
	for pid := range Partitions {
		p := *p0 // GetNodeWrite moves a partition's replica sequence on
		p.PartitionId = pid
		if node, err := p.GetNodeWrite(cluster); err == nil {
			h := node.GetHost()
			owners[pid] = net.JoinHostPort(h.Name, strconv.Itoa(h.Port))
		}
	}
	m := &routes{}
	for _, o := range owners {
		if o != "" && !slices.Contains(m.nodes, o) {
			m.nodes = append(m.nodes, o)
		}
	}
	slices.Sort(m.nodes)
	for pid, o := range owners {
		m.owner[pid] = int16(slices.Index(m.nodes, o))
	}
	return m, nil
}

func (m *routes) same(o *routes) bool {
	return o != nil && slices.Equal(m.nodes, o.nodes) && m.owner == o.owner
}

// route is a codec's routing: the partition of its last request, the map and
// the connection's sockets (their nodes).
type route struct {
	r     *router
	seen  *routes
	socks []string // the nodes of the connection's sockets
	remap []int    // index in seen.nodes -> index in socks, -1 for none
}

// Route implements core.Router for the codec: the socket of the last request's
// partition, -1 when the connection has none to its node.
func (c *codec) Route() int {
	m := c.route.r.cur.Load()
	if m != c.route.seen {
		c.route.bind(m)
	}
	o := m.owner[c.pid]
	if o < 0 {
		return -1
	}
	return c.route.remap[o]
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
	t     *target
	codec *codec
	socks []*rawsock.Socket
	wbuf  []byte
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
	var errs []error
	for _, n := range c.t.routes.cur.Load().nodes {
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
// socket of it failed.
func (c *wireConn) Redial(ctx context.Context) error {
	for _, s := range c.socks {
		if _, ok := s.Raw(); !ok {
			return c.open(ctx)
		}
	}
	if len(c.socks) == 0 {
		return c.open(ctx)
	}
	return nil
}

// Do sends op to its partition's node and reads the reply, opening the
// connection again first when the map names a node it has no socket to.
func (c *wireConn) Do(ctx context.Context, op *core.Op) error {
	if err := c.Redial(ctx); err != nil {
		return &core.OpError{Class: core.ErrClassConnection, Err: err}
	}
	c.wbuf = c.codec.AppendRequest(c.wbuf[:0], op)
	i := c.codec.Route()
	if i < 0 {
		if err := c.open(ctx); err != nil {
			return &core.OpError{Class: core.ErrClassConnection, Err: err}
		}
		if i = c.codec.Route(); i < 0 {
			return &core.OpError{Class: core.ErrClassConnection, Err: fmt.Errorf("no connection to the node of partition %d", c.codec.pid)}
		}
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
