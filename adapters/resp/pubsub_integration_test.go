package resp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
	"github.com/cmpbench/cmpbench/workloads/pubsub"
)

// runPubSub runs a short pub/sub phase through the engine against tg.
func runPubSub(t *testing.T, tg core.Target, publishers, subscribers, channels int) core.PhaseEnd {
	t.Helper()
	ps := core.PubSubSpec{Channels: channels, Subscribers: subscribers, PayloadSize: core.DefaultPayloadSize, ChannelPrefix: core.DefaultChannelPrefix}
	spec := core.PhaseSpec{Name: "pubsub", Kind: core.PhaseMeasured, Connections: publishers, Rate: 2000, Duration: time.Second,
		Workload: ps}
	var deliveries int64
	end := engine.Run(context.Background(), engine.Config{
		Spec:      spec,
		Connect:   tg.Connect,
		NewSource: func(i int) (core.OpSource, error) { return pubsub.New(ps, i), nil },
		Subscribe: tg.(core.Subscriber).Subscribe,
		Emit: func(r core.IntervalReport) {
			for _, o := range r.Ops {
				if o.Op == core.OpDeliver {
					deliveries += o.OK
				}
			}
		},
	})
	if end.PubSub != nil && deliveries != end.PubSub.Delivered {
		t.Errorf("intervals counted %d deliveries, the phase %d", deliveries, end.PubSub.Delivered)
	}
	return end
}

func TestPubSubDeliversEveryMessageIntegration(t *testing.T) {
	srv := provisiontest.Redis(t, "--requirepass", "s3cret")
	for _, driver := range []string{"", "rueidis"} { // raw sockets in event loops, rueidis in goroutines
		t.Run("driver="+driver, func(t *testing.T) {
			tg, err := Adapter{}.Open(context.Background(), core.SystemConfig{Name: "r", Endpoint: srv.Endpoint(),
				Auth: core.AuthConfig{Password: "s3cret"}, Timeout: 2 * time.Second, Options: map[string]string{"driver": driver}})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(context.Background())
			end := runPubSub(t, tg, 4, 10, 5)
			pc := end.PubSub
			if end.Status != core.StatusOK || pc == nil {
				t.Fatalf("%s: %s", end.Status, end.Error)
			}
			if pc.Published < 1900 || pc.Expected != 2*pc.Published || pc.Delivered != pc.Expected || pc.Lost != 0 || pc.Duplicates != 0 || pc.Foreign != 0 {
				t.Fatalf("%+v", *pc)
			}
			for _, o := range end.Totals {
				if o.Op == core.OpDeliver && (o.OK != pc.Delivered || o.Service.P50 <= 0 || o.Service.P50 > int64(50*time.Millisecond)) {
					t.Fatalf("DELIVER %d ok, service p50 %d ns", o.OK, o.Service.P50)
				}
			}
		})
	}
}

func TestPubSubSubscriberRefusedIntegration(t *testing.T) {
	// Redis 7 gives new ACL users no channels: a subscriber is refused, by name.
	srv := provisiontest.Redis(t)
	admin := open(t, srv.Endpoint(), core.AuthConfig{})
	if err := admin.(*target).client.Do(context.Background(), admin.(*target).client.B().Arbitrary("ACL", "SETUSER", "nochan", "on", ">pw", "~*", "+@all", "resetchannels").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	tg := open(t, srv.Endpoint(), core.AuthConfig{Username: "nochan", Password: "pw"})
	end := runPubSub(t, tg, 1, 2, 2)
	if end.Status != core.StatusFailed || !strings.Contains(end.Error, "subscriber 1 of 2") || !strings.Contains(end.Error, "NOPERM") {
		t.Fatalf("%s: %s", end.Status, end.Error)
	}
}
