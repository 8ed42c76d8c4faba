package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

var examples, _ = filepath.Abs("../../examples")

// exampleCerts runs examples/gen-certs.sh, as the example config's instructions say.
func exampleCerts(t *testing.T) string {
	t.Helper()
	provisiontest.Need(t, "openssl")
	dir := filepath.Join(t.TempDir(), "tls")
	out, err := exec.Command(filepath.Join(examples, "gen-certs.sh"), dir).CombinedOutput()
	if err != nil {
		t.Fatalf("gen-certs.sh: %v\n%s", err, out)
	}
	return dir
}

// The acceptance run: the example config's TLS+ACL and cluster systems pass
// the smoke suite, every shard is captured, the cluster's key count equals the
// loaded keys, and the ACL user's password is nowhere.
func TestExampleSecuredAndClusteredSmokeIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	provisiontest.Need(t, "redis-cli")
	const password = "Bench-ACL-pw-8c41d2e7"
	env := []string{"CMPBENCH_TLS_DIR=" + exampleCerts(t), "REDIS_BENCH_PASSWORD=" + password}
	r := cli(t, t.TempDir(), env, "--config", filepath.Join(examples, "cmpbench.yaml"),
		"run", "--systems", "redis-tls-acl,redis-cluster", "--suite", "smoke")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	for _, ph := range a.Manifest.Phases {
		if ph.Status != "ok" {
			t.Errorf("%s %s: %s %s %q", ph.System, ph.Name, ph.Status, ph.Error, ph.ErrorSamples)
		}
	}
	sys := map[string]archive.SystemInfo{}
	for _, s := range a.Manifest.Systems {
		sys[s.Name] = s
	}

	tlsACL := sys["redis-tls-acl"]
	if tlsACL.TLS != "verified, client certificate, TLS 1.3 or later" || tlsACL.Product != "redis" {
		t.Errorf("redis-tls-acl: tls %q product %q", tlsACL.TLS, tlsACL.Product)
	}
	if len(tlsACL.Refused) != 1 || !strings.Contains(tlsACL.Refused[0], "CONFIG GET *") || !strings.Contains(tlsACL.Refused[0], "NOPERM") {
		t.Errorf("the ACL user may not run CONFIG: refused %q", tlsACL.Refused)
	}

	cluster := sys["redis-cluster"]
	if !cluster.Cluster || len(cluster.Nodes) != 3 {
		t.Fatalf("redis-cluster: cluster %v nodes %v", cluster.Cluster, cluster.Nodes)
	}
	perShard := regexp.MustCompile(`^(info|config)-127\.0\.0\.1-(\d+)\.txt$`)
	shards := map[string]int{}
	for _, f := range cluster.Files {
		if m := perShard.FindStringSubmatch(f); m != nil {
			shards["127.0.0.1:"+m[2]]++
		}
	}
	for _, n := range cluster.Nodes {
		if shards[n] != 2 {
			t.Errorf("node %s: %d of INFO and CONFIG captured (files %v)", n, shards[n], cluster.Files)
		}
	}
	vs := validations(t, a)
	for _, name := range []string{"redis-cluster", "redis-tls-acl"} {
		v := vs[name+"/after load"]
		if !v.OK() || v.Expected != 10_000 || v.Counted != 10_000 {
			t.Errorf("%s: counted %d keys, expected %d: %v", name, v.Counted, v.Expected, v.Problems)
		}
	}
	assertNoSecrets(t, r, a, password)
}

