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
