package report

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
)

func TestCapturesSettings(t *testing.T) {
	redis := func(kv ...string) captures {
		c := captures{config: map[string]string{}, info: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			c.config[kv[i]] = kv[i+1]
		}
		return c
	}
	aero := func(kv ...string) captures {
		c := captures{asNamespace: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			c.asNamespace[kv[i]] = kv[i+1]
		}
		return c
	}
	for _, tc := range []struct {
		name        string
		c           captures
		class, word string
	}{
		{"redis without persistence", redis("appendonly", "no", "save", ""), "none", "every write lost on a restart"},
		{"redis RDB", redis("appendonly", "no", "save", "3600 1"), "snapshot", "save `3600 1`"},
		{"redis AOF everysec", redis("appendonly", "yes", "appendfsync", "everysec"), "1s", "up to 1 s"},
		{"redis AOF always", redis("appendonly", "yes", "appendfsync", "always"), "always", "no acknowledged write lost"},
		{"redis AOF no", redis("appendonly", "yes", "appendfsync", "no"), "os", "the OS flushes"},
		{"aerospike in memory", aero("storage-engine", "memory"), "none", "storage-engine memory"},
		{"aerospike commit-to-device", aero("storage-engine", "device", "storage-engine.commit-to-device", "true"), "always", "commit-to-device true"},
		{"aerospike buffered", aero("storage-engine", "device", "storage-engine.commit-to-device", "false"), "1s", "up to `1000` ms"},
		{"nothing captured", captures{}, "", "—"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			words, class := tc.c.durability()
			if class != tc.class || !strings.Contains(words, tc.word) {
				t.Errorf("durability %q (%s), want %q in it (%s)", words, class, tc.word, tc.class)
			}
		})
	}
}

func TestFindings(t *testing.T) {
	d := &data{m: archive.Manifest{Systems: []archive.SystemInfo{{Name: "a"}, {Name: "b"}}}}
	rows := []setting{
		{name: "durability", values: []string{"x", "y"}, classes: []string{"none", "1s"}, compare: true},
		{name: "TLS", values: []string{"off", "off"}, classes: []string{"off", "off"}, compare: true},
		{name: "memory", values: []string{"—", "no limit"}, classes: []string{"", "unlimited"}, compare: true}, // unknown is no mismatch
		{name: "threads", values: []string{"io-threads 1", "service-threads 4"}, classes: []string{"1", "4"}},  // not compared
	}
	got := d.findings(rows)
	if len(got) != 1 || got[0] != "durability differs — a: x; b: y." {
		t.Errorf("findings %q", got)
	}
}
