package confidence

import (
	"errors"
	"math"
)

// Estimate is a measured value and how sure it is: the interval at Level of
// the one window it comes from, and the values of each repetition when there
// were several (then they decide: they hold the run-to-run variance too).
type Estimate struct {
	Value  float64
	Lo, Hi float64 // at Level; both zero when unknown
	Reps   []float64
	// RepLo and RepHi, when given, are each repetition's own window interval
	// at Level (zero where unknown): the sampling error each value carries,
	// which the repetitions' spread cannot be below, though three of them may
	// agree by chance.
	RepLo, RepHi []float64
}

// ErrNoInterval: an estimate says nothing of how sure it is (an archive from
// before intervals, a window too short): a change against it cannot be
// called significant or not.
var ErrNoInterval = errors.New("no interval")

// Change is how b differs from a, relative to a ((b-a)/a: +0.123 is 12.3 %
// more), with its interval at the level asked.
type Change struct {
	Rel, Lo, Hi float64
}

// Significant: the interval does not hold zero.
func (c Change) Significant() bool { return c.Lo > 0 || c.Hi < 0 }

// logScale is an estimate on the log scale (a ratio's natural one): the log
// of its value, its standard error and the degrees of freedom of that
// (infinite when it comes from an interval: taken as normal).
type logScale struct {
	mean, se, dof float64
}

func (e Estimate) log() (logScale, error) {
	if len(e.Reps) >= 2 {
		ls := make([]float64, len(e.Reps))
		for i, v := range e.Reps {
			if v <= 0 {
				return logScale{}, ErrNoInterval
			}
			ls[i] = math.Log(v)
		}
		m := mean(ls)
		var ss float64
		for _, v := range ls {
			ss += (v - m) * (v - m)
		}
		n := float64(len(ls))
		se := math.Sqrt(ss / (n - 1) / n)
		return logScale{mean: m, se: max(se, e.windowSE(), minSE()), dof: n - 1}, nil
	}
	if e.Value <= 0 || e.Lo <= 0 || e.Hi <= 0 || e.Hi < e.Lo {
		return logScale{}, ErrNoInterval
	}
	// The interval's half width on the log scale, at Level.
	se := (math.Log(e.Hi) - math.Log(e.Lo)) / 2 / z(Level)
	return logScale{mean: math.Log(e.Value), se: math.Max(se, minSE()), dof: math.Inf(1)}, nil
}

// windowSE is the standard error, on the log scale, of the mean of the
// repetitions that their own window intervals imply (each value's sampling
// error alone); 0 when no repetition has one. A mean of repetitions is never
// surer than that: a few repetitions' spread underestimates it as often as
// not (measured here: three repetitions' p99.9 within a few percent of each
// other, each with a window interval of ±40 %).
func (e Estimate) windowSE() float64 {
	var sum float64
	n := 0
	for i := range e.Reps {
		if i >= len(e.RepLo) || i >= len(e.RepHi) || e.RepLo[i] <= 0 || e.RepHi[i] < e.RepLo[i] {
			continue
		}
		h := (math.Log(e.RepHi[i]) - math.Log(e.RepLo[i])) / 2 / z(Level)
		sum += h * h
		n++
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(sum/float64(n)) / math.Sqrt(float64(len(e.Reps)))
}

// Resolution is the finest relative difference a measured number holds: a
// latency is an HdrHistogram's bucket, 3 significant digits. Repetitions that
// agree to the bucket, or an interval inside one bucket, are no surer than
// that: a side's standard error is never taken below it.
const Resolution = 0.001

func minSE() float64 { return math.Log1p(Resolution) / z(Level) }

// Compare is the change from a to b, with its interval at level: Welch's t on
// the log scale, each side's standard error from its repetitions or, with one
// repetition, from its window's interval.
func Compare(a, b Estimate, level float64) (Change, error) {
	la, err := a.log()
	if err != nil {
		return Change{}, err
	}
	lb, err := b.log()
	if err != nil {
		return Change{}, err
	}
	d := lb.mean - la.mean
	se := math.Hypot(la.se, lb.se)
	q := z(level)
	if dof := welch(la, lb); !math.IsInf(dof, 1) {
		q = t(level, dof)
	}
	return Change{Rel: math.Expm1(d), Lo: math.Expm1(d - q*se), Hi: math.Expm1(d + q*se)}, nil
}

// welch is the Welch-Satterthwaite degrees of freedom of the difference.
func welch(a, b logScale) float64 {
	va, vb := a.se*a.se, b.se*b.se
	den := 0.0
	if !math.IsInf(a.dof, 1) {
		den += va * va / a.dof
	}
	if !math.IsInf(b.dof, 1) {
		den += vb * vb / b.dof
	}
	if den == 0 {
		return math.Inf(1)
	}
	return math.Max(1, (va+vb)*(va+vb)/den)
}
