// Package sdk serves an adapter as a cmpbench plugin. The plugin process runs the whole
// data plane — workers, pacing, recording — with the shared engine, and streams one
// message per interval to the host. Third-party adapter binaries call Serve from main;
// the cmpbench binary serves its built-ins the same way.
package sdk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/core/gotrace"
	"github.com/cmpbench/cmpbench/plugins"
	pluginv1 "github.com/cmpbench/cmpbench/plugins/proto/v1"
	// Every built-in workload, registered: the host sends any of them.
	_ "github.com/cmpbench/cmpbench/workloads"
)

// Serve runs the plugin server for adapter until the host ends it. Nothing may be
// written to stdout before or during Serve: go-plugin uses it for its handshake.
//
// With CMPBENCH_TRACE set to a directory, the plugin process writes a Go execution
// trace of itself there (core/gotrace), ended when Serve returns.
func Serve(adapter core.Adapter) {
	watchHost()
	stop, err := gotrace.Start(traceRole(os.Args))
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmpbench plugin:", err) // the run goes on, untraced
		stop = func() error { return nil }
	}
	defer stop()
	srv := NewServer(adapter)
	srv.stdio = directStdio(os.Stderr)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  plugins.Handshake,
		VersionedPlugins: plugins.VersionedPlugins(srv),
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           hclog.New(&hclog.LoggerOptions{Level: hclog.Error, Output: os.Stderr, JSONFormat: true}),
	})
}

// directStdio returns what points the process's os.Stdout and os.Stderr at
// stderr, the file the host reads. go-plugin's Serve points them at pipes it
// forwards over a gRPC stream; what an adapter writes just before it exits (its
// last words: why it cannot go on) dies in that pipe with the process. Run once
// the handshake is written (at the first call, Describe): the host reads the
// plugin's stderr itself, and keeps its last lines for the error it reports.
func directStdio(stderr *os.File) func() {
	var once sync.Once
	return func() {
		once.Do(func() { os.Stdout, os.Stderr = stderr, stderr })
	}
}

// traceRole names the plugin's trace file before anything is asked of the adapter
// (whose Info may be slow): after the built-in adapter `cmpbench plugin serve NAME`
// serves, else after the plugin's executable.
func traceRole(args []string) string {
	if len(args) == 4 && args[1] == "plugin" && args[2] == "serve" {
		return "plugin-" + args[3]
	}
	return "plugin-" + filepath.Base(args[0])
}

// watchHost ends the plugin when the process that started it goes away: a plugin
// never outlives its host, even where the kernel cannot be asked to see to it (on
// Linux the host also sets the parent-death signal).
func watchHost() {
	host := os.Getppid()
	if host <= 1 {
		return // started by init or a container runtime: nobody to watch
	}
	go func() {
		for {
			time.Sleep(250 * time.Millisecond)
			if os.Getppid() != host {
				fmt.Fprintln(os.Stderr, "cmpbench plugin: the host process is gone; exiting")
				os.Exit(3)
			}
		}
	}()
}

// Server implements the plugin protocol on top of an adapter. It is exported for
// in-process tests (go-plugin's ServeConfig.Test).
type Server struct {
	pluginv1.UnimplementedAdapterServer
	adapter core.Adapter

	mu        sync.Mutex
	target    core.Target
	stopPhase context.CancelCauseFunc // of the running phase, if any
	stdio     func()                  // directStdio, under Serve
}

// NewServer returns the protocol server for adapter.
func NewServer(adapter core.Adapter) *Server { return &Server{adapter: adapter} }

// Describe implements the protocol. The capabilities are the engine's own
// features and the workloads the kinds this build registers, so that a host can
// tell, before a run, what a plugin built with another cmpbench lacks.
func (s *Server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	if s.stdio != nil {
		s.stdio()
	}
	info := s.adapter.Info()
	info.Capabilities = slices.Clone(engine.Capabilities)
	info.Workloads = core.WorkloadKinds()
	return plugins.InfoToProto(info, core.SDKVersion()), nil
}

