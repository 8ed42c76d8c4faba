// Package plugintest drives the runner with synthetic plugins that answer at once,
// for tests and benchmarks of the host's data path: what the host does with
// intervals, and how much memory that takes, over runs of any length.
package plugintest

import (
	"context"
	"math/rand/v2"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/runner"
	"github.com/cmpbench/cmpbench/plugins"
	pluginv1 "github.com/cmpbench/cmpbench/plugins/proto/v1"
)

// Synthetic is a runner.Driver whose phases emit, as fast as the host takes them,
// one interval per second of the phase (for count-bounded phases, one per
// AssumedRate operations), each crossing the plugin protocol's encoding as a real
// plugin's does, with realistic histograms and, in measured phases, ProbePerInterval
// side-probe records. It counts exactly what its loads inserted.
type Synthetic struct {
	ProbePerInterval int
	// AssumedRate is the ops/s a count-bounded phase is taken to run at.
	AssumedRate float64
	// Intervals counts the intervals emitted so far.
	Intervals int

	system string
	keys   int64 // what the loads of system inserted
	lat    []core.Latency
}

// NewSynthetic returns a driver whose measured phases carry probe records.
func NewSynthetic(probePerInterval int) *Synthetic {
	s := &Synthetic{ProbePerInterval: probePerInterval, AssumedRate: 50_000}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 3 {
		h := core.NewHistogram()
		for range 20_000 {
			_ = h.RecordValue(int64(60_000 + rng.ExpFloat64()*80_000))
		}
		l, err := core.Summarize(h)
		if err != nil {
			panic(err)
		}
		s.lat = append(s.lat, l)
	}
	return s
}

// Launcher launches s for every adapter.
func (s *Synthetic) Launcher() runner.Launcher {
	return func(context.Context, string) (runner.Driver, core.PluginRef, error) {
		return s, core.PluginRef{Adapter: "synthetic", Builtin: true, Path: "synthetic", Version: "1", Protocol: plugins.ProtocolVersion}, nil
	}
}

// Info implements runner.Driver.
func (s *Synthetic) Info() core.Info {
	var ops []core.OpKind
	for k := range core.NumOpKinds {
		ops = append(ops, k)
	}
	return core.Info{Name: "synthetic", Version: "1", Ops: ops, Capabilities: []string{"engine.probe", "engine.lag", "engine.stalls"}}
}

// Pid implements runner.Driver.
func (s *Synthetic) Pid() int { return 0 }

// Exited implements runner.Driver.
func (s *Synthetic) Exited() bool { return false }

// Open implements runner.Driver: each system starts empty.
func (s *Synthetic) Open(_ context.Context, sys core.SystemConfig) error {
	if sys.Name != s.system {
		s.system, s.keys = sys.Name, 0
	}
	return nil
}

// Capture implements runner.Driver.
func (s *Synthetic) Capture(context.Context) (core.Capture, error) {
	return core.Capture{Product: "synthetic", Version: "1", Sections: map[string]string{"info": "synthetic:1\n"}}, nil
}

// Stats implements runner.Driver.
func (s *Synthetic) Stats(context.Context) (map[string]string, error) {
	return map[string]string{"stats.keys": "1", "commandstats.cmdstat_get": "calls=1,usec=1"}, nil
}

// Count implements runner.Driver.
func (s *Synthetic) Count(context.Context) (int64, error) { return s.keys, nil }

// Flush implements runner.Driver.
func (s *Synthetic) Flush(context.Context) error { s.keys = 0; return nil }

// Validate implements runner.Driver.
func (s *Synthetic) Validate(_ context.Context, _ core.PhaseSpec, expected int64) (core.Validation, error) {
	return core.Validation{Expected: expected, Counted: s.keys}, nil
}

// Close implements runner.Driver.
func (s *Synthetic) Close(context.Context) error { return nil }

// Kill implements runner.Driver.
func (s *Synthetic) Kill() {}

// RunPhase implements runner.Driver.
func (s *Synthetic) RunPhase(ctx context.Context, spec core.PhaseSpec, onInterval func(core.IntervalReport)) (core.PhaseEnd, error) {
	started := time.Now()
	n := int(spec.Duration / time.Second)
	if spec.Ops > 0 {
		n = min(n, int(float64(spec.Ops)/s.AssumedRate)+1)
	}
	kinds := spec.Workload.OpKinds()
	perInterval := int64(s.AssumedRate) / int64(len(kinds))
	if spec.Ops > 0 {
		perInterval = (spec.Ops + int64(n*len(kinds)) - 1) / int64(n*len(kinds))
	}
	var issued int64
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		rep := core.IntervalReport{Index: i, Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second}
		for _, k := range kinds {
			ok := perInterval
			if spec.Ops > 0 {
				ok = min(ok, spec.Ops-issued)
			}
			issued += ok
			o := core.OpInterval{Op: k, OK: ok, Response: s.lat[0], Service: s.lat[1]}
			if !spec.OpenLoop() {
				o.Response = o.Service
			} else {
				o.Lag = s.lat[2]
			}
			rep.Ops = append(rep.Ops, o)
		}
		if spec.Kind == core.PhaseMeasured {
			for j := range s.ProbePerInterval {
				at := rep.Start + time.Duration(j)*time.Second/time.Duration(s.ProbePerInterval)
				rep.Probe = append(rep.Probe, core.ProbeRecord{Intended: at, Start: at + 20*time.Microsecond, End: at + 90*time.Microsecond, Op: core.OpGet})
			}
		}
		// Across the boundary as a plugin's interval travels: encoded, then decoded.
		b, err := proto.Marshal(plugins.IntervalToProto(rep))
		if err != nil {
			return core.PhaseEnd{}, err
		}
		var m pluginv1.Interval
		if err := proto.Unmarshal(b, &m); err != nil {
			return core.PhaseEnd{}, err
		}
		got, err := plugins.IntervalFromProto(&m)
		if err != nil {
			return core.PhaseEnd{}, err
		}
		onInterval(got)
		s.Intervals++
	}
	if spec.Kind == core.PhaseLoad {
		s.keys += issued
	}
	elapsed := time.Duration(n) * time.Second
	end := core.PhaseEnd{Status: core.StatusOK, Started: started, Ended: started.Add(elapsed), Elapsed: elapsed}
	for _, k := range kinds {
		o := core.OpInterval{Op: k, OK: issued / int64(len(kinds)), Response: s.lat[0], Service: s.lat[1]}
		if !spec.OpenLoop() {
			o.Response = o.Service
		} else {
			o.Lag = s.lat[2]
		}
		end.Totals = append(end.Totals, o)
	}
	if ctx.Err() != nil {
		end.Status, end.Error = core.StatusInterrupted, "stopped"
	}
	return end, nil
}
