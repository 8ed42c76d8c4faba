package confidence

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Power is the chance that a comparison finds a difference that is there:
// how many runs are enough is said at this power and at Level.
const Power = 0.8

// power is (z of Level, two-sided) + (z of Power): the number of a run's
// spreads a difference must be, times sqrt(2/n), to be found.
func power() float64 {
	return distuv.UnitNormal.Quantile(1-(1-Level)/2) + distuv.UnitNormal.Quantile(Power)
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
// (z + z_power) sigma sqrt(2/repetitions).
func Detectable(sigma float64, repetitions int) float64 {
	if repetitions < 1 {
		return math.Inf(1)
	}
	return power() * sigma * math.Sqrt(2/float64(repetitions))
}

// RunsToTell is how many repetitions of each side it takes to tell a relative
// difference diff at Level, Power of the time, when a run's number varies by
// sigma: 2 (z + z_power)² sigma² / diff², at least 2 (a spread needs two).
func RunsToTell(sigma, diff float64) int {
	if diff <= 0 {
		return math.MaxInt
	}
	p := power()
	n := math.Ceil(2 * p * p * sigma * sigma / (diff * diff))
	if n > 1e9 {
		return math.MaxInt
	}
	return max(2, int(n))
}
