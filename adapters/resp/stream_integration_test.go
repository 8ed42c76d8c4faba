package resp

import (
	"context"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// A TLS connection to one server speaks the codec in its worker's goroutine; a
// reply later than the timeout fails as a timeout, and the next operation opens a
// new connection.
func TestStreamConnTimeoutAndReconnectIntegration(t *testing.T) {
	files := provisiontest.TLS(t, t.TempDir())
	srv := provisiontest.RedisTLS(t, files, false)
	sys := sysAt(srv.Endpoint())
	sys.TLS = core.TLSConfig{Enabled: true, CAFile: files.CA}
	sys.Timeout = 300 * time.Millisecond
	ctx := context.Background()
	tg, c := connectTo(t, sys)
	if _, ok := c.(*streamConn); !ok {
		t.Fatalf("a TLS target to one server gave a %T", c)
	}
	for _, kv := range [][2]string{{"k", "v"}, {"k2", "value-2"}} {
		if err := c.Do(ctx, &core.Op{Kind: core.OpSet, Key: []byte(kv[0]), Value: []byte(kv[1])}); err != nil {
			t.Fatal(err)
		}
	}
	// Every client but the control connection's waits for a second.
	rc := tg.(*target).client
	if err := rc.Do(ctx, rc.B().ClientPause().Timeout(1000).All().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := c.Do(ctx, &core.Op{Kind: core.OpGet, Key: []byte("k")})
	if took := time.Since(start); core.ClassOf(err) != core.ErrClassTimeout || took < 250*time.Millisecond || took > 900*time.Millisecond {
		t.Fatalf("GET during the pause: %v (class %v) after %s; want a timeout after 300 ms", err, core.ClassOf(err), took)
	}
	// Still paused: the reconnect's handshake (CLIENT SETNAME) times out, and the
	// operation fails as a connection error.
	if err := c.Do(ctx, &core.Op{Kind: core.OpGet, Key: []byte("k")}); core.ClassOf(err) != core.ErrClassConnection {
		t.Fatalf("GET reconnecting during the pause: %v (class %v)", err, core.ClassOf(err))
	}
	time.Sleep(time.Second - time.Since(start) + 100*time.Millisecond)
	// The engine reconnects outside the operation's clock, through Redial; once
	// open, Redial does nothing.
	redial := c.(core.Redialer)
	for i := range 2 {
		if err := redial.Redial(ctx); err != nil {
			t.Fatalf("Redial %d after the pause: %v", i+1, err)
		}
	}
	// Another key, of another length: a connection that had kept the late reply
	// to the first GET would answer with it.
	get := &core.Op{Kind: core.OpGet, Key: []byte("k2")}
	if err := c.Do(ctx, get); err != nil || get.RespBytes != len("value-2") {
		t.Fatalf("GET after the pause, on a new connection: %v, %d bytes", err, get.RespBytes)
	}
}

// A rueidis connection (driver: rueidis) that timed out is replaced by Redial, with a
// PING, before the next operation's clock starts.
func TestRueidisConnRedialIntegration(t *testing.T) {
	sys := sysAt(provisiontest.Redis(t).Endpoint())
	sys.Options["driver"] = "rueidis"
	sys.Timeout = 300 * time.Millisecond
	ctx := context.Background()
	tg, cc := connectTo(t, sys)
	c, ok := cc.(*conn)
	if !ok {
		t.Fatalf("driver rueidis gave a %T", cc)
	}
	if err := c.Do(ctx, &core.Op{Kind: core.OpSet, Key: []byte("k2"), Value: []byte("value-2")}); err != nil {
		t.Fatal(err)
	}
	rc := tg.(*target).client
	if err := rc.Do(ctx, rc.B().ClientPause().Timeout(1000).All().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.Do(ctx, &core.Op{Kind: core.OpGet, Key: []byte("k2")}); core.ClassOf(err) != core.ErrClassTimeout {
		t.Fatalf("GET during the pause: %v (class %v); want a timeout", err, core.ClassOf(err))
	}
	if !c.broken {
		t.Fatal("a timed-out dedicated connection is not marked for replacement")
	}
	time.Sleep(time.Second - time.Since(start) + 100*time.Millisecond)
	for i := range 2 {
		if err := c.Redial(ctx); err != nil || c.broken {
			t.Fatalf("Redial %d after the pause: %v (broken %v)", i+1, err, c.broken)
		}
	}
	get := &core.Op{Kind: core.OpGet, Key: []byte("k2")}
	if err := c.Do(ctx, get); err != nil || get.RespBytes != len("value-2") {
		t.Fatalf("GET after Redial: %v, %d bytes", err, get.RespBytes)
	}
}

// connectTo opens sys and one connection to it, both closed when the test ends.
func connectTo(t *testing.T, sys core.SystemConfig) (core.Target, core.Conn) {
	t.Helper()
	ctx := context.Background()
	tg, err := Adapter{}.Open(ctx, sys)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(ctx) })
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return tg, c
}
