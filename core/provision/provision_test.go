package provision

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartStopIntegration(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (CI installs it: see .ci/run)")
	}
	s, err := Start(Spec{Name: "r", Command: []string{"redis-server", "--port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}", "--save", ""}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if !strings.Contains(strings.Join(s.Launch, " "), "--dir "+s.Dir) || len(s.BinarySHA256) != 64 {
		t.Fatalf("launch %v sha %q", s.Launch, s.BinarySHA256)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", s.Endpoint())
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server never listened: %s", s.LogTail(500))
		}
		time.Sleep(20 * time.Millisecond)
	}
	pid := s.Pid()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if exited, _ := s.Exited(); !exited {
		t.Fatal("Stop returned with the server running")
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatal("process still exists")
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := Start(Spec{Name: "x", Command: []string{"cmpbench-no-such-server", "{port}"}}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "cmpbench-no-such-server") {
		t.Fatalf("missing binary: %v", err)
	}
}

func TestStopEscalatesToKill(t *testing.T) {
	// A server that ignores SIGTERM is killed after the stop timeout.
	s, err := Start(Spec{Name: "stubborn", Command: []string{"sh", "-c", "trap '' TERM; while :; do sleep 0.05; done", "{port}"}, StopTimeout: 300 * time.Millisecond}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := s.Stop(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Stop: %v", err)
	}
	if exited, _ := s.Exited(); !exited {
		t.Fatal("still running")
	}
}

func TestCPUPinningIntegration(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset (util-linux) is not installed")
	}
	s, err := Start(Spec{Name: "pinned", Command: []string{"sh", "-c", "sleep 30", "{port}"}, CPUs: "0"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if s.Launch[1] != "--cpu-list" || s.Launch[2] != "0" {
		t.Fatalf("launch %v", s.Launch)
	}
	var allowed string
	for range 100 {
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.Pid()))
		for _, l := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
				allowed = strings.TrimSpace(v)
			}
		}
		if allowed == "0" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("server may run on CPUs %q, want 0", allowed)
}

