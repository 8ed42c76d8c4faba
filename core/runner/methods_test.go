package runner

// The built-in methods, which cmd/cmpbench registers: these tests run suites
// with ladders and sweeps.
import _ "github.com/cmpbench/cmpbench/methods"
