// Package workloads registers the workloads built into cmpbench: importing it
// (for its side effect, as database/sql drivers are) makes memtier, ycsb,
// pubsub and trace known to suites, the plugin boundary and archives. A workload of one's
// own is a package that calls core.RegisterWorkload in its init; see
// workloads/README.md "Adding a workload".
package workloads

import (
	// The built-in workloads, each registered by its package.
	_ "github.com/cmpbench/cmpbench/workloads/memtier"
	_ "github.com/cmpbench/cmpbench/workloads/pubsub"
	_ "github.com/cmpbench/cmpbench/workloads/trace"
	_ "github.com/cmpbench/cmpbench/workloads/ycsb"
)
