package resp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

func open(t *testing.T, endpoint string, auth core.AuthConfig) core.Target {
	t.Helper()
	tg, err := Adapter{}.Open(context.Background(), core.SystemConfig{Name: "r", Endpoint: endpoint, Auth: auth, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg
}

func TestGetSetMissIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	tg := open(t, srv.Endpoint(), core.AuthConfig{})
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	op := &core.Op{Kind: core.OpGet, Key: []byte("kv_1")}
	if err := c.Do(ctx, op); err != core.ErrMiss {
		t.Fatalf("GET of a missing key: %v, want ErrMiss", err)
	}
	if err := c.Do(ctx, &core.Op{Kind: core.OpSet, Key: []byte("kv_1"), Value: []byte("hello")}); err != nil {
		t.Fatal(err)
	}
	op = &core.Op{Kind: core.OpGet, Key: []byte("kv_1")}
	if err := c.Do(ctx, op); err != nil || op.RespBytes != 5 {
		t.Fatalf("GET: %v, %d bytes", err, op.RespBytes)
	}
	cp, err := tg.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Product != "redis" || cp.Version == "" || cp.VersionField != "INFO server.redis_version" {
		t.Fatalf("capture %+v", cp)
	}
	if !strings.Contains(cp.Sections["info"], "# Commandstats") || !strings.Contains(cp.Sections["config"], "maxmemory ") {
		t.Fatal("capture lacks INFO everything or CONFIG GET *")
	}
	st, err := tg.Stats(ctx)
	if err != nil || st["keyspace.db0"] == "" {
		t.Fatalf("stats: %v %v", err, st["keyspace.db0"])
	}
	// The fields the report charts over a phase, all of which redis-server has.
	if got := st[core.StatTimeline]; got != "memory.used_memory,persistence.rdb_bgsave_in_progress,persistence.aof_rewrite_in_progress" {
		t.Errorf("stats name the timeline %q", got)
	}
}

func TestOOMIsAnErrorIntegration(t *testing.T) {
	srv := provisiontest.Redis(t, "--maxmemory", "1mb", "--maxmemory-policy", "noeviction")
	tg := open(t, srv.Endpoint(), core.AuthConfig{})
	c, _ := tg.Connect(context.Background())
	defer c.Close()
	value := make([]byte, 64<<10)
	var err error
	for i := range 1000 {
		err = c.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte("k" + string(rune('a'+i%26)) + strings.Repeat("x", i)), Value: value})
		if err != nil {
			break
		}
	}
	if core.ClassOf(err) != core.ErrClassOOM {
		t.Fatalf("writing past maxmemory gave %v (class %s), want an OOM error", err, core.ClassOf(err))
	}
}

