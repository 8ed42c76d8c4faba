// Package resp is the adapter for Redis-protocol servers (Redis, Valkey, Dragonfly,
// KeyDB, Kvrocks, ...), built on rueidis with memtier-like connections: one request in
// flight per connection, no auto-pipelining, no client cache, no retries.
package resp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/cmpbench/cmpbench/core"
)

// Name is the adapter name used in system definitions.
const Name = "resp"

// DefaultTimeout bounds every operation when the system sets none.
const DefaultTimeout = 5 * time.Second

// connBuffer is the read and write buffer of each connection. rueidis defaults to
// 0.5 MiB each, which is 1 GiB at 1,000 connections; larger replies still work, they
// are read in several pieces.
const connBuffer = 64 << 10

// Adapter opens RESP targets.
type Adapter struct{}

func init() { core.RegisterAdapter(Name, func() core.Adapter { return Adapter{} }) }

// Info implements core.Adapter.
func (Adapter) Info() core.Info {
	return core.Info{
		Name:    Name,
		Version: "1",
		Ops: []core.OpKind{core.OpGet, core.OpSet, core.OpRead, core.OpUpdate, core.OpInsert, core.OpPublish,
			core.OpDelete, core.OpIncr},
		// Raw connections pipeline on the engine's event loops; the others
		// (TLS, a cluster, driver rueidis) are Pipeliners.
		Pipeline: true,
		TTL:      true, // SET ... EX (or PX)
		Options: []core.Option{
			{Name: "cluster", Type: core.OptionBool, Default: "false", TopLevel: true,
				Doc: "use the OSS cluster API (CLUSTER SLOTS, MOVED); never detected on its own, so that a standalone endpoint behind a proxy is never probed"},
			{Name: "resp", Type: core.OptionInt, Values: []string{"2", "3"}, TopLevel: true,
				Doc: "force the protocol version: 2 for servers that only speak RESP2; default RESP3 with fallback, or the profile's"},
			{Name: "driver", Type: core.OptionString, Values: []string{"raw", "rueidis"}, Default: "raw",
				Doc: "raw: the engine drives plain connections itself on its event loops, and TLS connections speak its codec over crypto/tls; rueidis: every connection through rueidis (cluster connections always are)"},
		},
	}
}

// Open connects to the system and checks it answers PING.
func (Adapter) Open(ctx context.Context, sys core.SystemConfig) (core.Target, error) {
	if sys.Endpoint == "" {
		return nil, errors.New("no endpoint")
	}
	profile, err := LoadProfile(sys.Profile, sys.ProfileData)
	if err != nil {
		return nil, err
	}
	timeout := sys.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cluster := sys.Options["cluster"] == "true"
	resp2 := sys.Options["resp"] == "2" || sys.Options["resp"] == "" && profile.RESP == 2
	opt := rueidis.ClientOption{
		InitAddress:           []string{sys.Endpoint},
		Username:              sys.Auth.Username,
		Password:              sys.Auth.Password,
		ClientName:            "cmpbench",
		DisableAutoPipelining: true,
		DisableCache:          true,
		DisableRetry:          true,     // a retried read would hide an error
		ForceSingleClient:     !cluster, // never probe CLUSTER on a standalone endpoint
		AlwaysRESP2:           resp2,
		BlockingPoolSize:      1 << 16, // a cap, not an allocation: every worker dedicates one
		ReadBufferEachConn:    connBuffer,
		WriteBufferEachConn:   connBuffer,
		ConnWriteTimeout:      timeout,
		Dialer:                net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second},
	}
	if sys.TLS.Enabled {
		host, _, err := net.SplitHostPort(sys.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("endpoint %q: %w", sys.Endpoint, err)
		}
		if opt.TLSConfig, err = sys.TLS.ClientConfig(host); err != nil {
			return nil, err
		}
	}
	if opt.TLSConfig != nil {
		if err := probeTLS(ctx, sys.Endpoint, opt.TLSConfig, timeout); err != nil {
			return nil, err
		}
	}
	client, err := rueidis.NewClient(opt)
	if err != nil {
		if opt.TLSConfig == nil && speaksTLS(ctx, sys.Endpoint, timeout) {
			// A TLS server drops a plaintext hello: retrying would only repeat
			// "connection reset by peer".
			return nil, core.Refused(fmt.Errorf("connect %s: the server speaks TLS on this port, and tls.enabled is not true: set tls: {enabled: true} (with ca_file for a private CA) (%v)", sys.Endpoint, err))
		}
		return nil, refusal(fmt.Errorf("connect %s: %w", sys.Endpoint, err))
	}
	if cluster && client.Mode() != rueidis.ClientModeCluster {
		client.Close()
		return nil, core.Refused(fmt.Errorf("cluster: true, but %s does not serve the cluster API", sys.Endpoint))
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := client.Do(pctx, client.B().Ping().Build()).Error(); err != nil {
		client.Close()
		return nil, refusal(fmt.Errorf("PING %s: %w", sys.Endpoint, err))
	}
	t := &target{sys: sys, client: client, opt: opt, timeout: timeout, profile: profile, cluster: cluster, tls: opt.TLSConfig}
	if cluster {
		if err := t.waitClusterOK(ctx); err != nil {
			client.Close()
			return nil, err
		}
	}
	if err := t.checkRequired(ctx); err != nil {
		client.Close()
		return nil, err
	}
	return t, nil
}

