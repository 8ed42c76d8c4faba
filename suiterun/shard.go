package suiterun

import (
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/core/plan"
)

// sharding is what --shard, --start-at and --sync-dir ask for.
type sharding struct {
	startAt time.Time
}

// shardOf reads the shard flags and makes p this shard's part of the plan; nil
// when the run is not sharded.
func shardOf(o Options, p *plan.Plan, systems *config.Systems) (*sharding, error) {
	if o.Shard == "" {
		if o.StartAt != "" || o.SyncDir != "" {
			return nil, core.BadInputf("--start-at and --sync-dir go with --shard I/N")
		}
		return nil, nil
	}
	s, err := plan.ParseShard(o.Shard)
	if err != nil {
		return nil, core.BadInput{Err: err}
	}
	if o.StartAt == "" {
		return nil, core.BadInputf("--shard %s needs --start-at: the time at which every shard starts its first phase (RFC 3339, e.g. %s)", o.Shard, time.Now().Add(3*time.Minute).UTC().Format(time.RFC3339))
	}
	at, err := time.Parse(time.RFC3339, o.StartAt)
	if err != nil {
		return nil, core.BadInputf("--start-at %q: want RFC 3339, e.g. 2026-12-03T10:00:00Z (%v)", o.StartAt, err)
	}
	if time.Until(at) > engine.MaxStartWait {
		return nil, core.BadInputf("--start-at %s is more than %s from now", o.StartAt, engine.MaxStartWait)
	}
	for _, n := range p.Systems {
		if sys, _ := systems.Get(n); sys != nil && sys.Provisioned() {
			return nil, core.BadInputf("--shard: system %s is started by cmpbench (provision:), but the shards of a run must all drive one server: start it yourself and give the system its endpoint", n)
		}
	}
	if err := p.ForShard(s); err != nil {
		return nil, core.BadInput{Err: err}
	}
	return &sharding{startAt: at.UTC()}, nil
}
