// Package host drives one adapter plugin process over gRPC: the host side of the
// plugin boundary. A crashed plugin fails the call in progress with a clear error and
// never takes the host down.
package host

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
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
// before the host gives up on the stream (a variable for tests).
var stopGrace = 15 * time.Second

// The host bounds every call into a plugin by its own clock: a plugin that is
// stopped (SIGSTOP), starved or stuck in an adapter's call never holds a run.
// DefaultDescribeTimeout bounds a plugin's start after its handshake line:
// connecting to it, and its answer to Describe.
const DefaultDescribeTimeout = 20 * time.Second

// phaseAllowance is what a phase may take beyond its time bound: opening its
// connections before its clock starts (phaseAllowancePerConn each, on top), the
// operations in flight at its end, a pub/sub phase's drain. Variables for tests.
var (
	phaseAllowance        = 15 * time.Second
	phaseAllowancePerConn = 10 * time.Millisecond
)

// callTimeouts bound the control calls a caller makes without a deadline of its
// own. A count or a flush may scan a whole store (Kvrocks, Pika, Tendis, an
// Aerospike truncate), so they get long bounds; the others are quick.
var callTimeouts = map[string]time.Duration{
	"Open": time.Minute, "Capture": time.Minute, "Stats": time.Minute, "ValidateSystem": 30 * time.Second,
	"Count": core.LongCallBound, "Flush": core.LongCallBound, "Validate": core.LongCallBound, "Close": 30 * time.Second,
}

// bounded gives ctx the call's default deadline when it has none, and says how
// a call that ran out of it failed.
func (d *Driver) bounded(ctx context.Context, call string) (context.Context, context.CancelFunc, func(error) error) {
	start := time.Now()
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if limit, ok := callTimeouts[call]; ok {
		if _, has := ctx.Deadline(); !has {
			cctx, cancel = context.WithTimeout(ctx, limit)
		}
	}
	return cctx, cancel, func(err error) error {
		if err != nil && ranOut(cctx) && !d.Exited() {
			// A deadline, the caller's or the host's: said plainly, not as the
			// transport's words for a cancelled stream.
			return fmt.Errorf("the plugin did not answer %s within %s: %w", call, time.Since(start).Round(100*time.Millisecond), context.DeadlineExceeded)
		}
		return d.explain(err)
	}
}

// ranOut says whether ctx's deadline has passed, or is so close that the call
// failed of it: the plugin's side, given the same deadline (gRPC sends it),
// may cancel the stream a moment before the host's own timer fires.
func ranOut(ctx context.Context) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) < 50*time.Millisecond
}

// PhaseBound is how long the host lets a phase run, by its own clock, from the
// moment it asks the plugin to run it: until its start (a shard's StartAt), its
// time bound, and the allowance for what happens around it.
func PhaseBound(spec core.PhaseSpec, now time.Time) time.Duration {
	wait := max(0, spec.StartAt.Sub(now))
	return wait + spec.Duration + phaseAllowance + time.Duration(spec.Connections)*phaseAllowancePerConn
}

// Options says how to start a plugin process.
type Options struct {
	Cmd *exec.Cmd
	// Checksum is the expected SHA-256 of Cmd's binary; go-plugin checks it at start.
	Checksum []byte
	// Logger receives go-plugin's own messages; nil discards them.
	Logger hclog.Logger
	// StartTimeout bounds the wait for the plugin's handshake line, and
	// DescribeTimeout what follows it (DefaultDescribeTimeout); 0 for the defaults.
	StartTimeout, DescribeTimeout time.Duration
}