// Open implements the protocol; a new Open replaces the previous target.
func (s *Server) Open(ctx context.Context, req *pluginv1.OpenRequest) (*pluginv1.OpenResponse, error) {
	t, err := s.adapter.Open(ctx, s.system(req.GetSystem()))
	if err != nil {
		// A refusal is PermissionDenied; anything else may pass while a server
		// starts: the host retries it.
		return nil, plugins.ToStatus(err, codes.Unavailable)
	}
	s.mu.Lock()
	old := s.target
	s.target = t
	s.mu.Unlock()
	if old != nil {
		_ = old.Close(ctx)
	}
	return &pluginv1.OpenResponse{}, nil
}

// system is the system as the adapter receives it (core.SystemConfig.Received),
// in Open as in ValidateSystem: declared defaults reach it, an option not given
// being its default, and Nodes lists at least Endpoint.
func (s *Server) system(m *pluginv1.SystemConfig) core.SystemConfig {
	return plugins.SystemFromProto(m).Received(s.adapter.Info().Options)
}

func (s *Server) current() (core.Target, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.target == nil {
		return nil, status.Error(codes.FailedPrecondition, "no system is open")
	}
	return s.target, nil
}

// Capture implements the protocol. When the adapter reads facts from its
// captures (core.FactReader) they go with them, so that the archive keeps
// them: the same for a built-in adapter and a third-party one.
func (s *Server) Capture(ctx context.Context, _ *pluginv1.CaptureRequest) (*pluginv1.CaptureResponse, error) {
	t, err := s.current()
	if err != nil {
		return nil, err
	}
	c, err := t.Capture(ctx)
	if err != nil {
		return nil, plugins.ToStatus(err, codes.Unknown)
	}
	if r, ok := s.adapter.(core.FactReader); ok && c.Facts == nil {
		f := r.Facts(c.Sections)
		c.Facts = &f
	}
	return plugins.CaptureToProto(c), nil
}

// Stats implements the protocol.
func (s *Server) Stats(ctx context.Context, _ *pluginv1.StatsRequest) (*pluginv1.StatsResponse, error) {
	t, err := s.current()
	if err != nil {
		return nil, err
	}
	st, err := t.Stats(ctx)
	if err != nil {
		return nil, plugins.ToStatus(err, codes.Unknown)
	}
	return &pluginv1.StatsResponse{Stats: st}, nil
}

// RunPhase runs one phase with the engine and streams its intervals and its end.
func (s *Server) RunPhase(req *pluginv1.RunPhaseRequest, stream pluginv1.Adapter_RunPhaseServer) error {
	t, err := s.current()
	if err != nil {
		return err
	}
	spec, err := plugins.PhaseFromProto(req.GetPhase())
	if err != nil {
		return plugins.ToStatus(err, codes.InvalidArgument)
	}
	info := s.adapter.Info()
	if err := info.CanRun(spec.Workload); err != nil {
		return plugins.ToStatus(err, codes.InvalidArgument)
	}
	streams, err := core.NewStreams(spec)
	if err != nil {
		return plugins.ToStatus(err, codes.InvalidArgument)
	}
	var subscribe func(context.Context, [][]byte) (core.Subscription, error)
	if sub, ok := t.(core.Subscriber); ok {
		subscribe = sub.Subscribe
	}
	ctx, cancel := context.WithCancelCause(stream.Context())
	defer cancel(nil)
	s.mu.Lock()
	s.stopPhase = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.stopPhase = nil
		s.mu.Unlock()
	}()
	var sendErr error
	end := engine.Run(ctx, engine.Config{
		Spec:    spec,
		Connect: t.Connect,
		NewSource: func(i int) (core.OpSource, error) {
			return streams.Source(spec.ConnBase + i), nil
		},
		NewProbeSource: func() (core.OpSource, error) {
			if src := streams.ProbeSource(spec.Probe.Op); src != nil {
				return src, nil
			}
			return nil, cmp.Or(core.ProbeError(spec.Workload), fmt.Errorf("the %s workload gave no side probe stream", spec.Workload.Kind()))
		},
		Subscribe: subscribe,
		Emit: func(r core.IntervalReport) {
			if sendErr != nil {
				return
			}
			err := stream.Send(&pluginv1.PhaseEvent{Event: &pluginv1.PhaseEvent_Interval{Interval: plugins.IntervalToProto(r)}})
			if err != nil {
				sendErr = fmt.Errorf("sending interval %d: %w", r.Index, err)
				cancel(sendErr)
			}
		},
	})
	if sendErr != nil {
		return plugins.ToStatus(sendErr, codes.Aborted)
	}
	return stream.Send(&pluginv1.PhaseEvent{Event: &pluginv1.PhaseEvent_End{End: plugins.PhaseEndToProto(end)}})
}

