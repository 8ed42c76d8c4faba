package confidence

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// How far a window may drift, significantly, before it is called unsteady:
// its throughput by 5 % of its mean across the window, its p99 by 10 % (a
// percentile moves more from interval to interval). Less is within what a
// comparison can live with; a drift that is not significant is noise.
// The drift must be significant at TrendLevel: a steady window whose
// intervals wander together (autocorrelated) must rarely look unsteady.
const (
	SteadyRate = 0.05
	SteadyP99  = 0.10
	TrendLevel = 0.985
)

// Drift is a trend across a window, from its intervals in time order.
type Drift struct {
	// Change is how far the window moved, relative to where it started:
	// -0.18 fell by 18 %. For a line, its fitted value at the last interval
	// against its value at the first; for halves, the second's mean against
	// the first's; for a start, the rest's mean against the start's. A fall
	// is never more than 100 %.
	Change float64
	// Significant: the slope is not zero at the level asked (Student's t on
	// the batches' means, its standard error inflated by the residuals'
	// autocorrelation, on the effective number of independent batches).
	Significant bool
	// AtStart: the change is the window's start (a cache still warming, a
	// load's compaction still running), its first Settle intervals: a
	// warm-up that much longer would leave it out. Change is then the rest's
	// mean against the start's.
	AtStart bool
	Settle  int
}

// Unsteady says whether the drift is significant and at least limit
// (SteadyRate, SteadyP99) of where the window started.
func (d Drift) Unsteady(limit float64) bool {
	return d.Significant && math.Abs(d.Change) >= limit
}

// Trend fits a line through ys, one value an interval in time order, and
// says how far it moved across them and whether that is more than their
// scatter would make by chance. A window that is steady but for its start (a
// warm-up too short) is found apart: its first fifth against the rest, a
// drift when their means differ significantly and by more than limit, and
// the rest is steady. A window whose level shifted part-way (a background
// job, a compaction, starting mid-window) is found by its halves: their means
// differ significantly and by more than limit, judged against the scatter
// about each half's own line (a line through the whole step leaves residuals
// that look correlated, and so hides it). The line and the start are each tested at a quarter of 1-level, the
// halves at a half, so that the three together are at level.
func Trend(ys []float64, level, limit float64) (Drift, error) {
	n := len(ys)
	if n < MinIntervals {
		return Drift{}, ErrTooFewIntervals
	}
	quarter, half := 1-(1-level)/4, 1-(1-level)/2
	whole := line(ys)
	d := Drift{Change: whole.change, Significant: whole.significant(quarter)}
	if s, ok := atStart(ys, quarter, limit); ok {
		return s, nil
	}
	if d.Unsteady(limit) {
		return d, nil
	}
	if h, ok := halves(ys, half, limit); ok {
		return h, nil
	}
	return d, nil
}

// atStart is the drift of a window whose start (its first fifth) differs from
// the rest, which is steady; false when the window is too short to tell, the
// rest drifts too, or the start is like the rest.
func atStart(ys []float64, level, limit float64) (Drift, bool) {
	n := len(ys)
	settle := n / 5
	if settle < 2 || n-settle < MinIntervals {
		return Drift{}, false
	}
	start, rest := ys[:settle], ys[settle:]
	late := line(rest)
	if late.significant(level) && math.Abs(late.change) >= limit {
		return Drift{}, false // the rest drifts too: not a matter of the start
	}
	// Were the window steady, its start would scatter as the rest does: the
	// start's own scatter holds its transient, and is not used.
	m := mean(rest)
	sr, dof := meanSE(rest)
	ss := sr * math.Sqrt(float64(len(rest))/float64(len(start)))
	from := mean(start)
	diff := m - from
	if from > 0 && math.Abs(diff) > t(level, dof)*math.Hypot(ss, sr) && math.Abs(diff/from) >= limit {
		// The start is what moved: the rest rose from it (diff > 0) or fell.
		return Drift{Change: diff / from, Significant: true, AtStart: true, Settle: settle}, true
	}
	return Drift{}, false
}

