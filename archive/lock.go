package archive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A run holds a lock for as long as it writes its in-progress directory: an
// advisory lock (flock) on a file beside it, .<run-id>.lock, holding its pid. The
// kernel drops the lock when the process ends, however it ends, so a run whose
// cmpbench died can be recovered and one still going cannot.
type runLock struct {
	f    *os.File
	path string
}

// LockName is the lock file of runID's in-progress directory.
func LockName(runID string) string { return "." + runID + ".lock" }

// LiveError says that a run's directory belongs to a run still going.
type LiveError struct {
	Dir string
	PID int // 0 when the lock holds no pid
}

func (e *LiveError) Error() string {
	who := "another cmpbench"
	if e.PID > 0 {
		who = fmt.Sprintf("cmpbench (pid %d)", e.PID)
	}
	return fmt.Sprintf("%s belongs to a run still going: %s holds its lock; it finishes its archive itself when it ends", e.Dir, who)
}

// lockRun takes the lock of runID's directory in outDir, for this process.
func lockRun(outDir, runID string) (*runLock, error) {
	path := filepath.Join(outDir, LockName(runID))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := os.ReadFile(path)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &LiveError{Dir: filepath.Join(outDir, PendingName(runID)), PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &runLock{f: f, path: path}, nil
}

// release removes the lock file and drops the lock; nil-safe.
func (l *runLock) release() {
	if l == nil {
		return
	}
	_ = os.Remove(l.path)
	_ = l.f.Close()
}

// Live says whether the in-progress directory dir (.<run-id>.partial) belongs to
// a run still going, and that run's pid when it recorded one.
func Live(dir string) (pid int, live bool) {
	name := filepath.Base(dir)
	runID, ok := strings.CutSuffix(strings.TrimPrefix(name, "."), ".partial")
	if !ok || !strings.HasPrefix(name, ".") {
		return 0, false
	}
	path := filepath.Join(filepath.Dir(dir), LockName(runID))
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid, errors.Is(err, syscall.EWOULDBLOCK)
	}
	return 0, false
}
