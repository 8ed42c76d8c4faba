package plan

// The built-in workloads, which the binaries register (cmd/cmpbench, plugins/sdk):
// these tests read suites, manifests and phases that name them.
import _ "github.com/cmpbench/cmpbench/workloads"
