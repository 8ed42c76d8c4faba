// Package provisiontest starts real servers for tests: a redis-server or memcached on
// a free loopback port, stopped when the test ends.
package provisiontest

import (
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core/provision"
)

// Need skips the test when binary is not on PATH, saying how to get it. CI
// installs or provides every binary the tests need (.ci/run sets CI), so there a
// missing binary fails the test: a skip would pass a test that never ran.
func Need(t testing.TB, binary string) {
	t.Helper()
	if _, err := exec.LookPath(binary); err != nil {
		msg := binary + " is not on PATH: " + HowToGet(binary)
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (CI is set, so this test must run: .ci/run provides it)", msg)
		}
		t.Skip(msg)
	}
}

// HowToGet says how a developer gets a server binary the tests use.
func HowToGet(binary string) string {
	switch binary {
	case "redis-server", "redis-cli":
		return "apt-get install -y redis-server redis-tools (make deps does)"
	case "etcd":
		return "apt-get install -y etcd-server (make deps does)"
	case "prometheus":
		return "apt-get install -y prometheus (make test-deps does; stop the service it starts: the tests run their own)"
	case "memcached", "openssl", "taskset":
		return "apt-get install -y " + map[string]string{"memcached": "memcached", "openssl": "openssl", "taskset": "util-linux"}[binary]
	case "asd":
		return "install Aerospike Server Community Edition (https://aerospike.com/download/server/, or build aerospike/aerospike-server), or point SERVERS at a folder of server builds (make test)"
	case "valkey-server", "valkey-cli":
		return "install Valkey (https://valkey.io/download/, or a source build with BUILD_TLS=yes), or point SERVERS at a folder of server builds (make test)"
	case "keydb-server", "keydb-flash-server", "keydb-cli":
		return "build KeyDB (https://github.com/Snapchat/KeyDB; ENABLE_FLASH=yes for keydb-flash-server), or point SERVERS at a folder of server builds (make test)"
	case "kvrocks":
		return "build Apache Kvrocks (https://kvrocks.apache.org/download/), or point SERVERS at a folder of server builds (make test)"
	case "dragonfly":
		return "install Dragonfly (https://www.dragonflydb.io/docs/getting-started/binary), or point SERVERS at a folder of server builds (make test)"
	case "pika":
		return "build Pika (https://github.com/OpenAtomFoundation/pika), or point SERVERS at a folder of server builds (make test)"
	case "tendisplus":
		return "build Tendis (https://github.com/Tencent/Tendis, tag 2.7.0-rocksdb-v8.5.3), or point SERVERS at a folder of server builds (make test)"
	}
	return "install it"
}

// Redis starts a redis-server without persistence plus extra arguments and waits
// until it accepts connections.
func Redis(t testing.TB, extra ...string) *provision.Server {
	t.Helper()
	Need(t, "redis-server")
	cmd := append([]string{"redis-server", "--port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}", "--save", "", "--appendonly", "no"}, extra...)
	return Start(t, "redis", cmd)
}

// Start starts a server command (with {port} and {dir}) and waits for its port.
func Start(t testing.TB, name string, cmd []string) *provision.Server {
	t.Helper()
	s, err := provision.Start(provision.Spec{Name: name, Command: cmd, StopTimeout: 10 * time.Second}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", s.Endpoint())
		if err == nil {
			c.Close()
			return s
		}
		if exited, werr := s.Exited(); exited {
			t.Fatalf("%s exited at start (%v): %s", name, werr, s.LogTail(1000))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen within 10 s: %s", name, s.LogTail(1000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startCluster(t testing.TB, nodes int) (*provision.Server, error) {
	s, err := provision.Start(provision.Spec{
		Name: "cluster", Nodes: nodes, StopTimeout: 10 * time.Second, ReadyTimeout: 10 * time.Second,
		Command: []string{"redis-server", "--port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}", "--save", "",
			"--appendonly", "no", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"},
		Setup: []string{"redis-cli", "--cluster", "create", "{endpoints}", "--cluster-replicas", "0", "--cluster-yes"},
	}, t.TempDir())
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s, nil
}
