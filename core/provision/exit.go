package provision

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Exit says how a node of a server ended on its own: which node, how its
// command ended, and what it left running (a server that daemonized).
type Exit struct {
	Endpoint string // where the node listened, host:port
	Node     int    // its number ({node}) and how many the system has
	Nodes    int
	Binary   string // the server's command, for messages
	// Err is how the command ended (its wait error); nil when it exited with
	// status 0.
	Err error
	// Left are the processes that went on running after the command had ended,
	// holding its port or its directory: a server that daemonized.
	Left []Stray

	p *process
}

// Error names the node and says how its command ended.
func (e *Exit) Error() string {
	msg := fmt.Sprintf("%s %s", e.who(), e.how())
	if len(e.Left) > 0 {
		msg += fmt.Sprintf(", leaving %s running: the server daemonized (detached from the process cmpbench started), so cmpbench can neither watch it nor stop it as its own; "+
			"run it in the foreground (no --daemonize yes, daemonize yes or background mode in its command or configuration)", strays(e.Left))
	}
	return msg
}

// AtStartup says how the node ended during start-up, before its system answered:
// a command that exits with status 0 then is no server either.
func (e *Exit) AtStartup() string {
	if len(e.Left) > 0 {
		return "the server daemonized during start-up: " + e.Error()
	}
	return fmt.Sprintf("%s %s during start-up, before answering on its port", e.who(), e.how())
}

// Daemonized reports whether the node's command left processes running.
func (e *Exit) Daemonized() bool { return len(e.Left) > 0 }

// LogTail is the end of the node's output and logs.
func (e *Exit) LogTail(n int) string { return e.p.logTail(n) }

// Why is what the node's logs give as the reason it ended (see process.why).
func (e *Exit) Why() string { return e.p.why() }

// who names the node: its command and where it listened, and which node it is
// of a cluster (node1 is {node} 1, in the directory node1).
func (e *Exit) who() string {
	if e.Nodes > 1 {
		return fmt.Sprintf("%s at %s (node%d of %d)", e.Binary, e.Endpoint, e.Node, e.Nodes)
	}
	return fmt.Sprintf("%s at %s", e.Binary, e.Endpoint)
}

// how says how the command ended: its status, or the signal that ended it.
func (e *Exit) how() string {
	return howEnded(e.Err)
}

// howEnded says how a process ended from its wait error.
func howEnded(err error) string {
	if err == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled():
				return fmt.Sprintf("was killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
			case ws.Exited():
				return fmt.Sprintf("exited with status %d", ws.ExitStatus())
			}
		}
	}
	return "ended: " + err.Error()
}

// strays names processes: "pid 1234 (redis-server)", joined.
func strays(ss []Stray) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.String()
	}
	return strings.Join(names, ", ")
}

// exit is how p ended, nil while it runs.
func (s *Server) exit(i int) *Exit {
	p := s.procs[i]
	exited, err := p.exited()
	if !exited {
		return nil
	}
	return &Exit{Endpoint: p.endpoint(), Node: i, Nodes: len(s.procs), Binary: s.binaryName(), Err: err, Left: p.left, p: p}
}

// Lost is how the first node that ended did, nil while every node runs.
func (s *Server) Lost() *Exit {
	for i := range s.procs {
		if e := s.exit(i); e != nil {
			return e
		}
	}
	return nil
}

// Exited reports whether any server has ended, and how (an *Exit).
func (s *Server) Exited() (bool, error) {
	if e := s.Lost(); e != nil {
		return true, e
	}
	return false, nil
}

// WaitLost waits until a node ends, and says how (Lost), or until ctx ends: nil.
func (s *Server) WaitLost(ctx context.Context) *Exit {
	ended := make(chan int, len(s.procs))
	for i, p := range s.procs {
		done := p.done
		if done == nil {
			continue // not launched: nothing of it to lose
		}
		go func() {
			select {
			case <-done:
				ended <- i
			case <-ctx.Done():
			}
		}()
	}
	select {
	case i := <-ended:
		return s.exit(i)
	case <-ctx.Done():
		return nil
	}
}

// binaryName is the server's command name, for messages.
func (s *Server) binaryName() string { return filepath.Base(s.Binary) }
