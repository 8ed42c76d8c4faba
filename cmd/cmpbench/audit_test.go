package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
)

var update = flag.Bool("update", false, "rewrite testdata/audit.golden.md")

// realCaptures are the built-in adapters' real captures of each product
// (adapters/*/testdata/facts), as systems of those adapters.
var realCaptures = []struct{ name, adapter string }{
	{"redis", "resp"}, {"redis-aof", "resp"}, {"valkey", "resp"}, {"keydb", "resp"}, {"keydb-flash", "resp"},
	{"kvrocks", "resp"}, {"pika", "resp"}, {"tendis", "resp"}, {"dragonfly", "resp"}, {"aerospike", "aerospike"},
}

// capturedArchive writes an archive of realCaptures, with the restart checks of
// their runs (testdata/audit), through the archive's own writer: with each
// system's facts as its adapter reads them (as the SDK sends them), or, as an
// archive written before facts were kept, with its sections alone.
func capturedArchive(t *testing.T, keepFacts bool) *archive.Archive {
	t.Helper()
	var runs []core.SystemRun
	for _, s := range realCaptures {
		run := core.SystemRun{Name: s.name, Adapter: s.adapter, Endpoint: "127.0.0.1:7000", Provisioned: true,
			Plugin:  core.PluginRef{Adapter: s.adapter, Builtin: true, Path: "/usr/local/bin/cmpbench"},
			Capture: core.Capture{Sections: map[string]string{}}}
		files, _ := filepath.Glob(filepath.Join("..", "..", "adapters", s.adapter, "testdata", "facts", s.name, "*.txt"))
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			run.Capture.Sections[strings.TrimSuffix(filepath.Base(f), ".txt")] = string(text)
		}
		if keepFacts {
			a, _ := core.BuiltinAdapter(s.adapter)
			f := a.(core.FactReader).Facts(run.Capture.Sections)
			run.Capture.Facts = &f
		}
		runs = append(runs, run)
	}
	var checks []core.Validation
	b, err := os.ReadFile(filepath.Join("testdata", "audit", "validation.json"))
	if err == nil {
		err = json.Unmarshal(b, &checks)
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err := archivetest.WriteSystems(t.TempDir(), runs, checks)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The audit of real captures says what each product does, as its adapter
// reads it (adapters/*/facts.go), and what the restart check saw wins: the
// same audit whether the archive keeps the facts or is of the format before,
// whose sections the built-in adapters registered in this binary read. The
// whole audit is golden (testdata/audit.golden.md, go test -update): Pika,
// Kvrocks, Tendis and KeyDB on FLASH keep their data in RocksDB whatever save and
// appendonly say, Dragonfly snapshots on a clean stop, Aerospike's facts come
// from its get-config.
func TestAuditOfRealCaptures(t *testing.T) {
	golden := filepath.Join("testdata", "audit.golden.md")
	for _, tc := range []struct {
		name      string
		keepFacts bool
	}{{"facts kept", true}, {"an archive of the format before", false}} {
		t.Run(tc.name, func(t *testing.T) {
			a := capturedArchive(t, tc.keepFacts)
			if f, err := a.Facts(a.Manifest.Systems[0]); err != nil || (f != nil) != tc.keepFacts {
				t.Fatalf("facts.json: %v %v", f, err)
			}
			text, unfair, err := report.Audit(a)
			if err != nil || len(unfair) != 2 {
				t.Errorf("unfair %q, %v; want durability and memory", unfair, err)
			}
			if *update && tc.keepFacts {
				if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want, err := os.ReadFile(golden); err != nil || string(want) != text {
				t.Errorf("the audit differs from %s (go test -update to accept):\n%s", golden, text)
			}
		})
	}
}
