// Package plugins is the boundary between cmpbench and adapters: the go-plugin
// handshake, the protocol version, and the one place where core types and protobuf
// messages are converted. Built-in adapters and third-party ones cross it alike.
package plugins

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/cmpbench/cmpbench/plugins/proto/v1"
)

// ProtocolVersion is bumped on every breaking change of proto/v1; new features arrive
// as capabilities instead. 2: a phase's workload crosses as its registered kind
// and JSON (core.RegisterWorkload) instead of one message per kind; plugins built
// for 1 must be rebuilt. A field added under a new number is not a breaking
// change and bumps nothing: SystemConfig.nodes (11), which an older host does not
// send (the SDK then gives the adapter its endpoint alone, and an older plugin
// ignores it).
const ProtocolVersion = 2

// PluginName is the one plugin kind a plugin binary serves.
const PluginName = "adapter"

// Handshake is shared by host and plugins. The cookie never changes: it only tells a
// plugin binary that it was started by cmpbench.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "CMPBENCH_PLUGIN",
	MagicCookieValue: "6f1d3b0e9c2a4e57a8b5cmpbench-adapter",
}

// grpcPlugin adapts the generated service to go-plugin; it supports gRPC only.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	server pluginv1.AdapterServer
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterAdapterServer(s, p.server)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return pluginv1.NewAdapterClient(cc), nil
}

// VersionedPlugins is the plugin set for each protocol version; server is nil on the
// host side.
func VersionedPlugins(server pluginv1.AdapterServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &grpcPlugin{server: server}},
	}
}
