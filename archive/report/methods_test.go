package report

// The built-in methods, which cmd/cmpbench registers: these tests report runs
// with ladders and sweeps, whose sections the methods write.
import _ "github.com/cmpbench/cmpbench/methods"