// StopPhase ends the running phase early; it is not an error when none runs.
func (s *Server) StopPhase(_ context.Context, req *pluginv1.StopPhaseRequest) (*pluginv1.StopPhaseResponse, error) {
	s.mu.Lock()
	stop := s.stopPhase
	s.mu.Unlock()
	if stop != nil {
		stop(errors.New(req.GetReason()))
	}
	return &pluginv1.StopPhaseResponse{}, nil
}

// ValidateSystem implements the protocol: the adapter's own check of a system's
// configuration, without connecting (core.SystemValidator).
func (s *Server) ValidateSystem(_ context.Context, req *pluginv1.ValidateSystemRequest) (*pluginv1.ValidateSystemResponse, error) {
	v, ok := s.adapter.(core.SystemValidator)
	if !ok {
		return nil, plugins.Unsupported("the adapter has no system check")
	}
	if err := v.ValidateSystem(s.system(req.GetSystem())); err != nil {
		return &pluginv1.ValidateSystemResponse{Problem: err.Error()}, nil
	}
	return &pluginv1.ValidateSystemResponse{}, nil
}

// Count implements the protocol.
func (s *Server) Count(ctx context.Context, _ *pluginv1.CountRequest) (*pluginv1.CountResponse, error) {
	t, err := s.current()
	if err != nil {
		return nil, err
	}
	c, ok := t.(core.Counter)
	if !ok {
		return nil, plugins.Unsupported("the adapter cannot count keys")
	}
	n, err := c.Count(ctx)
	if err != nil {
		return nil, plugins.ToStatus(err, codes.Unknown)
	}
	return &pluginv1.CountResponse{Count: n}, nil
}

// Flush implements the protocol.
func (s *Server) Flush(ctx context.Context, _ *pluginv1.FlushRequest) (*pluginv1.FlushResponse, error) {
	t, err := s.current()
	if err != nil {
		return nil, err
	}
	f, ok := t.(core.Flusher)
	if !ok {
		return nil, plugins.Unsupported("the adapter cannot empty the system")
	}
	if err := f.Flush(ctx); err != nil {
		return nil, plugins.ToStatus(err, codes.Unknown)
	}
	return &pluginv1.FlushResponse{}, nil
}

// Validate checks a load: the system's count against the load's successful inserts,
// and, for workloads that can (core.SampleChecker: YCSB), sample records read back.
func (s *Server) Validate(ctx context.Context, req *pluginv1.ValidateRequest) (*pluginv1.ValidateResponse, error) {
	t, err := s.current()
	if err != nil {
		return nil, err
	}
	load, err := plugins.PhaseFromProto(req.GetLoad())
	if err != nil {
		return nil, plugins.ToStatus(err, codes.InvalidArgument)
	}
	v := core.Validation{Counted: -1, Expected: req.GetExpected()}
	if c, ok := t.(core.Counter); ok {
		if n, err := c.Count(ctx); err != nil {
			v.CountError = err.Error()
			v.Problems = append(v.Problems, "count: "+err.Error())
		} else {
			v.Counted = n
			if n != v.Expected {
				v.Problems = append(v.Problems, fmt.Sprintf("the server holds %d keys; the load inserted %d", n, v.Expected))
			}
		}
	} else {
		v.CountError = "the adapter cannot count keys"
	}
	if w, ok := load.Workload.(core.SampleChecker); ok {
		if r, ok := t.(core.RecordReader); ok {
			samples, problems := w.CheckSamples(ctx, r, load.Seed)
			v.Samples = samples
			v.Problems = append(v.Problems, problems...)
		} else {
			v.Problems = append(v.Problems, "the adapter cannot read records back: samples not checked")
		}
	}
	return plugins.ValidationToProto(v), nil
}

// Close implements the protocol.
func (s *Server) Close(ctx context.Context, _ *pluginv1.CloseRequest) (*pluginv1.CloseResponse, error) {
	s.mu.Lock()
	t := s.target
	s.target = nil
	s.mu.Unlock()
	if t != nil {
		if err := t.Close(ctx); err != nil {
			return nil, plugins.ToStatus(err, codes.Unknown)
		}
	}
	return &pluginv1.CloseResponse{}, nil
}
