// Package provision starts and stops local servers for systems that cmpbench runs
// itself: a free loopback port, an own data directory, optional CPU pinning, a
// graceful stop, and no server left behind on any exit path.
package provision

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// Spec says how to start one server.
type Spec struct {
	Name    string   // the system's name, for messages and the data directory
	Command []string // with {port} and {dir} placeholders
	CPUs    string   // taskset CPU list, or empty
	// StopTimeout is how long a graceful stop (SIGTERM) may take before SIGKILL.
	StopTimeout time.Duration
}

// Server is a running server process.
type Server struct {
	Port int
	Dir  string
	// Launch is the command line as started, placeholders filled in.
	Launch []string
	// Binary and BinarySHA256 identify the server executable.
	Binary, BinarySHA256 string

	spec    Spec
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	waitErr error
	stopped sync.Once
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts the server with its data directory under baseDir. The caller must
// Stop it on every path; the process is also killed if cmpbench itself dies.
func Start(spec Spec, baseDir string) (*Server, error) {
	if len(spec.Command) == 0 {
		return nil, errors.New("empty command")
	}
	bin, err := exec.LookPath(spec.Command[0])
	if err != nil {
		return nil, fmt.Errorf("server binary %q: %w", spec.Command[0], err)
	}
	sum, err := core.FileSHA256(bin)
	if err != nil {
		return nil, fmt.Errorf("server binary %s: %w", bin, err)
	}
	dir := filepath.Join(baseDir, spec.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	dir, _ = filepath.Abs(dir)
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("find a free port: %w", err)
	}
	args := make([]string, len(spec.Command))
	for i, a := range spec.Command {
		a = strings.ReplaceAll(a, "{port}", strconv.Itoa(port))
		args[i] = strings.ReplaceAll(a, "{dir}", dir)
	}
	argv := args
	if spec.CPUs != "" {
		taskset, err := exec.LookPath("taskset")
		if err != nil {
			return nil, fmt.Errorf("cpus %q needs taskset (util-linux): %w", spec.CPUs, err)
		}
		argv = append([]string{taskset, "--cpu-list", spec.CPUs}, args...)
	} else {
		argv = append([]string{bin}, args[1:]...)
	}
	s := &Server{Port: port, Dir: dir, Launch: argv, Binary: bin, BinarySHA256: sum, spec: spec, logPath: filepath.Join(dir, "server.log")}
	if err := s.launch(); err != nil {
		return nil, err
	}
	return s, nil
}

// launch starts the process of the launch line.
func (s *Server) launch() error {
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.Launch[0], s.Launch[1:]...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // our own process group: Ctrl-C reaches cmpbench, which stops us in order
		Pdeathsig: syscall.SIGKILL, // and if cmpbench is killed, the kernel ends the server
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", strings.Join(s.Launch, " "), err)
	}
	s.cmd, s.done, s.waitErr, s.stopped = cmd, make(chan struct{}), nil, sync.Once{}
	done := s.done
	go func() {
		s.waitErr = cmd.Wait()
		close(done)
	}()
	return nil
}

// Restart stops the server cleanly and starts it again with the same command line,
// port and data directory, as a restart after maintenance would.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	if exited, err := s.Exited(); exited && err != nil && !isTermination(err) {
		return fmt.Errorf("%s did not stop cleanly: %v", s.spec.Name, err)
	}
	return s.launch()
}

// isTermination reports whether a wait error is the SIGTERM the server was stopped by.
func isTermination(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return true
		}
	}
	return false
}

// Endpoint is where the server listens.
func (s *Server) Endpoint() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (s *Server) Exited() (bool, error) {
	select {
	case <-s.done:
		return true, s.waitErr
	default:
		return false, nil
	}
}

// LogTail returns the end of the server's output, for error messages.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return ""
	}
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// LogPath is the file holding the server's output.
func (s *Server) LogPath() string { return s.logPath }

// Stop ends the server: SIGTERM to its process group, SIGKILL after the stop
// timeout. It is safe to call more than once.
func (s *Server) Stop() error {
	var err error
	s.stopped.Do(func() {
		timeout := s.spec.StopTimeout
		if timeout <= 0 {
			timeout = 20 * time.Second
		}
		pgid := -s.cmd.Process.Pid
		if exited, _ := s.Exited(); exited {
			_ = syscall.Kill(pgid, syscall.SIGKILL) // anything the server left in its group
			return
		}
		_ = syscall.Kill(pgid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(timeout):
			_ = syscall.Kill(pgid, syscall.SIGKILL)
			<-s.done
			err = fmt.Errorf("%s did not stop within %s of SIGTERM and was killed", s.spec.Name, timeout)
		}
		_ = syscall.Kill(pgid, syscall.SIGKILL)
	})
	return err
}
