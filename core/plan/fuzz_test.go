package plan_test

import (
	"testing"

	"github.com/cmpbench/cmpbench/core/plan"
)

// FuzzSuiteFile feeds arbitrary bytes to the suite reader and builds a plan from
// what it accepts: either may refuse, neither may panic. Seeds:
// testdata/fuzz/FuzzSuiteFile.
func FuzzSuiteFile(f *testing.F) {
	f.Add([]byte("name: s\nphases:\n  - {name: a, duration: 1s, memtier: {key_max: 5}}\n"), 0.5)
	f.Fuzz(func(t *testing.T, data []byte, scale float64) {
		s, err := plan.ParseSuite("fuzz.yaml", data)
		if err != nil {
			return
		}
		_, _ = plan.Build(s, []string{"a", "b"}, scale, 7, 2)
	})
}
