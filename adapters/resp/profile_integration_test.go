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
	t.Run("the job does not finish in time", func(t *testing.T) {
		tg := openProfile(t, srv.Endpoint(), "count: {trigger: [BGSAVE], wait: {info: persistence, line: 'rdb_bgsave_in_progress:', ready: '^0$', timeout: 200ms}}\n")
		_, err := tg.(core.Counter).Count(context.Background())
		if err == nil || !strings.Contains(err.Error(), "BGSAVE on "+srv.Endpoint()) || !strings.Contains(err.Error(), "not ready after 200ms") {
			t.Fatalf("%v", err)
		}
		t.Run("and the trigger is refused while it runs", func(t *testing.T) {
			_, err := tg.(core.Counter).Count(context.Background())
			if err == nil || !strings.Contains(err.Error(), "starts the key count") {
				t.Fatalf("%v", err)
			}
		})
		deadline := time.Now().Add(10 * time.Second)
		for inProgress(tg) != "0" && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
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
