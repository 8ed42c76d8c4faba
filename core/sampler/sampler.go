// Package sampler watches what surrounds a phase: the server's own counters, and the
// CPU and memory of the processes that generate the load, so that a report can tell
// a slow server from a saturated client.
package sampler

import (
	"context"
	"fmt"
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

// CoresAllowed is the number of CPUs pid may run on.
func CoresAllowed(pid int) int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return 0
	}
	return set.Count()
}

// SelfCPU is the CPU this process has used so far, user and system.
func SelfCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
