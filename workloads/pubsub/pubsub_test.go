package pubsub

import (
	"testing"

	"github.com/cmpbench/cmpbench/core"
)

func TestPublishersCycleOverChannelsAndNumberTheirMessages(t *testing.T) {
	spec := core.PubSubSpec{Channels: 3, Subscribers: 3, PayloadSize: 64, ChannelPrefix: "ch:"}
	s := New(spec, 4) // starts at channel 4 mod 3 = 1
	var op core.Op
	want := []struct {
		channel string
		seq     uint64
	}{{"ch:1", 0}, {"ch:2", 0}, {"ch:0", 0}, {"ch:1", 1}, {"ch:2", 1}}
	for i, w := range want {
		s.Next(&op)
		h, ok := core.ParsePubSubHeader(op.Value)
		if op.Kind != core.OpPublish || string(op.Key) != w.channel || !ok || h.Publisher != 4 || h.Seq != w.seq ||
			string(spec.Channel(int(h.Channel))) != w.channel || len(op.Value) != 64 {
			t.Fatalf("message %d: %s %q %+v", i, op.Kind, op.Key, h)
		}
	}
	if n := testing.AllocsPerRun(100, func() { s.Next(&op) }); n != 0 {
		t.Fatalf("%g allocations per message", n)
	}
}