// An access-key system (Azure Managed Redis' form: the key is the default user's
// password, over TLS): the run works, the key is nowhere, and a wrong key is an
// error that names the system and not the key.
func TestAccessKeySystemIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	const key = "amr-access-key-5f0e9b2c71d84a36"
	certs := exampleCerts(t)
	env := []string{"CMPBENCH_TLS_DIR=" + certs, "AMR_ACCESS_KEY=" + key}
	r := cli(t, t.TempDir(), env, "--config", filepath.Join(examples, "cmpbench.yaml"),
		"run", "--systems", "amr-local", "--suite", "smoke", "--scale", "0.1")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	if s := a.Manifest.Systems[0]; s.Product != "azure-managed-redis" || s.TLS != "verified" {
		t.Errorf("product %q (the profile's version field), tls %q", s.Product, s.TLS)
	}
	config, err := a.ReadFile("systems/amr-local/config.txt")
	if err != nil || !strings.Contains(string(config), "requirepass [redacted]") {
		t.Errorf("the captured CONFIG must hold requirepass, redacted (%v)", err)
	}
	assertNoSecrets(t, r, a, key)

	t.Run("a wrong key", func(t *testing.T) {
		const serverKey = "the-servers-real-key-0a7c"
		dir := t.TempDir()
		writeFile(t, dir, "cmpbench.yaml", `systems:
  amr-wrong:
    adapter: resp
    profile: azure-managed-redis
    provision:
      command: [redis-server, --port, "0", --tls-port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, "",
        --tls-cert-file, "${CMPBENCH_TLS_DIR}/server.crt", --tls-key-file, "${CMPBENCH_TLS_DIR}/server.key",
        --tls-ca-cert-file, "${CMPBENCH_TLS_DIR}/ca.crt", --tls-auth-clients, "no", --requirepass, "${SERVER_ACCESS_KEY}"]
    tls: {enabled: true, ca_file: "${CMPBENCH_TLS_DIR}/ca.crt"}
    auth: {access_key: "${AMR_ACCESS_KEY}"}
`)
		r := cli(t, dir, append(env, "SERVER_ACCESS_KEY="+serverKey), "run", "--systems", "amr-wrong", "--suite", "smoke", "--scale", "0.1")
		if r.code == 0 {
			t.Fatal("a run with a wrong access key succeeded")
		}
		a := archiveOf(t, r)
		status, msg := phaseStatus(a, "amr-wrong", "load")
		if status != "failed" || !strings.Contains(msg, "WRONGPASS") {
			t.Errorf("load %s: %s", status, msg)
		}
		if !strings.Contains(r.stderr, "amr-wrong") || !strings.Contains(r.stderr, "WRONGPASS") {
			t.Errorf("the error must name the system and say why:\n%s", r.stderr)
		}
		assertNoSecrets(t, r, a, key, serverKey)
	})
}

// A setup step gets a secret from cmpbench's environment, never on a command
// line: the server starts without a password, the setup's shell sets it from the
// variable the system's auth names, and the run authenticates with it. The value
// appears in no output, archive file or table; the setup's command line, which
// the archive keeps, holds the variable's name only.
func TestSetupGetsASecretFromTheEnvironmentIntegration(t *testing.T) {
	provisiontest.Need(t, "redis-server")
	provisiontest.Need(t, "redis-cli")
	const password = "setup-secret-4c1f93a0e7b2"
	dir := t.TempDir()
	writeFile(t, dir, "cmpbench.yaml", `systems:
  guarded:
    adapter: resp
    provision:
      command: [redis-server, --port, "{port}", --bind, 127.0.0.1, --dir, "{dir}", --save, ""]
      setup: [sh, -c, 'redis-cli -u "redis://$0" CONFIG SET requirepass "$CMPBENCH_SETUP_PASSWORD"', "{endpoints}"]
    auth: {password: "${CMPBENCH_SETUP_PASSWORD}"}
`)
	r := cli(t, dir, []string{"CMPBENCH_SETUP_PASSWORD=" + password}, "run", "--systems", "guarded", "--suite", "smoke", "--scale", "0.1")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	a := archiveOf(t, r)
	config, err := a.ReadFile("systems/guarded/config.txt")
	if err != nil || !strings.Contains(string(config), "requirepass [redacted]") {
		t.Errorf("the server's CONFIG must hold the password the setup set, redacted (%v):\n%s", err, config)
	}
	manifest, err := a.ReadFile("manifest.json")
	if err != nil || !strings.Contains(string(manifest), `$CMPBENCH_SETUP_PASSWORD`) {
		t.Errorf("the manifest keeps the setup as written, the variable's name in it (%v)", err)
	}
	assertNoSecrets(t, r, a, password)
}

