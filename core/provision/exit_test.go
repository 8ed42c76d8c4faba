package provision

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pidRuns reports whether process pid runs (a zombie does not).
func pidRuns(pid int) bool {
	st, ok := readStat(pid)
	return ok && st.state != 'Z' && st.state != 'X'
}

// How a process ended, in words: its status, or the signal that ended it.
func TestHowEnded(t *testing.T) {
	for _, tc := range []struct {
		script, want string
	}{
		{"exit 0", "exited with status 0"},
		{"exit 3", "exited with status 3"},
		{"kill -9 $$", "was killed by signal 9 (killed)"},
		{"kill -TERM $$", "was killed by signal 15 (terminated)"},
	} {
		err := exec.Command("sh", "-c", tc.script).Run()
		if got := howEnded(err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.script, got, tc.want)
		}
	}
}

// lost waits until a node of s has ended, and says how.
func lost(t *testing.T, s *Server) *Exit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e := s.WaitLost(ctx)
	if e == nil {
		t.Fatal("no node ended within 10 s")
	}
	return e
}

// A command that prints something else and exits with status 0 during start-up
// is no server: the line says so, and quotes what it printed.
func TestStartupExitWithStatus0SaysWhatHappened(t *testing.T) {
	s, err := Start(Spec{Name: "garbage", Command: []string{"sh", "-c", "echo hello garbage; echo more junk; exit 0", "{port}"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	e := lost(t, s)
	if e.Daemonized() {
		t.Errorf("a command that left nothing running counted as daemonized: %v", e)
	}
	msg := e.AtStartup() + e.Why()
	for _, want := range []string{"sh at " + s.Endpoint() + " exited with status 0 during start-up, before answering on its port", "hello garbage", "more junk"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the start-up failure lacks %q:\n%s", want, msg)
		}
	}
}

// What a node's command leaves running when it daemonizes — a process in a
// session of its own, outside its process group — is found, named, and
// stopped with the server, whether the command exited or still runs.
func TestWhatACommandLeftRunningIsStopped(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		exits        bool
	}{
		{"it daemonized: exited 0, a child runs on", "setsid sleep 300 & exit 0", true},
		{"it runs, and left a child detached", "setsid sleep 300 & exec sleep 300", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := exec.LookPath("setsid"); err != nil {
				t.Skip("setsid (util-linux) is not installed")
			}
			s, err := Start(Spec{Name: "d", Command: []string{"sh", "-c", tc.script, "{port}"}, StopTimeout: 5 * time.Second}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			var pid int
			if tc.exits {
				e := lost(t, s)
				// Found as it forks and execs: the shell's fork, setsid, or sleep already.
				if n := e.Left[0].Name; !e.Daemonized() || (n != "sleep" && n != "setsid" && n != "sh") || !strings.Contains(e.Left[0].Why, "working in "+s.Dir) {
					t.Fatalf("what it left: %+v", e.Left)
				}
				if !strings.Contains(e.Error(), "the server daemonized") || !strings.Contains(e.AtStartup(), "daemonized during start-up") {
					t.Errorf("the message: %s", e.AtStartup())
				}
				pid = e.Left[0].Pid
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if st, ok := readStat(pid); ok && st.name == "sleep" {
						break
					}
				}
			} else {
				time.Sleep(200 * time.Millisecond)
				left := s.procs[0].leftBehind(false, false)
				if len(left) != 1 {
					t.Fatalf("left behind: %+v", left)
				}
				pid = left[0].Pid
			}
			err = s.Stop()
			if err == nil || !strings.Contains(err.Error(), "stopped pid "+strconv.Itoa(pid)+" (sleep") {
				t.Errorf("Stop says %v; want it to name pid %d", err, pid)
			}
			if pidRuns(pid) {
				t.Errorf("pid %d still runs after Stop", pid)
			}
		})
	}
}

// A redis-server told to daemonize, working in a directory of its own, is
// found by the port cmpbench gave it, and stopped: no process of it remains.
func TestDaemonizedRedisIsFoundByItsPortIntegration(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (CI installs it: see .ci/run)")
	}
	s, err := Start(Spec{Name: "r", StopTimeout: 10 * time.Second, Command: []string{"redis-server", "--port", "{port}", "--bind", "127.0.0.1",
		"--daemonize", "yes", "--dir", t.TempDir(), "--save", "", "--appendonly", "no"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	e := lost(t, s)
	if !e.Daemonized() || e.Left[0].Why != "listening on "+s.Endpoint() {
		t.Fatalf("what it left: %+v (%v)", e.Left, e)
	}
	pid := e.Left[0].Pid
	if err := s.Stop(); err == nil || !strings.Contains(err.Error(), "stopped pid "+strconv.Itoa(pid)+" (redis-server") {
		t.Errorf("Stop: %v", err)
	}
	if pidRuns(pid) {
		t.Errorf("redis-server (pid %d) still runs", pid)
	}
	if c, err := net.DialTimeout("tcp", s.Endpoint(), time.Second); err == nil {
		c.Close()
		t.Errorf("something still listens on %s", s.Endpoint())
	}
	_ = syscall.Kill(pid, syscall.SIGKILL) // should the test fail, nothing is left either
}

// A path is inside a directory when it names it whole, or below it.
func TestInside(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/tmp/w/r", true},
		{"/tmp/w/r/node1", true},
		{"/tmp/w/r (deleted)", true},
		{"/tmp/w/r/aerospike.conf --foreground", true},
		{"/tmp/w/r2", false},
		{"/tmp/w/r.old", false},
		{"/tmp/w", false},
	} {
		if got := inside(tc.path, "/tmp/w/r"); got != tc.want {
			t.Errorf("inside(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// A process that is not the server's — a shell or a tail -f someone opened in the
// node's directory while it ran — is never stopped with it (the review of issue
// 43: the stop took whatever worked in the directory).
func TestSomeoneElsesProcessInTheNodeDirIsLeftAlone(t *testing.T) {
	s, err := Start(Spec{Name: "n", Command: []string{"sh", "-c", "exec sleep 300", "{port}"}, StopTimeout: 5 * time.Second}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	theirs := exec.Command("sleep", "300")
	theirs.Dir = s.procs[0].dir
	if err := theirs.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = theirs.Process.Kill(); _ = theirs.Wait() }()
	if err := s.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if !pidRuns(theirs.Process.Pid) {
		t.Errorf("Stop ended pid %d, a process the server did not start", theirs.Process.Pid)
	}
}
