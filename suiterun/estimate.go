package suiterun

import (
	"fmt"
	"strings"

	"github.com/shirou/gopsutil/v4/mem"
	"golang.org/x/sys/unix"

	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
)

// room is what this machine has for the data of a system cmpbench starts: memory
// available, and disk free in the directory its data directory goes under. -1 is
// unknown.
type room struct {
	mem  int64
	dir  string
	disk int64
}

// measureRoom reads the memory available (MemAvailable in /proc/meminfo: what can be
// used without swapping) and the disk free to unprivileged users in dir.
func measureRoom(dir string) room {
	r := room{mem: -1, dir: dir, disk: -1}
	if vm, err := mem.VirtualMemory(); err == nil {
		r.mem = int64(vm.Available)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err == nil {
		r.disk = int64(st.Bavail) * int64(st.Bsize)
	}
	return r
}

// estimates works out each system's estimate, and warns of a system cmpbench starts
// whose data would not fit this machine: an in-memory server (redis) holds it in
// memory, one that persists writes it into its data directory. Only those: the
// machine of a system cmpbench does not start is not this one.
func estimates(p *plan.Plan, systems *config.Systems, r room) ([]plan.Estimate, []string) {
	var es []plan.Estimate
	var warnings []string
	for _, n := range p.Systems {
		e := p.Estimate(n)
		es = append(es, e)
		if s, err := systems.Get(n); err != nil || !s.Provisioned() {
			continue
		}
		var over []string
		if r.mem >= 0 && e.Bytes > r.mem {
			over = append(over, fmt.Sprintf("the %s of memory available (a server that holds its data in memory, as redis does, needs it all)", plan.FormatBytes(r.mem)))
		}
		if r.disk >= 0 && e.Bytes > r.disk {
			over = append(over, fmt.Sprintf("the %s free in %s, where its data directory is (a server that persists writes it there)", plan.FormatBytes(r.disk), r.dir))
		}
		if len(over) > 0 {
			warnings = append(warnings, fmt.Sprintf("%s is started here and its phases write %s to it, more than %s: it may run out of room; a smaller --scale shrinks the data",
				n, plan.FormatBytes(e.Bytes), strings.Join(over, " and ")))
		}
	}
	return es, warnings
}
