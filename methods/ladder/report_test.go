package ladder

import (
	"slices"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core"
)

// A ladder cell is p50 / p99 over every op of the step: pooled, of every
// repetition's histograms merged; mean, the average of each repetition's own
// percentiles (over its ops), which is not the percentile of the whole. Whether
// the step is NS, and the rate it shows, do not depend on the method.
func TestLadderCellCombinesRepetitions(t *testing.T) {
	const ms1 = int64(time.Millisecond)
	half, three := ms1/2, 3*ms1
	for _, tc := range []struct {
		name         string
		reps         []section.Rep
		pooled, mean string
	}{
		{"p99 1 ms and 3 ms: the mean is 2 ms, pooled the 99th of every op",
			[]section.Rep{ladderRep(5000, repeated(98, half, 2, ms1)), ladderRep(5000, repeated(98, half, 2, three))},
			"0.500 / 1.000", "0.500 / 2.000"},
		{"a repetition's own percentile is over all its ops",
			[]section.Rep{ladderRep(5000, repeated(50, ms1), repeated(50, three)), ladderRep(5000, repeated(50, ms1), repeated(50, ms1))},
			"1.000 / 3.000", "1.000 / 2.000"},
		{"one repetition: the methods agree",
			[]section.Rep{ladderRep(5000, repeated(98, half, 2, three))},
			"0.500 / 3.000", "0.500 / 3.000"},
		{"a repetition not sustained: NS with the mean rate achieved",
			[]section.Rep{ladderRep(5000, repeated(100, ms1)), ladderRep(4500, repeated(100, three))},
			"NS (4,750)", "NS (4,750)"},
		{"a repetition that did not end ok",
			[]section.Rep{ladderRep(5000, repeated(100, ms1)), failed(ladderRep(5000, repeated(100, three)))},
			"failed", "failed"},
		{"not run: the system's ladder had stopped",
			[]section.Rep{{Info: archive.PhaseInfo{Status: core.StatusSkipped}}},
			"—", "—"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for method, want := range map[string]string{Pooled: tc.pooled, Mean: tc.mean} {
				if got := cell(section.Cell{Reps: tc.reps}, method, func(r archive.SummaryRow) []byte { return r.RespHDR }, true); got != want {
					t.Errorf("%s: %s, want %s", method, got, want)
				}
			}
		})
	}
}

// A step's p99 shows its 95 % interval where the archive holds it (format
// 3): its window's for one repetition, the repetitions' mean's for several;
// an older archive's step shows none, nor does the service-time table.
func TestLadderCellSaysHowSure(t *testing.T) {
	const ms1 = int64(time.Millisecond)
	sure := func(r section.Rep, lo, hi int64) section.Rep {
		r.Info.Confidence = &archive.PhaseConfidence{Rate: []float64{4900, 5100}, Resp: map[string][]int64{"p99": {lo, hi}}}
		return r
	}
	one := ladderRep(5000, repeated(98, ms1/2, 2, ms1))
	for _, tc := range []struct {
		name string
		reps []section.Rep
		sure bool
		want string
	}{
		{"format 2: no interval", []section.Rep{one}, true, "0.500 / 1.000"},
		{"one window, ±5 %", []section.Rep{sure(one, 950_000, 1_050_000)}, true, "0.500 / 1.000 ±5 %"},
		{"the service-time table", []section.Rep{sure(one, 950_000, 1_050_000)}, false, "0.500 / 1.000"},
		{"repetitions alike: their mean's", []section.Rep{sure(one, 1, 2), sure(one, 1, 2)}, true, "0.500 / 1.000 ±0.0 %"},
	} {
		if got := cell(section.Cell{Reps: tc.reps}, Pooled, func(r archive.SummaryRow) []byte { return r.RespHDR }, tc.sure); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// repeated is n values of v, then m values of w, ... (pairs of a count and a value).
func repeated(pairs ...int64) []int64 {
	var out []int64
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, slices.Repeat([]int64{pairs[i+1]}, int(pairs[i]))...)
	}
	return out
}

// ladderRep is a repetition of a 5,000 ops/s step that achieved the rate given,
// its ops (GET, then SET) taking the times given.
func ladderRep(achieved float64, ops ...[]int64) section.Rep {
	sustained := achieved >= archive.SustainedFraction*5000
	r := section.Rep{Info: archive.PhaseInfo{Status: core.StatusOK, Rate: 5000}, Throughput: achieved}
	for i, values := range ops {
		h := core.NewHistogram()
		for _, v := range values {
			h.RecordValue(v)
		}
		enc, err := core.EncodeHist(h)
		if err != nil {
			panic(err)
		}
		r.Rows = append(r.Rows, archive.SummaryRow{Op: []string{"GET", "SET"}[i], AchievedRate: achieved, Sustained: &sustained, RespHDR: enc})
	}
	return r
}

func failed(r section.Rep) section.Rep {
	r.Info.Status = core.StatusFailed
	return r
}
