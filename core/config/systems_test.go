package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// optioned is an adapter that declares options, for the tests of CheckOptions.
type optioned struct{}

func (optioned) Info() core.Info {
	return core.Info{Name: "optioned", Options: []core.Option{
		{Name: "depth", Type: core.OptionInt},
		{Name: "mode", Type: core.OptionString, Required: true, Doc: "how"},
		{Name: "resp", Type: core.OptionInt, Values: []string{"3"}, TopLevel: true},
		{Name: "cluster", Type: core.OptionBool},
	}}
}

func (optioned) Open(context.Context, core.SystemConfig) (core.Target, error) { return nil, nil }

func init() { core.RegisterAdapter("optioned", func() core.Adapter { return optioned{} }) }

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cmpbench.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuiltinSystems(t *testing.T) {
	s, err := LoadSystems("", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, adapter, binary string
		nodes                 int
	}{
		{"redis", "resp", "redis-server", 0},
		{"redis-aof", "resp", "redis-server", 0},
		{"valkey", "resp", "valkey-server", 0},
		{"aerospike", "aerospike", "asd", 0},
		{"aerospike-cluster", "aerospike", "asd", 3},
		{"keydb", "resp", "keydb-server", 0},
		{"kvrocks", "resp", "kvrocks", 0},
		{"dragonfly", "resp", "dragonfly", 0},
		{"pika", "resp", "pika", 0},
		{"tendis", "resp", "tendisplus", 0},
	} {
		sys, _ := s.Lookup(tc.name)
		if sys == nil {
			t.Fatalf("%s is not built in", tc.name)
		}
		if !sys.Provisioned() || sys.Adapter != tc.adapter || sys.Source != BuiltinFile || sys.Provision.Command[0] != tc.binary || sys.Provision.Nodes != tc.nodes {
			t.Errorf("%s: %+v", tc.name, sys)
		}
	}
	aof, _ := s.Lookup("redis-aof")
	if !strings.Contains(strings.Join(aof.Provision.Command, " "), "--appendonly yes --appendfsync everysec") {
		t.Errorf("redis-aof command %v", aof.Provision.Command)
	}
	// asd refuses to start without its work directory and mod-lua path, which
	// the definition makes without a shell around asd.
	as, _ := s.Lookup("aerospike")
	conf := as.Provision.Files["aerospike.conf"]
	for _, want := range []string{"work-directory {dir}/work", "user-path {dir}/udf", "filesize {data_gib}G", "access-address 127.0.0.1"} {
		if !strings.Contains(conf, want) {
			t.Errorf("aerospike.conf lacks %q", want)
		}
	}
	if strings.Join(as.Provision.Dirs, " ") != "work/smd udf" || as.Provision.Install == "" {
		t.Errorf("aerospike provision %+v", as.Provision)
	}
	cl, _ := s.Lookup("aerospike-cluster")
	if c := cl.Provision.Files["aerospike.conf"]; !strings.Contains(c, "{each_line:mesh-seed-address-port 127.0.0.1 {port:heartbeat}}") || !strings.Contains(c, "replication-factor 2") {
		t.Errorf("aerospike-cluster conf:\n%s", c)
	}
}

