package resp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/provision"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// startTendis starts tendisplus as cmpbench's built-in system tendis does (its
// definition, the configuration file it writes) and waits until it answers.
// tendisplus takes ~4.5 s to stop cleanly: the test's last stop kills it after
// 1 s.
func startTendis(t *testing.T) (*provision.Server, core.SystemConfig) {
	t.Helper()
	provisiontest.Need(t, "tendisplus")
	systems, err := config.LoadSystems("", false)
	if err != nil {
		t.Fatal(err)
	}
	def, problems := systems.Lookup("tendis")
	if def == nil || len(problems) > 0 {
		t.Fatalf("built-in system tendis: %v", problems)
	}
	srv, err := provision.Start(def.ProvisionSpec(30*time.Second, 30*time.Second, 1), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.SetStopTimeout(time.Second)
		_ = srv.Stop()
	})
	if last, ok := ready(srv.Endpoint(), srv); !ok {
		t.Fatalf("tendisplus at %s is not ready: %q; the server: %s", srv.Endpoint(), last, srv.Why())
	}
	sys := sysAt(srv.Endpoint())
	sys.Name, sys.Profile = "tendis", "tendis"
	return srv, sys
}

// Tendis 2.7.0 (its version as INFO's redis_version, no run_id): the
// conformance suite, the capture with and without the profile, YCSB with exact
// DBSIZE counts (its INFO keyspace stays at keys=0) and commandstats equal to
// the client's (no rejected_calls there), the restart keeping every key, and
// the facts the audit reads from its CONFIG GET *.
func TestTendisIntegration(t *testing.T) {
	t.Parallel()
	rs := realServer{product: "tendis", version: "2.7.0-rocksdb-v8.5.3", versionField: "INFO server.redis_version", persists: true}
	rs.srv, rs.sys = startTendis(t)
	t.Run("server", func(t *testing.T) { checkTendis(t, rs.sys) })
	checkProduct(t, rs, true)
}

// checkTendis: what differs from Redis, as cmpbench reads it — INFO keyspace
// that says 0 keys whatever is stored, used_memory -1, quoted CONFIG values —
// and the facts read from the capture.
func checkTendis(t *testing.T, sys core.SystemConfig) {
	ctx := context.Background()
	tg := openSys(t, sys)
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Do(ctx, &core.Op{Kind: core.OpSet, Key: []byte("tendis:kv"), Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	st, err := tg.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"keyspace.db0": "keys=0,expires=0,avg_ttl=0", "memory.used_memory": "-1", "server.TENDIS_DEBUG": "OFF",
	} {
		if st[k] != want {
			t.Errorf("INFO %s = %q, want %q (what Tendis 2.7.0 prints)", k, st[k], want)
		}
	}
	if st["memory.used_memory_rss"] == "" || st["memory.used_memory_rss"] == "-1" {
		t.Errorf("INFO memory used_memory_rss = %q", st["memory.used_memory_rss"])
	}
	if tl := st[core.StatTimeline]; !strings.HasPrefix(tl, "memory.used_memory_rss,dataset.rocksdb.compaction-pending") {
		t.Errorf("timeline %q", tl)
	}
	if n, err := tg.(core.Counter).Count(ctx); err != nil || n != 1 {
		t.Errorf("Count = %d, %v; want 1", n, err)
	}
	cp, err := tg.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := cp.Sections["config"]; !strings.Contains(cfg, "\nbind \"127.0.0.1\"\n") || !strings.Contains(cfg, "\nrequirepass \"\"\n") || !strings.Contains(cfg, "\ndaemon no\n") {
		t.Errorf("CONFIG GET * as captured:\n%s", cfg)
	}
	f := Adapter{}.Facts(cp.Sections)
	for what, fact := range map[string]struct {
		got       core.Fact
		class, in string
	}{
		"durability": {f.Durability, "os", "rocks.flush_log_at_trx_commit no"},
		"memory":     {f.Memory, "unlimited", "block cache rocks.blockcachemb `4096` MB"},
		"threads":    {f.Threads, "", "executorthreadnum `"},
	} {
		if fact.got.Class != fact.class || !strings.Contains(fact.got.Words, fact.in) {
			t.Errorf("%s: %+v, want class %q and %q in it", what, fact.got, fact.class, fact.in)
		}
	}
	if err := tg.(core.Flusher).Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
