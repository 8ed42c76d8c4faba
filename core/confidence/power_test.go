package confidence

import (
	"math"
	"testing"
)

// The runs a difference takes and the difference runs find are one formula
// read both ways; a run's spread from its interval is the interval's z.
func TestPower(t *testing.T) {
	for _, tc := range []struct {
		sigma, diff float64
		runs        int
	}{
		// (t(0.975, 2n-2) + t(0.8, 2n-2)) 0.02 sqrt(2/n): n=3 gives
		// (2.776 + 0.941) 0.02 0.816 = 6.1 %, n=4 (2.447 + 0.906) 0.02 0.707 = 4.7 %.
		{0.02, 0.05, 4},
		{0.05, 0.05, 0},  // not counted by hand: the fewest, checked below
		{0.001, 0.05, 2}, // never fewer than two
		{0.10, 0.01, 0},
	} {
		n := RunsToTell(tc.sigma, tc.diff)
		if tc.runs != 0 && n != tc.runs {
			t.Errorf("RunsToTell(%g, %g) = %d, want %d", tc.sigma, tc.diff, n, tc.runs)
		}
		if d := Detectable(tc.sigma, n); d > tc.diff+1e-12 {
			t.Errorf("%d runs find %g, not the %g they were asked for", n, d, tc.diff)
		}
		if n > 2 {
			if d := Detectable(tc.sigma, n-1); d <= tc.diff {
				t.Errorf("%d runs already find %g: %d is not the fewest", n-1, tc.diff, n)
			}
		}
	}
	if got := RunSpread(0.0392, 1); math.Abs(got-0.02) > 1e-4 {
		t.Errorf("RunSpread(±3.92 %%, one run) = %g, want 0.02", got)
	}
	// Three repetitions with a spread of 2 %: their mean's half width is
	// t(2) * 0.02 / sqrt(3) = 4.97 %.
	if got := RunSpread(4.303*0.02/math.Sqrt(3), 3); math.Abs(got-0.02) > 1e-4 {
		t.Errorf("RunSpread of three repetitions = %g, want 0.02", got)
	}
	if RunsToTell(0.1, 0) != math.MaxInt || !math.IsInf(Detectable(0.1, 0), 1) {
		t.Error("no difference, or no run: never told")
	}
}
