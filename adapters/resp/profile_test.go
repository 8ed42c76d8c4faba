package resp

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Every built-in profile loads, validates and says where its facts come from.
func TestBuiltInProfiles(t *testing.T) {
	names := Profiles()
	want := []string{"azure-managed-redis", "dragonfly", "eloqkv", "garnet", "keydb", "keydb-flash", "kvrocks",
		"lavik", "pika", "redis", "redis-cloud", "tendis", "valkey"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("built-in profiles %v, want %v", names, want)
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			p, err := LoadProfile(n, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != n {
				t.Errorf("name %q in %s.yaml", p.Name, n)
			}
			if p.Description == "" || len(p.VersionFields) == 0 || len(p.Sources) == 0 {
				t.Errorf("description %q, version_fields %v, sources %v: every profile names all three", p.Description, p.VersionFields, p.Sources)
			}
			raw, _ := profileFiles.ReadFile("profiles/" + n + ".yaml")
			if !strings.HasPrefix(string(raw), "#") {
				t.Errorf("%s.yaml does not open with a comment saying what the product is", n)
			}
			if p.Count.Wait != nil && p.Count.Wait.Timeout != DefaultCountWait {
				t.Errorf("count wait timeout %v", p.Count.Wait.Timeout)
			}
		})
	}
}

