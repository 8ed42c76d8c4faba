package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// Valkey, the real valkey-server: the built-in system through the smoke suite,
// then YCSB with the restart check on one server that persists (AOF), one over
// TLS and a three-node cluster that cmpbench forms itself, in one run. Each keeps
// its data across the restart, counts it exactly, and its own command counts
// equal what the client sent.
func TestValkeyIntegration(t *testing.T) {
	provisiontest.Need(t, "valkey-server")
	provisiontest.Need(t, "valkey-cli")
	dir := t.TempDir()
	r := realCLI(t, dir, "run", "--systems", "valkey", "--suite", "smoke", "--scale", "0.2", "--quiet")
	if r.code != 0 {
		t.Fatalf("smoke: exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	for _, p := range a.Manifest.Phases {
		if p.Status != "ok" {
			t.Errorf("smoke %s: %s %s", p.Name, p.Status, p.Error)
		}
	}
	if g := rows(a, "valkey", "closed-1:10")["GET"]; g.Count == 0 || g.Errors != 0 {
		t.Errorf("smoke GET: %+v", g.Counts)
	}
	if s := a.Manifest.Systems[0]; s.Product != "valkey" || s.Version != "8.0.1" {
		t.Errorf("built-in valkey: product %q version %q", s.Product, s.Version)
	}
	if info, err := a.ReadFile("systems/valkey/info.txt"); err != nil || !strings.Contains(string(info), "valkey_version:8.0.1") || !strings.Contains(string(info), "# Commandstats") {
		t.Errorf("the INFO capture: %v\n%.300s", err, info)
	}
	assertNoServerOf(t, dir)

	certs := provisiontest.TLS(t, t.TempDir())
	writeFile(t, dir, "cmpbench.yaml", fmt.Sprintf(`systems:
  valkey-aof:
    adapter: resp
    profile: valkey
    provision:
      command: [valkey-server, --port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, "",
                --appendonly, "yes", --appendfsync, everysec]
  valkey-tls:
    adapter: resp
    profile: valkey
    tls: {enabled: true, ca_file: %[1]q}
    provision:
      command: [valkey-server, --port, "0", --tls-port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, "",
                --appendonly, "yes", --tls-cert-file, %[2]q, --tls-key-file, %[3]q, --tls-ca-cert-file, %[1]q,
                --tls-auth-clients, "no"]
  valkey-cluster:
    adapter: resp
    profile: valkey
    cluster: true
    provision:
      nodes: 3
      command: [valkey-server, --port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, "",
                --appendonly, "yes", --cluster-enabled, "yes", --cluster-config-file, nodes.conf]
      setup: [valkey-cli, --cluster, create, "{endpoints}", --cluster-replicas, "0", --cluster-yes]
`, certs.CA, certs.ServerCert, certs.ServerKey))
	r = realCLI(t, dir, "run", "--systems", "valkey-aof,valkey-tls,valkey-cluster", "--suite", "ycsb", "--scale", "0.0001", "--quiet")
	if r.code != 0 {
		t.Fatalf("ycsb: exit %d\n%s", r.code, r.stderr)
	}
	a = archiveOf(t, r)
	want := map[string]struct{ binary, product, version string }{}
	for _, s := range []string{"valkey-aof", "valkey-tls", "valkey-cluster"} {
		want[s] = struct{ binary, product, version string }{"valkey-server", "valkey", "8.0.1"}
	}
	checkRealRun(t, a, 10_000, want)
	for _, s := range a.Manifest.Systems {
		switch s.Name {
		case "valkey-tls":
			if s.TLS != "verified" {
				t.Errorf("valkey-tls: tls %q", s.TLS)
			}
		case "valkey-cluster":
			if len(s.Nodes) != 3 {
				t.Errorf("valkey-cluster: nodes %v", s.Nodes)
			}
		}
	}
	assertNoServerOf(t, dir)
}