// probeTLS shakes hands once, within ctx, before the client does: a plaintext
// server reads the TLS hello as the start of a command and waits for the rest, so
// the handshake would time out with nothing to say why.
func probeTLS(ctx context.Context, endpoint string, cfg *tls.Config, timeout time.Duration) error {
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl)*4/5)
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := (&net.Dialer{}).DialContext(hctx, "tcp", endpoint)
	if err != nil {
		return fmt.Errorf("connect %s: %w", endpoint, err)
	}
	defer raw.Close()
	err = tls.Client(raw, cfg).HandshakeContext(hctx)
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case hctx.Err() != nil && ctx.Err() == nil, errors.As(err, &ne) && ne.Timeout():
		return core.Refused(fmt.Errorf("connect %s: no answer to the TLS handshake within %s: is the server serving TLS on this port? (a plaintext server does not answer a TLS hello; tls.enabled is true)", endpoint, timeout.Round(time.Millisecond)))
	}
	return refusal(fmt.Errorf("connect %s: TLS handshake: %w", endpoint, err))
}

// speaksTLS reports whether the server at endpoint completes a TLS handshake
// (its certificate unchecked: only whether it speaks TLS at all is asked).
func speaksTLS(ctx context.Context, endpoint string, timeout time.Duration) bool {
	hctx, cancel := context.WithTimeout(ctx, min(timeout, 2*time.Second))
	defer cancel()
	// Unverified on purpose: only whether the port speaks TLS is asked, and
	// nothing is sent over the connection.
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}}
	c, err := d.DialContext(hctx, "tcp", endpoint)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// refusal marks the errors that waiting cannot cure as refusals: the server's own
