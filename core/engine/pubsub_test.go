package engine

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/pubsub"
)

// broker is an in-memory pub/sub server whose behaviour a test dictates: it
// delivers each published message after delay, in the order they were
// published (one goroutine delivers them all, as a server's one connection to a
// subscriber would), and can drop or repeat some.
type broker struct {
	delay       time.Duration
	drop, twice func(n int) bool // by the message's number, from 0
	foreign     bool             // publish something else too

	mu    sync.Mutex
	n     int
	subs  map[string][]*memSub
	queue chan delivery
}

type delivery struct {
	at   time.Time
	subs []*memSub
	msgs [][]byte
}

// deliver sends the queued messages in order, each at its time.
func (b *broker) deliver() {
	for d := range b.queue {
		time.Sleep(time.Until(d.at))
		for _, s := range d.subs {
			for _, m := range d.msgs {
				s.msgs <- m
			}
		}
	}
}

type memSub struct {
	msgs   chan []byte
	closed chan struct{}
	once   sync.Once
}

func (s *memSub) Next() ([]byte, error) {
	select {
	case m := <-s.msgs:
		return m, nil
	case <-s.closed:
		return nil, errors.New("closed")
	}
}

func (s *memSub) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func (b *broker) Subscribe(_ context.Context, channels [][]byte) (core.Subscription, error) {
	s := &memSub{msgs: make(chan []byte, 1<<16), closed: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[string][]*memSub{}
	}
	for _, c := range channels {
		b.subs[string(c)] = append(b.subs[string(c)], s)
	}
	return s, nil
}

func (b *broker) publish(op *core.Op) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.queue == nil {
		b.queue = make(chan delivery, 1<<16)
		go b.deliver()
	}
	n := b.n
	b.n++
	times := 1
	switch {
	case b.drop != nil && b.drop(n):
		times = 0
	case b.twice != nil && b.twice(n):
		times = 2
	}
	msg := bytes.Clone(op.Value)
	var msgs [][]byte
	for range times {
		msgs = append(msgs, msg)
	}
	if b.foreign {
		msgs = append(msgs, []byte("someone else's message"))
	}
	// Queued under the lock: the order of the queue is the order of publishing.
	b.queue <- delivery{at: time.Now().Add(b.delay), subs: b.subs[string(op.Key)], msgs: msgs}
	return nil
}

func pubsubSpec(publishers, subscribers, channels int, rate float64, d time.Duration) core.PhaseSpec {
	return core.PhaseSpec{
		Name: "ps", Kind: core.PhaseMeasured, Connections: publishers, Rate: rate, Duration: d, Interval: 250 * time.Millisecond,
		Workload: core.PubSubSpec{Channels: channels, Subscribers: subscribers, PayloadSize: 128, ChannelPrefix: "ch:"},
	}
}

func runPubSub(t *testing.T, s core.PhaseSpec, b *broker) (core.PhaseEnd, *collected) {
	t.Helper()
	c := &collected{}
	end := Run(context.Background(), Config{
		Spec:      s,
		Connect:   func(context.Context) (core.Conn, error) { return scriptConn{b.publish}, nil },
		NewSource: func(i int) (core.OpSource, error) { return pubsub.New(s.Workload.(core.PubSubSpec), i), nil },
		Subscribe: b.Subscribe,
		Emit:      c.emit,
	})
	return end, c
}

func TestPubSubCountsEveryMessage(t *testing.T) {
	every := func(k int) func(int) bool { return func(n int) bool { return n%k == k-1 } }
	for _, tc := range []struct {
		name                    string
		subscribers, channels   int
		b                       *broker
		lostPer, dupPer, fanout int64 // lost and duplicated: one in lostPer/dupPer messages
		foreign                 bool
	}{
		{name: "each message to one subscriber", subscribers: 8, channels: 8, fanout: 1},
		{name: "fan-out of two", subscribers: 8, channels: 4, fanout: 2},
		{name: "every tenth lost", subscribers: 4, channels: 4, fanout: 1, b: &broker{drop: every(10)}, lostPer: 10},
		{name: "every fifth twice", subscribers: 4, channels: 4, fanout: 1, b: &broker{twice: every(5)}, dupPer: 5},
		{name: "foreign messages", subscribers: 4, channels: 4, fanout: 1, b: &broker{foreign: true}, foreign: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			if b == nil {
				b = &broker{}
			}
			b.delay = time.Millisecond
			end, c := runPubSub(t, pubsubSpec(3, tc.subscribers, tc.channels, 1000, 500*time.Millisecond), b)
			if end.Status != core.StatusOK {
				t.Fatalf("status %s: %s", end.Status, end.Error)
			}
			pc := end.PubSub
			if pc == nil {
				t.Fatal("no pub/sub counts")
			}
			tot := c.total()
			if pc.Published != tot[core.OpPublish].OK || pc.Published < 400 {
				t.Fatalf("published %d, PUBLISH ok %d", pc.Published, tot[core.OpPublish].OK)
			}
			published := int64(b.n)
			if pc.Expected != pc.Published*tc.fanout {
				t.Fatalf("expected %d deliveries of %d messages at fan-out %d", pc.Expected, pc.Published, tc.fanout)
			}
			var lost, dup int64
			if tc.lostPer > 0 {
				lost = published / tc.lostPer * tc.fanout
			}
			if tc.dupPer > 0 {
				dup = published / tc.dupPer * tc.fanout
			}
			if pc.Lost != lost || pc.Duplicates != dup || pc.Delivered != pc.Expected-lost {
				t.Fatalf("lost %d (want %d), duplicates %d (want %d), delivered %d of %d", pc.Lost, lost, pc.Duplicates, dup, pc.Delivered, pc.Expected)
			}
			if got := tot[core.OpDeliver].OK; got != pc.Delivered {
				t.Fatalf("DELIVER counted %d, delivered %d", got, pc.Delivered)
			}
			if tc.foreign != (pc.Foreign > 0) {
				t.Fatalf("foreign %d", pc.Foreign)
			}
			// The subscribers hold connections too.
			if got := c.intervals[0].Conns; got == nil || got.Open != 3+tc.subscribers {
				t.Fatalf("connections %+v, want the 3 publishers' and the %d subscribers'", got, tc.subscribers)
			}
		})
	}
}

