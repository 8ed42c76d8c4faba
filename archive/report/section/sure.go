package section

import (
	"fmt"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/confidence"
)

// Sure says whether the cell's numbers are given an interval: every measured
// repetition ended ok and says how sure its numbers are (an archive of format
// 3 or later gives each its phase's confidence). A report of an older archive
// shows no interval, as it did; a phase that did not end ok has none.
func (c Cell) Sure() bool {
	reps := c.Measured()
	for _, r := range reps {
		if r.Info.Confidence == nil || r.Info.Status != core.StatusOK {
			return false
		}
	}
	return len(reps) > 0
}

// LatenciesSure says whether the cell's latencies are given an interval: it
// is Sure, and no repetition was client-lagged or missed its fixed rate (their
// latencies do not mean what their columns say; archive's latenciesUnsure).
func (c Cell) LatenciesSure() bool {
	if !c.Sure() {
		return false
	}
	for _, r := range c.Measured() {
		if r.Info.ClientLagged || !r.Sustained() {
			return false
		}
	}
	return true
}

// AcrossReps is the relative half width of the interval of the mean of a
// number's repetitions, when there are several: they hold the run-to-run
// variance a window's interval cannot.
func AcrossReps(v []float64) (float64, bool) {
	m, iv, err := confidence.Mean(v, confidence.Level)
	if err != nil || m == 0 {
		return 0, false
	}
	return iv.Half(m), true
}

// RateSure is the relative half width of the 95 % interval of the cell's
// throughput: across its repetitions, or its one window's.
func (c Cell) RateSure() (float64, bool) {
	if !c.Sure() {
		return 0, false
	}
	reps := c.Measured()
	if len(reps) > 1 {
		v := make([]float64, len(reps))
		for i, r := range reps {
			v[i] = r.Throughput
		}
		return AcrossReps(v)
	}
	if pc := reps[0].Info.Confidence; len(pc.Rate) == 2 && reps[0].Throughput > 0 {
		return (pc.Rate[1] - pc.Rate[0]) / 2 / reps[0].Throughput, true
	}
	return 0, false
}

// TimedSure is the relative half width of the 95 % interval of the cell's
// response-time percentile name ("p99", quantile q of 0-100) over its timed
// ops merged (Rep.Timed): across its repetitions, or its one window's.
func (c Cell) TimedSure(name string, q float64) (float64, bool) {
	if !c.LatenciesSure() {
		return 0, false
	}
	reps := c.Measured()
	if len(reps) > 1 {
		var v []float64
		for _, r := range reps {
			h := MergeHistograms(r.Timed(), func(row archive.SummaryRow) []byte { return row.RespHDR })
			if h != nil && h.TotalCount() > 0 {
				v = append(v, float64(h.ValueAtQuantile(q)))
			}
		}
		return AcrossReps(v)
	}
	lo, hi, ok := reps[0].Info.Confidence.RespOf(name)
	if !ok {
		return 0, false
	}
	h := MergeHistograms(reps[0].Timed(), func(row archive.SummaryRow) []byte { return row.RespHDR })
	if h == nil || h.TotalCount() == 0 {
		return 0, false
	}
	v := float64(h.ValueAtQuantile(q))
	if v <= 0 {
		return 0, false
	}
	return confidence.Interval{Lo: float64(lo), Hi: float64(hi)}.Half(v), true
}

// PlusMinus is a relative half width as the tables show it after a number:
// " ±4 %", " ±0.6 %" below one percent, " ±>100 %" when the number says
// next to nothing (a few intervals that disagree).
func PlusMinus(h float64) string {
	p := 100 * h
	switch {
	case p > 100:
		return " ±>100 %"
	case p < 0.95:
		return fmt.Sprintf(" ±%.1f %%", p)
	}
	return fmt.Sprintf(" ±%.0f %%", p)
}
