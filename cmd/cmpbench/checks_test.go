package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input is found before anything starts: at --dry-run, exit 2, with the file and
// line, and nothing written.
func TestBadInputFailsAtDryRun(t *testing.T) {
	const suiteOK = "name: s\nphases:\n  - {name: a, duration: 1s, memtier: {key_max: 5}}\n"
	for _, tc := range []struct {
		name    string
		systems string // the system under test is "x"
		suite   string
		env     []string
		args    []string
		want    string
	}{
		{name: "port 0", systems: "systems:\n  x: {adapter: resp, endpoint: \"127.0.0.1:0\"}\n",
			want: `cmpbench.yaml:2: system "x": endpoint "127.0.0.1:0" has port "0": a port is a number from 1 to 65535`},
		{name: "port 99999", systems: "systems:\n  x: {adapter: resp, endpoint: \"127.0.0.1:99999\"}\n", want: `has port "99999"`},
		{name: "port abc", systems: "systems:\n  x: {adapter: resp, endpoint: \"127.0.0.1:abc\"}\n", want: `has port "abc"`},
		{name: "rate 0", suite: "name: s\nphases:\n  - {name: a, duration: 1s, rate: 0, memtier: {key_max: 5}}\n",
			want: `s.yaml:3: phase "a": rate must be a positive number of requests/s, got 0 (leave rate out for a closed loop)`},
		{name: "connections 0", suite: "name: s\nphases:\n  - {name: a, duration: 1s, connections: 0, memtier: {key_max: 5}}\n",
			want: `s.yaml:3: phase "a": connections must be between 1 and 1000000, got 0`},
		{name: "pub/sub on an adapter that cannot subscribe", systems: "systems:\n  x: {adapter: aerospike, endpoint: \"127.0.0.1:3000\", namespace: test}\n",
			suite: "name: s\nphases:\n  - {name: p, duration: 1s, rate: 100, pubsub: {subscribers: 2}}\n",
			want:  `system x, phase p: adapter aerospike does not support PUBLISH`},
		{name: "pub/sub without a rate", suite: "name: s\nphases:\n  - {name: p, duration: 1s, pubsub: {subscribers: 2}}\n",
			want: `s.yaml:3: phase "p": a pub/sub phase needs a rate`},
		{name: "pub/sub with a probe", suite: "name: s\nphases:\n  - {name: p, duration: 1s, rate: 100, probe: {rate: 10}, pubsub: {subscribers: 2}}\n",
			want: `s.yaml:3: phase "p": the pubsub workload has no side probe`},
		{name: "pub/sub uneven channels", suite: "name: s\nphases:\n  - {name: p, duration: 1s, rate: 100, pubsub: {subscribers: 3, channels: 2}}\n",
			want: `s.yaml:3: phase "p": pubsub: 3 subscribers do not divide evenly over 2 channels`},
		// Issue 25, bug 10: a CPU that does not exist used to pass --dry-run and
		// fail only once a server had started.
		{name: "client CPU that does not exist", args: []string{"--client-cpus", "99"},
			want: "--client-cpus 99: CPU 99 is not one cmpbench may run on here (allowed: 0-"},
		// Issue 25, bug 7: the suite's name names the run's directory.
		{name: "suite name that is a path", suite: "name: ../../../x\nphases:\n  - {name: a, duration: 1s, memtier: {key_max: 5}}\n",
			want: `s.yaml:1: suite name "../../../x" must be letters, digits`},
		{name: "stats interval 0", args: []string{"--stats-interval", "0s"}, want: "--stats-interval must be positive, got 0s"},
		{name: "stats interval negative", args: []string{"--stats-interval", "-1s"}, want: "--stats-interval must be positive, got -1s"},
		{name: "scale that overflows", args: []string{"--scale", "2e9"}, suite: "name: s\nphases:\n  - {name: a, duration: 300s, memtier: {key_max: 5}}\n",
			want: `phase "a": --scale 2e+09 is too large`},
		{name: "unknown profile", systems: "systems:\n  x:\n    adapter: resp\n    endpoint: 127.0.0.1:1\n    profile: nosuch\n",
			want: `cmpbench.yaml:5: system "x": profile "nosuch" is neither built in (azure-managed-redis,`},
		{name: "unknown profile key", systems: "systems:\n  x:\n    adapter: resp\n    endpoint: 127.0.0.1:1\n    profile: mine\nprofiles:\n  mine:\n    commands: {update: [HSET]}\n    colour: red\n",
			want: `cmpbench.yaml:9: unknown key "colour"`},
		{name: "ca_file that is not PEM", systems: "systems:\n  x:\n    adapter: resp\n    endpoint: 127.0.0.1:1\n    tls: {enabled: true, ca_file: cmpbench.yaml}\n",
			want: `cmpbench.yaml:5: system "x": tls.ca_file: cmpbench.yaml holds no PEM certificate`},
		{name: "a secret that is a common word", systems: "systems:\n  x:\n    adapter: resp\n    endpoint: 127.0.0.1:1\n    auth: {password: \"${CMPBENCH_T_PW}\"}\n",
			env: []string{"CMPBENCH_T_PW=Password"}, want: `cmpbench.yaml:5: system "x": auth.password is a common word ("password")`},
		// Issue 25, bug 4: a numeric secret used to be redacted out of every number
		// cmpbench wrote, and the run ended "report: validation.json: invalid character 'r'".
		{name: "a secret that is a number", systems: "systems:\n  x:\n    adapter: resp\n    endpoint: 127.0.0.1:1\n    auth: {password: \"${NUM_PASS}\"}\n",
			env: []string{"NUM_PASS=2000"}, want: `cmpbench.yaml:5: ${NUM_PASS} is a secret (password), but its value is shorter than 8 characters`},
		{name: "a long secret that is a number", systems: "systems:\n  x:\n    adapter: resp\n    endpoint: 127.0.0.1:1\n    auth: {password: \"${NUM_PASS}\"}\n",
			env: []string{"NUM_PASS=2000200020"}, want: `${NUM_PASS} is a secret (password), but its value is a number`},
		// Options are checked against what the adapter declares: built-in ones
		// when the file is read, a plugin's when it is found.
		{name: "resp option value", systems: "systems:\n  x:\n    adapter: resp\n    endpoint: 127.0.0.1:1\n    options: {driver: fast}\n",
			want: `cmpbench.yaml:5: system "x": driver "fast" is not one of raw, rueidis`},
		{name: "resp top-level option", systems: "systems:\n  x:\n    adapter: resp\n    endpoint: 127.0.0.1:1\n    resp: 4\n",
			want: `cmpbench.yaml:5: system "x": resp "4" is not one of 2, 3`},
		{name: "resp has no namespace", systems: "systems:\n  x:\n    adapter: resp\n    endpoint: 127.0.0.1:1\n    namespace: ycsb\n",
			want: `cmpbench.yaml:5: system "x": unknown key "namespace" (known: adapter, auth, cluster, cost, description, disposable, endpoint, options, profile, provision, resp, restart_wait, timeout, tls)`},
		{name: "aerospike option mistyped", systems: "systems:\n  x:\n    adapter: aerospike\n    endpoint: 127.0.0.1:3000\n    namespace: test\n    options: {connection_queue_sise: 8}\n",
			want: `cmpbench.yaml:6: system "x": connection_queue_sise is not an option of adapter aerospike (its options: cluster_size, connection_queue_size, driver, namespace, set)`},
		{name: "aerospike option of the wrong type", systems: "systems:\n  x:\n    adapter: aerospike\n    endpoint: 127.0.0.1:3000\n    options: {namespace: test, cluster_size: three}\n",
			want: `cmpbench.yaml:5: system "x": cluster_size "three" is not an integer`},
		{name: "aerospike without its namespace", systems: "systems:\n  x:\n    adapter: aerospike\n    endpoint: 127.0.0.1:3000\n",
			want: `cmpbench.yaml:2: system "x": option namespace is required by adapter aerospike`},
		{name: "plugin option unknown", systems: "systems:\n  x:\n    adapter: memcached\n    endpoint: 127.0.0.1:11211\n    options: {no_reply: true}\n",
			args: []string{"--plugin-dir", pluginDir}, want: `cmpbench.yaml:5: system "x": no_reply is not an option of adapter memcached (its options: noreply)`},
		{name: "plugin option of the wrong type", systems: "systems:\n  x:\n    adapter: memcached\n    endpoint: 127.0.0.1:11211\n    options: {noreply: yes}\n",
			args: []string{"--plugin-dir", pluginDir}, want: `cmpbench.yaml:5: system "x": noreply "yes" is not true or false`},
		{name: "a plugin that does not execute the workload", systems: "systems:\n  x:\n    adapter: memcached\n    endpoint: 127.0.0.1:11211\n",
			suite: "name: s\nphases:\n  - {name: y, duration: 1s, ycsb: {workload: a, record_count: 10}}\n",
			args:  []string{"--plugin-dir", pluginDir}, want: `system x, phase y: adapter memcached does not support READ`},
		{name: "plugin's own system check", systems: "systems:\n  x:\n    adapter: memcached\n    endpoint: 127.0.0.1:11211\n    tls: {enabled: true}\n",
			args: []string{"--plugin-dir", pluginDir}, want: `cmpbench.yaml:2: system "x": this example adapter supports neither TLS nor authentication`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.systems == "" {
				tc.systems = "systems:\n  x: {adapter: resp, endpoint: \"127.0.0.1:6379\"}\n"
			}
			if tc.suite == "" {
				tc.suite = suiteOK
			}
			writeFile(t, dir, "cmpbench.yaml", tc.systems)
			writeFile(t, dir, "s.yaml", tc.suite)
			r := cli(t, dir, tc.env, append([]string{"run", "--systems", "x", "--suite", "s.yaml", "--dry-run"}, tc.args...)...)
			msg := strings.ReplaceAll(r.stderr, dir+string(filepath.Separator), "")
			if r.code != 2 || !strings.Contains(msg, tc.want) {
				t.Fatalf("exit %d, want 2 and %q in:\n%s", r.code, tc.want, msg)
			}
			if _, err := os.Stat(filepath.Join(dir, "results")); !os.IsNotExist(err) {
				t.Fatalf("bad input wrote results: %v", err)
			}
		})
	}
}

