// Package methods registers the built-in methods of measuring (core.Method):
// each is a package of its own, and a line here. Binaries that read suites or
// archives import it for its side effects.
package methods

import (
	_ "github.com/cmpbench/cmpbench/methods/ladder" // fixed-rate ladders
	_ "github.com/cmpbench/cmpbench/methods/sweep"  // concurrency sweeps and their knees
)
