package plan_test

// The built-in workloads and methods, which the binaries register (cmd/cmpbench,
// plugins/sdk): these tests read suites, manifests and phases that name them.
import (
	_ "github.com/cmpbench/cmpbench/methods"
	_ "github.com/cmpbench/cmpbench/workloads"
)
