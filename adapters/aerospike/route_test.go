package aerospike

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// TestRouteAnswers checks where a connection with sockets to nodes a and b
// sends a command, by its partition's node in the map.
func TestRouteAnswers(t *testing.T) {
	m := &routes{nodes: []string{"c", "b", "a"}}
	const toA, toB, toC, toNone = 1, 2, 3, 4
	m.owner[toA], m.owner[toB], m.owner[toC], m.owner[toNone] = 2, 1, 0, -1
	other := &routes{nodes: m.nodes, owner: m.owner}
	for _, tc := range []struct {
		name   string
		pid    int
		opened *routes
		ago    time.Duration
		want   int
	}{
		{"a node of the connection", toA, m, 0, 0},
		{"the other node of the connection", toB, m, 0, 1},
		{"a node that did not answer when it opened", toC, m, 0, core.RouteNone},
		{"the same, a second later: retried", toC, m, retryNodeAfter, core.RouteReopen},
		{"a node the map gave the partition since it opened", toC, other, 0, core.RouteReopen},
		{"a partition no node serves", toNone, m, 0, core.RouteNone},
	} {
		r := &router{}
		r.cur.Store(m)
		c := newCodec("ns", "set", time.Second)
		c.route = route{r: r, socks: []string{"a", "b"}, opened: tc.opened, openedAt: time.Now().Add(-tc.ago)}
		c.pid = tc.pid
		if got := c.Route(); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRouteAllocatesNothing: the engine routes every command.
func TestRouteAllocatesNothing(t *testing.T) {
	r := fixedRouter("a")
	c := newCodec("ns", "set", time.Second)
	c.route = route{r: r, socks: []string{"a"}, opened: r.cur.Load(), openedAt: time.Now()}
	if n := testing.AllocsPerRun(1000, func() { c.pid = (c.pid + 1) % Partitions; c.Route() }); n != 0 {
		t.Fatalf("%.1f allocations per route", n)
	}
}
