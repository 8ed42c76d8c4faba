package resp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

func openProfile(t *testing.T, endpoint, profile string) core.Target {
	t.Helper()
	sys := sysAt(endpoint)
	sys.Profile, sys.ProfileData = "custom", []byte(profile)
	tg, err := Adapter{}.Open(context.Background(), sys)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg
}

// A count that reports the result of a background job (Kvrocks DBSIZE SCAN, Pika
// INFO keyspace 1) must wait for that job. Redis' BGSAVE is such a job, and
// rdb-key-save-delay makes it slow enough to tell waiting from not waiting.
func TestTriggeredCountIntegration(t *testing.T) {
	const keys, delay = 30, 50 * time.Millisecond // a BGSAVE of about 1.5 s
	srv := provisiontest.Redis(t, "--rdb-key-save-delay", fmt.Sprint(delay.Microseconds()))
	seed := openProfile(t, srv.Endpoint(), "name: seed\n")
	c, _ := seed.Connect(context.Background())
	for i := range keys {
		if err := c.Do(context.Background(), &core.Op{Kind: core.OpSet, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	inProgress := func(tg core.Target) string {
		st, err := tg.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return st["persistence.rdb_bgsave_in_progress"]
	}
	tests := []struct {
		name string
		wait string
	}{
		{"ready", "{info: persistence, line: 'rdb_bgsave_in_progress:', ready: '^0$'}"},
		{"changed", "{info: persistence, line: 'rdb_last_save_time:', changed: true}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := openProfile(t, srv.Endpoint(), "count: {trigger: [BGSAVE], expensive: true, wait: "+tc.wait+"}\n")
			start := time.Now()
			n, err := tg.(core.Counter).Count(context.Background())
			if err != nil || n != keys {
				t.Fatalf("count %d, %v; want %d", n, err, keys)
			}
			if took := time.Since(start); took < keys*delay/2 {
				t.Errorf("the count returned after %v, before the job could have finished", took)
			}
			if p := inProgress(tg); p != "0" {
				t.Errorf("the count returned while the job still ran (rdb_bgsave_in_progress:%s)", p)
			}
		})
	}
	waitIdle := func(tg core.Target) {
		deadline := time.Now().Add(10 * time.Second)
		for inProgress(tg) != "0" && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Run("the job does not finish in time", func(t *testing.T) {
		tg := openProfile(t, srv.Endpoint(), "count: {trigger: [BGSAVE], wait: {info: persistence, line: 'rdb_bgsave_in_progress:', ready: '^0$', timeout: 200ms}}\n")
		_, err := tg.(core.Counter).Count(context.Background())
		if err == nil || !strings.Contains(err.Error(), "BGSAVE on "+srv.Endpoint()) || !strings.Contains(err.Error(), "not ready after 200ms") {
			t.Fatalf("%v", err)
		}
		t.Run("and a second count waits for it before its own trigger", func(t *testing.T) {
			_, err := tg.(core.Counter).Count(context.Background())
			if err == nil || !strings.Contains(err.Error(), "a scan already running had not ended after 200ms") {
				t.Fatalf("%v", err)
			}
		})
		t.Run("a refusal of the trigger that the profile does not call busy fails the count", func(t *testing.T) {
			tg := openProfile(t, srv.Endpoint(), "count: {trigger: [BGSAVE], wait: {info: persistence, line: 'rdb_last_save_time:', changed: true}}\n")
			_, err := tg.(core.Counter).Count(context.Background())
			if err == nil || !strings.Contains(err.Error(), "starts the key count") || !strings.Contains(err.Error(), "in progress") {
				t.Fatalf("%v", err)
			}
		})
		waitIdle(tg)
	})
	// A job that already runs when the count is asked for may have started before
	// the last writes (Kvrocks' dbsize-scan-cron): a trigger the profile calls busy
	// waits for it to end, then starts a job of its own and waits for that one.
	t.Run("busy: the running job ends, then the count's own runs", func(t *testing.T) {
		tg := openProfile(t, srv.Endpoint(), "count: {trigger: [BGSAVE], busy: [Background save already in progress], wait: {info: persistence, line: 'rdb_last_save_time:', changed: true}}\n")
		rc := tg.(*target).client
		saves := func() int64 {
			st, err := tg.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return commandCalls(st["commandstats.cmdstat_bgsave"])
		}
		before := saves()
		start := time.Now()
		if err := rc.Do(context.Background(), rc.B().Bgsave().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		n, err := tg.(core.Counter).Count(context.Background())
		if err != nil || n != keys {
			t.Fatalf("count %d, %v; want %d", n, err, keys)
		}
		// Two whole jobs, one after the other; taking the running one's result
		// would return after one.
		if took := time.Since(start); took < 2*keys*delay*9/10 {
			t.Errorf("the count returned after %v, before a job of its own could have finished", took)
		}
		// Ours, the count's refused trigger and its accepted one.
		if got := saves() - before; got != 3 {
			t.Errorf("%d BGSAVEs, want 3 (one running, one refused, the count's own)", got)
		}
		if p := inProgress(tg); p != "0" {
			t.Errorf("the count returned while a job still ran (rdb_bgsave_in_progress:%s)", p)
		}
	})
}

// Servers answer an INFO section they do not know with an empty reply (Dragonfly,
// EloqKV, Redis itself); that counts as a refusal and the next argument is tried.
// Commands a profile marks restricted are recorded as refused and never sent.
func TestProfileInfoAndRestrictedIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	tg := openProfile(t, srv.Endpoint(), `
info_sections: [nosuchsection]
capture: [[DEBUG, SLEEP, "0"], [INFO, server]]
restricted: [DEBUG, CONFIG GET, FLUSHALL]
`)
	cp, err := tg.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cp.Sections["info"], "redis_version:") || cp.Product != "redis" || cp.Version == "" {
		t.Fatalf("INFO did not fall back to plain INFO: product %q version %q, %d bytes", cp.Product, cp.Version, len(cp.Sections["info"]))
	}
	if cp.Sections["config"] != "" || cp.Sections["cmd-debug-sleep-0"] != "" || cp.Sections["cmd-info-server"] == "" {
		t.Fatalf("sections %v", slices.Sorted(maps.Keys(cp.Sections)))
	}
	refused := strings.Join(cp.Refused, "\n")
	if !strings.Contains(refused, "DEBUG SLEEP 0: restricted by profile custom") || !strings.Contains(refused, "CONFIG GET *: restricted by profile custom") {
		t.Fatalf("refused %q", refused)
	}
	st, err := tg.Stats(context.Background())
	if err != nil || st["server.redis_version"] == "" {
		t.Fatalf("stats %v", err)
	}
	if err := tg.(core.Flusher).Flush(context.Background()); err == nil || !strings.Contains(err.Error(), "does not allow FLUSHALL") {
		t.Fatalf("flush: %v", err)
	}
}
