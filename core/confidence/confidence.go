// Package confidence says how sure a measured number is: a confidence interval
// for a phase's throughput and for its percentiles, from the phase's own
// intervals, and whether the measured window was steady.
//
// Consecutive intervals of a phase are not independent (a server that is slow
// for a second is often slow the next), so nothing here treats them as if they
// were: the variance of a window's mean is its intervals' variance inflated by
// their autocorrelation, (1+r)/(1-r) for a lag-one autocorrelation r (an
// AR(1) model of the intervals, r estimated from them, bounded to
// [0, 0.9]), with Student's t on the window's effective number of
// independent intervals. A percentile's interval inverts the interval of the
// fraction of operations at or below it (Woodruff's method), that fraction's
// variation measured over the same intervals. Across repetitions, each
// repetition's number is one observation.
//
// Distributions are gonum's (gonum.org/v1/gonum/stat/distuv).
package confidence

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Level is the confidence of the intervals cmpbench reports.
const Level = 0.95

// MinIntervals is the fewest intervals a window is given an interval from:
// fewer, and it cannot say how sure it is (nor how its intervals correlate).
const MinIntervals = 5

// maxAutocorrelation bounds the batches' estimated autocorrelation: a
// window that looks more correlated than this counts as a nineteenth as many
// independent batches, and its interval is wide.
const maxAutocorrelation = 0.9

// MinTail is the fewest operations a percentile needs beyond it to be given
// an interval: p99.99 of 50,000 operations is their fifth-slowest, and says
// little.
const MinTail = 20

var (
	// ErrTooFewIntervals: the window has fewer than MinIntervals intervals.
	ErrTooFewIntervals = errors.New("too few intervals")
	// ErrTooFewOps: too few operations beyond the percentile (MinTail), or
	// none at all.
	ErrTooFewOps = errors.New("too few operations")
	// ErrTooFewRepetitions: an interval across repetitions needs two.
	ErrTooFewRepetitions = errors.New("too few repetitions")
)

// Interval is a confidence interval around a measured value: Lo <= value <= Hi
// is expected, not promised (a percentile's bounds are histogram buckets).
type Interval struct {
	Lo, Hi float64
}

// Half is the interval's half width relative to value (0.04 for ±4 %); the
// larger side's, when the interval is not symmetric.
func (iv Interval) Half(value float64) float64 {
	if value == 0 {
		return 0
	}
	return math.Max(math.Abs(value-iv.Lo), math.Abs(iv.Hi-value)) / math.Abs(value)
}

// Dist is a distribution of latencies, a window's or an interval's: an HDR
// histogram (Hist), or the values themselves.
type Dist interface {
	// Total is how many values it holds.
	Total() int64
	// ValueAt is its q quantile (0 < q <= 1).
	ValueAt(q float64) int64
	// AtOrBelow counts its values at or below x, a value ValueAt returned.
	AtOrBelow(x int64) int64
}

// Span is one interval of a window, in time order: the operations counted in
// it, its length, and (for percentiles) its latencies.
type Span struct {
	Ops     float64
	Seconds float64
	Lat     Dist
}

// t is Student's t quantile for a two-sided interval of confidence level over
// dof degrees of freedom.
func t(level, dof float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.Quantile(1 - (1-level)/2)
}

// z is the normal quantile for a two-sided interval of confidence level.
func z(level float64) float64 {
	return distuv.UnitNormal.Quantile(1 - (1-level)/2)
}

