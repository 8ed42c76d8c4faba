package resp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

func sysAt(endpoint string) core.SystemConfig {
	return core.SystemConfig{Name: "r", Endpoint: endpoint, Timeout: 2 * time.Second, Options: map[string]string{}}
}

func roundTrip(t *testing.T, tg core.Target) {
	t.Helper()
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte("k"), Value: []byte("v")}); err != nil {
		t.Fatalf("SET: %v", err)
	}
	get := &core.Op{Kind: core.OpGet, Key: []byte("k")}
	if err := c.Do(context.Background(), get); err != nil || get.RespBytes != 1 {
		t.Fatalf("GET: %v", err)
	}
}

func TestTLSIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	files := provisiontest.TLS(t, t.TempDir())
	other := provisiontest.TLS(t, t.TempDir()) // an unrelated authority
	srv := provisiontest.RedisTLS(t, files, false)
	tests := []struct {
		name string
		tls  core.TLSConfig
		want string // error text; empty when the connection must work
	}{
		{"verified against the test CA", core.TLSConfig{Enabled: true, CAFile: files.CA}, ""},
		{"TLS 1.3 only", core.TLSConfig{Enabled: true, CAFile: files.CA, MinVersion: "1.3"}, ""},
		{"a wrong CA is refused", core.TLSConfig{Enabled: true, CAFile: other.CA}, "certificate signed by unknown authority"},
		{"the system's roots do not know the test CA", core.TLSConfig{Enabled: true}, "certificate signed by unknown authority"},
		{"a wrong server name is refused", core.TLSConfig{Enabled: true, CAFile: files.CA, ServerName: "redis.example.com"}, "certificate is valid for localhost"},
		{"insecure_skip_verify connects without verifying", core.TLSConfig{Enabled: true, InsecureSkipVerify: true}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sys := sysAt(srv.Endpoint())
			sys.TLS = tc.tls
			tg, err := Adapter{}.Open(context.Background(), sys)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Open: %v, want an error with %q", err, tc.want)
				}
				if !errors.Is(err, core.ErrRefused) {
					t.Fatalf("Open: %v is not marked a refusal: cmpbench would retry it", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(context.Background())
			roundTrip(t, tg)
		})
	}
	t.Run("plaintext to a TLS port fails, never falls back", func(t *testing.T) {
		// Issue 25: it used to be retried for 10 s, ending "connection reset by
		// peer"; it is refused at once, saying the server speaks TLS.
		_, err := (Adapter{}).Open(context.Background(), sysAt(srv.Endpoint()))
		if err == nil {
			t.Fatal("a plaintext client reached a TLS-only server")
		}
		if !errors.Is(err, core.ErrRefused) || !strings.Contains(err.Error(), "the server speaks TLS on this port, and tls.enabled is not true") {
			t.Fatalf("plaintext to a TLS server: %v", err)
		}
	})
}

func TestMutualTLSIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	files := provisiontest.TLS(t, t.TempDir())
	srv := provisiontest.RedisTLS(t, files, true)
	sys := sysAt(srv.Endpoint())
	sys.TLS = core.TLSConfig{Enabled: true, CAFile: files.CA}
	// Under TLS 1.3 the server's rejection arrives as a reset connection, which
	// looks like a server still starting: it is retried until the ready timeout.
	if _, err := (Adapter{}).Open(context.Background(), sys); err == nil {
		t.Fatal("a server that requires client certificates accepted none")
	}
	sys.TLS.CertFile, sys.TLS.KeyFile = files.ClientCert, files.ClientKey
	tg, err := Adapter{}.Open(context.Background(), sys)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	roundTrip(t, tg)
}

func TestACLUsersIntegration(t *testing.T) {
	const full, noConfig, limited = "full-pw-1c2d", "nocfg-pw-3e4f", "lim-pw-5a6b"
	srv := provisiontest.Redis(t,
		"--user", "default", "off",
		"--user", "bench", "on", ">"+full, "~*", "&*", "+@all",
		"--user", "nocfg", "on", ">"+noConfig, "~*", "&*", "+@all", "-config",
		"--user", "limited", "on", ">"+limited, "~kv_*", "+get", "+set", "+ping", "+hello", "+info", "+client|setname")
	open := func(user, pw string) (core.Target, error) {
		sys := sysAt(srv.Endpoint())
		sys.Auth = core.AuthConfig{Username: user, Password: pw}
		return Adapter{}.Open(context.Background(), sys)
	}
	t.Run("wrong password", func(t *testing.T) {
		_, err := open("bench", "not-the-password")
		if err == nil || !strings.Contains(err.Error(), "WRONGPASS") || strings.Contains(err.Error(), "not-the-password") || !errors.Is(err, core.ErrRefused) {
			t.Fatalf("wrong password: %v", err)
		}
	})
	t.Run("a user without CONFIG: capture degrades", func(t *testing.T) {
		tg, err := open("nocfg", noConfig)
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close(context.Background())
		cp, err := tg.Capture(context.Background())
		if err != nil {
			t.Fatalf("capture must go on without CONFIG: %v", err)
		}
		if cp.Sections["info"] == "" || cp.Sections["config"] != "" || len(cp.Refused) != 1 || !strings.Contains(cp.Refused[0], "NOPERM") {
			t.Fatalf("capture %v refused %v", cp.Version, cp.Refused)
		}
		roundTrip(t, tg)
	})
	t.Run("a user limited to GET and SET of kv_ keys", func(t *testing.T) {
		tg, err := open("limited", limited)
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close(context.Background())
		c, _ := tg.Connect(context.Background())
		defer c.Close()
		if err := c.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte("kv_1"), Value: []byte("v")}); err != nil {
			t.Fatalf("allowed SET: %v", err)
		}
		err = c.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: []byte("other"), Value: []byte("v")})
		if core.ClassOf(err) != core.ErrClassOther || !strings.Contains(err.Error(), "NOPERM") {
			t.Fatalf("a key outside the user's pattern: %v", err)
		}
		if _, err := tg.(core.Counter).Count(context.Background()); err == nil {
			t.Fatal("DBSIZE is not among the user's commands")
		}
	})
}

