package sampler

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/process"

	"github.com/cmpbench/cmpbench/core"
)

// Host is a reading of the whole machine the load generator runs on: its CPU time
// so far and every process's, so that the CPU spent between two readings can be
// told apart by who spent it. Targets are on loopback, so the servers under test
// share this machine with the client and with whatever else runs on it.
type Host struct {
	at        time.Time
	cpus      map[int]cpuTime // by CPU number
	processes map[int32]procTime
}

type cpuTime struct {
	idle  float64 // seconds the CPU was idle (or waiting for I/O)
	steal float64 // seconds the hypervisor ran something else on it
}

type procTime struct {
	name    string
	cpu     float64 // seconds, user + system
	created int64   // ms since the epoch, to tell a reused pid
}

// ReadHost reads the machine now. The per-process part is best effort: processes
// that come and go while it reads, or that this user may not read, are left out.
func ReadHost() (*Host, error) {
	at := time.Now()
	times, err := cpu.Times(true)
	if err != nil {
		return nil, fmt.Errorf("read the machine's CPU times: %w", err)
	}
	// Busy time is what was not idle: the kernel measures idle periods exactly,
	// while it counts user and system time by sampling at its tick, which a load
	// paced in milliseconds can alias by tenths of a core over seconds.
	h := &Host{at: at, cpus: map[int]cpuTime{}, processes: map[int32]procTime{}}
	for _, t := range times {
		n, err := strconv.Atoi(strings.TrimPrefix(t.CPU, "cpu"))
		if err != nil {
			continue
		}
		h.cpus[n] = cpuTime{idle: t.Idle + t.Iowait, steal: t.Steal}
	}
	if len(h.cpus) == 0 {
		return nil, errors.New("read the machine's CPU times: no CPU lines")
	}
	procs, err := process.Processes()
	if err != nil {
		return h, nil
	}
	for _, p := range procs {
		ct, err := p.Times()
		if err != nil {
			continue
		}
		created, _ := p.CreateTime()
		h.processes[p.Pid] = procTime{name: commName(p.Pid), cpu: ct.User + ct.System, created: created}
	}
	return h, nil
}

// commName is the kernel's name of a process (/proc/PID/comm, at most 15 bytes),
// never one read from its command line, which may hold a password (gopsutil's Name
// reads the command line for longer names).
func commName(pid int32) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// At is when h was read.
func (h *Host) At() time.Time { return h.at }

func init() {
	// A process's start time is its start in clock ticks after boot plus the boot
	// time, which gopsutil otherwise derives anew each time (from the uptime in a
	// container, where it can move by a second between readings): one boot time
	// keeps a process the same process from one reading to the next.
	process.EnableBootTimeCache(true)
}

// topOthers is how many of the busiest other processes HostLoad names, and
// minOtherCores the least CPU one must have used to be named.
const (
	topOthers     = 3
	minOtherCores = 0.05
	// minUnseenCores is the least busy time charged to no process seen that
	// HostLoad reports.
	minUnseenCores = 0.25
)

// HostLoad is what the machine did from h to end: how busy the CPUs the client may
// run on were (cpus; every CPU when empty, or when /proc/stat numbers none of them,
// as in a container whose /proc renumbers its CPUs), and the busiest processes that
// are not the client's own (ours: cmpbench and its plugins), wherever they ran.
// Processes started in between count from their start; those that ended in between
// are only in the CPUs' total.
func (h *Host) HostLoad(end *Host, ours, cpus []int) core.HostLoad {
	var hl core.HostLoad
	wall := end.at.Sub(h.at).Seconds()
	if wall <= 0 {
		return hl
	}
	var idle, steal float64
	sum := func(only []int) {
		for n, e := range end.cpus {
			b, ok := h.cpus[n]
			if !ok || len(only) > 0 && !slices.Contains(only, n) {
				continue
			}
			hl.Cores++
			idle += e.idle - b.idle
			steal += e.steal - b.steal
		}
	}
	if sum(cpus); hl.Cores == 0 {
		sum(nil)
	}
	hl.StealCores = max(0, steal) / wall
	hl.BusyCores = min(float64(hl.Cores), max(0, float64(hl.Cores)-idle/wall-hl.StealCores))
	hl.Saturated = hl.Cores > 0 && hl.BusyCores+hl.StealCores > core.HostSaturatedFraction*float64(hl.Cores)
	startMs := h.at.UnixMilli()
	var seen float64 // every process's cores, ours too
	for pid, e := range end.processes {
		used := e.cpu
		if b, ok := h.processes[pid]; ok && b.created == e.created {
			used -= b.cpu
		} else if e.created < startMs-1000 {
			continue // not readable at the start: what it used before is unknown
		}
		seen += used / wall
		if c := used / wall; c >= minOtherCores && !slices.Contains(ours, int(pid)) {
			hl.Others = append(hl.Others, core.ProcessCPU{Name: e.name, Pid: int(pid), Cores: c})
		}
	}
	// The busy time no process read at both ends was charged with: processes that
	// came and went between the readings (a loop forking short commands), ones
	// that could not be read, the kernel's own work. Processes run anywhere, so
	// this is only told of the whole machine.
	if hl.Cores == len(end.cpus) && hl.BusyCores-seen >= minUnseenCores {
		hl.UnseenCores = hl.BusyCores - seen
	}
	slices.SortFunc(hl.Others, func(a, b core.ProcessCPU) int {
		return cmp.Or(cmp.Compare(b.Cores, a.Cores), cmp.Compare(a.Pid, b.Pid))
	})
	if len(hl.Others) > topOthers {
		hl.Others = hl.Others[:topOthers]
	}
	return hl
}
