package suiterun

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// newWorkDir makes the directory that holds the data of the servers cmpbench
// starts, and removes those that runs killed before they could clean up left.
func newWorkDir(runID string) (string, error) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "cmpbench-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid > 0 && !cmpbenchRunning(pid) {
			os.RemoveAll(d)
		}
	}
	work, err := os.MkdirTemp("", "cmpbench-"+runID+"-")
	if err != nil {
		return "", err
	}
	return work, os.WriteFile(filepath.Join(work, "owner.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

// cmpbenchRunning reports whether pid is a live cmpbench process.
func cmpbenchRunning(pid int) bool {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(string(comm)), "cmpbench")
}
