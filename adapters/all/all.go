// Package all registers the adapters built into cmpbench. Import it for its side
// effect; the cmpbench binary serves each of them as a plugin.
package all

import (
	_ "github.com/cmpbench/cmpbench/adapters/aerospike" // Aerospike
	_ "github.com/cmpbench/cmpbench/adapters/resp"      // RESP servers
)