func TestProfileFacts(t *testing.T) {
	tests := []struct {
		name      string
		resp      int
		port      int
		tls       bool
		expensive bool
		trigger   string
		busy      string
		require   string
	}{
		{"redis", 0, 6379, false, false, "", "", ""},
		{"kvrocks", 2, 6666, false, true, "DBSIZE SCAN", "scanning the db now", ""},
		{"pika", 2, 9221, false, true, "INFO keyspace 1", "The compact operation is executing", ""},
		{"tendis", 2, 8903, false, true, "", "", ""},
		{"garnet", 0, 6379, false, true, "", "", ""},
		{"eloqkv", 2, 6379, false, false, "", "", ""},
		{"azure-managed-redis", 0, 10000, true, false, "", "", ""},
		{"keydb", 0, 6379, false, false, "", "", "memory.storage_provider=none"},
		{"keydb-flash", 0, 6379, false, false, "", "", "memory.storage_provider=flash"},
	}
	for _, tc := range tests {
		p, err := LoadProfile(tc.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		var req []string
		for _, r := range p.Require {
			req = append(req, r.Field+"="+r.Value)
		}
		if p.RESP != tc.resp || p.DefaultPort != tc.port || p.TLS != tc.tls || p.Count.Expensive != tc.expensive || strings.Join(p.Count.Trigger, " ") != tc.trigger ||
			strings.Join(p.Count.Busy, "|") != tc.busy || strings.Join(req, ",") != tc.require {
			t.Errorf("%s: resp %d port %d tls %v expensive %v trigger %q busy %q require %q", tc.name, p.RESP, p.DefaultPort, p.TLS, p.Count.Expensive, p.Count.Trigger, p.Count.Busy, req)
		}
	}
}

func TestProfileErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"unknown key", "name: x\nnot_a_key: 1\n", "not_a_key"},
		{"resp", "resp: 4\n", "resp must be 2 or 3"},
		{"read", "commands: {read: [HMGET]}\n", "read must be HGETALL"},
		{"empty capture", "capture: [[]]\n", "empty capture"},
		{"trigger without wait", "count: {trigger: [DBSIZE, SCAN]}\n", "needs count.wait"},
		{"wait without trigger", "count: {wait: {line: x, changed: true}}\n", "without count.trigger"},
		{"wait without condition", "count: {trigger: [X], wait: {line: x}}\n", "line and ready or changed"},
		{"bad regexp", "count: {trigger: [X], wait: {line: x, ready: '('}}\n", "count.wait.ready"},
		{"update_not_found", "commands: {update_not_found: maybe}\n", "not \"maybe\""},
		{"busy without trigger", "count: {busy: [scanning]}\n", "count.busy without count.trigger"},
		{"empty busy text", "count: {trigger: [X], wait: {line: x, changed: true}, busy: [\" \"]}\n", "would match every error"},
		{"require without a section", "require: [{field: storage_provider, value: flash}]\n", "require needs field as section.key"},
		{"require without a value", "require: [{field: memory.storage_provider}]\n", "require needs field as section.key"},
		{"timeline without a section", "timeline: [used_memory]\n", `timeline field "used_memory" is not an INFO field as section.key`},
		{"timeline of two fields in one", "timeline: [\"memory.used_memory,memory.rss\"]\n", "is not an INFO field"},
	}
	for _, tc := range tests {
		_, err := LoadProfile("custom", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"custom"`) {
			t.Errorf("%s: %v, want an error naming the profile and %q", tc.name, err, tc.want)
		}
	}
	if _, err := LoadProfile("nosuch", nil); err == nil || !strings.Contains(err.Error(), "built in: azure-managed-redis") {
		t.Errorf("unknown profile: %v", err)
	}
	p, err := LoadProfile("custom", []byte("count: {trigger: [X], wait: {info: keyspace, line: 'a:', ready: '^1$', timeout: 90s}}\n"))
	if err != nil || p.Count.Wait.Timeout != 90*time.Second {
		t.Fatalf("%v %+v", err, p)
	}
}

// What each profile charts over a phase: its timeline fields, those a sample has.
func TestTimeline(t *testing.T) {
	for name, want := range map[string]string{
		"redis":     "memory.used_memory,persistence.rdb_bgsave_in_progress,persistence.aof_rewrite_in_progress",
		"dragonfly": "memory.used_memory",
		"kvrocks":   "memory.used_memory_rss,rocksdb.num_running_compactions,rocksdb.compaction_count,rocksdb.num_running_flushes",
		"tendis":    "memory.used_memory_rss,dataset.rocksdb.compaction-pending,dataset.rocksdb.mem-table-flush-pending",
	} {
		p, err := LoadProfile(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(p.Timeline, ","); got != want {
			t.Errorf("%s: timeline %s, want %s", name, got, want)
		}
	}
	p, _ := LoadProfile("kvrocks", nil)
	sample := ParseInfo("# Memory\r\nused_memory_rss:1000\r\n# RocksDB\r\nnum_running_compactions:1\r\nnum_running_flushes:0\r\n")
	if got := p.timeline(sample); got != "memory.used_memory_rss,rocksdb.num_running_compactions,rocksdb.num_running_flushes" {
		t.Errorf("a sample without compaction_count names %q", got)
	}
	if got := p.timeline(map[string]string{}); got != "" {
		t.Errorf("an empty sample names %q", got)
	}
}

func TestCountWait(t *testing.T) {
	kvrocks := &CountWait{Line: "# Last DBSIZE SCAN time:", Changed: true}
	pika := &CountWait{Line: "# Duration:", Ready: `^[0-9]+s$`}
	p, _ := LoadProfile("pika", nil)
	pika.ready = p.Count.Wait.ready
	tests := []struct {
		name   string
		w      *CountWait
		info   string
		before string
		done   bool
	}{
		{"kvrocks: never scanned", kvrocks, "# Keyspace\r\n# WARN: DBSIZE SCAN never performed yet\r\ndb0:keys=0\r\n", "", false},
		{"kvrocks: first scan done", kvrocks, "# Keyspace\r\n# Last DBSIZE SCAN time: Wed Dec  2 12:00:01 2026\r\n", "", true},
		{"kvrocks: still the old scan", kvrocks, "# Last DBSIZE SCAN time: Wed Dec  2 12:00:01 2026\r\n", "Wed Dec  2 12:00:01 2026", false},
		{"kvrocks: new scan", kvrocks, "# Last DBSIZE SCAN time: Wed Dec  2 12:00:05 2026\r\n", "Wed Dec  2 12:00:01 2026", true},
		{"pika: waiting", pika, "# Keyspace\r\n# Time:2026-12-02 12:00:00\r\n# Duration: In Waiting\r\n", "", false},
		{"pika: processing", pika, "# Duration: In Processing\r\n", "", false},
		{"pika: done", pika, "# Time:2026-12-02 12:00:00\r\n# Duration: 3s\r\ndb0 Strings_keys=5\r\n", "", true},
		{"pika: no line", pika, "# Keyspace\r\n", "", false},
	}
	for _, tc := range tests {
		now, present := tc.w.value(tc.info)
		if got := tc.w.done(now, present, tc.before); got != tc.done {
			t.Errorf("%s: done %v (line %q present %v)", tc.name, got, now, present)
		}
	}
}

func TestRestricted(t *testing.T) {
	tg := &target{profile: &Profile{Name: "p", Restricted: []string{"DEBUG", "CONFIG RESETSTAT", "memory stats"}}}
	tests := []struct {
		cmd  []string
		want bool
	}{
		{[]string{"DEBUG", "SLEEP", "0"}, true},
		{[]string{"debug"}, true},
		{[]string{"CONFIG", "RESETSTAT"}, true},
		{[]string{"CONFIG", "GET", "*"}, false},
		{[]string{"CONFIG"}, false},
		{[]string{"MEMORY", "STATS"}, true},
		{[]string{"MEMORY", "USAGE", "k"}, false},
		{[]string{"INFO"}, false},
	}
	for _, tc := range tests {
		if got := tg.restricted(tc.cmd...); got != tc.want {
			t.Errorf("restricted(%v) = %v", tc.cmd, got)
		}
	}
}

// How an update's reply says there was no record: HSET counts the fields it
// created, a replacing command answers nil.
func TestUpdateNotFoundDefaults(t *testing.T) {
	for _, tc := range []struct{ name, data, update, field string }{
		{"redis", "", UpdateCreated, UpdateCreated},
		{"lavik", "", UpdateNil, UpdateCreated},
		{"valkey", "", UpdateCreated, UpdateCreated},
		{"keydb", "", UpdateCreated, UpdateCreated},
		{"pika", "", UpdateUnchecked, UpdateCreated},
		{"custom", "commands: {update: [HMSET], update_field: [hset]}\n", UpdateNil, UpdateCreated},
	} {
		p, err := LoadProfile(tc.name, []byte(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		if p.Commands.UpdateNotFound != tc.update || p.Commands.UpdateFieldNotFound != tc.field {
			t.Errorf("%s: update_not_found %q, update_field_not_found %q; want %q, %q", tc.name, p.Commands.UpdateNotFound, p.Commands.UpdateFieldNotFound, tc.update, tc.field)
		}
	}
}

// The example entry of a profile reaches the product on the loopback address at its
// usual port (6379 when the profile names none), over TLS when the product is
// usually reached that way.
func TestExample(t *testing.T) {
	for _, tc := range []struct {
		profile string
		want    string
	}{
		{"", "adapter: resp|endpoint: 127.0.0.1:6379"},
		{"lavik", "adapter: resp|profile: lavik|endpoint: 127.0.0.1:6379"},
		{"pika", "adapter: resp|profile: pika|endpoint: 127.0.0.1:9221"},
		{"redis-cloud", "adapter: resp|profile: redis-cloud|endpoint: 127.0.0.1:6379"},
		{"azure-managed-redis", "adapter: resp|profile: azure-managed-redis|endpoint: 127.0.0.1:10000|tls: {enabled: true}"},
	} {
		if got := strings.Join(Adapter{}.Example(tc.profile), "|"); got != tc.want {
			t.Errorf("Example(%q) = %s, want %s", tc.profile, got, tc.want)
		}
	}
}

func TestCallsPerOpKind(t *testing.T) {
	lavik, err := LoadProfile("lavik", nil)
	if err != nil {
		t.Fatal(err)
	}
	redis, err := LoadProfile("redis", nil)
	if err != nil {
		t.Fatal(err)
	}
	pika, err := LoadProfile("pika", nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/info/pika-all.txt")
	if err != nil {
		t.Fatal(err)
	}
	pikaInfo := ParseInfo(string(raw))
	info := map[string]string{
		"commandstats.cmdstat_del":            "calls=6,usec=5,usec_per_call=0.5,rejected_calls=0,failed_calls=0",
		"commandstats.cmdstat_incrby":         "calls=2,usec=5,usec_per_call=0.5,rejected_calls=1,failed_calls=0",
		"commandstats.cmdstat_get":            "calls=10,usec=5,usec_per_call=0.5,rejected_calls=1,failed_calls=0",
		"commandstats.cmdstat_set":            "calls=4,usec=5,usec_per_call=0.5,rejected_calls=0,failed_calls=0",
		"commandstats.cmdstat_hgetall":        "calls=7,usec=5,usec_per_call=0.5,rejected_calls=0,failed_calls=0",
		"commandstats.cmdstat_hset":           "calls=3,usec=5,usec_per_call=0.5,rejected_calls=0,failed_calls=2",
		"commandstats.cmdstat_lavik.hreplace": "calls=5,usec=5,usec_per_call=0.5,rejected_calls=0,failed_calls=0",
	}
	for _, tc := range []struct {
		name   string
		p      *Profile
		info   map[string]string
		want   map[string]string
		source string
	}{
		{"redis: HSET updates and inserts", redis, info, map[string]string{
			"cmpbench.calls.GET": "11", "cmpbench.calls.SET": "4", "cmpbench.calls.READ": "7", "cmpbench.calls.UPDATE+INSERT": "3", "cmpbench.calls.PUBLISH": "0",
			"cmpbench.calls.DELETE": "6", "cmpbench.calls.INCR": "3",
		}, "READ = hgetall; UPDATE+INSERT = hset"},
		{"lavik: its own update command", lavik, info, map[string]string{
			"cmpbench.calls.GET": "11", "cmpbench.calls.SET": "4", "cmpbench.calls.READ": "7", "cmpbench.calls.UPDATE+INSERT": "8", "cmpbench.calls.PUBLISH": "0",
			"cmpbench.calls.DELETE": "6", "cmpbench.calls.INCR": "3",
		}, "UPDATE+INSERT = lavik.hreplace + hset"},
		{"no commandstats", redis, map[string]string{"server.redis_version": "7"}, nil, ""},
		// Pika's lines, as ParseInfo names them (testdata/info/pika-all.txt).
		{"pika: HMSET and HSET", pika, pikaInfo, map[string]string{
			"cmpbench.calls.GET": "1", "cmpbench.calls.SET": "1", "cmpbench.calls.READ": "0", "cmpbench.calls.UPDATE+INSERT": "2", "cmpbench.calls.PUBLISH": "0",
			"cmpbench.calls.DELETE": "0", "cmpbench.calls.INCR": "0",
		}, "UPDATE+INSERT = hmset + hset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, source := tc.p.calls(tc.info)
			if len(got) != len(tc.want) {
				t.Fatalf("%v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
			if !strings.Contains(source, tc.source) {
				t.Errorf("source %q lacks %q", source, tc.source)
			}
		})
	}
}

// A profile whose UPDATE cannot tell a missing record says so in the capture.
func TestCaveats(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string // lines' beginnings, in order; none when the profile's updates tell
	}{
		{"redis", "", nil},
		{"lavik", "", nil},
		{"pika", "", []string{"An UPDATE of every field (write_all_fields) with HMSET cannot tell a missing record from an existing one: profile pika declares update_not_found: unchecked"}},
		{"custom", "commands: {update: [HMSET], update_not_found: unchecked, update_field: [HMSET], update_field_not_found: unchecked}\n", []string{
			"An UPDATE of every field (write_all_fields) with HMSET", "An UPDATE of some fields with HMSET cannot tell a missing record from an existing one: profile custom declares update_field_not_found: unchecked"}},
	} {
		p, err := LoadProfile(tc.name, []byte(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		got := p.caveats()
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(tc.want) == 0 {
			if got != "" {
				t.Errorf("%s: caveats %q, want none", tc.name, got)
			}
			continue
		}
		if len(lines) != len(tc.want) {
			t.Fatalf("%s: caveats %q, want %d lines", tc.name, got, len(tc.want))
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%s: line %d is %q, want it to begin %q", tc.name, i, lines[i], w)
			}
		}
	}
}

// The profiles `cmpbench systems --profiles` lists are every built-in one, a
// row each with a value for every column.
func TestProfileTable(t *testing.T) {
	head, rows, err := Adapter{}.ProfileTable()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(Profiles()) {
		t.Fatalf("%d rows for %d profiles", len(rows), len(Profiles()))
	}
	for i, r := range rows {
		if len(r) != len(head) || r[0] != Profiles()[i] {
			t.Errorf("row %q under %q", r, head)
		}
	}
	for _, r := range rows {
		if r[0] == "kvrocks" && !strings.HasSuffix(r[5], "(expensive)") || r[0] == "pika" && r[3] != "2" {
			t.Errorf("row %q", r)
		}
	}
}
