package progress

// The built-in workloads and methods, which the binaries register
// (cmd/cmpbench): these tests read suites that name them.
import (
	_ "github.com/cmpbench/cmpbench/methods"
	_ "github.com/cmpbench/cmpbench/workloads"
)