// halves is the drift of a window whose second half's mean differs from its
// first's, significantly and by limit of the window's mean or more; false
// otherwise, or when a half is too short to say. The scatter the difference
// is judged against is the intervals' about each half's own line, their
// autocorrelation counted: a level that moved within a half (a rise, a
// recovery) is not taken for noise, as it would be in the half's scatter
// about its mean, where it looks like strong autocorrelation and leaves the
// test no freedom.
func halves(ys []float64, level, limit float64) (Drift, bool) {
	n := len(ys)
	h := n / 2
	if h < MinIntervals {
		return Drift{}, false
	}
	first, second := ys[:h], ys[h:]
	from := mean(first)
	diff := mean(second) - from
	if from <= 0 || math.Abs(diff/from) < limit {
		return Drift{}, false
	}
	res := append(residuals(first), residuals(second)...)
	var ss float64
	for _, e := range res {
		ss += e * e
	}
	// The lag-one autocorrelation of residuals about fitted lines is
	// measured low, the more the shorter they are: Marriott and Pope's
	// first-order correction, (1+3r)/m, m a half's length.
	r := lag1(res)
	r = math.Min(r+(1+3*r)/float64(h), maxAutocorrelation)
	inflation := (1 + r) / (1 - r)
	se := math.Sqrt(ss / float64(n-4) * inflation * (1/float64(len(first)) + 1/float64(len(second))))
	dof := math.Max(1, float64(n)/inflation-4)
	if math.Abs(diff) > t(level, dof)*se {
		return Drift{Change: diff / from, Significant: true}, true
	}
	return Drift{}, false
}

// residuals are ys less the least-squares line through them.
func residuals(ys []float64) []float64 {
	xs := make([]float64, len(ys))
	for i := range xs {
		xs[i] = float64(i)
	}
	alpha, beta := stat.LinearRegression(xs, ys, nil, false)
	out := make([]float64, len(ys))
	for i, y := range ys {
		out[i] = y - (alpha + beta*xs[i])
	}
	return out
}

// fitted is a line fitted through a stretch of a window (fit).
type fitted struct{ change, tstat, dof float64 }

func line(ys []float64) fitted {
	change, tstat, dof := fit(ys)
	return fitted{change, tstat, dof}
}

func (f fitted) significant(level float64) bool {
	return f.dof > 0 && math.Abs(f.tstat) > t(level, f.dof)
}

// fit is the least-squares line through ys (a value an interval, in time
// order), fitted to the means of its batches (batchOf): its change over the
// span relative to its value at the first interval (relative to the mean of
// ys where the line starts at or below zero; a fall stops at 100 %), and its
// slope's t statistic and degrees of freedom (0 when there are too few points
// to say).
func fit(ys []float64) (change, tstat, dof float64) {
	bs, xs := batchOf(ys)
	k := len(bs)
	alpha, beta := stat.LinearRegression(xs, bs, nil, false)
	span := beta * float64(len(ys)-1)
	switch m := mean(ys); {
	case alpha > 0:
		change = max(span/alpha, -1)
	case m != 0:
		change = max(span/m, -1)
	}
	if k < 3 {
		return change, 0, 0
	}
	res := make([]float64, k)
	var ss, sxx float64
	mx := mean(xs)
	for i, y := range bs {
		res[i] = y - (alpha + beta*xs[i])
		ss += res[i] * res[i]
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	r := lag1(res)
	inflation := (1 + r) / (1 - r)
	se := math.Sqrt(ss / float64(k-2) / sxx * inflation)
	dof = math.Max(1, float64(k)/inflation-2)
	switch {
	case se > 0:
		tstat = beta / se
	case beta != 0:
		tstat = math.Copysign(math.Inf(1), beta)
	}
	return change, tstat, dof
}