// Driver is a running plugin process.
type Driver struct {
	client     *plugin.Client
	cmd        *exec.Cmd // the plugin process, for how it ended
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
		// What the plugin writes before it serves reaches Stderr; after, go-plugin
		// carries it over its stdio stream to SyncStderr.
		Stderr:       stderr,
		SyncStderr:   stderr,
		StartTimeout: cmp.Or(opts.StartTimeout, 30*time.Second),
	}
	if len(opts.Checksum) > 0 {
		// A fresh hash per client: SecureConfig writes into it without resetting.
		cfg.SecureConfig = &plugin.SecureConfig{Checksum: opts.Checksum, Hash: sha256.New()}
	}
	client := plugin.NewClient(cfg)
	d := &Driver{client: client, cmd: opts.Cmd, stderr: stderr}
	describeTimeout := cmp.Or(opts.DescribeTimeout, DefaultDescribeTimeout)
	// go-plugin waits for the handshake line for StartTimeout; what follows it
	// (a gRPC connection to an address that may never answer, Describe) is
	// bounded here, whatever the plugin does.
	done := make(chan error, 1)
	go func() { done <- d.start(ctx, describeTimeout) }()
	select {
	case err := <-done:
		if err != nil {
			client.Kill()
			return nil, err
		}
		return d, nil
	case <-time.After(cfg.StartTimeout + describeTimeout):
		// go-plugin's Kill waits for the connection attempt in progress (to an
		// address that may never answer, gRPC gives up after 20 s): it ends the
		// process in the background, and the process dies with cmpbench anyway
		// (parent-death signal).
		go client.Kill()
		err := fmt.Errorf("the plugin did not describe itself within %s of its start (handshake %s, then %s to answer)", cfg.StartTimeout+describeTimeout, cfg.StartTimeout, describeTimeout)
		if t := d.stderr.String(); t != "" {
			err = fmt.Errorf("%w; its last output: %s", err, t)
		}
		return nil, err
	}
}

// start connects to the plugin after its handshake and asks it who it is.
func (d *Driver) start(ctx context.Context, describeTimeout time.Duration) error {
	rpcClient, err := d.client.Client()
	if err != nil {
		// A plugin that exits at start is said as such, with its exit status and
		// what it wrote, not as go-plugin's "Unrecognized remote plugin message".
		for deadline := time.Now().Add(2 * time.Second); !d.client.Exited() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if v := otherProtocol.FindStringSubmatch(err.Error()); v != nil {
			// go-plugin kills such a plugin (which is not how it ended); once it
			// has, what it wrote has been read.
			return fmt.Errorf("the plugin speaks cmpbench's plugin protocol %s, and this cmpbench speaks %d: rebuild it with this cmpbench's SDK (plugins/sdk), or run the cmpbench it was built for%s",
				v[1], plugins.ProtocolVersion, d.lastOutput())
		}
		if d.client.Exited() {
			return fmt.Errorf("%s before its handshake%s", d.ended(), d.lastOutput())
		}
		return fmt.Errorf("start plugin: %w%s", err, d.lastOutput())
	}
	raw, err := rpcClient.Dispense(plugins.PluginName)
	if err != nil {
		return d.explain(fmt.Errorf("dispense plugin: %w", err))
	}
	d.rpc = raw.(pluginv1.AdapterClient)
	dctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	err = d.describe(dctx)
	if err != nil && errors.Is(dctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("the plugin did not answer Describe within %s: %w", describeTimeout, err)
		if t := d.stderr.String(); t != "" {
			err = fmt.Errorf("%w; its last output: %s", err, t)
		}
	}
	return err
}

// otherProtocol is go-plugin's error for a handshake of a protocol version the
// host does not speak (it has no type of its own).
var otherProtocol = regexp.MustCompile(`(?i)incompatible API version with plugin\. Plugin version: ([^,]+),`)

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

// Open connects the plugin to a system.
func (d *Driver) Open(ctx context.Context, sys core.SystemConfig) error {
	ctx, cancel, explain := d.bounded(ctx, "Open")
	defer cancel()
	_, err := d.rpc.Open(ctx, &pluginv1.OpenRequest{System: plugins.SystemToProto(sys)})
	return explain(err) // a refusal stays one (core.ErrRefused): plugins.FromStatus
}

// Capture reads what identifies the system.
func (d *Driver) Capture(ctx context.Context) (core.Capture, error) {
	ctx, cancel, explain := d.bounded(ctx, "Capture")
	defer cancel()
	m, err := d.rpc.Capture(ctx, &pluginv1.CaptureRequest{})
	if err != nil {
		return core.Capture{}, explain(err)
	}
	return plugins.CaptureFromProto(m), nil
}

