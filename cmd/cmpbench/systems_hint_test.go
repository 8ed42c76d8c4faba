package main

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core/config"
)

// A system name that is not defined but names a built-in product profile or adapter
// is answered with the entry to add and where; the entry, written there, defines it.
func TestUndefinedSystemHint(t *testing.T) {
	builtin, err := config.LoadSystems("", false)
	if err != nil {
		t.Fatal(err)
	}
	defined := " is not defined (defined: " + strings.Join(builtin.Names(), ", ") + ")"
	const file = "./cmpbench.yaml (read when it exists; or give a file with --config FILE)"
	// Names that are neither built-in systems nor defined: product profiles
	// that no built-in system starts, and an adapter's name.
	for _, tc := range []struct {
		name    string
		args    []string
		want    string
		dryRuns bool // the entry shown, written to the file, passes --dry-run
	}{
		{name: "profile", args: []string{"--systems", "lavik"}, dryRuns: true, want: `system "lavik"` + defined + `
lavik is a built-in profile of the resp adapter; for a server on this machine, add to ` + file + `:
systems:
  lavik:
    adapter: resp
    profile: lavik
    endpoint: 127.0.0.1:6379`},
		{name: "profile with its own port and TLS", args: []string{"--systems", "azure-managed-redis"}, dryRuns: true, want: `system "azure-managed-redis"` + defined + `
azure-managed-redis is a built-in profile of the resp adapter; for a server on this machine, add to ` + file + `:
systems:
  azure-managed-redis:
    adapter: resp
    profile: azure-managed-redis
    endpoint: 127.0.0.1:10000
    tls: {enabled: true}`},
		{name: "adapter", args: []string{"--systems", "resp"}, dryRuns: true, want: `system "resp"` + defined + `
resp is a built-in adapter; for a server on this machine, add to ` + file + `:
systems:
  resp:
    adapter: resp
    endpoint: 127.0.0.1:6379`},
		{name: "several, and one that matches nothing", args: []string{"--systems", "nope,lavik,resp"}, dryRuns: false,
			want: `system "nope"` + defined + `
system "lavik"` + defined + `
system "resp"` + defined + `
lavik is a built-in profile of the resp adapter, resp is a built-in adapter; for servers on this machine, add to ` + file + `:
systems:
  lavik:
    adapter: resp
    profile: lavik
    endpoint: 127.0.0.1:6379
  resp:
    adapter: resp
    endpoint: 127.0.0.1:6379`},
		{name: "--config names the file", args: []string{"--config", "mine.yaml", "--systems", "garnet"}, dryRuns: true, want: `system "garnet"` + defined + `
garnet is a built-in profile of the resp adapter; for a server on this machine, add to mine.yaml:
systems:
  garnet:
    adapter: resp
    profile: garnet
    endpoint: 127.0.0.1:6379`},
		{name: "nothing matches", args: []string{"--systems", "nope"}, want: `system "nope"` + defined},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := "cmpbench.yaml"
			if tc.args[0] == "--config" {
				path = tc.args[1]
				writeFile(t, dir, path, "systems: {}\n")
			}
			args := append([]string{"run", "--suite", "ycsb"}, tc.args...)
			r := cli(t, dir, nil, args...)
			if got := strings.TrimSuffix(r.stderr, "\n"); r.code != 2 || got != "cmpbench: "+tc.want {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and:\ncmpbench: %s", r.code, r.stderr, tc.want)
			}
			if !tc.dryRuns {
				return
			}
			_, entry, _ := strings.Cut(tc.want, "\nsystems:\n")
			writeFile(t, dir, path, "systems:\n"+entry+"\n")
			if r := cli(t, dir, nil, append(args, "--dry-run")...); r.code != 0 {
				t.Fatalf("the entry shown does not define the system: exit %d\n%s", r.code, r.stderr)
			}
		})
	}
}
