package confidence

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// TellApart is the difference the report and the dry run say how many
// repetitions it takes to tell (RunsToTell): 5 %.
const TellApart = 0.05

// Power is the chance that a comparison finds a difference that is there:
// how many runs are enough is said at this power and at Level.
const Power = 0.8

// power is the number of a run's spreads, times sqrt(2/n), a difference must
// be to be found with n repetitions a side: t of Level (two-sided) plus t of
// Power on the 2(n-1) degrees of freedom of two sides' spreads; with one run
// a side the normal's (the windows' intervals, taken as normal).
func power(n int) float64 {
	if n < 2 {
		return z(Level) + distuv.UnitNormal.Quantile(Power)
	}
	dof := float64(2 * (n - 1))
	return t(Level, dof) + distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.Quantile(Power)
}

// RunSpread is how much a run's number varies from run to run (its relative
// standard deviation) from the relative half width h at Level of the mean of
// its n repetitions (Student's t), or of one run's own interval (n = 1: then
// a lower bound, as if there were no noise but the window's own; runs differ
// more than a window's intervals do).
func RunSpread(h float64, n int) float64 {
	if n < 2 {
		return h / z(Level)
	}
	return h * math.Sqrt(float64(n)) / t(Level, float64(n-1))
}

// Detectable is the smallest relative difference that repetitions each side
// of two runs whose numbers vary from run to run by sigma (relative standard
// deviation) tell from noise at Level, Power of the time:
// power(n) sigma sqrt(2/n).
func Detectable(sigma float64, repetitions int) float64 {
	if repetitions < 1 {
		return math.Inf(1)
	}
	return power(repetitions) * sigma * math.Sqrt(2/float64(repetitions))
}

// maxRuns bounds RunsToTell's search: more is never asked of anyone.
const maxRuns = 100_000

// RunsToTell is the fewest repetitions of each side (at least 2: a spread
// needs two) that tell a relative difference diff at Level, Power of the
// time, when a run's number varies by sigma (Detectable); math.MaxInt when no
// number of them would.
func RunsToTell(sigma, diff float64) int {
	if diff <= 0 {
		return math.MaxInt
	}
	// From the normal's answer, which is never more than t's, upward.
	p := power(1)
	n := max(2, int(2*p*p*sigma*sigma/(diff*diff)))
	for ; n <= maxRuns; n++ {
		if Detectable(sigma, n) <= diff {
			return n
		}
	}
	return math.MaxInt
}
