// Package provision starts and stops local servers for systems that cmpbench runs
// itself: a free loopback port, an own data directory, optional CPU pinning, a
// graceful stop, and no server left behind on any exit path. A system may be several
// servers (a cluster), set up together once they all listen.
package provision

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// Spec says how to start a system's servers.
type Spec struct {
	Name    string   // the system's name, for messages and the data directory
	Command []string // with {port} and {dir} placeholders
	CPUs    string   // taskset CPU list, or empty
	// StopTimeout is how long a graceful stop (SIGTERM) may take before SIGKILL.
	StopTimeout time.Duration
	// Nodes is how many servers to start (default 1), each with its own port and
	// directory; Setup runs once they all listen, {endpoints} standing for all of them.
	Nodes        int
	Setup        []string
	ReadyTimeout time.Duration // for the nodes to listen before Setup
	// Files are written into each node's directory before it starts, name to
	// content, with the command's placeholders filled in: a server that reads its
	// port from a configuration file (Aerospike's asd) gets one. {port:NAME} in the
	// command or a file is another free port of the node (asd's fabric and
	// heartbeat ports), the same wherever NAME appears.
	Files map[string]string
	// Dirs are created in each node's directory before it starts (relative
	// paths): directories its configuration names that the server will not
	// create itself (Aerospike's work-directory/smd and mod-lua user-path), so
	// that the command is the server's own, never a shell that prepares them.
	Dirs []string
	// Logs are files in a node's directory that the server logs to besides its
	// standard output and error (server.log), as its configuration names them:
	// a start that fails quotes them too.
	Logs []string
	// Vars are more placeholders for the command and the files, "{name}" to its
	// value (the runner's {data_gib}).
	Vars map[string]string
	// PortOffsets are distances from {port} at which the server also listens,
	// fixed in its code (Pika: +2000 and +10001): {port} is chosen so that
	// they are free too.
	PortOffsets []int
}

// Server is a system's running server processes.
type Server struct {
	Dir string // the system's directory; nodes have their own below it in a cluster
	// Launch is the first node's command line as started, placeholders filled in.
	Launch []string
	// Binary and BinarySHA256 identify the server executable.
	Binary, BinarySHA256 string

	spec  Spec
	procs []*process
}

