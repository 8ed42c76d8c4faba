package sdk

import (
	"context"
	"maps"
	"slices"
	"testing"

	pluginv1 "github.com/cmpbench/cmpbench/plugins/proto/v1"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/plugins"
)

// optionsAdapter declares options with defaults and keeps what Open received.
type optionsAdapter struct {
	core.Adapter
	got   map[string]string
	nodes []string
}

func (a *optionsAdapter) Info() core.Info {
	return core.Info{Name: "opts", Options: []core.Option{
		{Name: "db", Type: core.OptionInt, Default: "0"},
		{Name: "client_name", Type: core.OptionString, Default: "cmpbench"},
		{Name: "token", Type: core.OptionString},
	}}
}

func (a *optionsAdapter) Open(_ context.Context, sys core.SystemConfig) (core.Target, error) {
	a.got, a.nodes = sys.Options, sys.Nodes
	return nil, nil
}

// Declared defaults reach the adapter's Open; what the systems file gives wins.
func TestOpenReceivesDeclaredDefaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given map[string]string
		want  map[string]string
	}{
		{"none given", nil, map[string]string{"db": "0", "client_name": "cmpbench"}},
		{"one given", map[string]string{"db": "3"}, map[string]string{"db": "3", "client_name": "cmpbench"}},
		{"all given", map[string]string{"db": "1", "client_name": "x", "token": "t"}, map[string]string{"db": "1", "client_name": "x", "token": "t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &optionsAdapter{}
			sys := plugins.SystemToProto(core.SystemConfig{Name: "s", Adapter: "opts", Endpoint: "127.0.0.1:1", Options: tc.given})
			if _, err := NewServer(a).Open(context.Background(), &pluginv1.OpenRequest{System: sys}); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(a.got, tc.want) {
				t.Fatalf("Open received options %v, want %v", a.got, tc.want)
			}
		})
	}
}

// Every node's address reaches the adapter's Open, in order; from a host older
// than the nodes field, Nodes is the endpoint alone.
func TestOpenReceivesEveryNode(t *testing.T) {
	three := []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}
	for _, tc := range []struct {
		name  string
		sent  *pluginv1.SystemConfig
		nodes []string
	}{
		{"a cluster", plugins.SystemToProto(core.SystemConfig{Name: "c", Endpoint: three[0], Nodes: three}), three},
		{"one server", plugins.SystemToProto(core.SystemConfig{Name: "s", Endpoint: three[0], Nodes: three[:1]}), three[:1]},
		{"an older host", &pluginv1.SystemConfig{Name: "s", Endpoint: three[1]}, three[1:2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &optionsAdapter{}
			if _, err := NewServer(a).Open(context.Background(), &pluginv1.OpenRequest{System: tc.sent}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.nodes, tc.nodes) {
				t.Fatalf("Open received nodes %q, want %q", a.nodes, tc.nodes)
			}
		})
	}
}

// captureAdapter's target captures one section; with facts, the adapter reads
// its facts from the sections (core.FactReader).
type captureAdapter struct{ core.Adapter }

type captureTarget struct{ core.Target }

func (captureAdapter) Info() core.Info { return core.Info{Name: "capture"} }

func (captureAdapter) Open(context.Context, core.SystemConfig) (core.Target, error) {
	return captureTarget{}, nil
}

func (captureTarget) Capture(context.Context) (core.Capture, error) {
	return core.Capture{Product: "p", Sections: map[string]string{"config": "threads 4\n"}}, nil
}

type factsAdapter struct{ captureAdapter }

func (factsAdapter) Facts(sections map[string]string) core.Facts {
	return core.Facts{Threads: core.Fact{Words: "from " + sections["config"]}}
}

// The SDK sends the facts an adapter reads from its own capture's sections,
// and none for an adapter that reads none.
func TestCaptureCarriesTheAdaptersFacts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		adapter core.Adapter
		want    *core.Facts
	}{
		{"a fact reader", factsAdapter{}, &core.Facts{Threads: core.Fact{Words: "from threads 4\n"}}},
		{"no fact reader", captureAdapter{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(tc.adapter)
			if _, err := s.Open(context.Background(), &pluginv1.OpenRequest{System: &pluginv1.SystemConfig{Name: "s", Endpoint: "127.0.0.1:1"}}); err != nil {
				t.Fatal(err)
			}
			m, err := s.Capture(context.Background(), &pluginv1.CaptureRequest{})
			if err != nil {
				t.Fatal(err)
			}
			got := plugins.CaptureFromProto(m).Facts
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("facts %+v, want %+v", got, tc.want)
			}
		})
	}
}
