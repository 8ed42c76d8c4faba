package resp

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/adapters/adaptertest"
	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core"
)

var update = flag.Bool("update", false, "rewrite the golden facts (testdata/facts/*/facts.json)")

// The facts of real captures (testdata/facts/README.md) say what each product
// does, read as that product's: Pika, Kvrocks, Tendis and KeyDB on FLASH keep
// their data in RocksDB whatever save and appendonly say, Dragonfly snapshots on a
// clean stop and gives its limit in INFO, and a memory limit reads without a
// dangling comma. Each product's facts are golden (facts.json, go test
// -update).
func TestFactsOfRealCaptures(t *testing.T) {
	facts := adaptertest.FactsOfCaptures(t, Adapter{}, filepath.Join("testdata", "facts"), *update)
	for system, want := range map[string]string{
		"redis":       "no persistence: every write lost on a restart",
		"redis-aof":   "appendfsync everysec",
		"valkey":      "no persistence",
		"keydb":       "no persistence",
		"keydb-flash": "KeyDB on FLASH: RocksDB, its write-ahead log not synced (storage-cache-mode writethrough",
		"kvrocks":     "RocksDB, its write-ahead log not synced (rocksdb.write_options.sync no)",
		"pika":        "RocksDB, its write-ahead log not synced (Pika's save and appendonly do not apply)",
		"dragonfly":   "a snapshot on a clean stop only",
		"tendis":      "RocksDB, its write-ahead log not synced (rocks.flush_log_at_trx_commit no)",
	} {
		f, ok := facts[system]
		if !ok || !strings.Contains(f.Durability.Words, want) {
			t.Errorf("%s's durability %q, want %q in it", system, f.Durability.Words, want)
		}
		if m := f.Memory.Words; m == "" || strings.HasSuffix(strings.TrimSpace(m), ",") {
			t.Errorf("%s's memory limit %q", system, m)
		}
		if f.Replication != (core.Fact{Words: "`master`, no replica", Class: "1"}) {
			t.Errorf("%s's replication %+v", system, f.Replication)
		}
	}
}

// Each durability a Redis configuration can have reads as its class.
func TestRedisDurability(t *testing.T) {
	for _, tc := range []struct {
		name, config, class, word string
	}{
		{"without persistence", "appendonly no\nsave \n", core.DurabilityNone, "every write lost on a restart"},
		{"RDB", "appendonly no\nsave 3600 1\n", "snapshot", "save `3600 1`"},
		{"AOF everysec", "appendonly yes\nappendfsync everysec\n", "1s", "up to 1 s"},
		{"AOF always", "appendonly yes\nappendfsync always\n", "always", "no acknowledged write lost"},
		{"AOF no", "appendonly yes\nappendfsync no\n", "os", "the OS flushes"},
		{"nothing captured", "", "", ""},
		{"Dragonfly without a snapshot file", "dbfilename \n", core.DurabilityNone, "no snapshot (dbfilename empty)"},
		{"Dragonfly with snapshot_cron", "dbfilename dump\nsnapshot_cron */5 * * * *\n", "snapshot", "snapshot_cron `*/5 * * * *`"},
		{"Kvrocks syncing its log", "rocksdb.write_options.sync yes\n", "always", "synced on every write"},
		{"Tendis syncing its log", "rocks.disable_wal no\nrocks.flush_log_at_trx_commit yes\n", "always", "(rocks.flush_log_at_trx_commit yes): no acknowledged write lost"},
		{"Tendis without its log", "rocks.disable_wal yes\nrocks.flush_log_at_trx_commit yes\n", "memtable", "(rocks.disable_wal yes)"},
		{"KeyDB on FLASH, writeback", "storage-cache-mode writeback\nstorage-flush-period 200\n", "flush 200", "every `200` ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sections := map[string]string{"config": tc.config}
			switch {
			case tc.config == "":
				sections = nil
			case strings.HasPrefix(tc.name, "Dragonfly"):
				sections["info"] = "# Server\ndragonfly_version:df-v1.26.4\n"
			case strings.HasPrefix(tc.name, "Kvrocks"):
				sections["info"] = "# Server\nkvrocks_version:2.10.1\n"
			case strings.HasPrefix(tc.name, "Tendis"):
				sections["info"] = "# Server\nredis_version:2.7.0-rocksdb-v8.5.3\nTENDIS_DEBUG:OFF\n"
			case strings.HasPrefix(tc.name, "KeyDB"):
				sections["info"] = "# Memory\nstorage_provider:flash\n"
			}
			adaptertest.FactIs(t, Adapter{}.Facts(sections).Durability, tc.class, tc.word)
		})
	}
}

// A cluster's sections carry each node's address: the first node's are read,
// never a capture whose name only starts alike.
func TestFactsOfACluster(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sections map[string]string
		want     string
	}{
		{"one server", map[string]string{"config": "io-threads 1\n"}, "io-threads `1`"},
		{"the first node", map[string]string{"config-10.0.0.2-7001": "io-threads 2\n", "config-10.0.0.1-7000": "io-threads 1\n"}, "io-threads `1`"},
		{"not a node's", map[string]string{"config-get-x": "io-threads 3\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Adapter{}).Facts(tc.sections).Threads.Words; got != tc.want {
				t.Errorf("threads %q, want %q", got, tc.want)
			}
		})
	}
}

// archivetest's systems carry the facts this adapter reads of their captures,
// as a run would: the report's goldens, which audit them, rest on it.
func TestFactsOfArchivetestSystems(t *testing.T) {
	for _, opt := range []archivetest.Options{{}, {Hostile: "**bold** `tick` a|b\nsecond line"}} {
		dir, err := archivetest.Write(t.TempDir(), opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := archive.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range a.Manifest.Systems {
			sections := map[string]string{}
			for _, f := range s.Files {
				if name, ok := strings.CutSuffix(f, ".txt"); ok {
					b, err := a.ReadFile(archive.SystemsDir + "/" + s.Name + "/" + f)
					if err != nil {
						t.Fatal(err)
					}
					sections[name] = string(b)
				}
			}
			archived, err := a.Facts(s)
			if err != nil || archived == nil {
				t.Fatalf("%s: facts %v, %v", s.Name, archived, err)
			}
			if got := (Adapter{}).Facts(sections); got != *archived {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(archived)
				t.Errorf("%s: archivetest says %s, the adapter reads %s", s.Name, w, g)
			}
		}
	}
}
