package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
	"github.com/cmpbench/cmpbench/plugins"
)

// The adapter template builds the way an outsider builds it: copied out of the
// tree as a module of its own, against this checkout (its replace line pointed at
// the checkout's absolute path). Its own conformance test passes there, and the
// plugin it builds runs the smoke suite under cmpbench, whose archive records the
// cmpbench module the plugin was built against.
func TestTemplatePluginIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	checkout, mod, pluginDir, bin := buildTemplate(t)
	goIn(t, mod, "test", "-count=1", "./...")

	port, _ := redisAt(t, 0)
	// Database 2 is the system; it holds a key the run did not write, which
	// disposable: true lets cmpbench empty through the adapter's Flush. Database 0
	// is not the system: its key stays.
	redisDo(t, port, "SET outside 1", "SELECT 2", "SET stale 1")
	dir := t.TempDir()
	writeFile(t, dir, "systems.yaml", fmt.Sprintf(`systems:
  t:
    adapter: template
    endpoint: 127.0.0.1:%d
    disposable: true
    options: {db: 2}
`, port))
	// The plugin's declared options and its own check, at --dry-run, with file:line.
	// Each problem is said once (the host's check of the declared types, or the
	// plugin's own), at its option's line, every line with its file:line.
	writeFile(t, dir, "bad.yaml", `systems:
  t:
    adapter: template
    endpoint: 127.0.0.1:1
    options: {dbb: 2}
  u:
    adapter: template
    endpoint: 127.0.0.1:1
    options: {db: two}
  v:
    adapter: template
    endpoint: 127.0.0.1:1
    options: {db: "-1"}
  w:
    adapter: template
    endpoint: 127.0.0.1:1
    options:
      db: "-1"
      client_name: two words
      dbb: 1
`)
	for _, c := range []struct {
		system string
		want   []string
	}{
		{"t", []string{`bad.yaml:5: system "t": dbb is not an option of adapter template (its options: client_name, db)`}},
		{"u", []string{`bad.yaml:9: system "u": db "two" is not an integer`}},
		{"v", []string{`bad.yaml:13: system "v": option db: "-1" is not a database number`}},
		{"w", []string{
			`bad.yaml:18: system "w": option db: "-1" is not a database number`,
			`bad.yaml:19: system "w": option client_name: "two words" must be one word`,
			`bad.yaml:20: system "w": dbb is not an option of adapter template (its options: client_name, db)`,
		}},
	} {
		r := cli(t, dir, nil, "--plugin-dir", pluginDir, "--config", "bad.yaml", "run", "--systems", c.system, "--suite", "smoke", "--dry-run")
		msg := strings.ReplaceAll(r.stderr, dir+"/", "")
		if r.code != 2 {
			t.Errorf("system %s at --dry-run: exit %d, want 2:\n%s", c.system, r.code, msg)
		}
		for _, want := range c.want {
			if n := strings.Count(msg, want); n != 1 {
				t.Errorf("system %s at --dry-run: %q said %d times, want once, in:\n%s", c.system, want, n, msg)
			}
		}
		// Nothing else: one line a problem, each with its file:line.
		lines := strings.Split(strings.TrimSpace(strings.TrimPrefix(msg, "cmpbench: ")), "\n")
		if len(lines) != len(c.want) {
			t.Errorf("system %s at --dry-run: %d lines, want %d:\n%s", c.system, len(lines), len(c.want), msg)
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "bad.yaml:") {
				t.Errorf("system %s at --dry-run: a line without its file:line: %q", c.system, l)
			}
		}
	}

	r := cli(t, dir, nil, "--plugin-dir", pluginDir, "--config", "systems.yaml", "run", "--systems", "t", "--suite", "smoke", "--scale", "0.05")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "emptying 1 keys before the load") {
		t.Errorf("no note of emptying database 2 before the load:\n%s", r.stderr)
	}
	a := archiveOf(t, r) // verified

	p := a.Manifest.Plugins[0]
	sum, _ := core.FileSHA256(bin)
	if p.Adapter != "template" || p.Builtin || p.Path != bin || p.SHA256 != sum || p.Version != "0.1.0" || p.Protocol != plugins.ProtocolVersion {
		t.Errorf("plugin %+v", p)
	}
	// The module the plugin was built against, not the plugin's own version:
	// "v0.0.0-00010101000000-000000000000 => /path/to/checkout (devel)".
	t.Logf("sdk_version %s", p.SDKVersion)
	if !strings.Contains(p.SDKVersion, " => ") || !strings.Contains(p.SDKVersion, checkout) {
		t.Errorf("sdk_version %q does not name the replace target %s", p.SDKVersion, checkout)
	}
	for _, ph := range a.Manifest.Phases {
		if ph.Status != core.StatusOK {
			t.Errorf("phase %s: %s %s", ph.Name, ph.Status, ph.Error)
		}
	}
	if got := rows(a, "t", "closed-1:10")["GET"]; got.Hits == 0 {
		t.Errorf("no GET hits through the template plugin: %+v", got)
	}
	vs, err := a.Validations()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || !vs[0].OK() || vs[0].Counted != vs[0].Expected || vs[0].Expected == 0 {
		t.Errorf("validation (the adapter's Count against the load) %+v", vs)
	}
	if s := a.Manifest.Systems[0]; s.Product != "redis" || s.Version == "" {
		t.Errorf("capture: product %q version %q", s.Product, s.Version)
	}
	// The facts the plugin reads of its capture (core.FactReader) cross the
	// boundary, are archived and audited as a built-in adapter's are.
	if f, err := a.Facts(a.Manifest.Systems[0]); err != nil || f == nil || f.Replication.Class != "1" {
		t.Errorf("the plugin's facts: %+v, %v", f, err)
	}
	if audit := cli(t, dir, nil, "audit", a.Dir); !strings.Contains(audit.stdout, "| replication | `master`, 0 replica(s) |") {
		t.Errorf("audit of the plugin's system:\n%s%s", audit.stdout, audit.stderr)
	}
	if got := redisDo(t, port, "EXISTS outside"); got[0] != ":1" {
		t.Errorf("database 0's key after the run: EXISTS = %s; the adapter emptied more than its database", got[0])
	}
}

