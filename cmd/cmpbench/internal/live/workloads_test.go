package live

// The built-in workloads, which the binary registers (cmd/cmpbench): these
// tests read suites that name them.
import _ "github.com/cmpbench/cmpbench/workloads"
