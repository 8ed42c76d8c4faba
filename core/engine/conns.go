package engine

import (
	"sync/atomic"

	"github.com/cmpbench/cmpbench/core"
)

// How the engine knows the connections it holds (core.Conns): it counts them
// where they open and where they are lost, never per request. Two counters
// only grow, and what is open is their difference, so that the collector
// reads a consistent pair whenever it reads them. Before the clock, the
// connections open then are counted at once (preparedOpen). During the phase:
//
//   - an event loop owns its sockets: a reconnect that attaches one opens it
//     (takeDials), and any socket it takes away before the phase's end (detach:
//     a failure, the server's close, a timeout, an unreadable reply, a cluster
//     change) is lost;
//   - a worker goroutine or the lanes of a pipelined connection see the
//     connection through its outcomes (connWatch): a connection error loses
//     it; a reconnect that succeeds (Connect, core.Redialer), or any later
//     outcome but a connection error, has it open again. An adapter that
//     reopens a socket by itself after a timeout, without a connection error,
//     is not seen closing;
//   - a subscriber that breaks during the phase is lost; none is reopened.
//
// The closes at the phase's end are not losses: the last interval counts what
// the phase held up to its end.
type connCount struct{ opened, lost atomic.Int64 }

// read returns the counts so far: lost first, so that every connection it
// counts lost was opened before and is in opened too.
func (c *connCount) read() (opened, lost int64) {
	lost = c.lost.Load()
	return c.opened.Load(), lost
}

// preparedOpen counts the connections a prepared phase has open before its
// clock starts: the load's, the side probe's and the subscribers'.
func (p *prepared) preparedOpen() int64 {
	var n int64
	for _, s := range p.streams {
		if s.conn != nil {
			n++
		}
	}
	if p.probe != nil && p.probe.conn != nil {
		n++
	}
	if p.pubsub != nil {
		for _, s := range p.pubsub.subs {
			if s.sub != nil {
				n++
			}
		}
	}
	return n
}

// connWatch is what a worker goroutine (or a pipelined connection's lanes)
// knows of its connection: whether it counts as open.
type connWatch struct {
	down bool // counted as not open: never opened, or lost since
}

// opened says the connection is open (again).
func (w *connWatch) opened(c *connCount) {
	if w.down {
		w.down = false
		c.opened.Add(1)
	}
}

// outcome follows the connection through an operation's error class (-1 for a
// success): a connection error loses it, anything else means it is open. One
// comparison per operation; the counters move only when the state does.
func (w *connWatch) outcome(c *connCount, class int) {
	if class == int(core.ErrClassConnection) {
		if !w.down {
			w.down = true
			c.lost.Add(1)
		}
		return
	}
	if w.down {
		w.opened(c)
	}
}

// sampleConns reads the counts into the slot of interval idx, whose end has
// passed: the interval's count is what was open then.
func (c *collector) sampleConns(upto int64) {
	for ; c.connsAt < upto; c.connsAt++ {
		s := c.slot(c.connsAt)
		s.opened, s.lost = c.e.conns.read()
		s.sampled = true
	}
}

// conns is interval s's core.Conns from its sample (or from the counts now,
// when the phase ended before the collector saw the interval end), as the
// difference from the interval before.
func (c *collector) conns(s *slot) *core.Conns {
	opened, lost := c.e.conns.read()
	if s != nil && s.sampled {
		opened, lost = s.opened, s.lost
	}
	out := &core.Conns{Open: int(opened - lost), Opened: int(opened - c.prevOpened), Lost: int(lost - c.prevLost)}
	c.prevOpened, c.prevLost = opened, lost
	return out
}
