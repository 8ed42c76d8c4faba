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
	TrendLevel = 0.98
)

// Drift is a trend across a window, from its intervals in time order.
type Drift struct {
	// Change is the fitted line's change from the first interval to the
	// last, relative to the window's mean: -0.18 fell by 18 %.
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
// (SteadyRate, SteadyP99) of the window's mean.
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
// differ significantly and by more than limit, each half's scatter its own (a
// line through a step leaves residuals that look correlated, and so hides
// it). Each test is at a third of 1-level, so that the three together are at
// level.
func Trend(ys []float64, level, limit float64) (Drift, error) {
	n := len(ys)
	if n < MinIntervals {
		return Drift{}, ErrTooFewIntervals
	}
	each := 1 - (1-level)/3
	whole := line(ys)
	d := Drift{Change: whole.change, Significant: whole.significant(each)}
	if s, ok := atStart(ys, each, limit); ok {
		return s, nil
	}
	if d.Unsteady(limit) {
		return d, nil
	}
	if h, ok := halves(ys, each, limit); ok {
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
	diff := m - mean(start)
	if m != 0 && math.Abs(diff) > t(level, dof)*math.Hypot(ss, sr) && math.Abs(diff/m) >= limit {
		// The start is what moved: the rest rose from it (diff > 0) or fell.
		return Drift{Change: diff / m, Significant: true, AtStart: true, Settle: settle}, true
	}
	return Drift{}, false
}

// halves is the drift of a window whose second half's mean differs from its
// first's, significantly and by limit of the window's mean or more (Welch's
// t, each half's standard error its own, on the fewer degrees of freedom);
// false otherwise, or when a half is too short to say.
func halves(ys []float64, level, limit float64) (Drift, bool) {
	h := len(ys) / 2
	if h < MinIntervals {
		return Drift{}, false
	}
	first, second := ys[:h], ys[h:]
	s1, dof1 := meanSE(first)
	s2, dof2 := meanSE(second)
	m, diff := mean(ys), mean(second)-mean(first)
	if m == 0 || math.Abs(diff/m) < limit {
		return Drift{}, false
	}
	if math.Abs(diff) > t(level, math.Min(dof1, dof2))*math.Hypot(s1, s2) {
		return Drift{Change: diff / m, Significant: true}, true
	}
	return Drift{}, false
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
// span relative to the mean of ys, and its slope's t statistic and degrees of
// freedom (0 when there are too few points to say).
func fit(ys []float64) (change, tstat, dof float64) {
	bs, xs := batchOf(ys)
	k := len(bs)
	alpha, beta := stat.LinearRegression(xs, bs, nil, false)
	if m := mean(ys); m != 0 {
		change = beta * float64(len(ys)-1) / m
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
