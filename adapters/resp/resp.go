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
	"os"
	"sort"
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
		Name:         Name,
		Version:      "1",
		Ops:          []core.OpKind{core.OpGet, core.OpSet, core.OpRead, core.OpUpdate, core.OpInsert},
		Capabilities: []string{"capture", "stats", "count", "records", "flush"},
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
	opt := rueidis.ClientOption{
		InitAddress:           []string{sys.Endpoint},
		Username:              sys.Auth.Username,
		Password:              sys.Auth.Password,
		ClientName:            "cmpbench",
		DisableAutoPipelining: true,
		DisableCache:          true,
		DisableRetry:          true, // a retried read would hide an error
		ForceSingleClient:     true, // never probe CLUSTER on a standalone endpoint
		AlwaysRESP2:           sys.Options["resp"] == "2",
		BlockingPoolSize:      1 << 16, // a cap, not an allocation: every worker dedicates one
		ReadBufferEachConn:    connBuffer,
		WriteBufferEachConn:   connBuffer,
		ConnWriteTimeout:      timeout,
		Dialer:                net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second},
	}
	if sys.TLS.Enabled {
		tc, err := tlsConfig(sys)
		if err != nil {
			return nil, err
		}
		opt.TLSConfig = tc
	}
	client, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", sys.Endpoint, err)
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := client.Do(pctx, client.B().Ping().Build()).Error(); err != nil {
		client.Close()
		return nil, fmt.Errorf("PING %s: %w", sys.Endpoint, err)
	}
	return &target{sys: sys, client: client, timeout: timeout, profile: profile}, nil
}

func tlsConfig(sys core.SystemConfig) (*tls.Config, error) {
	tc := &tls.Config{ServerName: sys.TLS.ServerName, InsecureSkipVerify: sys.TLS.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if tc.ServerName == "" {
		host, _, err := net.SplitHostPort(sys.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("endpoint %q: %w", sys.Endpoint, err)
		}
		tc.ServerName = host
	}
	if f := sys.TLS.CAFile; f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("tls ca_file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls ca_file %s: no PEM certificate in it", f)
		}
	}
	if sys.TLS.CertFile != "" || sys.TLS.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(sys.TLS.CertFile, sys.TLS.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

type target struct {
	sys     core.SystemConfig
	client  rueidis.Client
	timeout time.Duration
	profile *Profile
}

// Connect dedicates one connection of the client to one worker.
func (t *target) Connect(context.Context) (core.Conn, error) {
	dc, cancel := t.client.Dedicate()
	return &conn{client: t.client, dc: dc, release: cancel, profile: t.profile}, nil
}

func (t *target) Close(context.Context) error {
	t.client.Close()
	return nil
}

type conn struct {
	client  rueidis.Client
	dc      rueidis.DedicatedClient
	release func()
	broken  bool
	profile *Profile
	args    []string // reused for the field/value pairs of a record
}

// Do sends one command and waits for its reply. It deliberately ignores ctx: rueidis
// turns a cancelable context without a deadline into background pipelining, which
// would change what is measured. Every command is bounded by the connection timeout.
func (c *conn) Do(_ context.Context, op *core.Op) error {
	if c.broken {
		// A dedicated connection keeps failing after a network error: take a new one.
		c.release()
		c.dc, c.release = c.client.Dedicate()
		c.broken = false
	}
	var cmd rueidis.Completed
	switch op.Kind {
	case core.OpGet:
		cmd = c.dc.B().Get().Key(rueidis.BinaryString(op.Key)).Build()
	case core.OpSet:
		cmd = c.dc.B().Set().Key(rueidis.BinaryString(op.Key)).Value(rueidis.BinaryString(op.Value)).Build()
	case core.OpRead:
		cmd = c.dc.B().Hgetall().Key(rueidis.BinaryString(op.Key)).Build()
	case core.OpUpdate:
		cmd = c.record(c.profile.Commands.Update, op)
	case core.OpInsert:
		cmd = c.record(c.profile.Commands.Insert, op)
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
		}
		return nil
	}
	class, miss := classify(err)
	if miss {
		return core.ErrMiss
	}
	if class == core.ErrClassConnection || class == core.ErrClassTimeout {
		c.broken = true
	}
	return &core.OpError{Class: class, Err: err}
}

// record builds a write of every field of op with a profile's command.
func (c *conn) record(command []string, op *core.Op) rueidis.Completed {
	c.args = c.args[:0]
	for i, f := range op.Fields {
		c.args = append(c.args, rueidis.BinaryString(f), rueidis.BinaryString(op.Values[i]))
	}
	return c.dc.B().Arbitrary(command...).Keys(rueidis.BinaryString(op.Key)).Args(c.args...).Build()
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

// Count is DBSIZE.
func (t *target) Count(ctx context.Context) (int64, error) {
	cctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	return t.client.Do(cctx, t.client.B().Dbsize().Build()).AsInt64()
}

// ReadRecord is HGETALL.
func (t *target) ReadRecord(ctx context.Context, key []byte) (map[string][]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	m, err := t.client.Do(cctx, t.client.B().Hgetall().Key(string(key)).Build()).AsStrMap()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out, nil
}

// Flush is FLUSHALL; cmpbench calls it only for systems marked disposable.
func (t *target) Flush(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*t.timeout)
	defer cancel()
	return t.client.Do(cctx, t.client.B().Flushall().Build()).Error()
}

