//go:build linux

package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// shards is a test cluster of line servers and its map: each key's bucket (its
// last byte modulo buckets) is served by one server, the map says which.
type shards struct {
	srvs  []*lineServer
	table atomic.Pointer[[]int] // bucket -> index in srvs; -1: no server
}

const buckets = 16

func bucket(key []byte) int { return int(key[len(key)-1]) % buckets }

func newShards(t *testing.T, n int) *shards {
	sh := &shards{}
	table := make([]int, buckets)
	for i := range n {
		misrouted := func(line []byte) bool { return sh.owner(bucket(line)) != i }
		sh.srvs = append(sh.srvs, startLineServer(t, &lineServer{misrouted: misrouted}))
	}
	for b := range table {
		table[b] = b % n
	}
	sh.table.Store(&table)
	return sh
}

func (sh *shards) owner(b int) int { return (*sh.table.Load())[b] }

// without moves the buckets of server i to the others.
func (sh *shards) without(i int) {
	table := slices.Clone(*sh.table.Load())
	for b, o := range table {
		if o == i {
			table[b] = (i + 1 + b) % len(sh.srvs)
			if table[b] == i {
				table[b] = (i + 1) % len(sh.srvs)
			}
		}
	}
	sh.table.Store(&table)
}

// connect opens a socket to every server the map names that answers, as a
// cluster adapter does; one that does not is left out.
func (sh *shards) connect() (core.Conn, error) {
	c := &shardConn{codec: &shardCodec{sh: sh, opened: sh.table.Load()}}
	var lastErr error
	for i, srv := range sh.srvs {
		if !slices.Contains(*sh.table.Load(), i) {
			continue
		}
		lc, err := dialLine(srv.addr(), 300*time.Millisecond)
		if err != nil {
			lastErr = err
			continue
		}
		c.socks = append(c.socks, lc)
		c.fds = append(c.fds, lc.fd)
		c.codec.servers = append(c.codec.servers, i)
	}
	if len(c.socks) == 0 {
		return nil, errors.Join(errors.New("no server answers"), lastErr)
	}
	return c, nil
}

type shardConn struct {
	socks []*lineConn
	fds   []int
	codec *shardCodec
}

func (c *shardConn) Raw() (core.RawIO, bool) {
	return core.RawIO{FDs: c.fds, Timeout: 300 * time.Millisecond, Codec: c.codec}, true
}

func (c *shardConn) Do(context.Context, *core.Op) error {
	panic("the loops drive a connection of several sockets themselves")
}

func (c *shardConn) Close() error {
	for _, s := range c.socks {
		s.Close()
	}
	return nil
}

// shardCodec is the line protocol, routed by the map.
type shardCodec struct {
	lineCodec
	sh      *shards
	opened  *[]int // the map the connection was opened on
	servers []int  // the connection's sockets' servers
	last    int    // the bucket of the last request
}

func (c *shardCodec) AppendRequest(dst []byte, op *core.Op) []byte {
	c.last = bucket(op.Key)
	return c.lineCodec.AppendRequest(dst, op)
}

// Route answers as a cluster adapter does: a connection left without a socket
// to a server of its map (which did not answer) fails its requests until the
// map changes, then opens again.
func (c *shardCodec) Route() int {
	o := c.sh.owner(c.last)
	for i, s := range c.servers {
		if s == o {
			return i
		}
	}
	if c.sh.table.Load() != c.opened {
		return core.RouteReopen
	}
	return core.RouteNone
}

// TestLoopRoutesEachRequestToItsServer drives connections of three sockets
// each: every request reaches the server the map names (a misrouted one fails
// as class other), and after one server dies and the map moves its buckets, the
// phase goes on on the two others, its losses connection errors.
func TestLoopRoutesEachRequestToItsServer(t *testing.T) {
	sh := newShards(t, 3)
	keys := func() core.OpSource { return &keySource{} }
	end, c := rawRun(t, nil, ExecLoops, spec(4, 0, 10*time.Second, 3000), keys, sh.connect)
	got := c.total()[core.OpGet]
	if end.Status != core.StatusOK || got.OK != 3000 || got.ErrorTotal() != 0 {
		t.Fatalf("%s %s: ok=%d errors=%v %q", end.Status, end.Error, got.OK, got.Errors, end.ErrorSamples)
	}
	for i, srv := range sh.srvs {
		if srv.requests.Load() < 500 || srv.accepted.Load() != 4 {
			t.Errorf("server %d: %d requests on %d connections", i, srv.requests.Load(), srv.accepted.Load())
		}
	}

	// Server 1 dies 200 ms in; the map leaves it out 200 ms later.
	go func() {
		time.Sleep(200 * time.Millisecond)
		sh.srvs[1].close()
		time.Sleep(200 * time.Millisecond)
		sh.without(1)
	}()
	before, accepted := [3]int64{}, [3]int64{}
	for i, srv := range sh.srvs {
		before[i], accepted[i] = srv.requests.Load(), srv.accepted.Load()
	}
	end, c = rawRun(t, nil, ExecLoops, spec(4, 5000, time.Second, 0), keys, sh.connect)
	got = c.total()[core.OpGet]
	t.Logf("%s: ok=%d errors=%v", end.Status, got.OK, got.Errors)
	if end.Status != core.StatusOK || got.ErrorTotal() == 0 ||
		got.Errors[core.ErrClassConnection] != got.ErrorTotal() {
		t.Fatalf("%s %s: ok=%d errors=%v %q", end.Status, end.Error, got.OK, got.Errors, end.ErrorSamples)
	}
	var served int64
	for i, srv := range sh.srvs {
		served += srv.requests.Load() - before[i]
	}
	if served < got.OK || got.OK < 4000 {
		t.Fatalf("the servers took %d requests, %d succeeded", served, got.OK)
	}
	// A connection reopens when its socket to server 1 fails and when the map
	// changes, not for every request server 1 cannot serve.
	if n := sh.srvs[0].accepted.Load() - accepted[0]; n > 4*3 {
		t.Errorf("server 0 accepted %d connections from 4 workers", n)
	}
}

// keySource gets keys k0 to k99 in turn.
type keySource struct {
	n   int
	buf []byte
}

func (s *keySource) Next(op *core.Op) {
	s.buf = strconv.AppendInt(append(s.buf[:0], 'k'), int64(s.n%100), 10)
	s.n++
	op.Kind, op.Key = core.OpGet, s.buf
}
