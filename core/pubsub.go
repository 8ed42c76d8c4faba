package core

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
)

// Publish/subscribe delivery latency (seed 001's pub/sub test): the phase's
// connections publish, open loop at the phase's rate, to channels that
// subscribers listen on; every message carries its publisher, its channel, its
// number on that channel and the times it was meant to be and was sent. A
// subscriber records each delivery as an OpDeliver: response time from the
// intended publish time, service time from the actual send, both to the moment the
// engine read it. Every time in a message is in nanoseconds from the phase start,
// on the clock of the one process that publishes and subscribes.

// PubSubSpec is a publish/subscribe workload. Publishers are the phase's
// connections; publisher i sends its k-th message to channel (i+k) mod Channels.
// Subscriber j listens on channel j mod Channels, so each message is delivered to
// Subscribers/Channels subscribers (1 when they are equal: each message to one
// subscriber, as the seed measured).
type PubSubSpec struct {
	Channels      int    `json:"channels"`
	Subscribers   int    `json:"subscribers"`
	PayloadSize   int    `json:"payload_size"` // bytes, at least PubSubHeaderSize
	ChannelPrefix string `json:"channel_prefix"`
}

// Defaults of a pub/sub workload.
const (
	DefaultChannelPrefix = "cmpbench:ch:"
	DefaultPayloadSize   = 128 // the seed's
	// MaxSubscribers bounds one phase's subscriber connections.
	MaxSubscribers = 10_000
)

// Fanout is how many subscribers receive each message.
func (p PubSubSpec) Fanout() int { return p.Subscribers / max(1, p.Channels) }

// Channel is the name of channel i.
func (p PubSubSpec) Channel(i int) []byte {
	return strconv.AppendInt([]byte(p.ChannelPrefix), int64(i), 10)
}

// PubSubKind is the pub/sub workload's kind (workloads/pubsub registers it).
const PubSubKind = "pubsub"

// Kind implements Workload.
func (p PubSubSpec) Kind() string { return PubSubKind }

// Unsplittable implements Unsplittable.
func (p PubSubSpec) Unsplittable() string {
	return "pub/sub phases are not split yet (each subscriber expects every publisher's messages)"
}

// OpKinds implements Workload: publishes, and their deliveries.
func (p PubSubSpec) OpKinds() []OpKind { return []OpKind{OpPublish, OpDeliver} }

// Describe is e.g. "pubsub 100 channels, 100 subscribers, 128B".
func (p PubSubSpec) Describe() string {
	return fmt.Sprintf("pubsub %d channels, %d subscribers, %dB", p.Channels, p.Subscribers, p.PayloadSize)
}

// Validate reports every problem with the workload; publishers are the
// phase's connections, any number.
func (p PubSubSpec) Validate(int) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf("pubsub: "+format, a...)) }
	if p.Subscribers < 1 || p.Subscribers > MaxSubscribers {
		add("subscribers must be in [1, %d], got %d", MaxSubscribers, p.Subscribers)
	}
	if p.Channels < 1 || p.Channels > p.Subscribers {
		add("channels must be in [1, subscribers], got %d", p.Channels)
	} else if p.Subscribers%p.Channels != 0 {
		add("%d subscribers do not divide evenly over %d channels: every channel needs as many", p.Subscribers, p.Channels)
	}
	if p.PayloadSize < PubSubHeaderSize || p.PayloadSize > 1<<20 {
		add("payload_size must be in [%d, 1 MiB] (a message carries a %d-byte header), got %d", PubSubHeaderSize, PubSubHeaderSize, p.PayloadSize)
	}
	if p.ChannelPrefix == "" {
		add("channel_prefix must not be empty")
	}
	return errs
}

