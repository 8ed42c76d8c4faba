// Package asdtest starts real Aerospike servers (asd) for integration tests, from
// cmpbench's own built-in systems (aerospike, aerospike-cluster), as a run does.
package asdtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/provision"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// The built-in systems the tests start.
const (
	Single  = "aerospike"         // one asd, replication factor 1
	Cluster = "aerospike-cluster" // three asd over loopback, replication factor 2
)

// ConfigFile is the file the built-in definitions write asd's configuration to.
const ConfigFile = "aerospike.conf"

// DataGiB is what the tests give {data_gib}: the smallest storage file a run
// would give (1 GiB; runner.DataGiB).
const DataGiB = 1

// Server is a built-in system's asd processes, started for one test.
type Server struct {
	*provision.Server
	// System is the definition the servers were started from (with the test's
	// changes to its configuration file, if any).
	System *config.System
	// ReadyTimeout is how long the system may take to be ready, as a run waits.
	ReadyTimeout time.Duration
}

// Builtin returns a built-in system's definition, as cmpbench reads it.
func Builtin(t testing.TB, name string) *config.System {
	t.Helper()
	systems, err := config.LoadSystems("", false)
	if err != nil {
		t.Fatal(err)
	}
	sys, problems := systems.Lookup(name)
	if sys == nil {
		t.Fatal(errors.Join(problems...))
	}
	return sys
}

// Spec is the provision spec a run starts sys with (core/runner's start), its
// storage file sized {data_gib} GiB.
func Spec(sys *config.System, dataGiB int64) provision.Spec {
	ready := time.Duration(sys.Provision.ReadyTimeout)
	if ready <= 0 {
		ready = config.DefaultReadyTimeout
	}
	stop := time.Duration(sys.Provision.StopTimeout)
	if stop <= 0 {
		stop = config.DefaultStopTimeout
	}
	return sys.ProvisionSpec(ready, stop, dataGiB)
}

// Start starts the built-in system name in a directory of the test's, with its
// configuration file changed by edit (nil: as built in), and stops it when the
// test ends, also when the start fails. It skips the test when asd is not on
// PATH (fails it when CI is set).
func Start(t testing.TB, name string, edit func(conf string) string) *Server {
	t.Helper()
	provisiontest.Need(t, "asd")
	sys := Builtin(t, name)
	if sys.Provision == nil || sys.Provision.Files[ConfigFile] == "" {
		t.Fatalf("built-in system %s writes no %s", name, ConfigFile)
	}
	if edit != nil {
		p := *sys.Provision
		p.Files = maps.Clone(p.Files)
		was := p.Files[ConfigFile]
		if p.Files[ConfigFile] = edit(was); p.Files[ConfigFile] == was {
			t.Fatalf("the change to %s's %s changed nothing", name, ConfigFile)
		}
		s := *sys
		s.Provision = &p
		sys = &s
	}
	spec := Spec(sys, DataGiB)
	srv, err := provision.Start(spec, t.TempDir())
	if err != nil {
		t.Fatalf("start %s: %v", name, err) // provision.Start stops what it started
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop %s: %v", name, err)
		}
	})
	return &Server{Server: srv, System: sys, ReadyTimeout: spec.ReadyTimeout}
}

// Set replaces the value of the first line of conf that sets key (indented
// "key value") inside the section that starts with the line section ("namespace
// ycsb {"), or adds the line at the section's start when none does. It panics
// when conf has no such section: a test's change that does not apply is a defect.
func Set(conf, section, key, value string) string {
	lines := strings.Split(conf, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == section {
			start = i
			break
		}
	}
	if start < 0 {
		panic(fmt.Sprintf("asdtest.Set: no section %q in the configuration", section))
	}
	indent := lines[start][:len(lines[start])-len(strings.TrimLeft(lines[start], " "))] + "  "
	depth := 0
	for i := start; i < len(lines); i++ {
		f := strings.Fields(lines[i])
		if depth == 1 && len(f) >= 1 && f[0] == key {
			lines[i] = lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " "))] + key + " " + value
			return strings.Join(lines, "\n")
		}
		depth += strings.Count(lines[i], "{") - strings.Count(lines[i], "}")
		if depth == 0 {
			break
		}
	}
	lines = append(lines[:start+1], append([]string{indent + key + " " + value}, lines[start+1:]...)...)
	return strings.Join(lines, "\n")
}

// Config is what a run gives the adapter for the system: its definition's
// options (namespace, cluster_size) at the first node's endpoint.
func (s *Server) Config() core.SystemConfig {
	return s.System.SystemConfig(s.Endpoint())
}

// Open opens sc with adapter a, retrying as a run does until the system is ready
// (asd answers, every node has joined and no migration is left) or its ready
// timeout passes; a server that exits meanwhile fails the test at once, with what
// its logs say. The target is closed when the test ends.
func (s *Server) Open(t testing.TB, a core.Adapter, sc core.SystemConfig) core.Target {
	t.Helper()
	start := time.Now()
	deadline := start.Add(s.ReadyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		tg, err := a.Open(ctx, sc)
		cancel()
		if err == nil {
			t.Cleanup(func() { tg.Close(context.Background()) })
			if d := time.Since(start); d > 10*time.Second {
				t.Logf("%s was ready after %s", s.System.Name, d.Round(time.Millisecond))
			}
			return tg
		}
		if exited, werr := s.Exited(); exited {
			t.Fatalf("%s exited (%v)%s", s.System.Name, werr, s.Why())
		}
		if errors.Is(err, core.ErrRefused) || time.Now().After(deadline) {
			t.Fatalf("open %s: %v%s", s.System.Name, err, s.Why())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Pause stops node i with SIGSTOP, as a server that hangs (a stalled disk, a
// swapped-out process) would, and returns once the kernel shows it stopped; the
// function it returns resumes it (SIGCONT), and so does the end of the test, before
// the server is stopped.
func (s *Server) Pause(t testing.TB, i int) (resume func()) {
	t.Helper()
	pid := s.Pids()[i]
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %s node %d: %v", s.System.Name, i, err)
	}
	resume = func() { _ = syscall.Kill(pid, syscall.SIGCONT) }
	t.Cleanup(resume)
	for deadline := time.Now().Add(5 * time.Second); processState(pid) != 'T'; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s node %d (pid %d) is not stopped 5 s after SIGSTOP (state %q)", s.System.Name, i, pid, processState(pid))
		}
	}
	return resume
}

// processState is the state letter of /proc/<pid>/stat (T: stopped), 0 if unknown.
func processState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}