// Issue 25's weak answers: a command given the wrong arguments, a group of
// commands given none or an unknown one, and an empty system name are one clear
// error each, exit 2 (they used to exit 1, print help with exit 0, or say the same
// thing twice).
func TestWrongArgumentsAreBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "A"}, "cmpbench compare: accepts 2 arg(s), received 1 (usage: cmpbench compare A B [flags])"},
		{[]string{"report"}, "cmpbench report: accepts 1 arg(s), received 0"},
		{[]string{"compare", "--confidence", "95", "A", "B"}, "--confidence 95: need a level between 0 and 1 (0.95 is 95 %)"},
		{[]string{"verify", "a", "b"}, "cmpbench verify: accepts 1 arg(s), received 2"},
		{[]string{"nosuch"}, `cmpbench: unknown command "nosuch" (commands: adapters, audit, compare,`},
		{[]string{"export"}, "cmpbench export needs a command: csv, hlog"},
		{[]string{"import"}, "cmpbench import needs a command: memtier, ycsb"},
		{[]string{"run", "--systems", ",", "--suite", "smoke"}, `--systems "," has an empty name`},
	} {
		r := cli(t, t.TempDir(), nil, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, want 2 and one line with %q:\n%s", tc.args, r.code, tc.want, r.stderr)
		}
	}
	if r := cli(t, t.TempDir(), nil); r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
		t.Errorf("cmpbench alone: exit %d\n%s", r.code, r.stdout)
	}
}
