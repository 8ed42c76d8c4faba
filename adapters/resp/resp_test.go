package resp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/cmpbench/cmpbench/core"
)

// INFO as each real server prints it (testdata/info/README.md): the fields
// cmpbench reads are where it looks for them, values trimmed, and the product is
// named from INFO alone.
func TestParseInfo(t *testing.T) {
	tests := []struct {
		file    string
		want    map[string]string // fields and values
		absent  []string          // fields (or section prefixes, ending in ".") that must not be there
		product string            // named without a profile
		version string
	}{
		{"synthetic", map[string]string{"server.redis_version": "7.0.15", "keyspace.db0": "keys=10,expires=0,avg_ttl=0"}, nil, "valkey", "8.0.1"},
		{"valkey-everything.txt", map[string]string{
			"server.valkey_version": "8.0.1", "server.uptime_in_seconds": "217", "clients.connected_clients": "1",
			"keyspace.db0":             "keys=1,expires=0,avg_ttl=0",
			"commandstats.cmdstat_set": "calls=1,usec=68,usec_per_call=68.00,rejected_calls=0,failed_calls=0",
		}, nil, "valkey", "8.0.1"},
		{"keydb-everything.txt", map[string]string{
			"server.redis_version": "6.3.4", "memory.storage_provider": "none", "keydb.mvcc_depth": "0",
			"keyspace.db0":              "keys=2,expires=0,avg_ttl=0,cached_keys=2",
			"commandstats.cmdstat_hset": "calls=1,usec=257,usec_per_call=257.00,rejected_calls=0,failed_calls=0",
		}, []string{"server.keydb_version"}, "keydb", "6.3.4"},
		{"keydb-flash-everything.txt", map[string]string{
			"server.redis_version": "6.3.4", "memory.storage_provider": "flash", "keyspace.db0": "keys=2,expires=0,avg_ttl=0,cached_keys=2",
		}, nil, "keydb-flash", "6.3.4"},
		{"dragonfly-all.txt", map[string]string{
			"server.dragonfly_version": "df-v1.26.4", "server.uptime_in_seconds": "217", "clients.connected_clients": "1",
			"keyspace.db0": "keys=2,expires=0,avg_ttl=-1", "commandstats.cmdstat_hset": "calls=1,usec=180,usec_per_call=180",
		}, nil, "dragonfly", "df-v1.26.4"},
		// Kvrocks' keyspace section has comment lines that start with "#".
		{"kvrocks-all.txt", map[string]string{
			"server.kvrocks_version": "2.10.1", "server.redis_version": "4.0.0", "keyspace.db0": "keys=2,expires=0,avg_ttl=0,expired=0",
			"keyspace.used_percent": "0%", "keyspace.used_disk_percent": "69.0517%", "rocksdb.num_running_compactions": "0",
			"commandstats.cmdstat_hgetall": "calls=1,usec=107,usec_per_call=107",
		}, []string{"last dbsize scan time: fri dec  4 16:31:14 2026."}, "kvrocks", "2.10.1"},
		{"kvrocks-keyspace-never.txt", map[string]string{
			"keyspace.db0": "keys=0,expires=0,avg_ttl=0,expired=0", "keyspace.used_percent": "0%",
		}, []string{"warn: dbsize scan never performed yet."}, "", ""},
		// Pika: commandstats without cmdstat_ and with spaces, a replication header
		// with the role, keyspace lines without a colon, comment lines in keyspace.
		{"pika-all.txt", map[string]string{
			"server.pika_version": "4.0.0", "server.uptime_in_seconds": "212", "clients.connected_clients": "1",
			"server.pika_build_compile_date": "2026-12-04 15:35:58", "data.used_memory": "43008",
			"commandstats.cmdstat_hmset": "calls=2,usec=3.40,usec_per_call=1.70",
			"commandstats.cmdstat_get":   "calls=1,usec=0.41,usec_per_call=0.41",
			"command_exec_count.HMSET":   "2", "replication.role": "master",
			"keyspace.db0_strings": "keys=1,expires=0,invalid_keys=0", "keyspace.db0_hashes": "keys=2,expires=0,invalid_keys=0",
			"keyspace.db0_streams":                                "keys=0,expires=0,invalid_keys=0",
			"instance0_rocksdb.instance0_num_running_compactions": "0",
		}, []string{"commandstats.get", "replication(master).", "start async statistics.", "time:2026-12-04 16:29:14.", "duration: 0s."}, "pika", "4.0.0"},
		{"pika-keyspace-0.txt", map[string]string{"keyspace.db0_hashes": "keys=2,expires=0,invalid_keys=0"}, []string{"duration: 0s."}, "", ""},
		{"pika-keyspace.txt", nil, []string{"use \"info keyspace 1\" to do async statistics."}, "", ""},
		// Tendis: its version as redis_version, named by TENDIS_DEBUG; -1 for
		// what it does not know; a keyspace line that never changes;
		// commandstats without rejected or failed calls, and an "unseen" line.
		{"tendis-all.txt", map[string]string{
			"server.redis_version": "2.7.0-rocksdb-v8.5.3", "server.TENDIS_DEBUG": "OFF", "memory.used_memory": "-1",
			"memory.used_memory_rss": "30892032", "persistence.aof_enabled": "-1", "keyspace.db0": "keys=0,expires=0,avg_ttl=0",
			"commandstats.cmdstat_hset":   "calls=1,usec=254,usec_per_call=254",
			"commandstats.cmdstat_unseen": "calls=0,num=0", "replication.role": "master",
		}, []string{"server.run_id"}, "tendis", "2.7.0-rocksdb-v8.5.3"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			text := "# Server\r\nredis_version:7.0.15\r\nvalkey_version:8.0.1\r\n\r\n# Keyspace\r\ndb0:keys=10,expires=0,avg_ttl=0\r\n"
			if tc.file != "synthetic" {
				b, err := os.ReadFile(filepath.Join("testdata", "info", tc.file))
				if err != nil {
					t.Fatal(err)
				}
				text = string(b)
			}
			m := ParseInfo(text)
			for k, want := range tc.want {
				if got, ok := m[k]; !ok || got != want {
					t.Errorf("%s = %q (present %v), want %q", k, got, ok, want)
				}
			}
			for _, a := range tc.absent {
				for k := range m {
					if k == a || strings.HasSuffix(a, ".") && strings.HasPrefix(k, a) {
						t.Errorf("%s is there (%s = %q)", a, k, m[k])
					}
				}
			}
			for k, v := range m {
				section, key, _ := strings.Cut(k, ".")
				if strings.ContainsAny(section, " :#") || key == "" || strings.TrimSpace(v) != v || strings.TrimSpace(key) != key {
					t.Errorf("%q = %q: a section from a comment line, or untrimmed", k, v)
				}
				if section == "commandstats" && (!strings.HasPrefix(key, "cmdstat_") || strings.Contains(v, " ")) {
					t.Errorf("commandstats %q = %q: want cmdstat_<command> and a value without spaces", key, v)
				}
			}
			var cp core.Capture
			(&target{profile: &Profile{}}).version(&cp, m)
			if cp.Product != tc.product || cp.Version != tc.version {
				t.Errorf("product %q version %q, want %q %q", cp.Product, cp.Version, tc.product, tc.version)
			}
		})
	}
}

