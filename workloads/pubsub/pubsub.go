// Package pubsub generates the publishers' streams of a pub/sub phase: each
// publisher cycles over the channels, and every message starts with the header
// (core.PubSubHeader) that lets subscribers time it and find gaps and repeats.
package pubsub

import (
	"github.com/cmpbench/cmpbench/core"
)

// Source is one publisher's stream. It never allocates after New.
type Source struct {
	publisher uint32
	channels  [][]byte
	next      int      // the channel of the next message
	seq       []uint64 // the next message's number on each channel
	payload   []byte
}

// New returns the stream of publisher (0-based). Publisher i starts at channel
// i mod Channels, so that the publishers spread over the channels.
func New(spec core.PubSubSpec, publisher int) *Source {
	s := &Source{
		publisher: uint32(publisher),
		channels:  make([][]byte, spec.Channels),
		next:      publisher % spec.Channels,
		seq:       make([]uint64, spec.Channels),
		payload:   make([]byte, spec.PayloadSize),
	}
	for i := range s.channels {
		s.channels[i] = spec.Channel(i)
	}
	// A filler that is the same in every run: the payload's bytes after the header
	// do not matter, but they should not compress to nothing.
	for i := core.PubSubHeaderSize; i < len(s.payload); i++ {
		s.payload[i] = 'a' + byte(i%26)
	}
	return s
}

// Next fills op with the next message; the engine stamps its times at the send.
func (s *Source) Next(op *core.Op) {
	c := s.next
	core.PutPubSubHeader(s.payload, core.PubSubHeader{Publisher: s.publisher, Channel: uint32(c), Seq: s.seq[c]})
	s.seq[c]++
	if s.next++; s.next == len(s.channels) {
		s.next = 0
	}
	op.Kind, op.Key, op.Value = core.OpPublish, s.channels[c], s.payload
	op.Fields, op.Values = nil, nil
}

func init() {
	core.RegisterWorkload(core.WorkloadKind{
		Name:   core.PubSubKind,
		Doc:    func() core.WorkloadDoc { return &doc{} },
		Decode: core.DecodeJSON[core.PubSubSpec],
		Streams: func(p core.PhaseSpec) (core.Streams, error) {
			return streams(p.Workload.(core.PubSubSpec)), nil
		},
	})
}

// streams are a phase's publishers; it has no side probe: its subscribers time
// every message.
type streams core.PubSubSpec

func (s streams) Source(conn int) core.OpSource         { return New(core.PubSubSpec(s), conn) }
func (s streams) ProbeSource(core.OpKind) core.OpSource { return nil }

// doc is a pub/sub workload as a suite writes it; the phase's connections are
// the publishers.
type doc struct {
	Subscribers   int     `yaml:"subscribers"`
	Channels      int     `yaml:"channels"`     // default: one per subscriber
	PayloadSize   int     `yaml:"payload_size"` // default 128 B, the seed's
	ChannelPrefix *string `yaml:"channel_prefix"`
}

// Resolve implements core.WorkloadDoc.
func (d *doc) Resolve(p *core.PhaseSpec) []error {
	ps := core.PubSubSpec{Subscribers: d.Subscribers, Channels: d.Channels, PayloadSize: d.PayloadSize, ChannelPrefix: core.DefaultChannelPrefix}
	if ps.Channels == 0 {
		ps.Channels = ps.Subscribers
	}
	if ps.PayloadSize == 0 {
		ps.PayloadSize = core.DefaultPayloadSize
	}
	if d.ChannelPrefix != nil {
		ps.ChannelPrefix = *d.ChannelPrefix
	}
	p.Workload = ps
	return nil
}