// buildTemplate copies the adapter template out of the tree as a module of its
// own, its replace line pointed at this checkout, and builds its plugin into a
// plugin directory of its own.
func buildTemplate(t *testing.T) (checkout, mod, pluginDir, bin string) {
	t.Helper()
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mod = filepath.Join(t.TempDir(), "cmpbench-adapter-template")
	copyTree(t, filepath.Join(checkout, "plugins", "sdk", "examples", "template"), mod)
	gomod := filepath.Join(mod, "go.mod")
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	replace := regexp.MustCompile(`(?m)^replace github\.com/cmpbench/cmpbench => .*$`)
	if !replace.Match(b) {
		t.Fatalf("the template's go.mod has no replace line for cmpbench:\n%s", b)
	}
	b = replace.ReplaceAll(b, []byte("replace github.com/cmpbench/cmpbench => "+checkout))
	if err := os.WriteFile(gomod, b, 0o644); err != nil {
		t.Fatal(err)
	}
	pluginDir = t.TempDir()
	bin = filepath.Join(pluginDir, "cmpbench-adapter-template")
	goIn(t, mod, "build", "-o", bin, ".")
	return checkout, mod, pluginDir, bin
}

// A plugin adapter receives every node's address of a system cmpbench starts as
// a cluster (provision.nodes): the template, built as an outsider builds it,
// shards the smoke suite's keys over three redis-servers it is given across the
// plugin boundary, Count sums what every node holds, and the archived stats name
// each node the run started by its @host:port suffix, with its share of the keys.
func TestTemplatePluginClusterIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	_, _, pluginDir, _ := buildTemplate(t)
	dir := t.TempDir()
	writeFile(t, dir, "systems.yaml", `systems:
  shards:
    adapter: template
    provision:
      nodes: 3
      command: [redis-server, --port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, "", --appendonly, "no"]
`)
	r := cli(t, dir, nil, "--plugin-dir", pluginDir, "--config", "systems.yaml", "run", "--systems", "shards", "--suite", "smoke", "--scale", "0.05")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	a := archiveOf(t, r)
	nodes := a.Manifest.Systems[0].Nodes
	if len(nodes) != 3 {
		t.Fatalf("the run started nodes %v, want 3", nodes)
	}
	vs, err := a.Validations()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || !vs[0].OK() || vs[0].Expected == 0 {
		t.Errorf("validation (Count summed over the nodes against the load) %+v", vs)
	}
	stats, err := a.ServerStats()
	if err != nil {
		t.Fatal(err)
	}
	instance, keys := map[string]bool{}, map[string]bool{}
	for _, s := range stats {
		switch node, _ := strings.CutPrefix(s.Key, "instance@"); {
		case s.Section == "cmpbench" && node != s.Key:
			instance[node] = true
		case s.Section == "keyspace" && strings.HasPrefix(s.Key, "db0@") && strings.HasPrefix(s.Value, "keys="):
			keys[strings.TrimPrefix(s.Key, "db0@")] = true
		}
	}
	for _, n := range nodes {
		if !instance[n] || !keys[n] {
			t.Errorf("node %s: instance in the stats %v, keys %v; want both, from the adapter given every node", n, instance[n], keys[n])
		}
	}
	if len(instance) != len(nodes) {
		t.Errorf("stats of nodes %v; the run started %v", instance, nodes)
	}
}

// goIn runs the go command in a module directory of its own.
func goIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s\n(if go.mod or go.sum is out of date: cd plugins/sdk/examples/template && go mod tidy)",
			strings.Join(args, " "), dir, err, out)
	}
}

// copyTree copies the files under src to dst, without the build output in bin/.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == "bin" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
