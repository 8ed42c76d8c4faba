// Package host drives one adapter plugin process over gRPC: the host side of the
// plugin boundary. A crashed plugin fails the call in progress with a clear error and
// never takes the host down.
package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/plugins"
	pluginv1 "github.com/cmpbench/cmpbench/plugins/proto/v1"
)

// stopGrace is how long a stopped phase may take to hand back its last intervals
// before the host gives up on the stream.
const stopGrace = 15 * time.Second

// Options says how to start a plugin process.
type Options struct {
	Cmd *exec.Cmd
	// Checksum is the expected SHA-256 of Cmd's binary; go-plugin checks it at start.
	Checksum []byte
	// Logger receives go-plugin's own messages; nil discards them.
	Logger hclog.Logger
}

// Driver is a running plugin process.
type Driver struct {
	client     *plugin.Client
	rpc        pluginv1.AdapterClient
	info       core.Info
	sdkVersion string
	stderr     *tail
}

// Launch starts the plugin process and asks it to describe itself.
func Launch(ctx context.Context, opts Options) (*Driver, error) {
	logger := opts.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	stderr := &tail{max: 16 << 10}
	dieWithHost(opts.Cmd)
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  plugins.Handshake,
		VersionedPlugins: plugins.VersionedPlugins(nil),
		Cmd:              opts.Cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger,
		Stderr:           stderr,
		StartTimeout:     30 * time.Second,
	}
	if len(opts.Checksum) > 0 {
		// A fresh hash per client: SecureConfig writes into it without resetting.
		cfg.SecureConfig = &plugin.SecureConfig{Checksum: opts.Checksum, Hash: sha256.New()}
	}
	client := plugin.NewClient(cfg)
	d := &Driver{client: client, stderr: stderr}
	rpcClient, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, d.explain(fmt.Errorf("start plugin: %w", err))
	}
	raw, err := rpcClient.Dispense(plugins.PluginName)
	if err != nil {
		client.Kill()
		return nil, d.explain(fmt.Errorf("dispense plugin: %w", err))
	}
	d.rpc = raw.(pluginv1.AdapterClient)
	if err := d.describe(ctx); err != nil {
		client.Kill()
		return nil, err
	}
	return d, nil
}

// describe asks the plugin who it is.
func (d *Driver) describe(ctx context.Context) error {
	desc, err := d.rpc.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		return fmt.Errorf("describe: %w", d.explain(err))
	}
	d.info, d.sdkVersion = plugins.InfoFromProto(desc), desc.GetSdkVersion()
	return nil
}

// Info is what the adapter said about itself.
func (d *Driver) Info() core.Info { return d.info }

// SDKVersion is the cmpbench version the plugin was built with.
func (d *Driver) SDKVersion() string { return d.sdkVersion }

// Protocol is the negotiated protocol version.
func (d *Driver) Protocol() int { return d.client.NegotiatedVersion() }

