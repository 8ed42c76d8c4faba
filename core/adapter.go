package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrRefused marks an Open error where the system answered and turned the client
// away: wrong credentials, a certificate that does not verify, a missing cluster
// API. cmpbench retries other Open errors while a server starts; never these.
var ErrRefused = errors.New("refused")

// Refused marks err as a refusal (errors.Is(err, ErrRefused)), keeping its text.
func Refused(err error) error {
	if err == nil {
		return nil
	}
	return refusedError{err}
}

type refusedError struct{ err error }

func (e refusedError) Error() string   { return e.err.Error() }
func (e refusedError) Unwrap() []error { return []error{e.err, ErrRefused} }

// Adapter is one system family (RESP servers, Aerospike, ...). Adapters never time,
// log or print: the engine does. Optional features are separate interfaces found by
// type assertion on the Target.
type Adapter interface {
	Info() Info
	Open(ctx context.Context, sys SystemConfig) (Target, error)
}

// Target is one system under test, opened by an adapter.
type Target interface {
	// Connect opens one connection, owned by one worker for a whole phase.
	Connect(ctx context.Context) (Conn, error)
	// Capture reads what identifies the system: product, version, configuration.
	Capture(ctx context.Context) (Capture, error)
	// Stats returns the server's counters as flat key/value pairs.
	Stats(ctx context.Context) (map[string]string, error)
	Close(ctx context.Context) error
}

// Conn is one connection with one request in flight. Do never times itself.
// A read that finds nothing returns ErrMiss; other errors should say their ErrorClass.
type Conn interface {
	Do(ctx context.Context, op *Op) error
	Close() error
}

// Redialer is implemented by connections that reopen themselves after a failure.
// The engine calls Redial before every operation, outside the timed span, so that
// a reconnect counts as send lag (or fails as a connection error) and not as the
// next operation's service time. Redial returns nil at once while the connection is
// open. Do must still reconnect by itself when Redial was not called.
type Redialer interface {
	Redial(ctx context.Context) error
}

// Pipeliner is implemented by connections that the engine drives from goroutines
// (not raw: TLS, a cluster client) and that can keep several requests in flight
// (PhaseSpec.Pipeline). Pipelined returns a connection on which Do may be called
// from up to depth goroutines at once, each call one request in flight with the
// others and answered on its own (on a cluster, a pipeline per node connection):
// c itself, or a new connection that replaces c, which Pipelined then closes
// (on an error too).
// Called before the phase's clock, never timed. The connection it returns reopens
// its sockets by itself after a failure; the engine does not Redial it.
type Pipeliner interface {
	Pipelined(ctx context.Context, depth int) (Conn, error)
}

// RawConn is implemented by connections that the engine can drive itself: it writes
// the requests and reads the replies on the connection's non-blocking socket, so that
// an event loop (one per core at full load) serves many connections (as
// memtier_benchmark's libevent loop does) instead of one parked goroutine each. The adapter still never times
// anything: it only encodes requests and parses replies. Do must keep working on a
// RawConn that the engine does not drive (the side probe, other engines).
type RawConn interface {
	Conn
	// Raw returns the socket and codec, or ok false when this connection cannot be
	// driven raw (TLS, a cluster client): then the engine calls Do.
	Raw() (io RawIO, ok bool)
}

// RawIO is what the engine needs to drive a connection.
type RawIO struct {
	// FD is the connected socket, in non-blocking mode, owned by the Conn: the
	// engine reads and writes it but never closes it (Close does).
	FD int
	// FDs, when not empty, are the sockets of a connection to several servers
	// (a cluster's nodes), owned by the Conn as FD is, and FD is not used: the
	// Codec is then a Router, which says where each request goes. One request
	// is in flight on the connection at a time, whatever its socket.
	FDs []int
	// Timeout bounds one reply; a later reply is a timeout error, and the engine
	// closes the connection (a late reply would be read as the next one's).
	Timeout time.Duration
	Codec   Codec
	// Pipeline: the protocol answers this connection's requests in the order
	// they were sent, so the engine may keep several in flight on it
	// (PhaseSpec.Pipeline), parsing each reply with the op of the oldest
	// request. Only for a connection of one socket (FDs empty).
	Pipeline bool
}

