package core

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestPubSubHeaderRoundTrip(t *testing.T) {
	b := make([]byte, 128)
	h := PubSubHeader{Publisher: 63, Channel: 99, Seq: 1<<40 + 7, Intended: int64(90 * time.Minute), Ready: int64(90*time.Minute + 1000), Sent: int64(90*time.Minute + 1234)}
	PutPubSubHeader(b, h)
	got, ok := ParsePubSubHeader(b)
	if !ok || got != h {
		t.Fatalf("%+v, %v; want %+v", got, ok, h)
	}
	// The engine stamps the times at the send; they are nanoseconds from the
	// phase start, read back as written, in the same unit.
	StampPublish(b, 1_000_000, 1_000_200, 1_000_500)
	got, _ = ParsePubSubHeader(b)
	if got.Intended != 1_000_000 || got.Ready != 1_000_200 || got.Sent != 1_000_500 || got.Seq != h.Seq {
		t.Fatalf("after stamping: %+v", got)
	}
	if delivered := int64(21 * time.Millisecond); time.Duration(delivered-got.Sent) != 21*time.Millisecond-1_000_500 {
		t.Fatal("a delivery's latency is not its ns difference")
	}
	for _, foreign := range [][]byte{nil, []byte("hello"), make([]byte, 128)} {
		if _, ok := ParsePubSubHeader(foreign); ok {
			t.Fatalf("%q read as cmpbench's", foreign)
		}
	}
}

func TestPubSubSpecValidate(t *testing.T) {
	ok := PubSubSpec{Channels: 100, Subscribers: 100, PayloadSize: 128, ChannelPrefix: DefaultChannelPrefix}
	for _, tc := range []struct {
		name string
		edit func(*PubSubSpec)
		want string
	}{
		{"ok", func(*PubSubSpec) {}, ""},
		{"fan-out", func(p *PubSubSpec) { p.Channels = 25 }, ""},
		{"no subscriber", func(p *PubSubSpec) { p.Subscribers, p.Channels = 0, 0 }, "subscribers must be"}, // and so channels
		{"more channels than subscribers", func(p *PubSubSpec) { p.Channels = 101 }, "channels must be"},
		{"uneven", func(p *PubSubSpec) { p.Channels = 30 }, "do not divide evenly"},
		{"payload below the header", func(p *PubSubSpec) { p.PayloadSize = 47 }, "48-byte header"},
		{"no prefix", func(p *PubSubSpec) { p.ChannelPrefix = "" }, "channel_prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ok
			tc.edit(&p)
			errs := p.Validate(0)
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Fatalf("%v, want %q", errs, tc.want)
			}
		})
	}
}

func TestPubSubPhaseRules(t *testing.T) {
	ps := &PubSubSpec{Channels: 2, Subscribers: 2, PayloadSize: 64, ChannelPrefix: "c:"}
	base := PhaseSpec{Name: "p", Kind: PhaseMeasured, Connections: 2, Rate: 100, Duration: time.Second, Workload: *ps}
	if errs := base.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if base.Writes() {
		t.Fatal("a pub/sub phase stores nothing")
	}
	for _, tc := range []struct {
		edit func(*PhaseSpec)
		want string
	}{
		{func(p *PhaseSpec) { p.Rate = 0 }, "needs a rate"},
		{func(p *PhaseSpec) { p.Kind, p.Ops = PhaseLoad, 10 }, "cannot be a load"},
		{func(p *PhaseSpec) { p.Probe = &ProbeSpec{Rate: 10} }, "no side probe"},
		{func(p *PhaseSpec) { p.Workload = nil }, "no workload"},
		{func(p *PhaseSpec) { p.Rate = math.Inf(1) }, "rate must be a number of requests/s from 0 to 1e+09"},
		{func(p *PhaseSpec) { p.Rate = math.NaN() }, "rate must be a number of requests/s from 0 to 1e+09"},
		{func(p *PhaseSpec) { p.Rate = -1 }, "rate must be a number of requests/s from 0 to 1e+09"},
	} {
		p := base
		tc.edit(&p)
		errs := p.Validate()
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%v, want %q", errs, tc.want)
		}
	}
}

func TestDeliveriesAreNotThroughput(t *testing.T) {
	p := &PhaseRun{Spec: PhaseSpec{Rate: 1000}, End: PhaseEnd{Status: StatusOK, Elapsed: time.Second},
		Totals: []OpInterval{{Op: OpPublish, OK: 980}, {Op: OpDeliver, OK: 980}}}
	if achieved, ok := Sustained(p); achieved != 980 || !ok {
		t.Fatalf("achieved %g, sustained %v", achieved, ok)
	}
	if !OpPublish.Issued() || OpDeliver.Issued() || OpPublish.Stores() || !OpSet.Stores() {
		t.Fatal("op kind predicates")
	}
}