func TestRestartKeepsPortAndDataIntegration(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (CI installs it: see .ci/run)")
	}
	s, err := Start(Spec{Name: "r", Command: []string{"redis-server", "--port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}", "--save", "", "--appendonly", "yes"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	send := func(cmd string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			// A server still loading its data answers -LOADING: it is up, not
			// ready; being ready is the adapter's to wait for, not Start's.
			c, err := net.Dial("tcp", s.Endpoint())
			if err == nil {
				c.Write([]byte(cmd + "\r\n"))
				buf := make([]byte, 64)
				n, _ := c.Read(buf)
				c.Close()
				if r := string(buf[:n]); !strings.HasPrefix(r, "-LOADING") || time.Now().After(deadline) {
					return r
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no server at %s: %s", s.Endpoint(), s.LogTail(300))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if r := send("SET k durable"); !strings.HasPrefix(r, "+OK") {
		t.Fatalf("SET: %q", r)
	}
	pid, port := s.Pid(), s.Port()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.Pid() == pid || s.Port() != port {
		t.Fatalf("restart: pid %d -> %d, port %d -> %d", pid, s.Pid(), port, s.Port())
	}
	if r := send("GET k"); !strings.Contains(r, "durable") {
		t.Fatalf("after restart GET k = %q", r)
	}
}

// A log tail quoted in an error starts at a line, never mid-word.
func TestLastBytesStartsAtALine(t *testing.T) {
	for _, tc := range []struct {
		log  string
		n    int
		want string
	}{
		{"short log", 100, "short log"},
		{"first line\nsecond line\nthird line", 15, "third line"},
		{"first line\nsecond line\nthird line", 22, "second line\nthird line"},
		{"first line\nsecond line\nthird line", 25, "second line\nthird line"},
		{"one long line without a break", 10, "ut a break"},
	} {
		if got := lastBytes([]byte(tc.log), tc.n); got != tc.want {
			t.Errorf("lastBytes(%q, %d) = %q, want %q", tc.log, tc.n, got, tc.want)
		}
	}
}

// A server that reads its port from a configuration file gets one written into its
// directory, placeholders filled in, and keeps it across a restart.
func TestFilesIntegration(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (CI installs it: see .ci/run)")
	}
	conf := "port {port}\nbind 127.0.0.1\ndir {dir}\nsave \"\"\n# another free port, unused: {port:other}\n"
	s, err := Start(Spec{Name: "r", Command: []string{"redis-server", "{dir}/redis.conf"}, Files: map[string]string{"redis.conf": conf}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	b, err := os.ReadFile(filepath.Join(s.Dir, "redis.conf"))
	if err != nil || !strings.Contains(string(b), fmt.Sprintf("port %d\n", s.procs[0].port)) || !strings.Contains(string(b), "dir "+s.Dir+"\n") || strings.Contains(string(b), "{") {
		t.Fatalf("redis.conf %q %v", b, err)
	}
	for range 2 {
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.Dial("tcp", s.Endpoint())
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("server never listened on %s: %s", s.Endpoint(), s.LogTail(500))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
	}
}

// A cluster whose members must name each other when they start: three etcd nodes,
// each told every member's peer URL through {each:...}, with its own {node} name
// and {port:peer}. They form one cluster of three.
func TestClusterMembersNameEachOtherIntegration(t *testing.T) {
	if _, err := exec.LookPath("etcd"); err != nil {
		t.Skip("etcd is not installed (.ci/run installs it; on Debian: apt-get install -y etcd-server)")
	}
	s, err := Start(Spec{Name: "etcd", Nodes: 3, StopTimeout: 10 * time.Second, Command: []string{
		"etcd", "--name", "n{node}", "--data-dir", "{dir}/data",
		"--listen-client-urls", "http://127.0.0.1:{port}", "--advertise-client-urls", "http://127.0.0.1:{port}",
		"--listen-peer-urls", "http://127.0.0.1:{port:peer}", "--initial-advertise-peer-urls", "http://127.0.0.1:{port:peer}",
		"--initial-cluster", "{each:n{node}=http://127.0.0.1:{port:peer}}", "--initial-cluster-state", "new",
	}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if got := strings.Count(strings.Join(s.Launch, " "), "=http://127.0.0.1:"); got != 3 || !slices.Contains(s.Launch, "n0") {
		t.Fatalf("node 0's command line names %d members: %v", got, s.Launch)
	}
	// Each node reports the cluster healthy, and the same three members.
	deadline := time.Now().Add(30 * time.Second)
	for _, ep := range s.Endpoints() {
		for {
			var members struct {
				Members []struct {
					Name string `json:"name"`
				} `json:"members"`
			}
			resp, err := http.Post("http://"+ep+"/v3/cluster/member/list", "application/json", strings.NewReader("{}"))
			if err == nil {
				err = json.NewDecoder(resp.Body).Decode(&members)
				resp.Body.Close()
			}
			health, herr := http.Get("http://" + ep + "/health")
			healthy := false
			if herr == nil {
				b, _ := io.ReadAll(health.Body)
				health.Body.Close()
				healthy = strings.Contains(string(b), `"health":"true"`)
			}
			if err == nil && healthy && len(members.Members) == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: members %+v (%v), healthy %v (%v); log:\n%s", ep, members, err, healthy, herr, s.LogTail(2000))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// A server that also listens at fixed distances from its port (Pika: +2000 and
// +10001) gets a port whose companions are free and are ports at all.
func TestPortOffsets(t *testing.T) {
	for range 20 {
		p, err := freePortWith([]int{2000, 10001}, map[int]bool{})
		if err != nil {
			t.Fatal(err)
		}
		if p+10001 > 65535 || !portFree(p+2000) || !portFree(p+10001) {
			t.Fatalf("port %d: its companions are not free ports", p)
		}
	}
	if _, err := freePortWith([]int{70000}, map[int]bool{}); err == nil {
		t.Fatal("an offset past the last port was accepted")
	}
}

// The ports of one server's nodes are all different, though none is bound
// while they are picked (an Aerospike node once got as its heartbeat port what
// another had as its service port, and a client's requests on it).
func TestPortsOfAServerAreDistinct(t *testing.T) {
	spec := Spec{Command: []string{"x", "{port}", "{port:fabric}", "{port:heartbeat}"}, PortOffsets: []int{1}}
	taken := map[int]bool{}
	seen := map[string]bool{}
	for range 200 {
		ports, err := freePorts(spec, taken)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if seen[p] {
				t.Fatalf("port %s handed out twice", p)
			}
			seen[p] = true
		}
	}
	if len(taken) != 200*4 {
		t.Errorf("%d ports taken, want %d ({port}, its offset, two named)", len(taken), 200*4)
	}
}