// Codec encodes requests and parses replies of one protocol. Both calls must not
// allocate in the steady state.
type Codec interface {
	// AppendRequest appends the request of op to dst and returns it.
	AppendRequest(dst []byte, op *Op) []byte
	// ParseReply parses one reply at the start of src. n is the bytes it took, 0 when
	// src does not hold a whole reply yet. err is the outcome, as Do would return it:
	// nil, ErrMiss, or an error carrying its class; a reply that cannot be parsed is
	// an ErrClassProtocol error with n > 0, and the engine closes the connection.
	ParseReply(src []byte, op *Op) (n int, err error)
}

// Router is implemented by the codecs of connections to several servers
// (RawIO.FDs).
type Router interface {
	// Route is the index in FDs of the socket that the request AppendRequest
	// appended last goes to, or RouteReopen or RouteNone when none of the
	// connection's sockets serves it. Route must not allocate in the steady
	// state.
	Route() int
}

// Route's answers when no socket of a connection serves a request.
const (
	// RouteReopen: the cluster changed since the connection was opened. The
	// engine opens a new connection for the request (as send lag), and fails
	// it as a connection error when that one has no socket for it either.
	RouteReopen = -1
	// RouteNone: no server serves the request now (the node that should did
	// not answer when the connection opened, and the cluster has not moved
	// its share yet). The request fails as a connection error; the connection
	// stays, for the others.
	RouteNone = -2
)

// InDoubter is implemented by codecs whose protocol can apply a write that was
// sent and then timed out or lost its connection (Aerospike's in-doubt writes):
// such a failure of an op for which InDoubt is true counts as ErrClassInDoubt,
// not as a timeout or a connection error.
type InDoubter interface {
	InDoubt(op *Op) bool
}

// SentFailure is the error of an operation whose request was sent and which
// then timed out or lost its connection (err, of its class): in doubt where the
// codec says so (InDoubter).
func SentFailure(codec Codec, op *Op, err error) error {
	if d, ok := codec.(InDoubter); ok && d.InDoubt(op) {
		if c := ClassOf(err); c == ErrClassTimeout || c == ErrClassConnection {
			return &OpError{Class: ErrClassInDoubt, Err: err}
		}
	}
	return err
}

// Counter is implemented by targets that can count their keys or records. Counting
// may be expensive (a scan); the engine never counts inside a measured window.
type Counter interface {
	Count(ctx context.Context) (int64, error)
}

// RecordReader is implemented by targets that can read a whole record, for
// validation: field name -> value; a missing record is an empty map.
type RecordReader interface {
	ReadRecord(ctx context.Context, key []byte) (map[string][]byte, error)
}

// Flusher is implemented by targets that can be emptied. cmpbench calls it only for
// systems marked disposable.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Info describes an adapter: who it is and what it can do.
type Info struct {
	Name    string
	Version string
	// Ops lists the operation kinds Conn.Do supports.
	Ops []OpKind
	// Capabilities are the features of the engine the plugin embeds (engine.probe,
	// engine.lag, engine.pubsub), which the SDK sets: a host tells from them what a
	// plugin built against an older cmpbench lacks. An adapter does not set them:
	// what else cmpbench may ask of it follows from the interfaces its target
	// implements (Counter, RecordReader, Flusher, Subscriber) and from Ops.
	Capabilities []string
	// Workloads are the workload kinds a plugin's engine runs (those its build
	// registers, core.RegisterWorkload), set by the SDK as Capabilities are; empty
	// when not said (a built-in adapter, in the binary that reads the suite).
	Workloads []string
	// Options are the adapter-specific settings it reads from
	// SystemConfig.Options; cmpbench refuses any other before a run.
	Options []Option
	// Pipeline says its protocol answers a connection's requests in the order
	// they were sent, so that a phase may keep several in flight on each
	// (PhaseSpec.Pipeline): its raw connections say so too (RawIO.Pipeline),
	// and its other connections are Pipeliners. cmpbench refuses a phase with a depth above one before the run when it
	// is false.
	Pipeline bool
	// TTL says Conn.Do keeps a SET's Op.TTL: the key expires after it.
	TTL bool
}

// Supports reports whether the adapter executes op kind k.
func (i Info) Supports(k OpKind) bool {
	for _, o := range i.Ops {
		if o == k {
			return true
		}
	}
	return false
}

