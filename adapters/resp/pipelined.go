package resp

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/cmpbench/cmpbench/core"
)

// A pipelined phase (PhaseSpec.Pipeline) on a connection the engine cannot drive
// raw (TLS, a cluster, `driver: rueidis`) calls Do from several lanes at once:
// the connection is then a rueidis client of its own with auto-pipelining, which
// writes the calls made at once to one connection per server (per node of a
// cluster, following its slots and redirections) in one write and matches the
// replies in order. Plain TCP to one server is pipelined on the engine's event
// loops instead (RawIO.Pipeline).

// Pipelined implements core.Pipeliner for a TLS connection.
func (c *streamConn) Pipelined(ctx context.Context, depth int) (core.Conn, error) {
	c.close()
	return c.t.pipelinedConn(ctx)
}

// Pipelined implements core.Pipeliner for a rueidis connection.
func (c *conn) Pipelined(ctx context.Context, depth int) (core.Conn, error) {
	if c.pipelined {
		return c, nil
	}
	c.release()
	return c.t.pipelinedConn(ctx)
}

// pipelinedConn opens a client with one connection per server, every one of them
// before the phase's clock starts.
func (t *target) pipelinedConn(ctx context.Context) (*conn, error) {
	opt := t.opt
	opt.InitAddress = append([]string(nil), t.opt.InitAddress...)
	opt.DisableAutoPipelining = false
	// From the first request: otherwise a call alone on the connection is
	// written and read by its caller, and the others queue behind it unsent.
	opt.AlwaysPipelining = true
	opt.PipelineMultiplex = -1 // one connection per server
	opt.BlockingPoolSize = 0   // never used: nothing blocks or dedicates
	client, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, refusal(fmt.Errorf("connect %s: %w", t.sys.Endpoint, err))
	}
	pctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	for addr, node := range client.Nodes() {
		if err := node.Do(pctx, node.B().Ping().Build()).Error(); err != nil {
			client.Close()
			return nil, refusal(fmt.Errorf("PING %s: %w", addr, err))
		}
	}
	return &conn{t: t, client: client, dc: client, release: client.Close, profile: t.profile, shared: true, pipelined: true}, nil
}

var (
	_ core.Pipeliner = (*streamConn)(nil)
	_ core.Pipeliner = (*conn)(nil)
)
