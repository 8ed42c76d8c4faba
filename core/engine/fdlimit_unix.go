//go:build unix

package engine

import (
	"fmt"
	"syscall"
)

// checkFileLimit makes sure a phase of conns connections, which needs fds
// descriptors, fits under the open-file limit. The Go runtime raises the soft limit
// to the hard one when a process starts; this raises it the last step if needed
// and says so, and fails with a clear message when even the hard limit is too low.
// The note is empty when there is nothing to say.
func checkFileLimit(conns, fds int) (note string, err error) {
	need := uint64(fds + fdReserve)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return "", nil // unknown: connecting will tell
	}
	if need <= lim.Cur {
		if conns >= 1000 {
			note = fmt.Sprintf("%d connections: open-file limit %d (hard limit %d; Go raises the soft limit to it at start)", conns, lim.Cur, lim.Max)
		}
		return note, nil
	}
	if need > lim.Max {
		return "", fmt.Errorf("%d connections need %d open files, but the hard open-file limit is %d: raise it (ulimit -Hn, or LimitNOFILE= for a service) or use fewer connections", conns, need, lim.Max)
	}
	old := lim.Cur
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return "", fmt.Errorf("%d connections need %d open files; raising the open-file limit from %d to %d failed: %w", conns, need, old, lim.Max, err)
	}
	return fmt.Sprintf("raised the open-file soft limit from %d to the hard limit %d for %d connections", old, lim.Max, conns), nil
}