// The seed found a tool comparing a publish time in milliseconds with a delivery
// time in microseconds: a delivery delayed by a known 20 ms must read 20 ms.
func TestPubSubMeasuresAKnownDelay(t *testing.T) {
	precise(t)
	const delay = 20 * time.Millisecond
	b := &broker{delay: delay}
	end, c := runPubSub(t, pubsubSpec(4, 4, 4, 500, time.Second), b)
	if end.Status != core.StatusOK || end.PubSub.Lost != 0 {
		t.Fatalf("status %s %s, %+v", end.Status, end.Error, end.PubSub)
	}
	d := c.total()[core.OpDeliver]
	for name, h := range map[string]interface{ ValueAtQuantile(float64) int64 }{"service": d.svc, "response": d.resp} {
		got := time.Duration(h.ValueAtQuantile(50))
		if got < delay*9/10 || got > delay*11/10 {
			t.Errorf("%s p50 %s for a delivery delayed by %s: not within 10%%", name, got, delay)
		}
	}
	if got := time.Duration(c.total()[core.OpPublish].svc.ValueAtQuantile(50)); got > delay/4 {
		t.Errorf("PUBLISH p50 %s: the delay is the delivery's, not the publish's", got)
	}
	// A delivery's send lag is its publish's: the client's delay, not the server's.
	// Counted as the client's, the delay would be every delivery's send lag, so
	// the median tells; the tail also holds the publisher's own hiccups on a
	// loaded machine (a p99 of 8 ms was seen in CI beside a build).
	if got := time.Duration(d.lag.ValueAtQuantile(50)); got > delay/4 {
		t.Errorf("DELIVER send lag p50 %s: the delivery delay counted as the client's", got)
	}
}

// Deliveries go on after the last publish, for longer than an interval here: the
// intervals that hold them end with the last delivery, never before they start.
func TestPubSubDrainIntervalsHaveLength(t *testing.T) {
	const delay = 400 * time.Millisecond // an interval is 250 ms
	b := &broker{delay: delay}
	end, c := runPubSub(t, pubsubSpec(2, 2, 2, 200, 500*time.Millisecond), b)
	if end.Status != core.StatusOK || end.PubSub.Lost != 0 {
		t.Fatalf("status %s %s, %+v", end.Status, end.Error, end.PubSub)
	}
	var delivered int64
	var last time.Duration
	for i, r := range c.intervals {
		if r.End <= r.Start {
			t.Fatalf("interval %d: %s to %s", r.Index, r.Start, r.End)
		}
		if r.Index != i || r.Start != time.Duration(i)*250*time.Millisecond {
			t.Fatalf("interval %d at position %d starts at %s", r.Index, i, r.Start)
		}
		for _, o := range r.Ops {
			if o.Op == core.OpDeliver {
				delivered += o.OK
			}
		}
		last = r.End
	}
	if delivered != end.PubSub.Delivered || delivered == 0 {
		t.Fatalf("intervals hold %d deliveries of %d", delivered, end.PubSub.Delivered)
	}
	if last < end.Elapsed+delay*3/4 {
		t.Fatalf("the last interval ends at %s: before the drain's deliveries (last publish %s, delay %s)", last, end.Elapsed, delay)
	}
}

func TestPubSubFailsWithoutEverySubscriber(t *testing.T) {
	s := pubsubSpec(2, 3, 3, 100, 200*time.Millisecond)
	n := 0
	var mu sync.Mutex
	b := &broker{}
	end := Run(context.Background(), Config{
		Spec:      s,
		Connect:   func(context.Context) (core.Conn, error) { return scriptConn{b.publish}, nil },
		NewSource: func(i int) (core.OpSource, error) { return pubsub.New(s.Workload.(core.PubSubSpec), i), nil },
		Subscribe: func(ctx context.Context, ch [][]byte) (core.Subscription, error) {
			mu.Lock()
			defer mu.Unlock()
			if n++; n == 2 {
				return nil, errors.New("NOPERM this user has no permissions to access the channel")
			}
			return b.Subscribe(ctx, ch)
		},
	})
	if end.Status != core.StatusFailed || !strings.Contains(end.Error, "NOPERM") || !strings.Contains(end.Error, "subscriber") {
		t.Fatalf("%s: %s", end.Status, end.Error)
	}
}
