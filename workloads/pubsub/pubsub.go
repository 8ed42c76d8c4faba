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