// A system cmpbench starts is unusable where its binary is not on PATH, and the
// error says how to get it; with the binary on PATH it is usable.
func TestMissingServerBinary(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	s, err := LoadSystems("", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get("aerospike")
	if err == nil || !strings.Contains(err.Error(), `system "aerospike": provision.command asd is not on PATH`) || !strings.Contains(err.Error(), "https://aerospike.com/download/server/") {
		t.Fatalf("aerospike without asd: %v", err)
	}
	if _, problems := s.Lookup("valkey"); len(problems) != 1 || !strings.Contains(problems[0].Error(), "valkey-server is not on PATH") {
		t.Fatalf("valkey without valkey-server: %v", problems)
	}
	// A user's definition names its file:line; a setup command is checked too.
	p := writeFile(t, "systems:\n  c:\n    adapter: resp\n    provision:\n      nodes: 3\n      command: [my-server, --port, \"{port}\"]\n      setup: [my-cli, create, \"{endpoints}\"]\n")
	s, err = LoadSystems(p, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get("c")
	if err == nil || !strings.Contains(err.Error(), `cmpbench.yaml:2: system "c": provision.command my-server is not on PATH`) || !strings.Contains(err.Error(), "provision.setup my-cli is not on PATH") {
		t.Fatalf("a user's system without its binaries: %v", err)
	}
	for _, b := range []string{"asd", "my-server", "my-cli"} {
		if err := os.WriteFile(filepath.Join(empty, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"aerospike", "c"} {
		if _, err := s.Get(n); err != nil {
			t.Errorf("%s with its binaries on PATH: %v", n, err)
		}
	}
}

func TestFileOverridesAndAddsSystems(t *testing.T) {
	t.Setenv("CMPBENCH_TEST_PW", "s3cret-value")
	p := writeFile(t, `systems:
  redis:
    adapter: resp
    endpoint: 127.0.0.1:6379
  flex:
    adapter: resp
    endpoint: redis-1.example.com:12000
    auth: {username: default, password: "${CMPBENCH_TEST_PW}"}
    cost: {usd_per_month: 14337}
    timeout: 2s
`)
	s, err := LoadSystems(p, true)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := s.Get("redis")
	if r.Provisioned() || r.Endpoint != "127.0.0.1:6379" {
		t.Errorf("file did not replace the built-in redis: %+v", r)
	}
	f, _ := s.Get("flex")
	if f.Auth.Password != "s3cret-value" {
		t.Errorf("password not expanded")
	}
	if got := f.Raw["auth"].(map[string]any)["password"]; got != "${CMPBENCH_TEST_PW}" {
		t.Errorf("raw definition holds %v, want the unexpanded reference", got)
	}
	if len(s.Secrets) != 1 || s.Secrets[0] != "s3cret-value" {
		t.Errorf("secrets %v", s.Secrets)
	}
	if f.Source != p+":5" {
		t.Errorf("source %q", f.Source)
	}
	if _, err := s.Get("nope"); err == nil || !strings.Contains(err.Error(), "flex") {
		t.Errorf("unknown system error %v should list the defined ones", err)
	}
}

func TestSystemErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"every problem at once, with lines", `systems:
  a:
    adapter: optioned
    endpoint: 127.0.0.1:1
    colour: red
    timeout: soon
  b:
    endpoint: nowhere
`, []string{
			`cmpbench.yaml:5: system "a": unknown key "colour" (known: adapter, auth,`,
			`cmpbench.yaml:6: "soon" is not a duration`,
			`cmpbench.yaml:7: system "b": adapter is required`,
			`cmpbench.yaml:8: system "b": endpoint "nowhere" is not host:port`,
		}},
		{"literal password", `systems:
  a:
    adapter: resp
    endpoint: 127.0.0.1:1
    auth: {password: hunter22}
`, []string{`cmpbench.yaml:5: system "a": auth.password must be a ${ENV_VAR} reference`}},

		{"endpoint and provision", `systems:
  a:
    adapter: resp
    endpoint: 127.0.0.1:1
    provision: {command: [redis-server, --port, "{port}"]}
`, []string{`has both endpoint and provision`}},
		{"provision dirs and logs outside the server's directory", `systems:
  a:
    adapter: resp
    provision:
      command: [redis-server, --port, "{port}", --dir, "{dir}/{data_gib}"]
      dirs: [work/smd, ../up, /abs]
      logs: [log/x.log, server.log]
`, []string{
			`cmpbench.yaml:6: system "a": provision.dirs: "../up" must be a relative path inside the server's directory`,
			`cmpbench.yaml:6: system "a": provision.dirs: "/abs" must be a relative path`,
			`cmpbench.yaml:7: system "a": provision.logs: "server.log" must be a relative path`,
		}},
		{"a server that daemonizes", `systems:
  a:
    adapter: resp
    provision:
      command: [redis-server, --port, "{port}", --daemonize, "yes"]
  b:
    adapter: resp
    provision:
      command: [kvrocks, -c, "{dir}/kvrocks.conf"]
      files:
        kvrocks.conf: |
          port {port}
          daemonize yes
`, []string{
			`cmpbench.yaml:5: system "a": provision.command has --daemonize yes: a server cmpbench starts must stay in the foreground`,
			`cmpbench.yaml:11: system "b": provision.files.kvrocks.conf says "daemonize yes" at its line 2: a server cmpbench starts must stay in the foreground`,
		}},
		// Tendis says "daemon on" in its stock file, and forks when the file
		// says nothing; a file its command does not name is not its own.
		{"a Tendis that daemonizes", `systems:
  a:
    adapter: resp
    provision:
      command: [tendisplus, "{dir}/tendisplus.conf"]
      files:
        tendisplus.conf: |
          port {port}
          daemon on
  b:
    adapter: resp
    provision:
      command: [tendisplus, "{dir}/tendisplus.conf"]
      files:
        tendisplus.conf: |
          port {port}
        notes.txt: |
          port {port}
`, []string{
			`cmpbench.yaml:7: system "a": provision.files.tendisplus.conf says "daemon on" at its line 2: a server cmpbench starts must stay in the foreground: one that daemonizes detaches from the process cmpbench started, which can then neither watch it nor stop it (it would outlive the run); say daemon no`,
			`cmpbench.yaml:15: system "b": provision.files.tendisplus.conf does not say daemon no, and tendisplus forks into the background unless its configuration file does`,
		}},
		{"neither endpoint nor provision", `systems:
  a: {adapter: resp}
`, []string{`needs either endpoint`}},
		{"provision without port, bad placeholder and cpus", `systems:
  a:
    adapter: resp
    provision: {command: [srv, "{data}"], cpus: "zero"}
`, []string{`must contain {port}`, `unknown placeholder {data}`, `provision.cpus "zero"`}},
		{"tls settings without enabled", `systems:
  a:
    adapter: resp
    endpoint: 127.0.0.1:1
    tls: {server_name: x}
`, []string{`tls.enabled is not true`}},
		{"access key with a password, bad TLS version, resp 4", `systems:
  a:
    adapter: resp
    endpoint: 127.0.0.1:1
    tls: {enabled: true, min_version: "1.1"}
    auth: {access_key: "${HOME}", password: "${HOME}"}
`, []string{`auth.access_key is used alone`, `tls.min_version "1.1"`}},
		{"options against the adapter's declared ones", `systems:
  a:
    adapter: optioned
    endpoint: 127.0.0.1:1
    cluster: true
    options:
      depth: deep
      colour: red
  b:
    adapter: optioned
    endpoint: 127.0.0.1:1
    resp: 2
    options: {mode: fast}
`, []string{`cmpbench.yaml:7: system "a": depth "deep" is not an integer`,
			`cmpbench.yaml:8: system "a": colour is not an option of adapter optioned (its options: cluster, depth, mode, resp)`,
			`cmpbench.yaml:2: system "a": option mode is required by adapter optioned`,
			`cmpbench.yaml:5: system "a": cluster is an option of adapter optioned: write it under options: {cluster: ...}`,
			`cmpbench.yaml:12: system "b": resp "2" is not one of 3`}},
		{"bad type", `systems:
  a:
    adapter: [resp]
    endpoint: 127.0.0.1:1
`, []string{`cmpbench.yaml:3: cannot unmarshal`}},
		{"syntax error", "systems:\n  a: [\n", []string{"cmpbench.yaml"}},
		{"ports out of range or not numbers", `systems:
  a: {adapter: resp, endpoint: "127.0.0.1:0"}
  b: {adapter: resp, endpoint: "127.0.0.1:99999"}
  c: {adapter: resp, endpoint: "127.0.0.1:abc"}
  d: {adapter: resp, endpoint: ":6379"}
`, []string{`cmpbench.yaml:2: system "a": endpoint "127.0.0.1:0" has port "0": a port is a number from 1 to 65535`,
			`cmpbench.yaml:3: system "b": endpoint "127.0.0.1:99999" has port "99999"`,
			`cmpbench.yaml:4: system "c": endpoint "127.0.0.1:abc" has port "abc"`,
			`cmpbench.yaml:5: system "d": endpoint ":6379" has no host`}},
		{"unknown profile and profile key", `systems:
  a:
    adapter: schematic
    endpoint: 127.0.0.1:1
    profile: nosuch
  b:
    adapter: schematic
    endpoint: 127.0.0.1:1
    profile: mine
profiles:
  mine:
    commands: {read: GET}
    colour: red
`, []string{`cmpbench.yaml:5: system "a": profile "nosuch" is neither built in (stock) nor defined under the profiles: section`,
			`cmpbench.yaml:13: unknown key "colour"`}},
		{"provision files", `systems:
  a:
    adapter: resp
    provision:
      command: [asd, --foreground, --config-file, "{dir}/aerospike.conf"]
      files:
        aerospike.conf: "port {port}\\nfabric {port:fabric}\\nheartbeat {portx}"
        ../escape.conf: "x"
  b:
    adapter: resp
    provision:
      command: [asd, --config-file, "{dir}/a.conf"]
      files: {a.conf: "no port here"}
`, []string{`cmpbench.yaml:7: system "a": provision.files.aerospike.conf has unknown placeholder {portx}`,
			`cmpbench.yaml:6: system "a": provision.files: "../escape.conf" must be a plain file name`,
			`cmpbench.yaml:12: system "b": provision.command (or one of provision.files) must contain {port}`}},
		{"a profile value its adapter refuses", `systems:
  b:
    adapter: schematic
    endpoint: 127.0.0.1:1
    profile: mine
profiles:
  mine:
    commands: {read: GET}
`, []string{`cmpbench.yaml:8: profile "mine": read must be HGETALL`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, tc.yaml)
			_, err := LoadSystems(p, true)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := strings.ReplaceAll(err.Error(), p, "cmpbench.yaml")
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

func TestEnvironmentProblemsBelongToTheirSystem(t *testing.T) {
	p := writeFile(t, `systems:
  here:
    adapter: resp
    endpoint: 127.0.0.1:1
  elsewhere:
    adapter: resp
    endpoint: 127.0.0.1:2
    tls: {enabled: true, ca_file: /nonexistent/ca.pem}
    auth:
      password: ${CMPBENCH_SURELY_UNSET_VAR}
  managed:
    adapter: resp
    endpoint: ${CMPBENCH_SURELY_UNSET_ENDPOINT}
  badenv:
    adapter: resp
    endpoint: ${CMPBENCH_TEST_ENDPOINT}
`)
	t.Setenv("CMPBENCH_TEST_ENDPOINT", "no-port-here")
	s, err := LoadSystems(p, true)
	if err != nil {
		t.Fatalf("a system this machine cannot use must not stop the others: %v", err)
	}
	if _, err := s.Get("here"); err != nil {
		t.Fatal(err)
	}
	for name, wants := range map[string][]string{
		"elsewhere": {
			"cmpbench.yaml:10: environment variable CMPBENCH_SURELY_UNSET_VAR is not set (referenced by systems.elsewhere.auth.password)",
			"tls.ca_file: open /nonexistent/ca.pem",
		},
		"managed": {"cmpbench.yaml:13: environment variable CMPBENCH_SURELY_UNSET_ENDPOINT is not set (referenced by systems.managed.endpoint)"},
		"badenv":  {`cmpbench.yaml:16: system "badenv": endpoint "no-port-here" is not host:port`},
	} {
		_, err = s.Get(name)
		msg := strings.ReplaceAll(fmt.Sprint(err), p, "cmpbench.yaml")
		for _, want := range wants {
			if !strings.Contains(msg, want) {
				t.Errorf("Get(%s) error lacks %q:\n%s", name, want, msg)
			}
		}
		if name == "managed" && strings.Contains(msg, "host:port") {
			t.Errorf("an unset endpoint variable is one problem, not two:\n%s", msg)
		}
	}
}

func TestMissingFile(t *testing.T) {
	if _, err := LoadSystems("/nonexistent/cmpbench.yaml", false); err != nil {
		t.Errorf("optional default file: %v", err)
	}
	if _, err := LoadSystems("/nonexistent/cmpbench.yaml", true); err == nil {
		t.Error("a file named with --config must exist")
	}
}

func TestSecretInProvisionCommand(t *testing.T) {
	t.Setenv("REDIS_PASSWORD", "provision-secret")
	p := writeFile(t, `systems:
  a:
    adapter: resp
    provision: {command: [redis-server, --port, "{port}", --requirepass, "${REDIS_PASSWORD}"]}
    auth: {password: "${REDIS_PASSWORD}"}
`)
	s, err := LoadSystems(p, true)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Get("a")
	if a.Provision.Command[4] != "provision-secret" {
		t.Fatalf("command %v", a.Provision.Command)
	}
	if len(s.Secrets) == 0 || s.Secrets[0] != "provision-secret" {
		t.Fatalf("secrets %v", s.Secrets)
	}
}

// schematic is an adapter's profile schema, registered as built-in adapters do.
type schematic struct {
	Commands struct {
		Read string `yaml:"read"`
	} `yaml:"commands"`
}

func init() {
	core.RegisterProfileSchema("schematic", core.ProfileSchema{
		New: func() any { return &schematic{} },
		Check: func(name string, v any) error {
			if v.(*schematic).Commands.Read != "HGETALL" {
				return fmt.Errorf("profile %q: read must be HGETALL", name)
			}
			return nil
		},
		Builtin: func() []string { return []string{"stock"} },
	})
}

func TestSecretsThatCannotBeKeptOut(t *testing.T) {
	p := writeFile(t, `systems:
  a:
    adapter: resp
    endpoint: 127.0.0.1:1
    auth: {password: "${CMPBENCH_TEST_WEAK_PW}"}
  b:
    adapter: resp
    endpoint: 127.0.0.1:1
    options: {driver: "${CMPBENCH_TEST_DRIVER_KEY}"}
`)
	t.Setenv("CMPBENCH_TEST_DRIVER_KEY", "rueidis-raw-driver")
	for _, tc := range []struct{ value, want string }{
		{"password", `cmpbench.yaml:5: system "a": auth.password is a common word ("password")`},
		{"Passw0rd", `auth.password is a common word ("passw0rd")`},
		{"redis", `cmpbench.yaml:5: ${CMPBENCH_TEST_WEAK_PW} is a secret (password), but its value is shorter than 8 characters`},
		// Issue 25, bug 4: a numeric password used to be redacted out of every
		// number in the archive (progress "[redacted] ops ok", validation.json
		// "expected": [redacted]).
		{"2000", `${CMPBENCH_TEST_WEAK_PW} is a secret (password), but its value is shorter than 8 characters`},
		{"20001234", `${CMPBENCH_TEST_WEAK_PW} is a secret (password), but its value is a number, so it cannot be kept out of the archive without corrupting it`},
		{"Bench-ACL-pw-8c41d2e7", ""},
	} {
		t.Setenv("CMPBENCH_TEST_WEAK_PW", tc.value)
		s, err := LoadSystems(p, true)
		if err == nil {
			_, err = s.Get("a")
		}
		msg := strings.ReplaceAll(fmt.Sprint(err), p, "cmpbench.yaml")
		if (tc.want == "") != (err == nil) || !strings.Contains(msg, tc.want) {
			t.Errorf("password %q: %v, want %q", tc.value, msg, tc.want)
		}
	}
	// A variable named like a secret is one, wherever it is used; a value that
	// is one by accident (a prefix in a variable named *KEY*) would be redacted
	// out of every key name: refused, saying how to name it instead.
	t.Setenv("CMPBENCH_TEST_DRIVER_KEY", "raw")
	s, err := LoadSystems(p, true)
	if err == nil {
		_, err = s.Get("b")
	}
	if msg := fmt.Sprint(err); !strings.Contains(msg, `cmpbench.yaml:9: ${CMPBENCH_TEST_DRIVER_KEY} is a secret (by its name), but its value is shorter than 8 characters`) ||
		!strings.Contains(msg, "a variable whose name does not say PASS, SECRET, TOKEN, KEY or CRED") {
		t.Errorf("a short value of a variable named *KEY*: %v", msg)
	}
}

func TestTLSFilesMustHoldPEM(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	os.WriteFile(notPEM, []byte("this is not a certificate\n"), 0o644)
	p := writeFile(t, fmt.Sprintf(`systems:
  a:
    adapter: resp
    endpoint: 127.0.0.1:1
    tls: {enabled: true, ca_file: %s}
`, notPEM))
	s, err := LoadSystems(p, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get("a")
	msg := strings.ReplaceAll(fmt.Sprint(err), p, "cmpbench.yaml")
	if want := `cmpbench.yaml:5: system "a": tls.ca_file: ` + notPEM + ` holds no PEM certificate`; !strings.Contains(msg, want) {
		t.Fatalf("Get: %s\nwant %s", msg, want)
	}
}

func TestClusterPlaceholders(t *testing.T) {
	ok := "systems:\n  e:\n    adapter: resp\n    provision:\n      nodes: 3\n      command: [etcd, --name, \"n{node}\", --listen-client-urls, \"http://127.0.0.1:{port}\", --initial-cluster, \"{each:n{node}=http://127.0.0.1:{port:peer}}\"]\n"
	if _, err := LoadSystems(writeFile(t, ok), true); err != nil {
		t.Fatalf("{node} and {each:...} refused: %v", err)
	}
	bad := strings.Replace(ok, "{port:peer}}", "{port:peer}", 1)
	_, err := LoadSystems(writeFile(t, bad), true)
	if err == nil || !strings.Contains(err.Error(), "unbalanced braces") || !strings.Contains(err.Error(), "cmpbench.yaml:6") {
		t.Fatalf("an {each: without its closing brace: %v", err)
	}
}

// A definition becomes a provision.Spec in one place: every provision field
// reaches it.
func TestProvisionSpec(t *testing.T) {
	s, err := LoadSystems("", false)
	if err != nil {
		t.Fatal(err)
	}
	pika, _ := s.Lookup("pika")
	spec := pika.ProvisionSpec(time.Minute, 2*time.Minute, 7)
	if spec.Name != "pika" || spec.Command[0] != "pika" || spec.Files["pika.conf"] == "" || len(spec.Logs) != 1 ||
		fmt.Sprint(spec.PortOffsets) != "[2000 10001]" || spec.Vars[DataGiBPlaceholder] != "7" || spec.ReadyTimeout != time.Minute || spec.StopTimeout != 2*time.Minute {
		t.Errorf("pika: %+v", spec)
	}
	as, _ := s.Lookup("aerospike-cluster")
	if spec := as.ProvisionSpec(time.Minute, time.Minute, 1); spec.Nodes != 3 || len(spec.Dirs) != 2 {
		t.Errorf("aerospike-cluster: %+v", spec)
	}
}

// A system's nodes reach its adapter in order, the first as its endpoint: the
// systems file's endpoint for a system cmpbench does not start, the servers it
// started for one it does (none before they run).
func TestSystemConfigNodes(t *testing.T) {
	s, err := LoadSystemsData("cmpbench.yaml", []byte(`systems:
  remote: {adapter: resp, endpoint: "10.0.0.1:6379"}
  local:
    adapter: resp
    provision: {nodes: 3, command: [redis-server, --port, "{port}"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	remote, _ := s.Lookup("remote")
	local, _ := s.Lookup("local")
	three := []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}
	for _, tc := range []struct {
		name     string
		got      core.SystemConfig
		endpoint string
		nodes    []string
	}{
		{"endpoint", remote.SystemConfig(remote.Endpoints()...), "10.0.0.1:6379", []string{"10.0.0.1:6379"}},
		{"provisioned, before it runs", local.SystemConfig(local.Endpoints()...), "", nil},
		{"provisioned cluster", local.SystemConfig(three...), three[0], three},
	} {
		if tc.got.Endpoint != tc.endpoint || !slices.Equal(tc.got.Nodes, tc.nodes) {
			t.Errorf("%s: endpoint %q nodes %q, want %q %q", tc.name, tc.got.Endpoint, tc.got.Nodes, tc.endpoint, tc.nodes)
		}
	}
}

// A key of a system that is not cmpbench's is an option written at the top
// level: the adapter's declaration decides. A plugin's is only known when it
// is found, so the file is read and CheckOptions says, at the key's line.
func TestTopLevelOptionsOfAPlugin(t *testing.T) {
	p := writeFile(t, `systems:
  a:
    adapter: someplugin
    endpoint: 127.0.0.1:1
    shards: 4
    colour: red
`)
	s, err := LoadSystems(p, true)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := s.Get("a")
	if err != nil {
		t.Fatal(err)
	}
	if got := sys.SystemConfig().Options; got["shards"] != "4" || got["colour"] != "red" {
		t.Errorf("options %v, want shards 4 and colour red", got)
	}
	declared := []core.Option{{Name: "shards", Type: core.OptionInt, TopLevel: true}, {Name: "colour", Type: core.OptionString}}
	var got []string
	for _, e := range sys.CheckOptions(declared) {
		got = append(got, strings.ReplaceAll(e.Error(), p, "cmpbench.yaml"))
	}
	want := []string{`cmpbench.yaml:6: system "a": colour is an option of adapter someplugin: write it under options: {colour: ...}`}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if errs := sys.CheckOptions(declared[:1]); len(errs) != 1 || !strings.Contains(errs[0].Error(), `system "a": unknown key "colour" (known: adapter, auth, cost, description, disposable, endpoint, options, profile, provision, restart_wait, shards, timeout, tls)`) {
		t.Errorf("an undeclared key: %v", errs)
	}
}

// An adapter's own check is placed a problem a line: at the option it names, or
// at the system; a problem with an option the declared-type check reports is left
// out, so that each is said once.
func TestAdapterProblems(t *testing.T) {
	p := writeFile(t, `systems:
  a:
    adapter: optioned
    endpoint: 127.0.0.1:1
    options:
      mode: fast
      depth: 5
`)
	s, err := LoadSystems(p, true)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := s.Get("a")
	if err != nil {
		t.Fatal(err)
	}
	// Declared so that depth 5 is the host's problem (not a bool).
	declared := []core.Option{{Name: "mode", Type: core.OptionString}, {Name: "depth", Type: core.OptionBool}}
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"none", nil, nil},
		{"one a line, at its option or the system", errors.Join(
			errors.New(`option mode: "fast" is not a mode`),
			errors.New("this adapter does not speak TLS"),
			errors.New(`unknown option "colour" (it has mode and depth)`),
		), []string{
			`cmpbench.yaml:6: system "a": option mode: "fast" is not a mode`,
			`cmpbench.yaml:2: system "a": this adapter does not speak TLS`,
			`cmpbench.yaml:2: system "a": unknown option "colour" (it has mode and depth)`,
		}},
		{"what the host reported is left out", errors.Join(
			errors.New(`option depth: 5 is too deep`),
			errors.New(`option mode: "fast" is not a mode`),
		), []string{`cmpbench.yaml:6: system "a": option mode: "fast" is not a mode`}},
		{"joined errors as text, across the plugin boundary", errors.New("option mode: no\n\nno TLS\n"), []string{
			`cmpbench.yaml:6: system "a": option mode: no`,
			`cmpbench.yaml:2: system "a": no TLS`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range sys.AdapterProblems(tc.err, declared) {
				got = append(got, strings.ReplaceAll(e.Error(), p, "cmpbench.yaml"))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// What makes a server daemonize on its command line, however written; what
// keeps it in the foreground is no problem.
func TestDaemonizes(t *testing.T) {
	for _, tc := range []struct {
		command []string
		want    string
	}{
		{[]string{"redis-server", "--port", "{port}", "--daemonize", "yes"}, "--daemonize yes"},
		{[]string{"redis-server", "--daemonize", "YES", "--port", "{port}"}, "--daemonize YES"},
		{[]string{"redis-server", "--daemonize", "no", "--port", "{port}"}, ""},
		{[]string{"dragonfly", "--daemonize", "--port", "{port}"}, "--daemonize"},
		{[]string{"dragonfly", "--port", "{port}", "--daemonize"}, "--daemonize"},
		{[]string{"dragonfly", "--daemonize=true", "--port", "{port}"}, "--daemonize=true"},
		{[]string{"dragonfly", "--daemonize=false", "--port", "{port}"}, ""},
		{[]string{"sh", "-c", "exec redis-server --port $0 --daemonize yes", "{port}"}, "--daemonize yes"},
		{[]string{"sh", "-c", "exec redis-server --port $0 --daemonize no", "{port}"}, ""},
		{[]string{"redis-server", "--port", "{port}", "--dir", "/tmp/daemonize"}, ""},
		{[]string{"asd", "--foreground", "--config-file", "{dir}/aerospike.conf"}, ""},
	} {
		if got := daemonizes(tc.command); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.command, got, tc.want)
		}
	}
	for _, tc := range []struct {
		file string
		on   bool
	}{
		{"port 1\ndaemonize yes\n", true},
		{"daemonize : yes\n", true},
		{"  daemonize\tyes  \n", true},
		{"daemonize no\n", false},
		{"daemonize : no\n", false},
		{"# daemonize yes\n", false},
		{"daemon on\n", true}, // Tendis' stock tendisplus.conf
		{"daemon yes\n", true},
		{"daemon no\n", false},
		{"daemons yes\n", false},
	} {
		if on := daemonizeLine.MatchString(tc.file); on != tc.on {
			t.Errorf("%q: daemonizes %v, want %v", tc.file, on, tc.on)
		}
	}
	// The file a command names is the server's configuration file.
	for _, tc := range []struct {
		args []string
		name string
		want bool
	}{
		{[]string{"{dir}/tendisplus.conf"}, "tendisplus.conf", true},
		{[]string{"tendisplus.conf"}, "tendisplus.conf", true},
		{[]string{"{dir}/tendisplus.conf"}, "notes.txt", false},
		{[]string{"{dir}/my-tendisplus.conf"}, "tendisplus.conf", false},
	} {
		if got := namesFile(tc.args, tc.name); got != tc.want {
			t.Errorf("namesFile(%q, %q) = %v, want %v", tc.args, tc.name, got, tc.want)
		}
	}
}