// process is one server process, restartable with the same command line.
type process struct {
	port    int
	dir     string
	argv    []string
	logPath string   // the server's standard output and error
	logs    []string // logPath and the log files its configuration names
	ports   []int    // every port it was given: {port}, each {port:NAME}, and PortOffsets from {port}

	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	stopped sync.Once
	// startTicks is when it was launched, in clock ticks since boot, less a
	// second: what it left running started later.
	startTicks int64
	stopping   atomic.Bool // cmpbench is stopping it: its exit is no daemon's
	left       []Stray     // what it left running when it exited
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

// Start starts the servers with their data directories under baseDir. The caller must
// Stop them on every path; the processes are also killed if cmpbench itself dies.
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
	dir, err := filepath.Abs(filepath.Join(baseDir, spec.Name))
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Binary: bin, BinarySHA256: sum, spec: spec}
	nodes := max(1, spec.Nodes)
	// Every node's directory and ports first: a node's command line or files may
	// name the others' ({each:...}), as a cluster's members must know each other.
	all, taken := make([]nodePlaces, nodes), map[int]bool{}
	for i := range nodes {
		pdir := dir
		if nodes > 1 {
			pdir = filepath.Join(dir, fmt.Sprintf("node%d", i))
		}
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return nil, err
		}
		for _, d := range spec.Dirs {
			if !filepath.IsLocal(d) {
				return nil, fmt.Errorf("provision dir %q: a relative path inside the server's directory", d)
			}
			if err := os.MkdirAll(filepath.Join(pdir, d), 0o755); err != nil {
				return nil, err
			}
		}
		ports, err := freePorts(spec, taken)
		if err != nil {
			return nil, err
		}
		all[i] = nodePlaces{index: i, dir: pdir, ports: ports, vars: spec.Vars}
	}
	for i := range nodes {
		p, err := s.newProcess(bin, all, i)
		if err != nil {
			s.Stop()
			return nil, err
		}
		s.procs = append(s.procs, p)
		if err := p.launch(); err != nil {
			s.Stop()
			return nil, err
		}
	}
	s.Launch = s.procs[0].argv
	if len(spec.Setup) > 0 {
		if err := s.setup(); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// namedPort is a {port:NAME} placeholder.
var namedPort = regexp.MustCompile(`\{port:[a-z0-9_-]+\}`)

// nodePlaces is where one node of a system lives: its index, directory and ports
// ("{port}" and each "{port:NAME}" the command or files name).
type nodePlaces struct {
	index int
	dir   string
	ports map[string]string
	vars  map[string]string
}

// freePorts picks a free port for {port} and for each {port:NAME} in the spec's
// command and files, none of them (nor a port at one of its offsets) in taken,
// to which it adds them: the ports of a server's nodes are picked before any
// is bound, and the kernel may hand the same free port out twice (a node's
// heartbeat port that was another's service port got a client's requests).
func freePorts(spec Spec, taken map[int]bool) (map[string]string, error) {
	texts := slices.Clone(spec.Command)
	texts = append(texts, slices.Collect(maps.Values(spec.Files))...)
	ports := map[string]string{}
	for _, ph := range append([]string{"{port}"}, namedPort.FindAllString(strings.Join(texts, " "), -1)...) {
		if _, ok := ports[ph]; ok {
			continue
		}
		var offsets []int
		if ph == "{port}" {
			offsets = spec.PortOffsets
		}
		p, err := freePortWith(offsets, taken)
		if err != nil {
			return nil, err
		}
		taken[p] = true
		for _, off := range offsets {
			taken[p+off] = true
		}
		ports[ph] = strconv.Itoa(p)
	}
	return ports, nil
}

// freePortWith returns a free loopback port p with p+offset free too for each
// offset, all of them ports (below 65536): for a server that also listens at
// fixed distances from its port.
func freePortWith(offsets []int, taken map[int]bool) (int, error) {
	for range 100 {
		p, err := FreePort()
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		ok := !taken[p]
		for _, off := range offsets {
			if q := p + off; !ok || q < 1 || q > 65535 || taken[q] || !portFree(q) {
				ok = false
				break
			}
		}
		if ok {
			return p, nil
		}
	}
	return 0, fmt.Errorf("find a free port: none of 100 tried had ports %v from it free too", offsets)
}

// portFree reports whether a loopback TCP port can be listened on now.
func portFree(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// EachPrefix opens a placeholder that stands for every node: {each:TEMPLATE} is
// TEMPLATE filled in for each node in turn ({node}, {port}, {port:NAME}, {dir}
// being that node's), joined with commas — e.g. etcd's
// --initial-cluster {each:n{node}=http://127.0.0.1:{port:peer}}.
// {each_line:TEMPLATE} joins them with newlines instead, for a configuration
// file that wants one line per node (Aerospike's mesh-seed-address-port).
const (
	EachPrefix     = "{each:"
	EachLinePrefix = "{each_line:"
)

// fill fills a command-line argument or file of node i of all: {each:...} and
// {each_line:...} first, then the node's own {node}, {port}, {port:NAME}, {dir}
// and variables.
func fill(text string, all []nodePlaces, i int) (string, error) {
	var b strings.Builder
	for {
		start, prefix, sep := strings.Index(text, EachPrefix), EachPrefix, ","
		if l := strings.Index(text, EachLinePrefix); l >= 0 && (start < 0 || l < start) {
			start, prefix, sep = l, EachLinePrefix, "\n"
		}
		if start < 0 {
			b.WriteString(text)
			break
		}
		end, depth := -1, 0
		for j := start; j < len(text); j++ {
			switch text[j] {
			case '{':
				depth++
			case '}':
				depth--
			}
			if depth == 0 {
				end = j
				break
			}
		}
		if end < 0 {
			return "", fmt.Errorf("%q: %s... has no closing brace", text, prefix)
		}
		tmpl := text[start+len(prefix) : end]
		parts := make([]string, len(all))
		for n := range all {
			parts[n] = fillNode(tmpl, all[n])
		}
		b.WriteString(fillNode(text[:start], all[i]))
		b.WriteString(strings.Join(parts, sep))
		text = text[end+1:]
	}
	return fillNode(b.String(), all[i]), nil
}

func fillNode(text string, n nodePlaces) string {
	for ph, p := range n.ports {
		text = strings.ReplaceAll(text, ph, p)
	}
	for ph, v := range n.vars {
		text = strings.ReplaceAll(text, ph, v)
	}
	text = strings.ReplaceAll(text, "{node}", strconv.Itoa(n.index))
	return strings.ReplaceAll(text, "{dir}", n.dir)
}

func (s *Server) newProcess(bin string, all []nodePlaces, i int) (*process, error) {
	me := all[i]
	port, _ := strconv.Atoi(me.ports["{port}"])
	args := make([]string, len(s.spec.Command))
	for k, a := range s.spec.Command {
		var err error
		if args[k], err = fill(a, all, i); err != nil {
			return nil, err
		}
	}
	dir := me.dir
	for _, name := range slices.Sorted(maps.Keys(s.spec.Files)) {
		if name != filepath.Base(name) || name == "." || name == ".." {
			return nil, fmt.Errorf("provision file %q: a file name, without a directory", name)
		}
		text, err := fill(s.spec.Files[name], all, i)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	argv := append([]string{bin}, args[1:]...)
	if s.spec.CPUs != "" {
		taskset, err := exec.LookPath("taskset")
		if err != nil {
			return nil, fmt.Errorf("cpus %q needs taskset (util-linux): %w", s.spec.CPUs, err)
		}
		argv = append([]string{taskset, "--cpu-list", s.spec.CPUs}, args...)
	}
	logs := []string{filepath.Join(dir, "server.log")}
	for _, l := range s.spec.Logs {
		logs = append(logs, filepath.Join(dir, l))
	}
	var ports []int
	for _, v := range me.ports {
		n, _ := strconv.Atoi(v)
		ports = append(ports, n)
	}
	for _, off := range s.spec.PortOffsets {
		ports = append(ports, port+off)
	}
	return &process{port: port, dir: dir, argv: argv, logPath: logs[0], logs: logs, ports: ports}, nil
}

// setup waits for every node to listen and runs the setup command once.
func (s *Server) setup() error {
	timeout := s.spec.ReadyTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for i, p := range s.procs {
		for {
			c, err := net.DialTimeout("tcp", p.endpoint(), time.Second)
			if err == nil {
				c.Close()
				break
			}
			if e := s.exit(i); e != nil {
				return fmt.Errorf("%s%s", e.AtStartup(), e.Why())
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s did not listen within %s%s", p.endpoint(), timeout, p.why())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var args []string
	for _, a := range s.spec.Setup {
		if a == "{endpoints}" {
			args = append(args, s.Endpoints()...)
			continue
		}
		args = append(args, strings.ReplaceAll(a, "{endpoints}", strings.Join(s.Endpoints(), ",")))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	logPath := filepath.Join(s.Dir, "setup.log")
	_ = os.WriteFile(logPath, out, 0o644)
	if err != nil {
		return fmt.Errorf("setup %s: %v: %s", strings.Join(args, " "), err, lastBytes(bytes.TrimSpace(out), 500))
	}
	return nil
}

// launch starts the process of the launch line.
func (p *process) launch() error {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // our own process group: Ctrl-C reaches cmpbench, which stops us in order
		Pdeathsig: syscall.SIGKILL, // and if cmpbench is killed, the kernel ends the server
	}
	// The marker is taken before the start: what the command forks starts after it.
	ticks := ticksNow() - 100
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", strings.Join(p.argv, " "), err)
	}
	p.cmd, p.done, p.waitErr, p.stopped, p.startTicks, p.left = cmd, make(chan struct{}), nil, sync.Once{}, ticks, nil
	p.stopping.Store(false)
	done := p.done
	go func() {
		err := cmd.Wait()
		if err == nil && !p.stopping.Load() {
			// A server that exits 0 on its own may have daemonized: what it
			// left running is found before anyone is told that it ended.
			p.left = p.awaitLeft()
		}
		p.waitErr = err
		close(done)
	}()
	return nil
}

func (p *process) endpoint() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

func (p *process) exited() (bool, error) {
	if p.done == nil {
		return true, nil
	}
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group and SIGKILL after timeout, then
// stops what the command left running outside its group (endStrays).
func (p *process) stop(name string, timeout time.Duration) error {
	var err error
	p.stopped.Do(func() {
		if p.cmd == nil {
			return
		}
		p.stopping.Store(true)
		// Its detached children are told by their parent: found while it lives.
		detached := p.leftBehind(false, false)
		err = p.stopGroup(name, timeout)
		err = errors.Join(err, p.endStrays(name, timeout, detached))
	})
	return err
}

// stopGroup ends the command's process group.
func (p *process) stopGroup(name string, timeout time.Duration) error {
	pgid := -p.cmd.Process.Pid
	if exited, _ := p.exited(); exited {
		_ = syscall.Kill(pgid, syscall.SIGKILL) // anything the server left in its group
		return nil
	}
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	var err error
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
		err = fmt.Errorf("%s did not stop within %s of SIGTERM and was killed", name, timeout)
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	return err
}

// Endpoint is where the (first) server listens.
func (s *Server) Endpoint() string { return s.procs[0].endpoint() }

// Endpoints lists every node's host:port.
func (s *Server) Endpoints() []string {
	out := make([]string, len(s.procs))
	for i, p := range s.procs {
		out[i] = p.endpoint()
	}
	return out
}

// Port is the first server's port.
func (s *Server) Port() int { return s.procs[0].port }

// Pid is the first server's process id.
func (s *Server) Pid() int { return s.procs[0].cmd.Process.Pid }

// Pids lists every node's process id.
func (s *Server) Pids() []int {
	out := make([]int, len(s.procs))
	for i, p := range s.procs {
		out[i] = p.cmd.Process.Pid
	}
	return out
}

// LogTail returns the end of every server's output, and of the log files its
// configuration names (Spec.Logs), for error messages and the archive.
func (s *Server) LogTail(n int) string {
	if len(s.procs) == 1 {
		return s.procs[0].logTail(n)
	}
	var parts []string
	for _, p := range s.procs {
		parts = append(parts, p.endpoint()+": "+p.logTail(n/len(s.procs)))
	}
	return strings.Join(parts, "\n")
}

// logTail is the end of the process's output, or of each of its logs, headed by
// its name, when its configuration names log files.
func (p *process) logTail(n int) string {
	if len(p.logs) <= 1 {
		return tail(p.logPath, n)
	}
	var parts []string
	for _, l := range p.logs {
		parts = append(parts, "== "+filepath.Base(l)+" ==\n"+tail(l, n/len(p.logs)))
	}
	return strings.Join(parts, "\n")
}

// LogPath is the file holding the first server's output.
func (s *Server) LogPath() string { return s.procs[0].logPath }

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return lastBytes(bytes.TrimSpace(b), n)
}

// lastBytes is at most the last n bytes of b, from the start of a line: a tail
// never begins mid-word.
func lastBytes(b []byte, n int) string {
	if len(b) > n {
		cut := len(b) - n
		// Unless the cut falls at a line's start, skip to the next one, if any.
		if b[cut-1] != '\n' {
			if i := bytes.IndexByte(b[cut:], '\n'); i >= 0 && cut+i < len(b)-1 {
				cut += i + 1
			}
		}
		b = b[cut:]
	}
	return string(b)
}

// Stop ends every server: SIGTERM to each process group, SIGKILL after the stop
// timeout. It is safe to call more than once.
func (s *Server) Stop() error {
	timeout := s.spec.StopTimeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	var errs []error
	for _, p := range s.procs {
		if err := p.stop(s.spec.Name, timeout); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Kill ends node i at once (SIGKILL to its process group), as a crash would: for
// tests of a node lost during a phase. Relaunch starts it again.
func (s *Server) Kill(i int) error {
	if i < 0 || i >= len(s.procs) {
		return fmt.Errorf("%s has no node %d", s.spec.Name, i)
	}
	p := s.procs[i]
	if exited, _ := p.exited(); exited {
		return fmt.Errorf("%s: node %d (%s) is not running", s.spec.Name, i, p.endpoint())
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	return nil
}

// Relaunch starts node i again with its command line, port and directory, after
// it ended (Kill, or a crash).
func (s *Server) Relaunch(i int) error {
	if i < 0 || i >= len(s.procs) {
		return fmt.Errorf("%s has no node %d", s.spec.Name, i)
	}
	p := s.procs[i]
	if exited, _ := p.exited(); !exited {
		return fmt.Errorf("%s: node %d (%s) is still running", s.spec.Name, i, p.endpoint())
	}
	return p.launch()
}

// SetStopTimeout changes how long the next graceful stops may take.
func (s *Server) SetStopTimeout(d time.Duration) { s.spec.StopTimeout = d }

// Restart stops the servers cleanly and starts them again with the same command
// lines, ports and data directories, as a restart after maintenance would; a
// cluster comes back from its nodes' own state, without running Setup again.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	for _, p := range s.procs {
		if exited, err := p.exited(); exited && err != nil && !isTermination(err) {
			return fmt.Errorf("%s (%s) did not stop cleanly: %v", s.spec.Name, p.endpoint(), err)
		}
	}
	for _, p := range s.procs {
		if err := p.launch(); err != nil {
			return err
		}
	}
	return nil
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