// Fit is phase p as it runs on the adapter: one whose workload is Fitting
// leaves out what the adapter cannot express (and says so); any other is p.
func (i Info) Fit(p PhaseSpec) PhaseSpec {
	if f, ok := p.Workload.(Fitting); ok {
		return f.Fit(p, i)
	}
	return p
}

// CanRun says why an adapter cannot run workload w (as Fit makes it), or
// returns nil.
func (i Info) CanRun(w Workload) error {
	if w == nil {
		return nil
	}
	w = i.Fit(PhaseSpec{Workload: w}).Workload
	if len(i.Workloads) > 0 && !slices.Contains(i.Workloads, w.Kind()) {
		return fmt.Errorf("plugin %s was built without the %s workload (it has %s): rebuild it with that workload's package imported", i.Name, w.Kind(), strings.Join(i.Workloads, ", "))
	}
	for _, k := range w.OpKinds() {
		if k.Issued() && !i.Supports(k) {
			return fmt.Errorf("adapter %s does not support %s", i.Name, k)
		}
	}
	return nil
}

// Capture is what an adapter reads from a system to identify it.
type Capture struct {
	Product      string // e.g. "redis", "valkey", "dragonfly"
	Version      string
	VersionField string // where the version came from, e.g. "INFO server.valkey_version"
	// Sections holds named text captures (e.g. "info", "config"), already redacted.
	Sections map[string]string
	// Refused lists capture commands the server refused (restricted services).
	Refused []string
	// Facts are the settings that decide a comparison, as the adapter reads them
	// from Sections (FactReader, called by the SDK); nil when the adapter reads
	// none.
	Facts *Facts
}

// CaptureCaveats names the capture section in which an adapter says what it
// cannot tell of the system (resp: a profile whose UPDATE cannot see a missing
// record); the report lists it among its caveats when the run did what it says.
const CaptureCaveats = "caveats"

// SystemConfig is what an adapter needs to reach one system. It carries secrets in
// memory only; it is never written anywhere.
type SystemConfig struct {
	Name    string
	Adapter string
	Profile string
	// ProfileData is a profile defined in the systems file, for adapters with
	// profiles; empty means the built-in profile named Profile.
	ProfileData []byte
	Endpoint    string // host:port, resolved for provisioned systems
	// Nodes is every node's host:port, in order, Endpoint the first: each server
	// cmpbench started for a provisioned system (provision.nodes), else the
	// systems file's endpoint alone. An adapter that reaches several servers
	// reads them here; one that discovers its cluster's topology uses them as
	// seeds (plugins/sdk/README.md, "Clusters").
	Nodes   []string
	TLS     TLSConfig
	Auth    AuthConfig
	Timeout time.Duration     // per-operation timeout
	Options map[string]string // adapter-specific settings
	// Concurrency is the most operations the run keeps in flight against the
	// system at once: its largest phase's connections plus the side probe's one.
	// An adapter whose client pools connections sizes the pool from it, so that
	// every operation has a connection ready and none is dialled inside a
	// measured phase. 0 when unknown.
	Concurrency int
}

// Received is the system as Open and ValidateSystem of an adapter that declares
// the options declared receive it: every declared option the system does not
// give set to its default (WithOptionDefaults), and Nodes, when the caller gave
// only Endpoint (a host older than Nodes, a test), that one address. The SDK's
// server and adaptertest hand adapters this.
func (s SystemConfig) Received(declared []Option) SystemConfig {
	s.Options = WithOptionDefaults(declared, s.Options)
	if len(s.Nodes) == 0 && s.Endpoint != "" {
		s.Nodes = []string{s.Endpoint}
	}
	return s
}

// TLSConfig says how to reach a system over TLS: the systems file's `tls:`
// section as written, one shape from the YAML to the adapter (the plugin
// boundary's TLS message mirrors it, plugins/convert.go). Verification is on
// unless InsecureSkipVerify.
type TLSConfig struct {
	Enabled            bool   `yaml:"enabled"`
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"` // client certificate, for mutual TLS
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"` // SNI and the name verified; default the endpoint's host
	MinVersion         string `yaml:"min_version"` // "1.2" (default) or "1.3"
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// AuthConfig holds credentials, expanded from ${ENV} references.
type AuthConfig struct {
	Username string
	Password string
}