// Stats reads the system's counters.
func (d *Driver) Stats(ctx context.Context) (map[string]string, error) {
	ctx, cancel, explain := d.bounded(ctx, "Stats")
	defer cancel()
	m, err := d.rpc.Stats(ctx, &pluginv1.StatsRequest{})
	if err != nil {
		return nil, explain(err)
	}
	return m.GetStats(), nil
}

// RunPhase runs a phase in the plugin and passes each interval to onInterval as it
// arrives. When ctx ends, the phase is stopped and its intervals so far still arrive.
// A broken stream (a crashed plugin) returns a failed PhaseEnd and the error; the
// intervals received before it have been delivered.
func (d *Driver) RunPhase(ctx context.Context, spec core.PhaseSpec, onInterval func(core.IntervalReport)) (core.PhaseEnd, error) {
	p := d.startPhase(ctx, spec)
	defer p.release()
	if ctx.Err() != nil {
		now := time.Now()
		return core.PhaseEnd{Status: core.StatusInterrupted, Error: "stopped before it started: " + context.Cause(ctx).Error(), Started: now, Ended: now}, nil
	}
	streamCtx, cancelStream := context.WithCancel(context.Background())
	defer cancelStream()
	stream, err := p.openStream(streamCtx)
	if err != nil {
		return p.fail(err)
	}
	defer p.stopOnEnd(cancelStream)()
	return p.receive(stream, onInterval)
}

// phaseRun is one RunPhase in progress: when it started, the host's bound on it, and
// the context whose end stops it.
type phaseRun struct {
	d          *Driver
	spec       core.PhaseSpec
	started    time.Time
	bound      time.Duration
	ctx        context.Context
	stop       context.CancelCauseFunc
	overrun    *time.Timer
	errOverran *overranError
}

// startPhase starts the host's clock on a phase: past its bound the phase is stopped
// through the protocol, and failed, whatever the plugin says of it.
func (d *Driver) startPhase(ctx context.Context, spec core.PhaseSpec) *phaseRun {
	p := &phaseRun{d: d, spec: spec, started: time.Now()}
	p.bound = PhaseBound(spec, p.started)
	p.ctx, p.stop = context.WithCancelCause(ctx)
	p.errOverran = &overranError{bound: p.bound, spec: spec}
	p.overrun = time.AfterFunc(p.bound, func() { p.stop(p.errOverran) })
	return p
}

// release stops the host's clock and the phase's context.
func (p *phaseRun) release() {
	p.overrun.Stop()
	p.stop(nil)
}

// overran says whether the phase went past the host's bound.
func (p *phaseRun) overran() bool {
	return errors.Is(context.Cause(p.ctx), p.errOverran) || time.Since(p.started) > p.bound
}

// fail is the failed end of the phase with err, explained; a phase past the host's
// bound also kills the plugin process.
func (p *phaseRun) fail(err error) (core.PhaseEnd, error) {
	err = p.d.explain(err)
	if p.overran() {
		// A plugin that did not end its phase when asked to is not trusted
		// with the next one: the runner starts a new plugin process.
		if p.d.client != nil {
			p.d.client.Kill()
		}
		err = fmt.Errorf("%w; it did not hand back the phase's end within %s of being asked to stop (%v)", p.errOverran, stopGrace, err)
	}
	return core.PhaseEnd{Status: core.StatusFailed, Error: err.Error(), Started: p.started, Ended: time.Now(), Elapsed: time.Since(p.started)}, err
}

// openStream asks the plugin to run the phase and returns the stream of its events.
func (p *phaseRun) openStream(streamCtx context.Context) (pluginv1.Adapter_RunPhaseClient, error) {
	phase, err := plugins.PhaseToProto(p.spec)
	if err != nil {
		return nil, err
	}
	return p.d.rpc.RunPhase(streamCtx, &pluginv1.RunPhaseRequest{Phase: phase})
}

