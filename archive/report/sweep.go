package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// sweeps writes, for each concurrency sweep of the suite and each system, the table
// of the published load-latency curves: a column per connection count, rows of
// throughput and p99.99, the knee marked — computed from the archive by the rule
// the run used (core.Knee), so the report says where the run put later phases.
func (d *data) sweeps(b *strings.Builder) {
	var names []string
	steps := map[string][]phaseRef{}
	for _, ph := range d.measured {
		if w := ph.info.Sweep; w != "" {
			if _, seen := steps[w]; !seen {
				names = append(names, w)
			}
			steps[w] = append(steps[w], ph)
		}
	}
	for _, name := range names {
		st := steps[name]
		slices.SortStableFunc(st, func(a, b phaseRef) int { return cmp.Compare(a.info.Connections, b.info.Connections) })
		first := st[0].info
		rule := fmt.Sprintf("throughput grows by less than %g%% to the next step", first.SweepGain*100)
		if first.SweepP99BoundNs > 0 {
			rule += fmt.Sprintf(", or the next step's p99 exceeds %s ms", ms(first.SweepP99BoundNs))
		}
		fmt.Fprintf(b, "### Sweep %s\n\n%s; closed loop; each step %s. The knee is the first step after which %s (or the next step did not end ok); phases written with `connections: knee` ran there.\n\n",
			name, first.Workload, time.Duration(first.DurationNs), rule)
		for _, sys := range d.systems {
			points := make([]core.SweepPoint, len(st))
			var p9999 []string
			for i, ph := range st {
				points[i] = core.SweepPoint{Connections: ph.info.Connections}
				reps := d.cell(ph, sys).measured()
				points[i].OK = len(reps) > 0
				var worst int64
				for _, r := range reps {
					points[i].Throughput += r.throughput / float64(len(reps))
					points[i].OK = points[i].OK && r.info.Status == core.StatusOK
					for _, row := range r.rows {
						points[i].P99 = max(points[i].P99, row.RespP99)
						worst = max(worst, row.RespP9999)
					}
				}
				if len(reps) == 0 {
					p9999 = append(p9999, "—")
				} else {
					p9999 = append(p9999, ms(worst))
				}
			}
			knee := core.Knee(points, first.SweepGain, first.SweepP99BoundNs)
			fmt.Fprintf(b, "**%s**", sys)
			if knee >= 0 {
				fmt.Fprintf(b, " — knee at %d connections", points[knee].Connections)
			} else {
				b.WriteString(" — no knee: the first step did not end ok")
			}
			b.WriteString("\n\n| connections |")
			sep := "|---|"
			for i, p := range points {
				if i == knee {
					fmt.Fprintf(b, " **%d** (knee) |", p.Connections)
				} else {
					fmt.Fprintf(b, " %d |", p.Connections)
				}
				sep += "--:|"
			}
			b.WriteString("\n" + sep + "\n| ops/s |")
			for _, p := range points {
				if p.OK {
					fmt.Fprintf(b, " %s |", thousands(int64(math.Round(p.Throughput))))
				} else {
					b.WriteString(" — |")
				}
			}
			b.WriteString("\n| p99.99 ms (worst op) |")
			for _, v := range p9999 {
				fmt.Fprintf(b, " %s |", v)
			}
			b.WriteString("\n\n")
		}
	}
}
