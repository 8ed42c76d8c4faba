// Package sampler watches what surrounds a phase: the server's own counters, and the
// CPU and memory of the processes that generate the load, so that a report can tell
// a slow server from a saturated client.
package sampler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/process"
	"golang.org/x/sys/unix"

	"github.com/cmpbench/cmpbench/core"
)

// Every calls fn now and then every d until ctx ends; Stop waits for the last call.
type Every struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// Start begins calling fn every d.
func Start(d time.Duration, fn func(at time.Time)) *Every { return StartAfter(0, d, fn) }

// StartAfter begins calling fn every d, the first time after first+d.
func StartAfter(first, d time.Duration, fn func(at time.Time)) *Every {
	ctx, cancel := context.WithCancel(context.Background())
	e := &Every{cancel: cancel}
	e.done.Add(1)
	go func() {
		defer e.done.Done()
		if first > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(first):
			}
		}
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case at := <-t.C:
				fn(at)
			}
		}
	}()
	return e
}

// Stop ends the calls and waits for one in progress.
func (e *Every) Stop() {
	e.cancel()
	e.done.Wait()
}

// Process samples one process: CPU use since the previous sample and resident memory.
type Process struct {
	name    string
	pid     int
	proc    *process.Process
	lastCPU float64 // seconds, user + system
	lastAt  time.Time
}

// NewProcess starts watching pid; the first Sample covers the time since this call.
func NewProcess(name string, pid int) (*Process, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return nil, fmt.Errorf("watch %s (pid %d): %w", name, pid, err)
	}
	s := &Process{name: name, pid: pid, proc: p, lastAt: time.Now()}
	if t, err := p.Times(); err == nil {
		s.lastCPU = t.User + t.System
	}
	return s, nil
}

// Sample reads the process now.
func (s *Process) Sample(at time.Time) (core.ProcessSample, error) {
	t, err := s.proc.Times()
	if err != nil {
		return core.ProcessSample{}, err
	}
	m, err := s.proc.MemoryInfo()
	if err != nil {
		return core.ProcessSample{}, err
	}
	cpu := t.User + t.System
	ps := core.ProcessSample{At: at, Process: s.name, Pid: s.pid, RSSBytes: m.RSS}
	if wall := at.Sub(s.lastAt).Seconds(); wall > 0 {
		ps.CPUPercent = 100 * (cpu - s.lastCPU) / wall
	}
	s.lastCPU, s.lastAt = cpu, at
	return ps, nil
}

// CoresAllowed is the number of CPUs the processes pids may run on, together.
func CoresAllowed(pids ...int) int {
	return len(CPUsAllowed(pids...))
}

// CPUsAllowed are the CPUs the processes pids may run on, together (none when one
// cannot be read).
func CPUsAllowed(pids ...int) []int {
	var all unix.CPUSet
	for _, pid := range pids {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &set); err != nil {
			return nil
		}
		for i := range len(set) {
			all[i] |= set[i]
		}
	}
	var cpus []int
	for n := range len(all) * 64 {
		if all.IsSet(n) {
			cpus = append(cpus, n)
		}
	}
	return cpus
}

// Pin restricts every thread of process pid to cpus; the threads it starts later
// inherit it from theirs.
func Pin(pid int, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("pin process %d to CPUs %v: %w", pid, cpus, err)
		}
	}
	return nil
}

// SelfCPU is the CPU this process has used so far, user and system.
func SelfCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ParseCPUList reads a CPU list as taskset and cpuset write it ("0", "2-5",
// "0,2,4-7"), in order, each CPU once.
func ParseCPUList(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= 1024 {
			return nil, fmt.Errorf("%q is not a CPU list such as 0, 2-5 or 0,2,4-7", s)
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}
