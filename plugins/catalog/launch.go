package catalog

import (
	"context"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/runner"
	"github.com/cmpbench/cmpbench/core/sampler"
)

// The runner is handed a catalog's Launcher as a value (runner.Config.Launch):
// it starts plugins through it and never reaches up for them.

// Launcher starts adapters through the catalog, built-in or third-party alike:
// processes plugin processes for each system (one Driver, runner.Multi, when more
// than one), process i pinned to cpus[i] when given.
func (c *Catalog) Launcher(processes int, cpus [][]int) runner.Launcher {
	one := c.launchOne()
	if processes <= 1 && cpus == nil {
		return one
	}
	return func(ctx context.Context, adapter string) (runner.Driver, core.PluginRef, error) {
		var drivers []runner.Driver
		var ref core.PluginRef
		for i := range max(1, processes) {
			d, r, err := one(ctx, adapter)
			if err == nil && cpus != nil {
				if err = sampler.Pin(d.Pid(), cpus[i]); err != nil {
					d.Kill()
				}
			}
			if err != nil {
				for _, d := range drivers {
					d.Kill()
				}
				return nil, core.PluginRef{}, err
			}
			drivers, ref = append(drivers, d), r
		}
		if len(drivers) == 1 {
			return drivers[0], ref, nil
		}
		return runner.NewMulti(drivers), ref, nil
	}
}

// launchOne starts one plugin process for an adapter.
func (c *Catalog) launchOne() runner.Launcher {
	return func(ctx context.Context, adapter string) (runner.Driver, core.PluginRef, error) {
		e, err := c.Lookup(adapter)
		if err != nil {
			return nil, core.PluginRef{}, err
		}
		d, err := c.Launch(ctx, e)
		if err != nil {
			return nil, core.PluginRef{}, err
		}
		return d, core.PluginRef{
			Adapter: e.Name, Builtin: e.Builtin, Path: e.Path, SHA256: e.SHA256,
			Version: d.Info().Version, SDKVersion: d.SDKVersion(), Protocol: d.Protocol(),
		}, nil
	}
}