// classify maps a rueidis error to an error class; a nil reply is a miss.
func classify(err error) (class core.ErrorClass, miss bool) {
	if rueidis.IsRedisNil(err) {
		return 0, true
	}
	if re, ok := rueidis.IsRedisErr(err); ok {
		if strings.HasPrefix(re.Error(), "OOM") {
			return core.ErrClassOOM, false
		}
		return core.ErrClassOther, false
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

// versionFields are INFO server fields naming a product version, most specific first:
// most Redis-compatible servers also report a redis_version they are compatible with.
var versionFields = []struct{ field, product string }{
	{"valkey_version", "valkey"},
	{"dragonfly_version", "dragonfly"},
	{"kvrocks_version", "kvrocks"},
	{"pika_version", "pika"},
	{"garnet_version", "garnet"},
	{"lavik_version", "lavik"},
	{"eloqkv_version", "eloqkv"},
	{"tendis_version", "tendis"},
	{"keydb_version", "keydb"},
	{"redis_version", "redis"},
}

// Capture reads INFO and CONFIG GET *. Refused commands are recorded, not fatal.
func (t *target) Capture(ctx context.Context) (core.Capture, error) {
	cp := core.Capture{Sections: map[string]string{}}
	info, err := t.info(ctx)
	if err != nil {
		return cp, fmt.Errorf("INFO: %w", err)
	}
	cp.Sections["info"] = info
	fields := ParseInfo(info)
	for _, f := range t.profile.VersionFields {
		if ver, ok := fields["server."+f]; ok {
			cp.Product, cp.Version, cp.VersionField = t.profile.Name, ver, "INFO server."+f
			break
		}
	}
	for _, v := range versionFields {
		if cp.Version != "" {
			break
		}
		if ver, ok := fields["server."+v.field]; ok {
			cp.Product, cp.Version, cp.VersionField = v.product, ver, "INFO server."+v.field
		}
	}
	for _, c := range t.profile.Capture {
		cctx, cancel := context.WithTimeout(ctx, t.timeout)
		out, err := t.client.Do(cctx, t.client.B().Arbitrary(c...).Build()).ToAny()
		cancel()
		name := strings.Join(c, " ")
		if err != nil {
			cp.Refused = append(cp.Refused, name+": "+err.Error())
			continue
		}
		cp.Sections["cmd-"+strings.ToLower(strings.ReplaceAll(name, " ", "-"))] = fmt.Sprintf("%v\n", out)
	}
	cctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	cfg, err := t.client.Do(cctx, t.client.B().ConfigGet().Parameter("*").Build()).AsStrMap()
	if err != nil {
		if _, ok := rueidis.IsRedisErr(err); !ok {
			return cp, fmt.Errorf("CONFIG GET *: %w", err)
		}
		cp.Refused = append(cp.Refused, "CONFIG GET *: "+err.Error())
	} else {
		cp.Sections["config"] = formatConfig(cfg)
	}
	return cp, nil
}

// info reads INFO everything, falling back to the sections older or restricted
// servers accept.
func (t *target) info(ctx context.Context) (string, error) {
	var last error
	for _, section := range []string{"everything", "all", ""} {
		cctx, cancel := context.WithTimeout(ctx, t.timeout)
		cmd := t.client.B().Arbitrary("INFO")
		if section != "" {
			cmd = cmd.Args(section)
		}
		s, err := t.client.Do(cctx, cmd.Build()).ToString()
		cancel()
		if err == nil {
			// RESP3 sends INFO as a verbatim string.
			return strings.TrimPrefix(s, "txt:"), nil
		}
		last = err
		if _, ok := rueidis.IsRedisErr(err); !ok {
			break
		}
	}
	return "", last
}

// Stats returns INFO as section.key -> value.
func (t *target) Stats(ctx context.Context) (map[string]string, error) {
	info, err := t.info(ctx)
	if err != nil {
		return nil, err
	}
	return ParseInfo(info), nil
}

// ParseInfo turns INFO text into section.key -> value, sections lower-cased.
func ParseInfo(info string) map[string]string {
	out := map[string]string{}
	section := ""
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			section = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(line, "#")))
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		out[section+"."+k] = v
	}
	return out
}

// RedactConfig reports whether a CONFIG parameter holds a credential: requirepass,
// masterauth, tls-key-file-pass and the like.
func RedactConfig(key string) bool {
	k := strings.ToLower(key)
	return k == "masterauth" || strings.HasSuffix(k, "pass") || strings.Contains(k, "password") ||
		strings.Contains(k, "secret") || strings.Contains(k, "token")
}

func formatConfig(cfg map[string]string) string {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := cfg[k]
		if RedactConfig(k) && v != "" {
			v = "[redacted]"
		}
		fmt.Fprintf(&b, "%s %s\n", k, v)
	}
	return b.String()
}
