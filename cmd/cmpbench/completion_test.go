package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Shell completion offers what cmpbench knows: the usable systems the systems file defines
// (after a comma, those not named yet), the built-in suites and suite files, and the
// archives under --out (in-progress run directories for recover).
func TestCompletion(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", "systems:\n  kv1: {adapter: resp, endpoint: 127.0.0.1:6379, description: the first}\n  kv2: {adapter: resp, endpoint: 127.0.0.1:6380}\n")
	writeFile(t, dir, "other.yaml", "systems:\n  far: {adapter: resp, endpoint: 127.0.0.1:6381}\n")
	writeFile(t, dir, "notes.txt", "")
	manifest := `{"format_version": 1, "status": "complete"}`
	for _, d := range []string{"results/20260101-000000-smoke-aaaaaa", "results/20260102-000000-ycsb-bbbbbb", "runs/20260103-000000-knee-cccccc"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
		writeFile(t, dir, filepath.Join(d, "manifest.json"), manifest)
	}
	os.MkdirAll(filepath.Join(dir, "results/.20260104-000000-soak-dddddd.partial"), 0o755)
	writeFile(t, dir, "results/.20260104-000000-soak-dddddd.partial/manifest.json", `{"format_version": 1, "status": "in_progress"}`)
	os.MkdirAll(filepath.Join(dir, "results/not-an-archive"), 0o755)
	os.MkdirAll(filepath.Join(dir, "suites/old"), 0o755)
	writeFile(t, dir, "suites/mine.yml", "")

	const (
		only    = ":4"  // these candidates and no files
		noSpace = ":6"  // and no space after one: a comma and a name, or a file, may follow
		dirs    = ":16" // the shell's own completion of directories
	)
	both := []string{"results/20260101-000000-smoke-aaaaaa", "results/20260102-000000-ycsb-bbbbbb"}
	// The built-in systems completed are those whose server is on PATH: a PATH
	// with redis-server alone, whatever this machine has.
	bin := t.TempDir()
	if err := os.Symlink("/bin/true", filepath.Join(bin, "redis-server")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin}
	for _, tc := range []struct {
		args []string
		want []string // candidates, then the directive
	}{
		{[]string{"run", "--systems", ""}, []string{"kv1\tthe first", "kv2", "redis\tlocal redis-server without persistence, started by cmpbench",
			"redis-aof\tlocal redis-server with appendonly yes and appendfsync everysec, started by cmpbench", noSpace}},
		{[]string{"run", "--systems", "kv"}, []string{"kv1\tthe first", "kv2", noSpace}},
		{[]string{"run", "--systems", "kv1,"}, []string{"kv1,kv2", "kv1,redis\tlocal redis-server without persistence, started by cmpbench",
			"kv1,redis-aof\tlocal redis-server with appendonly yes and appendfsync everysec, started by cmpbench", noSpace}},
		{[]string{"run", "--systems=kv2,redis,r"}, []string{"kv2,redis,redis-aof\tlocal redis-server with appendonly yes and appendfsync everysec, started by cmpbench", noSpace}},
		{[]string{"--config", "other.yaml", "run", "--systems", "f"}, []string{"far", noSpace}},
		{[]string{"run", "--suite", ""}, []string{"ceiling", "knee", "latency", "memtier", "pubsub", "smoke", "soak", "ycsb",
			"cmpbench.yaml", "other.yaml", "results/", "runs/", "suites/", only}},
		{[]string{"run", "--suite", "s"}, []string{"smoke", "soak", "suites/", only}},
		{[]string{"run", "--suite", "su"}, []string{"suites/", noSpace}},
		{[]string{"run", "--suite", "suites/"}, []string{"suites/mine.yml", "suites/old/", only}},
		{[]string{"verify", ""}, append(both, only)},
		{[]string{"report", "results/2026010"}, append(both, only)},
		{[]string{"report", "--out", "elsewhere", ""}, append(both, only)}, // report's own --out is where it writes
		{[]string{"export", "csv", ""}, append(both, only)},
		{[]string{"export", "hlog", ""}, append(both, only)},
		{[]string{"compare", ""}, append(both, only)},
		{[]string{"compare", both[0], ""}, append(both, only)},
		{[]string{"compare", both[0], both[1], ""}, []string{only}},
		{[]string{"--out", "runs", "verify", ""}, []string{"runs/20260103-000000-knee-cccccc", only}},
		{[]string{"recover", ""}, []string{"results/.20260104-000000-soak-dddddd.partial", only}},
		{[]string{"verify", "/elsewhere/"}, []string{dirs}}, // no archive: the shell completes directories
		{[]string{"--out", "nothing-here", "verify", ""}, []string{dirs}},
	} {
		r := cli(t, dir, env, append([]string{"__complete"}, tc.args...)...)
		got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if r.code != 0 || strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%q: exit %d, got\n%s\nwant\n%s\nstderr: %s", tc.args, r.code, strings.Join(got, "\n"), strings.Join(tc.want, "\n"), r.stderr)
		}
	}
}

// cobra's completion command writes the scripts that call __complete.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := cli(t, t.TempDir(), nil, "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, "cmpbench") || !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes\nstderr: %s", shell, r.code, len(r.stdout), r.stderr)
		}
	}
}
