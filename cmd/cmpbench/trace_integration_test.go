package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core/gotrace"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// With CMPBENCH_TRACE set, the host and the plugin that ran the phases each leave
// a whole execution trace (ended with the run, not cut off by the plugin's exit),
// and the archive does not change for it.
func TestTraceOfARunIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	dir := t.TempDir()
	traces := filepath.Join(dir, "traces")
	writeFile(t, dir, "tiny.yaml", `name: tiny
defaults: {connections: 4, memtier: {key_max: 1000, value_size: 32}}
phases:
  - {name: load, kind: load, duration: 30s, memtier: {ratio: "1:0", key_pattern: P}}
  - {name: fixed, rate: 2000, duration: 2s, memtier: {ratio: "1:10"}}
`)
	r := cli(t, dir, []string{gotrace.EnvVar + "=" + traces}, "run", "--systems", "redis", "--suite", "./tiny.yaml")
	a := archiveOf(t, r)
	if row := rows(a, "redis", "fixed")["GET"]; row.Throughput == 0 {
		t.Fatal("no GETs measured in the traced run")
	}
	for _, role := range []string{"host", "plugin-resp"} {
		got, _ := filepath.Glob(filepath.Join(traces, role+"-*.trace"))
		if len(got) != 1 {
			t.Fatalf("%s traces: %v, want one (stderr: %s)", role, got, r.stderr)
		}
		b, err := os.ReadFile(got[0])
		if err != nil {
			t.Fatal(err)
		}
		// A trace cut off by the process's exit lacks the mark its end logs.
		if !strings.HasPrefix(string(b), "go 1.") || !strings.Contains(string(b), gotrace.EndMark) {
			t.Fatalf("%s: %d bytes, %q...: not a whole execution trace", got[0], len(b), b[:min(len(b), 16)])
		}
		if role == "plugin-resp" && !strings.Contains(string(b), "phase fixed") {
			t.Fatalf("%s does not name the phase it ran", got[0])
		}
	}
}
