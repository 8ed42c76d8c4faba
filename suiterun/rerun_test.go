package suiterun

import (
	"errors"
	"strings"
	"testing"

	_ "github.com/cmpbench/cmpbench/adapters/resp" // checks a system's profile when the file is read
	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// What a rerun reads back from a manifest: the suite and options as
// archived, each system on its own so that one that cannot be run again
// keeps out only itself, and what cannot be run at all is bad input.
func TestRerun(t *testing.T) {
	suite := "name: tiny\nphases:\n  - {name: p, kind: measured, duration: 1s, connections: 1, memtier: {key_max: 10}}\n"
	redis := archive.SystemInfo{Name: "redis", Adapter: "resp", DefinedIn: "built-in",
		Definition: map[string]any{"adapter": "resp", "endpoint": "127.0.0.1:6379"}}
	mine := archive.SystemInfo{Name: "mine", Adapter: "resp", DefinedIn: "my.yaml:3",
		Definition: map[string]any{"adapter": "resp", "endpoint": "127.0.0.1:6380", "profile": "custom"}}
	m := archive.Manifest{RunID: "r1", Seed: 7, Scale: 0.5, Suite: archive.SuiteInfo{Name: "tiny", YAML: suite},
		Systems: []archive.SystemInfo{redis, mine}}
	for _, tc := range []struct {
		name     string
		m        archive.Manifest
		only     []string
		names    []string
		leftOut  []string
		badInput string
	}{
		{name: "a profile the archive lacks keeps out its system only", m: m, names: []string{"redis"}, leftOut: []string{"mine"}},
		{name: "only the named", m: m, only: []string{"redis"}, names: []string{"redis"}},
		{name: "naming one that cannot run", m: m, only: []string{"mine"}, badInput: "system mine (defined in my.yaml:3, profile custom) is not run again"},
		{name: "not a system of the run", m: m, only: []string{"valkey"}, badInput: "--systems: valkey is not a system of r1 (it has redis, mine)"},
		{name: "imported", m: archive.Manifest{RunID: "i1", Imported: &archive.ImportInfo{Tool: "memtier_benchmark", Source: "out.json"}},
			badInput: "i1 was imported from memtier_benchmark's output out.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ag, err := Rerun(tc.m, tc.only)
			if tc.badInput != "" {
				var bi core.BadInput
				if !errors.As(err, &bi) || !strings.Contains(err.Error(), tc.badInput) {
					t.Fatalf("error %v, want bad input saying %q", err, tc.badInput)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(ag.Names, ",") != strings.Join(tc.names, ",") || strings.Join(ag.LeftOut, ",") != strings.Join(tc.leftOut, ",") || len(ag.Warnings) != len(tc.leftOut) {
				t.Errorf("names %v left out %v warnings %v, want %v and %v", ag.Names, ag.LeftOut, ag.Warnings, tc.names, tc.leftOut)
			}
			if o := ag.Options; o.Seed != 7 || o.Scale != 0.5 || o.Repeat != 1 || ag.Suite.Source != "rerun of r1" {
				t.Errorf("options %+v, suite source %q", o, ag.Suite.Source)
			}
			if _, err := ag.Systems.Get("redis"); err != nil {
				t.Errorf("redis: %v", err)
			}
		})
	}
}
