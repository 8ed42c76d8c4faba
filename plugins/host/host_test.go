package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/plugins"
	pluginv1 "github.com/cmpbench/cmpbench/plugins/proto/v1"
	"github.com/cmpbench/cmpbench/plugins/sdk"
	"github.com/cmpbench/cmpbench/workloads/memtier"
)

// fake is an adapter whose answers a test dictates: Open refuses a wrong password
// and fails (to be retried) on the endpoint "down"; its target counts but cannot be
// emptied, and its connections answer every GET at once.
type fake struct{}

func (fake) Info() core.Info {
	return core.Info{Name: "fake", Version: "9", Ops: []core.OpKind{core.OpGet},
		Options: []core.Option{{Name: "depth", Type: core.OptionInt, Doc: "how deep"}}}
}

func (fake) ValidateSystem(sys core.SystemConfig) error {
	if sys.TLS.Enabled {
		return errors.New("fake speaks no TLS")
	}
	return nil
}

func (fake) Open(_ context.Context, sys core.SystemConfig) (core.Target, error) {
	switch {
	case sys.Auth.Password == "wrong":
		return nil, core.Refused(errors.New("WRONGPASS invalid username-password pair"))
	case sys.Endpoint == "down":
		return nil, errors.New("dial tcp: connection refused")
	}
	return fakeTarget{}, nil
}

type fakeTarget struct{}

func (fakeTarget) Connect(context.Context) (core.Conn, error) { return fakeConn{}, nil }
func (fakeTarget) Capture(context.Context) (core.Capture, error) {
	return core.Capture{Product: "fake", Version: "1.0"}, nil
}
func (fakeTarget) Stats(context.Context) (map[string]string, error) {
	return nil, errors.New("stats are down: INFO failed")
}
func (fakeTarget) Close(context.Context) error          { return nil }
func (fakeTarget) Count(context.Context) (int64, error) { return 42, nil }

type fakeConn struct{}

func (fakeConn) Do(context.Context, *core.Op) error { return nil }
func (fakeConn) Close() error                       { return nil }

// connected is a Driver talking to an sdk.Server over go-plugin's in-memory gRPC
// connection: the host and the plugin side of the boundary, in one process.
func connected(t *testing.T) *Driver {
	t.Helper()
	return connectedTo(t, sdk.NewServer(fake{}))
}

// connectedTo is a Driver talking to server over go-plugin's in-memory gRPC
// connection.
func connectedTo(t *testing.T, server pluginv1.AdapterServer) *Driver {
	t.Helper()
	ps := plugins.VersionedPlugins(server)[plugins.ProtocolVersion]
	client, _ := plugin.TestPluginGRPCConn(t, false, ps)
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(plugins.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{rpc: raw.(pluginv1.AdapterClient), stderr: &tail{max: 1 << 10}}
	if err := d.describe(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBoundaryInProcess(t *testing.T) {
	ctx := context.Background()
	d := connected(t)

	info := d.Info()
	if info.Name != "fake" || info.Version != "9" || len(info.Options) != 1 || info.Options[0].Type != core.OptionInt {
		t.Errorf("described as %+v", info)
	}
	if strings.Join(info.Capabilities, ",") != strings.Join(engine.Capabilities, ",") {
		t.Errorf("capabilities %v, want the engine's %v", info.Capabilities, engine.Capabilities)
	}
	if d.SDKVersion() == "" {
		t.Error("no sdk_version")
	}

	// What the adapter meant crosses the boundary as an error the host can test
	// for, with the adapter's own message and no gRPC framing.
	for _, tc := range []struct {
		name    string
		sys     core.SystemConfig
		refused bool
		msg     string
	}{
		{"wrong password", core.SystemConfig{Endpoint: "x", Auth: core.AuthConfig{Password: "wrong"}}, true, "WRONGPASS invalid username-password pair"},
		{"not up yet", core.SystemConfig{Endpoint: "down"}, false, "dial tcp: connection refused"},
	} {
		err := d.Open(ctx, tc.sys)
		if err == nil || errors.Is(err, core.ErrRefused) != tc.refused || err.Error() != tc.msg {
			t.Errorf("%s: %v (refused %v), want %q refused %v", tc.name, err, errors.Is(err, core.ErrRefused), tc.msg, tc.refused)
		}
	}
	if err := d.ValidateSystem(ctx, core.SystemConfig{TLS: core.TLSConfig{Enabled: true}}); err == nil || err.Error() != "fake speaks no TLS" {
		t.Errorf("ValidateSystem: %v", err)
	}
	// Before Open there is no system.
	if _, err := d.Count(ctx); err == nil || !strings.Contains(err.Error(), "no system is open") {
		t.Errorf("Count before Open: %v", err)
	}
	if err := d.Open(ctx, core.SystemConfig{Endpoint: "up"}); err != nil {
		t.Fatal(err)
	}
	if n, err := d.Count(ctx); n != 42 || err != nil {
		t.Errorf("Count: %d %v", n, err)
	}
	if err := d.Flush(ctx); !errors.Is(err, core.ErrUnsupported) {
		t.Errorf("Flush of a target that cannot: %v, want core.ErrUnsupported", err)
	}
	if _, err := d.Stats(ctx); err == nil || err.Error() != "stats are down: INFO failed" {
		t.Errorf("Stats: %v", err)
	}
	if c, err := d.Capture(ctx); err != nil || c.Product != "fake" {
		t.Errorf("Capture: %+v %v", c, err)
	}

	// A phase runs in the plugin and its intervals and end stream back.
	spec := core.PhaseSpec{Name: "p", Kind: core.PhaseMeasured, Connections: 2, Duration: 5 * time.Second, Ops: 1000, Interval: time.Second,
		Workload: memtier.Spec{GetRatio: 1, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 10, ValueMin: 1, ValueMax: 1}}
	intervals := 0
	end, err := d.RunPhase(ctx, spec, func(core.IntervalReport) { intervals++ })
	if err != nil || end.Status != core.StatusOK || intervals == 0 || len(end.Totals) != 1 || end.Totals[0].OK != 1000 {
		t.Errorf("RunPhase: %v, %+v, %d intervals", err, end.Status, intervals)
	}
	// A workload the adapter cannot run is refused by the plugin, naming the op.
	set := spec
	set.Workload = memtier.Spec{SetRatio: 1, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 10, ValueMin: 1, ValueMax: 1}
	if _, err := d.RunPhase(ctx, set, func(core.IntervalReport) {}); err == nil || !strings.Contains(err.Error(), "does not support SET") {
		t.Errorf("RunPhase of SETs: %v", err)
	}
}