// Pid is the plugin's process id, or 0 when it is not running.
func (d *Driver) Pid() int {
	if rc := d.client.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// Exited reports whether the plugin process has ended.
func (d *Driver) Exited() bool { return d.client.Exited() }

// Open connects the plugin to a system.
func (d *Driver) Open(ctx context.Context, sys core.SystemConfig) error {
	_, err := d.rpc.Open(ctx, &pluginv1.OpenRequest{System: plugins.SystemToProto(sys)})
	return d.explain(err) // a refusal stays one (core.ErrRefused): plugins.FromStatus
}

// Capture reads what identifies the system.
func (d *Driver) Capture(ctx context.Context) (core.Capture, error) {
	m, err := d.rpc.Capture(ctx, &pluginv1.CaptureRequest{})
	if err != nil {
		return core.Capture{}, d.explain(err)
	}
	return plugins.CaptureFromProto(m), nil
}

// Stats reads the system's counters.
func (d *Driver) Stats(ctx context.Context) (map[string]string, error) {
	m, err := d.rpc.Stats(ctx, &pluginv1.StatsRequest{})
	if err != nil {
		return nil, d.explain(err)
	}
	return m.GetStats(), nil
}

// RunPhase runs a phase in the plugin and passes each interval to onInterval as it
// arrives. When ctx ends, the phase is stopped and its intervals so far still arrive.
// A broken stream (a crashed plugin) returns a failed PhaseEnd and the error; the
// intervals received before it have been delivered.
func (d *Driver) RunPhase(ctx context.Context, spec core.PhaseSpec, onInterval func(core.IntervalReport)) (core.PhaseEnd, error) {
	started := time.Now()
	fail := func(err error) (core.PhaseEnd, error) {
		err = d.explain(err)
		return core.PhaseEnd{Status: core.StatusFailed, Error: err.Error(), Started: started, Ended: time.Now(), Elapsed: time.Since(started)}, err
	}
	if ctx.Err() != nil {
		now := time.Now()
		return core.PhaseEnd{Status: core.StatusInterrupted, Error: "stopped before it started: " + context.Cause(ctx).Error(), Started: now, Ended: now}, nil
	}
	streamCtx, cancelStream := context.WithCancel(context.Background())
	defer cancelStream()
	phase, err := plugins.PhaseToProto(spec)
	if err != nil {
		return fail(err)
	}
	stream, err := d.rpc.RunPhase(streamCtx, &pluginv1.RunPhaseRequest{Phase: phase})
	if err != nil {
		return fail(err)
	}
	// Stop the phase through the protocol, not by breaking the stream, so that the
	// plugin hands back what it measured. A stop that reaches the plugin before the
	// phase has begun there finds nothing to stop: it is asked again until the
	// stream ends.
	ended := make(chan struct{})
	defer close(ended)
	stopWatch := context.AfterFunc(ctx, func() {
		giveUp := time.AfterFunc(stopGrace, cancelStream)
		defer giveUp.Stop()
		for {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = d.rpc.StopPhase(sctx, &pluginv1.StopPhaseRequest{Reason: context.Cause(ctx).Error()})
			cancel()
			select {
			case <-ended:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	defer stopWatch()
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			return fail(errors.New("plugin ended the phase without saying how it ended"))
		}
		if err != nil {
			return fail(err)
		}
		switch e := ev.GetEvent().(type) {
		case *pluginv1.PhaseEvent_Interval:
			r, err := plugins.IntervalFromProto(e.Interval)
			if err != nil {
				return fail(err)
			}
			onInterval(r)
		case *pluginv1.PhaseEvent_End:
			end, err := plugins.PhaseEndFromProto(e.End)
			if err != nil {
				return fail(err)
			}
			return end, nil
		}
	}
}

// ValidateSystem asks the adapter to check a system's configuration without
// connecting; nil when it finds nothing wrong or has no such check.
func (d *Driver) ValidateSystem(ctx context.Context, sys core.SystemConfig) error {
	m, err := d.rpc.ValidateSystem(ctx, &pluginv1.ValidateSystemRequest{System: plugins.SystemToProto(sys)})
	if err = d.explain(err); errors.Is(err, core.ErrUnsupported) {
		return nil
	} else if err != nil {
		return err
	}
	if p := m.GetProblem(); p != "" {
		return errors.New(p)
	}
	return nil
}

// Count asks the system for its number of keys; core.ErrUnsupported when the
// adapter cannot count.
func (d *Driver) Count(ctx context.Context) (int64, error) {
	m, err := d.rpc.Count(ctx, &pluginv1.CountRequest{})
	if err != nil {
		return 0, d.explain(err) // core.ErrUnsupported when the adapter cannot count
	}
	return m.GetCount(), nil
}

// Flush empties the system; core.ErrUnsupported when the adapter cannot.
func (d *Driver) Flush(ctx context.Context) error {
	_, err := d.rpc.Flush(ctx, &pluginv1.FlushRequest{})
	return d.explain(err) // core.ErrUnsupported when the adapter cannot
}

// Validate checks what a load phase wrote.
func (d *Driver) Validate(ctx context.Context, load core.PhaseSpec, expected int64) (core.Validation, error) {
	phase, err := plugins.PhaseToProto(load)
	if err != nil {
		return core.Validation{}, err
	}
	m, err := d.rpc.Validate(ctx, &pluginv1.ValidateRequest{Load: phase, Expected: expected})
	if err != nil {
		return core.Validation{}, d.explain(err)
	}
	v := plugins.ValidationFromProto(m)
	v.Expected = expected
	return v, nil
}

// Close closes the system and ends the plugin process.
func (d *Driver) Close(ctx context.Context) error {
	var err error
	if !d.client.Exited() {
		_, err = d.rpc.Close(ctx, &pluginv1.CloseRequest{})
	}
	d.client.Kill()
	return d.explain(err)
}

// Kill ends the plugin process at once.
func (d *Driver) Kill() { d.client.Kill() }

// explain turns an error from the plugin into the error it means
// (plugins.FromStatus: a refusal, a feature it lacks), and a transport error from
// a dead plugin into one that says so, with the end of what the plugin wrote to
// stderr.
func (d *Driver) explain(err error) error {
	if err == nil {
		return nil
	}
	if status.Code(err) == codes.Unavailable && d.client != nil {
		// The stream breaks a moment before go-plugin notices the process is gone.
		for deadline := time.Now().Add(2 * time.Second); !d.client.Exited() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	err = plugins.FromStatus(err)
	if d.client != nil && d.client.Exited() {
		if t := d.stderr.String(); t != "" {
			return fmt.Errorf("plugin process exited: %w; its last output: %s", err, t)
		}
		return fmt.Errorf("plugin process exited: %w", err)
	}
	return err
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if lines := strings.Split(s, "\n"); len(lines) > 5 {
		s = strings.Join(lines[len(lines)-5:], " | ")
	}
	return strings.ReplaceAll(s, "\n", " | ")
}