// The managed-service examples load, and planning them needs no connection.
func TestManagedServiceExamplesLoad(t *testing.T) {
	const accessKey, password = "amr-example-key-e41b09", "cloud-example-pw-7d2a"
	ca := provisiontest.TLS(t, t.TempDir()).CA // the CA file must hold a certificate
	env := []string{
		"AMR_ENDPOINT=example.westeurope.redis.azure.net:10000", "AMR_ACCESS_KEY=" + accessKey,
		"AMR_OSS_ENDPOINT=oss.westeurope.redis.azure.net:10000", "AMR_OSS_ACCESS_KEY=" + accessKey + "-oss",
		"REDIS_CLOUD_ENDPOINT=redis-12000.example.cloud.redislabs.com:12000", "REDIS_CLOUD_CA_FILE=" + ca,
		"REDIS_CLOUD_USER=bench", "REDIS_CLOUD_PASSWORD=" + password,
		"REDIS_CLOUD_OSS_ENDPOINT=redis-12001.example.cloud.redislabs.com:12001", "REDIS_CLOUD_OSS_PASSWORD=" + password + "-oss",
	}
	config := filepath.Join(examples, "managed-services.yaml")
	r := cli(t, t.TempDir(), env, "--config", config, "systems")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The example's systems are usable (built-in ones whose server is not on
	// PATH here may not be).
	for _, n := range []string{"azure-managed-redis", "azure-managed-redis-oss", "redis-flex", "redis-cloud-oss-cluster"} {
		line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(n) + ` .*$`).FindString(r.stdout)
		if line == "" || strings.Contains(line, "not usable") {
			t.Errorf("%s is not listed as usable: %q\n%s", n, line, r.stdout)
		}
	}
	r = cli(t, t.TempDir(), env, "--config", config, "run", "--dry-run", "--suite", "memtier",
		"--systems", "azure-managed-redis,azure-managed-redis-oss,redis-flex,redis-cloud-oss-cluster")
	if r.code != 0 || !strings.Contains(r.stdout, "endpoint example.westeurope.redis.azure.net:10000") {
		t.Fatalf("dry run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, accessKey) || strings.Contains(r.stdout+r.stderr, password) {
		t.Fatal("a dry run printed a secret")
	}
	// The adapters' sample files load too (their systems may not be usable here).
	for _, sample := range []string{"../../adapters/resp/sample.yaml", "../../adapters/aerospike/sample.yaml"} {
		if r := cli(t, t.TempDir(), nil, "--config", abs(t, sample), "systems"); r.code != 0 {
			t.Errorf("%s: exit %d\n%s", sample, r.code, r.stderr)
		}
	}
}

func abs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// assertNoSecrets checks the run's output, every archive file and every string
// stored in its Parquet tables (whose pages are compressed) for the secrets.
func assertNoSecrets(t *testing.T, r result, a *archive.Archive, secrets ...string) {
	t.Helper()
	leaks := func(s string) bool {
		for _, sec := range secrets {
			if strings.Contains(s, sec) {
				return true
			}
		}
		return false
	}
	if leaks(r.stdout) || leaks(r.stderr) {
		t.Error("a secret was printed")
	}
	err := filepath.Walk(a.Dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && leaks(string(b)) {
			t.Errorf("%s holds a secret", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	iv, err1 := a.Intervals()
	pr, err2 := a.Probe()
	ss, err3 := a.ServerStats()
	cs, err4 := a.ClientStats()
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, table := range map[string]any{"summary": a.Summary, "intervals": iv, "probe": pr, "server_stats": ss, "client_stats": cs} {
		var found bool
		eachString(reflect.ValueOf(table), func(s string) { found = found || leaks(s) })
		if found {
			t.Errorf("%s.parquet holds a secret", name)
		}
	}
}

// eachString calls f with every string in v: fields, elements and map entries.
func eachString(v reflect.Value, f func(string)) {
	switch v.Kind() {
	case reflect.String:
		f(v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			eachString(v.Elem(), f)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			eachString(v.Index(i), f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				eachString(v.Field(i), f)
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			eachString(it.Key(), f)
			eachString(it.Value(), f)
		}
	}
}