// stopOnEnd stops the phase through the protocol when its context ends, not by
// breaking the stream, so that the plugin hands back what it measured; the stream
// is broken (cancelStream) only when the phase has not ended stopGrace later. A stop
// that reaches the plugin before the phase has begun there finds nothing to stop: it
// is asked again until the stream ends, which the function returned says.
func (p *phaseRun) stopOnEnd(cancelStream context.CancelFunc) func() {
	ended := make(chan struct{})
	stopWatch := context.AfterFunc(p.ctx, func() {
		giveUp := time.AfterFunc(stopGrace, cancelStream)
		defer giveUp.Stop()
		for {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = p.d.rpc.StopPhase(sctx, &pluginv1.StopPhaseRequest{Reason: context.Cause(p.ctx).Error()})
			cancel()
			select {
			case <-ended:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	return func() {
		stopWatch()
		close(ended)
	}
}

// receive passes the stream's intervals to onInterval until the phase's end, which
// it returns.
// Every number is checked as it arrives (core's Check methods): an interval a
// plugin could not have measured fails the phase and is not passed on, so that
// what the archive keeps is what the intervals before it said.
func (p *phaseRun) receive(stream pluginv1.Adapter_RunPhaseClient, onInterval func(core.IntervalReport)) (core.PhaseEnd, error) {
	sums := map[core.OpKind]*core.OpInterval{}
	last := -1
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			return p.fail(errors.New("plugin ended the phase without saying how it ended"))
		}
		if err != nil {
			return p.fail(err)
		}
		switch e := ev.GetEvent().(type) {
		case *pluginv1.PhaseEvent_Interval:
			r, err := plugins.IntervalFromProto(e.Interval)
			if err == nil {
				err = r.Check()
			}
			if err == nil && r.Index <= last {
				err = fmt.Errorf("interval %d after interval %d", r.Index, last)
			}
			if err != nil {
				return p.impossible(err)
			}
			last = r.Index
			for i := range r.Ops {
				o := &r.Ops[i]
				if sums[o.Op] == nil {
					sums[o.Op] = &core.OpInterval{Op: o.Op}
				}
				sums[o.Op].AddCounts(o)
			}
			onInterval(r)
		case *pluginv1.PhaseEvent_End:
			end, err := plugins.PhaseEndFromProto(e.End)
			if err == nil {
				err = end.Check(sums)
			}
			if err != nil {
				return p.impossible(err)
			}
			return p.judged(end), nil
		}
	}
}

// impossible fails the phase on numbers the plugin could not have measured,
// naming the plugin and what it sent. The plugin is not trusted with the next
// phase: the runner starts a new process.
func (p *phaseRun) impossible(err error) (core.PhaseEnd, error) {
	if p.d.client != nil {
		p.d.client.Kill()
	}
	err = fmt.Errorf("plugin %s sent numbers no measurement gives (%w): the phase fails, and nothing it sent from there on is kept", p.d.info.Name, err)
	return core.PhaseEnd{Status: core.StatusFailed, Error: err.Error(), Started: p.started, Ended: time.Now(), Elapsed: time.Since(p.started)}, err
}

// judged is the end the plugin reported, failed when the phase went past the host's
// bound: however the plugin ended it (a plugin resumed after SIGSTOP says "ok" of a
// phase whose rate covers the time it stood still), such a phase is failed.
func (p *phaseRun) judged(end core.PhaseEnd) core.PhaseEnd {
	if p.overran() {
		said := "the plugin reported it " + string(end.Status)
		if end.Error != "" {
			said += ": " + end.Error
		}
		end.Status, end.Error = core.StatusFailed, p.errOverran.Error()+"; "+said
	}
	return end
}

// overranError says that a phase went past the host's bound.
type overranError struct {
	bound time.Duration
	spec  core.PhaseSpec
}

func (e *overranError) Error() string {
	return fmt.Sprintf("the phase did not end within cmpbench's bound of %s (its time bound %s, and %s for opening %d connections and what is in flight at its end): "+
		"the plugin process was stopped, starved of CPU or stuck in an adapter call, so what it measured is not a rate of the system",
		e.bound.Round(time.Millisecond), e.spec.Duration, (e.bound - e.spec.Duration).Round(time.Millisecond), e.spec.Connections)
}

// ValidateSystem asks the adapter to check a system's configuration without
// connecting; nil when it finds nothing wrong or has no such check.
func (d *Driver) ValidateSystem(ctx context.Context, sys core.SystemConfig) error {
	ctx, cancel, explain := d.bounded(ctx, "ValidateSystem")
	defer cancel()
	m, err := d.rpc.ValidateSystem(ctx, &pluginv1.ValidateSystemRequest{System: plugins.SystemToProto(sys)})
	if err = explain(err); errors.Is(err, core.ErrUnsupported) {
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
	ctx, cancel, explain := d.bounded(ctx, "Count")
	defer cancel()
	m, err := d.rpc.Count(ctx, &pluginv1.CountRequest{})
	if err != nil {
		return 0, explain(err) // core.ErrUnsupported when the adapter cannot count
	}
	return m.GetCount(), nil
}

// Flush empties the system; core.ErrUnsupported when the adapter cannot.
func (d *Driver) Flush(ctx context.Context) error {
	ctx, cancel, explain := d.bounded(ctx, "Flush")
	defer cancel()
	_, err := d.rpc.Flush(ctx, &pluginv1.FlushRequest{})
	return explain(err) // core.ErrUnsupported when the adapter cannot
}

// Validate checks what a load phase wrote.
func (d *Driver) Validate(ctx context.Context, load core.PhaseSpec, expected int64) (core.Validation, error) {
	phase, err := plugins.PhaseToProto(load)
	if err != nil {
		return core.Validation{}, err
	}
	ctx, cancel, explain := d.bounded(ctx, "Validate")
	defer cancel()
	m, err := d.rpc.Validate(ctx, &pluginv1.ValidateRequest{Load: phase, Expected: expected})
	if err != nil {
		return core.Validation{}, explain(err)
	}
	v := plugins.ValidationFromProto(m)
	v.Expected = expected
	return v, nil
}

// Close closes the system and ends the plugin process.
func (d *Driver) Close(ctx context.Context) error {
	var err error
	ctx, cancel, explain := d.bounded(ctx, "Close")
	defer cancel()
	if !d.client.Exited() {
		_, err = d.rpc.Close(ctx, &pluginv1.CloseRequest{})
	}
	err = explain(err)
	d.client.Kill()
	return err
}

// Kill ends the plugin process at once.
func (d *Driver) Kill() { d.client.Kill() }

// explain turns an error from the plugin into the error it means
// (plugins.FromStatus: a refusal, a feature it lacks), and a transport error from
// a dead plugin into one that says so: how the process ended and what it wrote
// last (a panic's own line first), not the transport's words for a broken stream.
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
	if d.client != nil && d.client.Exited() {
		return fmt.Errorf("%s%s", d.ended(), d.lastOutput())
	}
	return plugins.FromStatus(err)
}

// Exited reports whether the plugin process has ended.
func (d *Driver) Exited() bool { return d.client != nil && d.client.Exited() }

// ended says how the plugin process ended, as far as the host knows.
func (d *Driver) ended() string {
	// go-plugin waits for the process; its state arrives a moment after Exited.
	for deadline := time.Now().Add(time.Second); d.cmd != nil && d.cmd.ProcessState == nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if d.cmd != nil && d.cmd.ProcessState != nil {
		return "the plugin process exited (" + d.cmd.ProcessState.String() + ")"
	}
	return "the plugin process exited"
}

// lastOutput is "; its last output: ..." when the plugin wrote anything.
func (d *Driver) lastOutput() string {
	if t := d.stderr.String(); t != "" {
		return "; its last output: " + t
	}
	return ""
}

// tail keeps the last max bytes written to it, and the first line that says a
// Go program crashed (panic, fatal error): a stack's tail says nothing of why.
type tail struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	crash string
}

// crashLine finds what a crashing Go program printed first.
var crashLine = regexp.MustCompile(`(?m)^(panic: |fatal error: ).*$`)

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.crash == "" {
		if m := crashLine.Find(p); m != nil {
			t.crash = string(m)
			if len(t.crash) > 500 {
				t.crash = t.crash[:500] + "…"
			}
		}
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.crash != "" {
		return t.crash + " (the stack follows in its output)"
	}
	s := strings.TrimSpace(string(t.buf))
	if lines := strings.Split(s, "\n"); len(lines) > 5 {
		s = strings.Join(lines[len(lines)-5:], " | ")
	}
	return strings.ReplaceAll(s, "\n", " | ")
}