// A server busy running a script answers BUSY: overload (back-pressure), not
// other, and not oom.
func TestBusyIsOverloadIntegration(t *testing.T) {
	srv := provisiontest.Redis(t, "--busy-reply-threshold", "50")
	tg := open(t, srv.Endpoint(), core.AuthConfig{})
	c, _ := tg.Connect(context.Background())
	defer c.Close()
	script, err := net.Dial("tcp", srv.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer script.Close()
	// A script that never ends: the server answers others BUSY after 50 ms, until
	// SCRIPT KILL.
	fmt.Fprintf(script, "EVAL \"while true do end\" 0\r\n")
	defer func() {
		k, err := net.Dial("tcp", srv.Endpoint())
		if err == nil {
			fmt.Fprintf(k, "SCRIPT KILL\r\n")
			bufio.NewReader(k).ReadString('\n')
			k.Close()
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err = c.Do(context.Background(), &core.Op{Kind: core.OpGet, Key: []byte("k")})
		if err != nil && err != core.ErrMiss || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if core.ClassOf(err) != core.ErrClassOverload || !strings.Contains(err.Error(), "BUSY") {
		t.Fatalf("a GET while a script runs gave %v (class %s), want BUSY as overload", err, core.ClassOf(err))
	}
}

func TestPasswordAndRedactedCaptureIntegration(t *testing.T) {
	const pw = "it-secret-8d7f"
	srv := provisiontest.Redis(t, "--requirepass", pw)
	if _, err := (Adapter{}).Open(context.Background(), core.SystemConfig{Endpoint: srv.Endpoint(), Auth: core.AuthConfig{Password: "wrong-password"}, Timeout: time.Second}); err == nil {
		t.Fatal("a wrong password was accepted")
	} else if strings.Contains(err.Error(), "wrong-password") {
		t.Fatalf("the error echoes the password: %v", err)
	}
	tg := open(t, srv.Endpoint(), core.AuthConfig{Password: pw})
	cp, err := tg.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range cp.Sections {
		if strings.Contains(text, pw) {
			t.Fatalf("capture %s holds the password", name)
		}
	}
	if !strings.Contains(cp.Sections["config"], "requirepass [redacted]") {
		t.Fatal("requirepass not shown as redacted")
	}
}

func TestReconnectAfterServerRestartIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	tg := open(t, srv.Endpoint(), core.AuthConfig{})
	c, _ := tg.Connect(context.Background())
	defer c.Close()
	get := &core.Op{Kind: core.OpGet, Key: []byte("k")}
	if err := c.Do(context.Background(), get); err != core.ErrMiss {
		t.Fatal(err)
	}
	srv.Stop()
	err := c.Do(context.Background(), get)
	if class := core.ClassOf(err); class != core.ErrClassConnection {
		t.Fatalf("after the server died: %v (class %s), want a connection error", err, class)
	}
	if err := c.Do(context.Background(), get); err == nil || errors.Is(err, core.ErrMiss) {
		t.Fatalf("a dead server answered: %v", err)
	}
}

// Server error replies turn the client away for good (WRONGPASS, NOPERM), except
// those of a server that is still getting ready. Real replies, chosen by a script.
func TestRefusalOfServerRepliesIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Endpoint()}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for msg, refused := range map[string]bool{
		"WRONGPASS invalid username-password pair": true,
		"NOPERM this user has no permissions":      true,
		"LOADING Redis is loading the dataset":     false,
		"BUSY Redis is busy running a script":      false,
		"MASTERDOWN Link with MASTER is down":      false,
		"TRYAGAIN Multiple keys request":           false,
		"CLUSTERDOWN The cluster is down":          false,
	} {
		err := c.Do(context.Background(), c.B().Eval().Script("return redis.error_reply(ARGV[1])").Numkeys(0).Arg(msg).Build()).Error()
		if _, ok := rueidis.IsRedisErr(err); !ok {
			t.Fatalf("%q: not a server reply: %v", msg, err)
		}
		if got := errors.Is(refusal(fmt.Errorf("PING: %w", err)), core.ErrRefused); got != refused {
			t.Errorf("%q: refused %v", msg, got)
		}
	}
}

// FLUSHALL may take longer than an operation's timeout (Pika takes 0.3 to 0.7 s
// idle, seconds beside other work): Flush waits up to ten timeouts. A server
// whose writes are paused for three timeouts stands in for a slow FLUSHALL.
func TestFlushOutlastsTheTimeoutIntegration(t *testing.T) {
	sys := sysAt(provisiontest.Redis(t).Endpoint())
	sys.Timeout = 300 * time.Millisecond
	tg, _ := connectTo(t, sys)
	rc := tg.(*target).client
	if err := rc.Do(context.Background(), rc.B().Set().Key("k").Value("v").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Do(context.Background(), rc.B().ClientPause().Timeout(900).Write().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := tg.(core.Flusher).Flush(context.Background()); err != nil {
		t.Fatalf("Flush while writes are paused for 900 ms (timeout 300 ms): %v", err)
	}
	if took := time.Since(start); took < 800*time.Millisecond {
		t.Fatalf("Flush returned after %v, before the pause ended", took)
	}
	if n, err := tg.(core.Counter).Count(context.Background()); err != nil || n != 0 {
		t.Fatalf("Count after Flush = %d, %v", n, err)
	}
}
