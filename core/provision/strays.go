package provision

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A server that daemonizes (redis-server --daemonize yes, asd without
// --foreground) forks, detaches the child into a session of its own and exits
// with status 0: the process cmpbench started is gone, the server runs on
// without it, outside its process group and beyond its parent-death signal. Such
// a process is found by what it holds of its node: its ports, its directory.

// daemonGrace is how long after a node's command exited with status 0 what it
// left is looked for, for a daemon that binds its port a moment after its parent
// exited (and chdir'd out of its directory).
const daemonGrace = time.Second

// Stray is a process a node's command left running.
type Stray struct {
	Pid  int
	Name string // its command name (comm)
	Why  string // what of the node it holds: "listening on 127.0.0.1:6379", "in /tmp/x/r"
	// start is its start time (clock ticks since boot): a pid reused by another
	// process is not the same process.
	start int64
}

func (s Stray) String() string { return fmt.Sprintf("pid %d (%s, %s)", s.Pid, s.Name, s.Why) }

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	name       string
	state      byte
	ppid, pgrp int
	start      int64 // clock ticks since boot
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime
	open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return procStat{}, false
	}
	f := strings.Fields(string(b[closing+1:]))
	if len(f) < 20 || f[0] == "" {
		return procStat{}, false
	}
	ppid, err0 := strconv.Atoi(f[1])
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseInt(f[19], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{name: string(b[open+1 : closing]), state: f[0][0], ppid: ppid, pgrp: pgrp, start: start}, true
}

// descends reports whether pid's parents lead to leader.
func descends(pid, leader int) bool {
	for range 64 { // a chain of parents, not a loop
		st, ok := readStat(pid)
		if !ok || st.ppid <= 1 {
			return false
		}
		if st.ppid == leader {
			return true
		}
		pid = st.ppid
	}
	return false
}

// ticksNow is the time since boot in clock ticks (USER_HZ, 100 a second on
// Linux), as /proc/PID/stat counts a process's start; 0 when unreadable.
func ticksNow() int64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	up, err := strconv.ParseFloat(strings.Fields(string(b) + " x")[0], 64)
	if err != nil {
		return 0
	}
	return int64(up * 100)
}

// listeningInodes maps the socket inodes listening on TCP ports to their port.
func listeningInodes(ports []int) map[string]int {
	out := map[string]int{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for l := range strings.Lines(string(b)) {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			x := strings.Fields(l)
			if len(x) < 10 || x[3] != "0A" { // LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(x[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if ok && err == nil && slices.Contains(ports, int(port)) {
				out["socket:["+x[9]+"]"] = int(port)
			}
		}
	}
	return out
}

// leftBehind lists the processes, other than cmpbench and the node's command
// itself, started since the node was launched, that listen on one of its ports
// or, when looking for a daemon it became (after it exited 0), work in its
// directory or name it on their command line; when not (at its stop), those
// that descend from the command (a child it detached), never a process of
// someone else's that happens to work in its directory (a shell, a tail -f).
// Members of the command's process group are left out unless withGroup: the
// group is killed with the command.
func (p *process) leftBehind(withGroup, daemon bool) []Stray {
	if p.cmd == nil || p.cmd.Process == nil {
		return nil
	}
	leader := p.cmd.Process.Pid
	inodes := listeningInodes(p.ports)
	entries, _ := os.ReadDir("/proc")
	var out []Stray
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == leader || pid == os.Getpid() {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.state == 'Z' || st.state == 'X' || st.start < p.startTicks || (!withGroup && st.pgrp == leader) {
			continue
		}
		why := p.holds(pid, inodes, daemon)
		if why == "" && !daemon && descends(pid, leader) {
			why = fmt.Sprintf("detached by the command (pid %d)", leader)
		}
		if why != "" {
			out = append(out, Stray{Pid: pid, Name: st.name, Why: why, start: st.start})
		}
	}
	return out
}

// holds says what of the node the process pid holds, "" for nothing: its ports
// or, with dirs, its directory.
func (p *process) holds(pid int, inodes map[string]int, dirs bool) string {
	proc := fmt.Sprintf("/proc/%d", pid)
	if cwd, err := os.Readlink(proc + "/cwd"); err == nil && inside(cwd, p.dir) && dirs {
		return "working in " + p.dir
	}
	if b, err := os.ReadFile(proc + "/cmdline"); err == nil && dirs {
		for _, arg := range bytes.Split(b, []byte{0}) {
			if i := bytes.Index(arg, []byte(p.dir)); i >= 0 && inside(string(arg[i:]), p.dir) {
				return "naming " + p.dir
			}
		}
	}
	if len(inodes) == 0 {
		return ""
	}
	fds, _ := os.ReadDir(proc + "/fd")
	for _, fd := range fds {
		if link, err := os.Readlink(proc + "/fd/" + fd.Name()); err == nil {
			if port, ok := inodes[link]; ok {
				return "listening on " + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			}
		}
	}
	return ""
}

// inside reports whether path begins with dir as a whole directory: dir, or
// below it, whatever follows (" (deleted)" after a directory removed, the rest
// of a script after a path in it).
func inside(path, dir string) bool {
	rest, ok := strings.CutPrefix(path, dir)
	if !ok || rest == "" {
		return ok
	}
	c := rest[0]
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
}

// awaitLeft looks for what the node's command left running after it exited
// with status 0, for up to daemonGrace, or until the node is being stopped.
func (p *process) awaitLeft() []Stray {
	deadline := time.Now().Add(daemonGrace)
	for {
		if left := p.leftBehind(true, true); len(left) > 0 || p.stopping.Load() || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// endStrays stops what the node's command left running — what it left when it
// exited 0, still the same processes, and whatever started since and holds its
// ports or descends from it now — with SIGTERM, and SIGKILL after timeout.
// Nothing else is touched: a shell or a tail -f someone opened in the node's
// directory is theirs. The
// error names each, nil when there were none.
func (p *process) endStrays(name string, timeout time.Duration, detached []Stray) error {
	left := p.leftBehind(false, false)
	for _, s := range append(p.left, detached...) {
		if st, ok := readStat(s.Pid); ok && running(s) && !slices.ContainsFunc(left, func(o Stray) bool { return o.Pid == s.Pid }) {
			s.Name = st.name // what it runs now: a setsid that exec'd sleep
			left = append(left, s)
		}
	}
	if len(left) == 0 {
		return nil
	}
	for _, s := range left {
		if running(s) { // never a pid another process took since
			_ = syscall.Kill(s.Pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(timeout)
	for slices.ContainsFunc(left, running) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var errs []error
	for _, s := range left {
		how := "stopped"
		if running(s) {
			_ = syscall.Kill(s.Pid, syscall.SIGKILL)
			how = fmt.Sprintf("killed, not having stopped within %s of SIGTERM,", timeout)
		}
		errs = append(errs, fmt.Errorf("%s: %s %s, which the server's command had left running (it daemonized, or left a process behind): "+
			"a server cmpbench starts must run in the foreground", name, how, s))
	}
	return errors.Join(errs...)
}

// running reports whether the stray process still runs (a zombie does not).
func running(s Stray) bool {
	st, ok := readStat(s.Pid)
	return ok && st.start == s.start && st.state != 'Z' && st.state != 'X'
}
