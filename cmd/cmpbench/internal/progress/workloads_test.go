package progress

// The built-in workloads, which the binaries register (cmd/cmpbench, plugins/sdk):
// these tests read suites that name them.
import _ "github.com/cmpbench/cmpbench/workloads"