// The product a capture names: the profile's, unless INFO shows a more specific
// product than the profile's version field does.
func TestVersion(t *testing.T) {
	info := func(file string) map[string]string {
		b, err := os.ReadFile(filepath.Join("testdata", "info", file))
		if err != nil {
			t.Fatal(err)
		}
		return ParseInfo(string(b))
	}
	redis := map[string]string{"server.redis_version": "7.0.15"}
	for _, tc := range []struct {
		profile, data string
		info          map[string]string
		want          string // product version (field)
	}{
		{"redis", "", redis, "redis 7.0.15 (INFO server.redis_version)"},
		{"redis", "", info("valkey-everything.txt"), "valkey 8.0.1 (INFO server.valkey_version)"},
		{"redis", "", info("kvrocks-all.txt"), "kvrocks 2.10.1 (INFO server.kvrocks_version)"},
		{"redis", "", info("keydb-everything.txt"), "keydb 6.3.4 (INFO server.redis_version)"},
		{"redis", "", info("keydb-flash-everything.txt"), "keydb-flash 6.3.4 (INFO server.redis_version)"},
		{"keydb", "", info("keydb-everything.txt"), "keydb 6.3.4 (INFO server.redis_version)"},
		{"keydb-flash", "", info("keydb-flash-everything.txt"), "keydb-flash 6.3.4 (INFO server.redis_version)"},
		{"pika", "", info("pika-all.txt"), "pika 4.0.0 (INFO server.pika_version)"},
		{"dragonfly", "", info("dragonfly-all.txt"), "dragonfly df-v1.26.4 (INFO server.dragonfly_version)"},
		{"tendis", "", redis, "tendis 7.0.15 (INFO server.redis_version)"},
		{"tendis", "", info("tendis-all.txt"), "tendis 2.7.0-rocksdb-v8.5.3 (INFO server.redis_version)"},
		{"redis", "", info("tendis-all.txt"), "tendis 2.7.0-rocksdb-v8.5.3 (INFO server.redis_version)"},
		{"azure-managed-redis", "", redis, "azure-managed-redis 7.0.15 (INFO server.redis_version)"},
		{"mine", "version_fields: [valkey_version]\n", info("valkey-everything.txt"), "mine 8.0.1 (INFO server.valkey_version)"},
		{"mine", "version_fields: [redis_version]\n", info("valkey-everything.txt"), "valkey 8.0.1 (INFO server.valkey_version)"},
		{"mine", "version_fields: [my_version]\n", map[string]string{"server.my_version": "1", "server.redis_version": "7"}, "mine 1 (INFO server.my_version)"},
		{"redis", "", map[string]string{"keyspace.db0": "keys=1"}, "  ()"},
	} {
		p, err := LoadProfile(tc.profile, []byte(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		var cp core.Capture
		(&target{profile: p}).version(&cp, tc.info)
		if got := cp.Product + " " + cp.Version + " (" + cp.VersionField + ")"; got != tc.want {
			t.Errorf("profile %s: %q, want %q", tc.profile, got, tc.want)
		}
	}
}

func TestRedactConfig(t *testing.T) {
	tests := map[string]bool{
		"requirepass": true, "masterauth": true, "tls-key-file-pass": true, "tls-client-key-file-pass": true,
		"maxmemory": false, "tls-auth-clients": false, "masteruser": false, "appendonly": false,
	}
	for k, want := range tests {
		if got := RedactConfig(k); got != want {
			t.Errorf("RedactConfig(%q) = %v", k, got)
		}
	}
	// A credential is redacted; an empty one, which Tendis quotes, stays empty.
	for _, tc := range []struct {
		name string
		cfg  map[string]string
		want string
	}{
		{"redis", map[string]string{"requirepass": "hunter22", "maxmemory": "0", "masterauth": ""}, "masterauth \nmaxmemory 0\nrequirepass [redacted]\n"},
		{"tendis", map[string]string{"requirepass": `""`, "masterauth": `"hunter22"`, "bind": `"127.0.0.1"`}, "bind \"127.0.0.1\"\nmasterauth [redacted]\nrequirepass \"\"\n"},
	} {
		if out := formatConfig(tc.cfg); out != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, out, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		class core.ErrorClass
		miss  bool
	}{
		{"nil reply is a miss", rueidis.Nil, 0, true},
		{"closing client", rueidis.ErrClosing, core.ErrClassConnection, false},
		{"parse error", errors.New("received unexpected simple string message ending without CRLF"), core.ErrClassProtocol, false},
		{"other", errors.New("something"), core.ErrClassOther, false},
	}
	for _, tc := range tests {
		class, miss := classify(tc.err)
		if class != tc.class || miss != tc.miss {
			t.Errorf("%s: class %s miss %v", tc.name, class, miss)
		}
	}
}

func TestRefusal(t *testing.T) {
	tests := []struct {
		err     error
		refused bool
	}{
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
		{errors.New("write: connection reset by peer"), false},
		{errors.New("remote error: tls: certificate required"), true},
		{x509.UnknownAuthorityError{}, true},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, true},
	}
	for _, tc := range tests {
		if got := errors.Is(refusal(tc.err), core.ErrRefused); got != tc.refused {
			t.Errorf("refusal(%v) = %v", tc.err, got)
		}
	}
}
