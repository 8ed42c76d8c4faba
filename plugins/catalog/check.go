package catalog

import (
	"context"
	"fmt"
	"slices"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/engine"
)

// CheckSystems checks that every system's adapter is there, and the system's
// configuration against what its adapter declares, without connecting: its options
// (a built-in adapter's were checked when the file was read; a plugin's take
// running it), the adapter's own check (core.SystemValidator), and that it
// executes every phase's op kinds. Problems are bad input, with the system's
// file:line.
func (c *Catalog) CheckSystems(ctx context.Context, systems *config.Systems, names []string, phases []core.PhaseSpec) error {
	var errs config.Errors
	for _, n := range names {
		sys, _ := systems.Get(n)
		e, err := c.Lookup(sys.Adapter)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: system %q: %w", sys.Source, n, err))
			continue
		}
		target := sys.SystemConfig(sys.Endpoints()...)
		var info core.Info
		var validate func(core.SystemConfig) error
		if a, ok := core.BuiltinAdapter(e.Name); e.Builtin && ok {
			info = a.Info() // its options were checked when the file was read
			if v, ok := a.(core.SystemValidator); ok {
				validate = v.ValidateSystem
			}
		} else {
			d, err := c.Launch(ctx, e)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: system %q: %w", sys.Source, n, err))
				continue
			}
			defer d.Kill()
			info = d.Info()
			errs = append(errs, sys.CheckOptions(info.Options)...)
			validate = func(c core.SystemConfig) error { return d.ValidateSystem(ctx, c) }
		}
		if validate != nil {
			// As the plugin's Open will receive it: with the declared defaults.
			target = target.Received(info.Options)
			errs = append(errs, sys.AdapterProblems(validate(target), info.Options)...)
		}
		for _, ph := range phases {
			if err := info.CanRun(ph.Workload); err != nil {
				errs = append(errs, fmt.Errorf("system %s, phase %s: %w", n, ph.Name, err))
			}
			if err := canPipeline(info, e.Builtin, ph.Depth()); err != nil {
				errs = append(errs, fmt.Errorf("system %s, phase %s: %w", n, ph.Name, err))
			}
		}
	}
	if len(errs) > 0 {
		return core.BadInput{Err: errs}
	}
	return nil
}

// canPipeline says why an adapter cannot keep depth requests in flight per
// connection, or returns nil: its protocol does not answer several in order
// (core.Info.Pipeline), or it is a plugin whose engine predates pipelining
// (it would run the phase one at a time, and say nothing).
func canPipeline(info core.Info, builtin bool, depth int) error {
	switch {
	case depth <= 1:
		return nil
	case !info.Pipeline:
		return fmt.Errorf("pipeline %d: adapter %s keeps one request in flight per connection", depth, info.Name)
	case !builtin && !slices.Contains(info.Capabilities, engine.CapPipeline):
		return fmt.Errorf("pipeline %d: plugin %s was built with an engine that cannot pipeline: rebuild it", depth, info.Name)
	}
	return nil
}