// lag1 is the lag-one autocorrelation of d (about its mean), bounded to
// [0, maxAutocorrelation]: a negative one is taken as none, so that an
// interval is never narrower than if the values were independent.
func lag1(d []float64) float64 {
	m := mean(d)
	var c0, c1 float64
	for i, v := range d {
		c0 += (v - m) * (v - m)
		if i+1 < len(d) {
			c1 += (v - m) * (d[i+1] - m)
		}
	}
	if c0 == 0 {
		return 0
	}
	return math.Min(math.Max(c1/c0, 0), maxAutocorrelation)
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// batchOf groups a series in time order into consecutive batches: their
// means, and where each is centred (in the series' index). There are
// MaxBatches of them at most, each of n/MaxBatches values (the last ones one
// more), or the values themselves when there are fewer. Batching leaves the
// slow part of the series' correlation, which the AR(1) correction models
// well, and averages away the fast part (noise on top of it), which it would
// not.
func batchOf(d []float64) (means, centres []float64) {
	n := len(d)
	k := min(n, MaxBatches)
	means, centres = make([]float64, k), make([]float64, k)
	from := 0
	for j := range k {
		size := n / k
		if j >= k-n%k {
			size++
		}
		means[j] = mean(d[from : from+size])
		centres[j] = float64(from) + float64(size-1)/2
		from += size
	}
	return means, centres
}

// MaxBatches is how many batches a window's intervals are grouped into
// (batchOf). Twenty: enough degrees of freedom for Student's t, and, over a
// window of a minute or more, batches of a few seconds, longer than most
// of a server's hiccups.
const MaxBatches = 20

// meanSE is the standard error of the mean of d, a series in time order, and
// the degrees of freedom of its t: the variance of its batches' means
// inflated by their autocorrelation, on their effective number of independent
// values. Every batch but the last ones holds as many values: the mean of the
// batches' means is d's mean, near enough.
func meanSE(d []float64) (se, dof float64) {
	b, _ := batchOf(d)
	k := float64(len(b))
	m := mean(b)
	var ss float64
	for _, v := range b {
		ss += (v - m) * (v - m)
	}
	r := lag1(b)
	inflation := (1 + r) / (1 - r)
	return math.Sqrt(ss / (k - 1) / k * inflation), math.Max(1, k/inflation-1)
}

// Rate is the interval of the window's rate (all its operations over all its
// seconds), from its intervals' rates.
func Rate(spans []Span, level float64) (Interval, error) {
	n := len(spans)
	if n < MinIntervals {
		return Interval{}, ErrTooFewIntervals
	}
	var ops, secs float64
	for _, s := range spans {
		ops += s.Ops
		secs += s.Seconds
	}
	if secs <= 0 {
		return Interval{}, ErrTooFewIntervals
	}
	rate, per := ops/secs, secs/float64(n)
	// The rate is a ratio of sums: what varies is each interval's operations
	// less what its length would give at the window's rate.
	d := make([]float64, n)
	for i, s := range spans {
		d[i] = (s.Ops - rate*s.Seconds) / per
	}
	se, dof := meanSE(d)
	half := t(level, dof) * se
	return Interval{Lo: rate - half, Hi: rate + half}, nil
}

// Quantile is the interval of the window's quantile q (0.99 for p99) of
// window, the whole window's distribution, from its intervals': the fraction
// of each interval's operations at or below the window's quantile varies from
// interval to interval; the bounds are the window's quantiles at that
// fraction's interval.
func Quantile(spans []Span, window Dist, q, level float64) (Interval, error) {
	n := len(spans)
	if n < MinIntervals {
		return Interval{}, ErrTooFewIntervals
	}
	total := float64(window.Total())
	// Rounded: 200,000 operations have 20 beyond p99.99, though 1-q in
	// floating point makes it 19.99999.
	if total == 0 || math.Round(total*(1-q)*1e6)/1e6 < MinTail {
		return Interval{}, ErrTooFewOps
	}
	x := window.ValueAt(q)
	at, counts := make([]float64, n), make([]float64, n)
	var below float64
	for i, s := range spans {
		if s.Lat == nil {
			continue
		}
		at[i], counts[i] = float64(s.Lat.AtOrBelow(x)), float64(s.Lat.Total())
		below += at[i]
	}
	f, per := below/total, total/float64(n)
	d := make([]float64, n)
	for i := range n {
		d[i] = (at[i] - f*counts[i]) / per
	}
	se, dof := meanSE(d)
	half := t(level, dof) * se
	lo := window.ValueAt(math.Max(q-half, 1/total))
	hi := window.ValueAt(math.Min(1, q+half))
	return Interval{Lo: float64(lo), Hi: float64(hi)}, nil
}

// Mean is the interval of the mean of values, each one observation (a
// repetition's number), around their mean.
func Mean(values []float64, level float64) (m float64, iv Interval, err error) {
	k := len(values)
	if k < 2 {
		return 0, Interval{}, ErrTooFewRepetitions
	}
	m = mean(values)
	var ss float64
	for _, v := range values {
		ss += (v - m) * (v - m)
	}
	half := t(level, float64(k-1)) * math.Sqrt(ss/float64(k-1)/float64(k))
	return m, Interval{Lo: m - half, Hi: m + half}, nil
}
