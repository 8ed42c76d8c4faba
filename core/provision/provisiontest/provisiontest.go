// Package provisiontest starts real servers for tests: a redis-server or memcached on
// a free loopback port, stopped when the test ends.
package provisiontest

import (
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core/provision"
)

// Need skips the test when binary is not installed. CI installs every binary the
// tests need (.ci/run), so there a skip is a CI defect, not a pass.
func Need(t testing.TB, binary string) {
	t.Helper()
	if _, err := exec.LookPath(binary); err != nil {
		t.Skipf("%s is not installed (.ci/run installs it; on Debian: apt-get install -y %s)", binary, pkg(binary))
	}
}

func pkg(binary string) string {
	switch binary {
	case "redis-server", "redis-cli":
		return "redis-server"
	case "etcd":
		return "etcd-server"
	}
	return binary
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
