package sweep

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core"
)

// A sweep's throughput per step shows its 95 % interval where the archive
// holds one (format 3), and none where it does not (an older archive).
func TestSweepTableSaysHowSure(t *testing.T) {
	step := func(conns int, tp float64, sure bool) section.Step {
		info := archive.PhaseInfo{Status: core.StatusOK, Connections: conns, Workload: "memtier 1:10"}
		if sure {
			info.Confidence = &archive.PhaseConfidence{Rate: []float64{0.96 * tp, 1.04 * tp}}
		}
		rep := section.Rep{Info: info, Throughput: tp, Rows: []archive.SummaryRow{{Op: "GET"}}}
		return section.Step{Info: info, Cells: map[string]section.Cell{"r": {Reps: []section.Rep{rep}}}}
	}
	for _, tc := range []struct {
		sure bool
		want string
	}{
		{true, "| ops/s | 10,000 ±4 % | 15,000 ±4 % |"},
		{false, "| ops/s | 10,000 | 15,000 |"},
	} {
		g := section.Group{Of: "c", Systems: []string{"r"}, Steps: []section.Step{step(4, 10000, tc.sure), step(8, 15000, tc.sure)}}
		if md := (Method{}).Section(g).Markdown; !strings.Contains(md, tc.want) {
			t.Errorf("no %q in:\n%s", tc.want, md)
		}
	}
}