// error reply (WRONGPASS, NOAUTH, NOPERM; not LOADING, TRYAGAIN, CLUSTERDOWN, BUSY or
// MASTERDOWN, which pass), a certificate that does not verify, a TLS handshake the
// server rejects or a server that does not speak TLS.
func refusal(err error) error {
	var (
		reply    *rueidis.RedisError
		verify   *tls.CertificateVerificationError
		header   tls.RecordHeaderError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	if errors.As(err, &reply) && (reply.IsLoading() || reply.IsTryAgain() || reply.IsClusterDown() ||
		strings.HasPrefix(reply.Error(), "BUSY") || strings.HasPrefix(reply.Error(), "MASTERDOWN")) {
		return err
	}
	if errors.As(err, &reply) || errors.As(err, &verify) || errors.As(err, &header) || errors.As(err, &unknown) ||
		errors.As(err, &hostname) || errors.As(err, &invalid) ||
		strings.Contains(err.Error(), "remote error: tls:") {
		return core.Refused(err)
	}
	return err
}

// clusterReadyTimeout bounds the wait for a cluster to serve every slot.
const clusterReadyTimeout = 30 * time.Second

// waitClusterOK waits until every node reports cluster_state:ok. A new cluster
// answers CLUSTERDOWN for a while after its slots are assigned (a master waits
// before it declares the state ok), and those errors must not land in a load.
func (t *target) waitClusterOK(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, clusterReadyTimeout)
	defer cancel()
	for {
		var notOK []string
		for _, n := range t.nodes(ctx, false) {
			cctx, ccancel := context.WithTimeout(ctx, t.timeout)
			info, err := n.client.Do(cctx, n.client.B().ClusterInfo().Build()).ToString()
			ccancel()
			if err != nil {
				notOK = append(notOK, fmt.Sprintf("%s: CLUSTER INFO: %v", n.addr, err))
				continue
			}
			if state := ParseInfo(strings.TrimPrefix(info, "txt:"))[".cluster_state"]; state != "ok" {
				notOK = append(notOK, fmt.Sprintf("%s: cluster_state:%s", n.addr, state))
			}
		}
		if len(notOK) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cluster is not ready (%s)", strings.Join(notOK, "; "))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type target struct {
	sys     core.SystemConfig
	client  rueidis.Client
	opt     rueidis.ClientOption // client's, for a pipelined connection's own client
	timeout time.Duration
	profile *Profile
	cluster bool
	tls     *tls.Config // nil without TLS
}

// Connect opens one connection for one worker: a raw socket that the engine drives
// itself (plain TCP to one server), a stream connection (TLS to one server), else
// a rueidis connection dedicated to the worker. A cluster worker sends each request on a pooled connection to the key's
// shard instead: a dedicated rueidis connection is bound to one slot.
func (t *target) Connect(ctx context.Context) (core.Conn, error) {
	switch {
	case t.useRaw():
		c, err := t.dialRaw(ctx)
		if err != nil {
			return nil, err
		}
		return c, nil
	case t.useStream():
		c, err := t.dialStream(ctx)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	if t.cluster {
		return &conn{t: t, client: t.client, dc: t.client, release: func() {}, profile: t.profile, shared: true}, nil
	}
	dc, cancel := t.client.Dedicate()
	return &conn{t: t, client: t.client, dc: dc, release: cancel, profile: t.profile}, nil
}

func (t *target) Close(context.Context) error {
	t.client.Close()
	return nil
}

type conn struct {
	t       *target
	client  rueidis.Client
	dc      rueidis.CoreClient // the worker's dedicated connection, or the cluster client
	release func()
	broken  bool
	shared  bool // cluster, pipelined: pooled connections, nothing to re-dedicate
	// pipelined: a client of its own, whose Do the engine's lanes call at once
	// (pipelinedConn); nothing in c changes after it is made.
	pipelined bool
	profile   *Profile
	args      []string // reused for the field/value pairs of a record, one lane only
}

// Redial implements core.Redialer: after a network error or a timeout, it takes a
// new dedicated connection and opens it with a PING, before the next operation's
// clock starts. A cluster worker's pooled connections reconnect inside rueidis.
func (c *conn) Redial(context.Context) error {
	if c.shared || !c.broken {
		return nil
	}
	c.rededicate()
	if err := c.dc.Do(context.Background(), c.dc.B().Ping().Build()).Error(); err != nil {
		if class, _ := classify(err); class == core.ErrClassConnection || class == core.ErrClassTimeout {
			c.broken = true
		}
		return err
	}
	return nil
}

// rededicate swaps a broken dedicated connection for a new one.
func (c *conn) rededicate() {
	c.release()
	c.dc, c.release = c.client.Dedicate()
	c.broken = false
}

var _ core.Redialer = (*conn)(nil)

// Do sends one command and waits for its reply. It deliberately ignores ctx: rueidis
// turns a cancelable context without a deadline into background pipelining, which
// would change what is measured. Every command is bounded by the connection timeout.
func (c *conn) Do(_ context.Context, op *core.Op) error {
	if !c.shared && c.broken {
		// A dedicated connection keeps failing after a network error: take a new one
		// (Redial does, when the engine called it).
		c.rededicate()
	}
	var cmd rueidis.Completed
	switch op.Kind {
	case core.OpGet:
		cmd = c.dc.B().Get().Key(rueidis.BinaryString(op.Key)).Build()
	case core.OpSet:
		set := c.dc.B().Set().Key(rueidis.BinaryString(op.Key)).Value(rueidis.BinaryString(op.Value))
		switch unit, n := expiry(op.TTL); {
		case op.TTL <= 0:
			cmd = set.Build()
		case unit == "EX":
			cmd = set.ExSeconds(n).Build()
		default:
			cmd = set.PxMilliseconds(n).Build()
		}
	case core.OpDelete:
		cmd = c.dc.B().Del().Key(rueidis.BinaryString(op.Key)).Build()
	case core.OpIncr:
		cmd = c.dc.B().Incrby().Key(rueidis.BinaryString(op.Key)).Increment(op.Delta).Build()
	case core.OpRead:
		cmd = c.dc.B().Hgetall().Key(rueidis.BinaryString(op.Key)).Build()
	case core.OpUpdate:
		cmd = c.record(c.profile.updateCommand(op), op)
	case core.OpInsert:
		cmd = c.record(c.profile.Commands.Insert, op)
	case core.OpPublish:
		cmd = c.dc.B().Publish().Channel(rueidis.BinaryString(op.Key)).Message(rueidis.BinaryString(op.Value)).Build()
	default:
		return &core.OpError{Class: core.ErrClassOther, Err: fmt.Errorf("%s: %w", op.Kind, core.ErrUnsupported)}
	}
	res := c.dc.Do(context.Background(), cmd)
	err := res.Error()
	if err == nil {
		switch op.Kind {
		case core.OpGet:
			s, _ := res.ToString()
			op.RespBytes = len(s)
		case core.OpRead:
			return checkRecord(res, op)
		case core.OpDelete:
			if n, ierr := res.AsInt64(); ierr == nil && n == 0 {
				return core.ErrMiss // DEL removed nothing: the key was not there
			}
		case core.OpUpdate:
			if n, ierr := res.AsInt64(); ierr == nil && c.profile.updateFoundNothing(op, n) {
				return notFound(op)
			}
		}
		return nil
	}
	class, miss := classify(err)
	if miss {
		return nilReply(op)
	}
	if !c.shared && (class == core.ErrClassConnection || class == core.ErrClassTimeout) {
		c.broken = true
	}
	return &core.OpError{Class: class, Err: err}
}

// record builds a write of op's fields with a profile's command.
func (c *conn) record(command []string, op *core.Op) rueidis.Completed {
	var args []string
	if !c.pipelined {
		args = c.args[:0]
	}
	for i, f := range op.Fields {
		args = append(args, rueidis.BinaryString(f), rueidis.BinaryString(op.Values[i]))
	}
	if !c.pipelined {
		c.args = args
	}
	return c.dc.B().Arbitrary(command...).Keys(rueidis.BinaryString(op.Key)).Args(args...).Build()
}

// checkRecord counts a HGETALL reply: fewer fields than the record has is an error,
// never a short success.
func checkRecord(res rueidis.RedisResult, op *core.Op) error {
	msg, err := res.ToMessage()
	if err != nil {
		return &core.OpError{Class: core.ErrClassProtocol, Err: err}
	}
	kv, err := msg.ToMap()
	if err != nil {
		arr, aerr := msg.ToArray() // RESP2: a flat array of fields and values
		if aerr != nil {
			return &core.OpError{Class: core.ErrClassProtocol, Err: err}
		}
		if n := len(arr) / 2; n < len(op.Fields) {
			return incomplete(op, n)
		}
		for i := 1; i < len(arr); i += 2 {
			s, _ := arr[i].ToString()
			op.RespBytes += len(s)
		}
		return nil
	}
	if len(kv) < len(op.Fields) {
		return incomplete(op, len(kv))
	}
	for _, v := range kv {
		s, _ := v.ToString()
		op.RespBytes += len(s)
	}
	return nil
}

func incomplete(op *core.Op, n int) error {
	return &core.OpError{Class: core.ErrClassOther, Err: fmt.Errorf("record %s has %d of %d fields", op.Key, n, len(op.Fields))}
}

func (c *conn) Close() error {
	c.release()
	return nil
}

// replyClass is the class of an error reply, from its code (the first word): OOM
// is oom; BUSY (a script or module command running), LOADING (the dataset still
// loading after a start) and TRYAGAIN (a cluster slot moving) turn a request away
// for now and are overload; anything else is other.
func replyClass(msg string) core.ErrorClass {
	code, _, _ := strings.Cut(msg, " ")
	switch code {
	case "OOM":
		return core.ErrClassOOM
	case "BUSY", "LOADING", "TRYAGAIN":
		return core.ErrClassOverload
	}
	return core.ErrClassOther
}

// classify maps a rueidis error to an error class; a nil reply is a miss.
func classify(err error) (class core.ErrorClass, miss bool) {
	if rueidis.IsRedisNil(err) {
		return 0, true
	}
	if re, ok := rueidis.IsRedisErr(err); ok {
		return replyClass(re.Error()), false
	}
	if errors.Is(err, rueidis.ErrClosing) {
		return core.ErrClassConnection, false
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "received unexpected") || strings.HasPrefix(msg, "received unknown message type") {
		return core.ErrClassProtocol, false
	}
	return core.ClassOf(err), false
}