// PubSubHeader is what every published message starts with.
type PubSubHeader struct {
	Publisher, Channel uint32
	// Seq numbers the publisher's messages on the channel from 0, so that a
	// subscriber sees gaps (lost) and repeats (duplicated).
	Seq uint64
	// Intended, Ready and Sent are ns from the phase start: when the message was
	// due, when its connection could send it (the later of that and the end of the
	// connection's previous request) and when its PUBLISH was written. The engine
	// writes them at the send; a delivery's send lag is its publish's.
	Intended, Ready, Sent int64
}

// PubSubHeaderSize is the header's length in bytes.
const PubSubHeaderSize = 48

// pubSubMagic starts every message, so that a subscriber tells cmpbench's messages
// from anything else published on its channels.
var pubSubMagic = [4]byte{'c', 'b', 'p', 's'}

// PutPubSubHeader writes h at the start of b (at least PubSubHeaderSize long).
func PutPubSubHeader(b []byte, h PubSubHeader) {
	_ = b[PubSubHeaderSize-1]
	copy(b, pubSubMagic[:])
	binary.LittleEndian.PutUint32(b[4:], h.Publisher)
	binary.LittleEndian.PutUint32(b[8:], h.Channel)
	binary.LittleEndian.PutUint32(b[12:], 0)
	binary.LittleEndian.PutUint64(b[16:], h.Seq)
	StampPublish(b, h.Intended, h.Ready, h.Sent)
}

// StampPublish writes a message's intended, ready and actual send times, in ns
// from the phase start, into its header.
func StampPublish(b []byte, intended, ready, sent int64) {
	binary.LittleEndian.PutUint64(b[24:], uint64(intended))
	binary.LittleEndian.PutUint64(b[32:], uint64(ready))
	binary.LittleEndian.PutUint64(b[40:], uint64(sent))
}

// ParsePubSubHeader reads the header of a delivered message; ok is false for a
// message cmpbench did not publish.
func ParsePubSubHeader(b []byte) (h PubSubHeader, ok bool) {
	if len(b) < PubSubHeaderSize || [4]byte(b[:4]) != pubSubMagic {
		return h, false
	}
	h.Publisher = binary.LittleEndian.Uint32(b[4:])
	h.Channel = binary.LittleEndian.Uint32(b[8:])
	h.Seq = binary.LittleEndian.Uint64(b[16:])
	h.Intended = int64(binary.LittleEndian.Uint64(b[24:]))
	h.Ready = int64(binary.LittleEndian.Uint64(b[32:]))
	h.Sent = int64(binary.LittleEndian.Uint64(b[40:]))
	return h, true
}

// Subscriber is implemented by targets with publish/subscribe; their adapter
// lists OpPublish among its Ops.
type Subscriber interface {
	// Subscribe opens one connection subscribed to channels, and returns once the
	// server has confirmed every subscription.
	Subscribe(ctx context.Context, channels [][]byte) (Subscription, error)
}

// Subscription is one subscribed connection. Like Conn.Do, Next never times
// anything: the engine reads the clock when Next returns.
type Subscription interface {
	// Next waits for the next message and returns its payload, valid until the
	// next call. It returns an error once the subscription is closed or broken.
	Next() ([]byte, error)
	// Close ends the subscription; a Next waiting returns an error.
	Close() error
}

// PubSubCounts is what a pub/sub phase's messages did.
type PubSubCounts struct {
	// Published counts the publishes the server acknowledged; Expected the
	// deliveries they owe (each to every subscriber of its channel).
	Published int64 `json:"published"`
	Expected  int64 `json:"expected"`
	// Delivered counts distinct deliveries; Lost the expected ones that had not
	// arrived when the subscribers stopped waiting (after the drain);
	// Duplicates deliveries of a message already delivered, or out of order.
	Delivered  int64 `json:"delivered"`
	Lost       int64 `json:"lost"`
	Duplicates int64 `json:"duplicates"`
	// Foreign counts messages on the channels that this phase did not publish.
	Foreign int64 `json:"foreign"`
	// Drain is how long the subscribers waited after the last publish, in ns.
	Drain int64 `json:"drain_ns"`
}