func TestRESP2Integration(t *testing.T) {
	respOf := func(t *testing.T, tg core.Target) string {
		s, err := tg.(*target).client.Do(context.Background(), tg.(*target).client.B().ClientInfo().Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Fields(s) {
			if v, ok := strings.CutPrefix(f, "resp="); ok {
				return v
			}
		}
		return "?"
	}
	srv := provisiontest.Redis(t)
	t.Run("forced", func(t *testing.T) {
		sys := sysAt(srv.Endpoint())
		sys.Options["resp"] = "2"
		tg, err := Adapter{}.Open(context.Background(), sys)
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close(context.Background())
		if v := respOf(t, tg); v != "2" {
			t.Fatalf("resp=%s", v)
		}
		roundTrip(t, tg)
		recordRoundTrip(t, tg)
	})
	t.Run("a server without HELLO: clean fallback", func(t *testing.T) {
		old := provisiontest.Redis(t, "--rename-command", "HELLO", "")
		tg, err := Adapter{}.Open(context.Background(), sysAt(old.Endpoint()))
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close(context.Background())
		if v := respOf(t, tg); v != "2" {
			t.Fatalf("resp=%s", v)
		}
		recordRoundTrip(t, tg)
	})
}

// recordRoundTrip writes and reads a record: HGETALL replies differ in RESP2.
func recordRoundTrip(t *testing.T, tg core.Target) {
	t.Helper()
	c, _ := tg.Connect(context.Background())
	defer c.Close()
	fields := [][]byte{[]byte("f0"), []byte("f1")}
	ins := &core.Op{Kind: core.OpInsert, Key: []byte("rec"), Fields: fields, Values: [][]byte{[]byte("a"), []byte("bc")}}
	if err := c.Do(context.Background(), ins); err != nil {
		t.Fatal(err)
	}
	read := &core.Op{Kind: core.OpRead, Key: []byte("rec"), Fields: fields}
	if err := c.Do(context.Background(), read); err != nil || read.RespBytes != 3 {
		t.Fatalf("READ: %v, %d bytes", err, read.RespBytes)
	}
}

func TestClusterIntegration(t *testing.T) {
	cl := provisiontest.RedisCluster(t, 3)
	sys := sysAt(cl.Endpoint())
	sys.Options["cluster"] = "true"
	tg, err := Adapter{}.Open(context.Background(), sys)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	c, _ := tg.Connect(context.Background())
	defer c.Close()
	for i := range 1000 {
		key := []byte("kv_" + string(rune('a'+i%26)) + strings.Repeat("x", i%7) + string(rune('0'+i/26%10)) + string(rune('0'+i/260)))
		if err := c.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: key, Value: []byte("v")}); err != nil {
			t.Fatalf("SET %s: %v", key, err)
		}
	}
	n, err := tg.(core.Counter).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 1000 {
		t.Fatalf("count over the shards %d, want 1000", n)
	}
	cp, err := tg.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range cl.Endpoints() {
		name := "info-" + strings.ReplaceAll(ep, ":", "-")
		if cp.Sections[name] == "" || cp.Sections["config-"+strings.ReplaceAll(ep, ":", "-")] == "" {
			t.Fatalf("no capture of shard %s (sections: %d)", ep, len(cp.Sections))
		}
	}
	st, _ := tg.Stats(context.Background())
	shards := 0
	for k := range st {
		if strings.HasPrefix(k, "server.redis_version@") {
			shards++
		}
	}
	if shards != 3 {
		t.Fatalf("stats from %d shards", shards)
	}
	if err := tg.(core.Flusher).Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := tg.(core.Counter).Count(context.Background()); n != 0 {
		t.Fatalf("%d keys after FLUSHALL on every master", n)
	}
	t.Run("cluster: true on a standalone server is an error", func(t *testing.T) {
		single := provisiontest.Redis(t)
		sys := sysAt(single.Endpoint())
		sys.Options["cluster"] = "true"
		if _, err := (Adapter{}).Open(context.Background(), sys); err == nil {
			t.Fatal("opened a standalone server in cluster mode")
		}
	})
}
