package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// A pub/sub phase's connections publish (core.OpPublish, open loop like any
// other op); its subscribers are extra connections, opened before the clock like
// the others, each read by a goroutine of its own that takes the clock as soon as a
// message is read and records it as a core.OpDeliver. Deliveries go through one
// shared outbox, advanced by a ticker, so that a subscriber waiting for its next
// message never holds an interval back.

// Drain bounds: after the last publish, subscribers wait until every expected
// delivery has arrived, or nothing has for drainIdle, or drainMax has passed.
const (
	drainIdle = 500 * time.Millisecond
	drainMax  = 5 * time.Second
)

// subscriber is one subscribed connection and what it has seen.
type subscriber struct {
	sub     core.Subscription
	channel uint32
	// per publisher: the next sequence number expected (0: none seen yet, else
	// the last seen + 1), and the distinct messages seen
	next, seen []uint64
	dup        int64
	foreign    int64
	el         errLog
	errs       int64
}

// pubsubRun is a phase's subscribers and their shared outbox.
type pubsubRun struct {
	e    *execution
	spec core.PubSubSpec
	subs []*subscriber

	mu  sync.Mutex
	out *outbox

	delivered atomic.Int64 // distinct deliveries, for the drain
	closing   atomic.Bool  // the drain is over: the subscriptions are being closed
	outDone   bool         // the outbox is closed (under mu)
	last      atomic.Int64 // when the last message arrived, ns from the phase start
	drain     int64
}

// subscribeAll opens every subscription, a bounded number at a time; any that
// fails fails the phase: deliveries to a missing subscriber cannot be measured.
func subscribeAll(ctx context.Context, subscribe func(context.Context, [][]byte) (core.Subscription, error), spec core.PubSubSpec, publishers int) ([]*subscriber, error) {
	if subscribe == nil {
		return nil, errors.New("a pub/sub phase needs a target that can subscribe, and the engine was given none")
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	subs := make([]*subscriber, spec.Subscribers)
	errs := make([]error, spec.Subscribers)
	sem := make(chan struct{}, connectParallel)
	var wg sync.WaitGroup
	for j := range subs {
		ch := j % spec.Channels
		subs[j] = &subscriber{channel: uint32(ch), next: make([]uint64, publishers), seen: make([]uint64, publishers)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			subs[j].sub, errs[j] = subscribe(cctx, [][]byte{spec.Channel(ch)})
		}()
	}
	wg.Wait()
	for j, err := range errs {
		if err != nil {
			closeSubs(subs)
			return nil, fmt.Errorf("subscriber %d of %d (channel %s): %w", j+1, len(subs), spec.Channel(j%spec.Channels), err)
		}
	}
	return subs, nil
}

func closeSubs(subs []*subscriber) {
	for _, s := range subs {
		if s != nil && s.sub != nil {
			_ = s.sub.Close()
		}
	}
}

// start runs the subscribers, and, once the publishers (load) have finished,
// drains and closes them; all is done when the last delivery has been handed
// over.
func (p *pubsubRun) start(ctx context.Context, load, all *sync.WaitGroup, streams []*stream) {
	var subs sync.WaitGroup
	for _, s := range p.subs {
		subs.Add(1)
		go func() {
			defer subs.Done()
			p.run(s)
		}()
	}
	stopTick := make(chan struct{})
	go p.tick(stopTick)
	all.Add(1)
	go func() {
		defer all.Done()
		load.Wait()
		var published int64
		for _, s := range streams {
			for _, n := range s.published {
				published += n
			}
		}
		p.waitDrained(ctx, published*int64(p.spec.Fanout()))
		p.closing.Store(true)
		closeSubs(p.subs)
		subs.Wait()
		close(stopTick)
		p.mu.Lock()
		p.out.close()
		p.outDone = true
		p.mu.Unlock()
	}()
}

// run reads s's messages until its subscription is closed.
func (p *pubsubRun) run(s *subscriber) {
	e := p.e
	for {
		payload, err := s.sub.Next()
		end := e.now()
		if err != nil {
			if !e.stop.Load() && !p.closing.Load() {
				// A subscription that breaks during the phase: what it misses
				// counts as lost; the break is an error of the deliveries, and
				// its connection is lost (not reopened).
				e.conns.lost.Add(1)
				s.errs++
				class := core.ClassOf(err)
				if s.el[class] == "" {
					s.el[class] = "subscriber: " + err.Error()
				}
				p.add(sample{start: end, end: end, kind: core.OpDeliver, outcome: core.OutcomeError, class: class})
			}
			return
		}
		h, ok := core.ParsePubSubHeader(payload)
		if !ok || int(h.Publisher) >= len(s.next) || h.Channel != s.channel {
			s.foreign++
			continue
		}
		pub := h.Publisher
		if h.Seq+1 <= s.next[pub] {
			s.dup++ // seen already, or arrived after a later one
			continue
		}
		s.next[pub] = h.Seq + 1
		s.seen[pub]++
		p.delivered.Add(1)
		p.last.Store(end)
		p.add(sample{intended: h.Intended, ready: h.Ready, start: h.Sent, end: end, bytes: int64(len(payload)), kind: core.OpDeliver})
	}
}

func (p *pubsubRun) add(x sample) {
	p.mu.Lock()
	p.out.add(x)
	p.mu.Unlock()
}

// tick moves the shared outbox on, so that idle subscribers hold no interval back.
func (p *pubsubRun) tick(stop <-chan struct{}) {
	t := time.NewTicker(collectEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			if !p.outDone {
				p.out.advance(p.e.now())
			}
			p.mu.Unlock()
		}
	}
}

// waitDrained returns once every expected delivery has arrived, nothing has for
// drainIdle, the drain has lasted drainMax, or the phase stops.
func (p *pubsubRun) waitDrained(ctx context.Context, expected int64) {
	e := p.e
	start := e.now()
	defer func() { p.drain = e.now() - start }()
	for p.delivered.Load() < expected && !e.stop.Load() && ctx.Err() == nil {
		now := e.now()
		if now-start >= int64(drainMax) || now-max(p.last.Load(), start) >= int64(drainIdle) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// counts tallies the phase's messages once every subscriber has ended. published
// holds each publisher's acknowledged publishes by channel.
func (p *pubsubRun) counts(published [][]int64) *core.PubSubCounts {
	fanout := int64(p.spec.Fanout())
	pc := &core.PubSubCounts{Drain: p.drain}
	for _, byChannel := range published {
		for _, n := range byChannel {
			pc.Published += n
		}
	}
	pc.Expected = pc.Published * fanout
	for _, s := range p.subs {
		pc.Duplicates += s.dup
		pc.Foreign += s.foreign
		for pub, byChannel := range published {
			n := uint64(byChannel[s.channel])
			pc.Delivered += int64(s.seen[pub])
			if s.seen[pub] < n {
				pc.Lost += int64(n - s.seen[pub])
			}
		}
	}
	return pc
}
