// Package gotrace writes a Go execution trace of the running process when the
// CMPBENCH_TRACE environment variable names a directory: the host and each plugin
// process write their own, DIR/<role>-<pid>.trace, for `go tool trace` (its
// -pprof=sched view shows how long goroutines waited to run). It is how the
// client's own hiccups are found (bench/README.md, docs/measuring.md); a run
// without the variable pays nothing.
package gotrace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"
)

// EnvVar names the directory that receives the traces.
const EnvVar = "CMPBENCH_TRACE"

// EndMark is logged last in every trace that was ended, not cut off by an exit.
const EndMark = "cmpbench: end of trace"

// Start begins tracing this process as role when EnvVar is set, and returns the
// function that ends the trace and closes its file (a no-op when not tracing).
func Start(role string) (stop func() error, err error) {
	dir := os.Getenv(EnvVar)
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvVar, dir, err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.trace", role, os.Getpid()))
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvVar, err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("%s: %s: %w", EnvVar, path, err)
	}
	return func() error {
		trace.Log(context.Background(), "cmpbench", EndMark)
		trace.Stop()
		return f.Close()
	}, nil
}
