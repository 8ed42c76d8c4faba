package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
)

// Issue 25's weak answer: a plugin file that is there but not executable used to
// be reported as not found.
func TestNotExecutablePluginIsNamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, BinaryPrefix+"kv")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Lookup("kv")
	if err == nil || !strings.Contains(err.Error(), path+" is there but not executable (chmod +x it)") {
		t.Fatalf("Lookup of a plugin that is not executable: %v", err)
	}
	if _, err := c.Lookup("absent"); err == nil || !strings.Contains(err.Error(), `adapter "absent" not found`) {
		t.Fatalf("Lookup of an absent plugin: %v", err)
	}
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if c, err = Discover([]string{dir}); err != nil {
		t.Fatal(err)
	}
	if e, err := c.Lookup("kv"); err != nil || e.Path != path {
		t.Fatalf("Lookup of an executable plugin: %+v %v", e, err)
	}
}

// Issue 46: a depth above one is refused before the run where an adapter's
// protocol does not answer in order, or a plugin's engine predates pipelining.
func TestCanPipeline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		info    core.Info
		builtin bool
		depth   int
		want    string
	}{
		{"one at a time, anything", core.Info{Name: "aerospike"}, true, 1, ""},
		{"a built-in adapter that pipelines", core.Info{Name: "resp", Pipeline: true}, true, 16, ""},
		{"a built-in adapter that does not", core.Info{Name: "aerospike"}, true, 16, "pipeline 16: adapter aerospike keeps one request in flight per connection"},
		{"a plugin of today", core.Info{Name: "p", Pipeline: true, Capabilities: engine.Capabilities}, false, 4, ""},
		{"a plugin whose engine predates it", core.Info{Name: "p", Pipeline: true, Capabilities: []string{engine.CapProbe}}, false, 4, "plugin p was built with an engine that cannot pipeline: rebuild it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := canPipeline(tc.info, tc.builtin, tc.depth)
			if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
}
