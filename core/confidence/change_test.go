package confidence

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// Two sides drawn alike differ significantly in about 1-level of
// comparisons; a side a fifth lower differs significantly, by about a fifth.
func TestCompare(t *testing.T) {
	const runs = 2000
	rng := rand.New(rand.NewPCG(7, 8))
	reps := func(mu float64) Estimate {
		var e Estimate
		for range 3 {
			e.Reps = append(e.Reps, mu*math.Exp(0.05*rng.NormFloat64()))
		}
		e.Value = e.Reps[1]
		return e
	}
	window := func(mu float64) Estimate {
		// One window whose 95 % interval is ±4 %: its value scatters so.
		v := mu * math.Exp(0.04/1.96*rng.NormFloat64())
		return Estimate{Value: v, Lo: v / math.Exp(0.04), Hi: v * math.Exp(0.04)}
	}
	for _, tc := range []struct {
		name       string
		draw       func(float64) Estimate
		ratio      float64
		lo, hi     float64 // share called significant
		meanChange float64
	}{
		{"repetitions, alike", reps, 1, 0, 0.07, 0},
		{"repetitions, a fifth lower", reps, 0.8, 0.9, 1, -0.2},
		{"windows, alike", window, 1, 0.03, 0.07, 0},
		{"windows, a fifth lower", window, 0.8, 0.99, 1, -0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig := 0
			var sum float64
			for range runs {
				c, err := Compare(tc.draw(1000), tc.draw(1000*tc.ratio), Level)
				if err != nil {
					t.Fatal(err)
				}
				if !(c.Lo <= c.Rel && c.Rel <= c.Hi) {
					t.Fatalf("change %+v outside its interval", c)
				}
				if c.Significant() {
					sig++
				}
				sum += c.Rel
			}
			share := float64(sig) / runs
			t.Logf("significant in %.1f %%, mean change %+.3f", 100*share, sum/runs)
			if share < tc.lo || share > tc.hi {
				t.Errorf("significant in %.1f %% of %d, want %.0f-%.0f %%", 100*share, runs, 100*tc.lo, 100*tc.hi)
			}
			if m := sum / runs; math.Abs(m-tc.meanChange) > 0.02 {
				t.Errorf("mean change %+.3f, want %+.2f", m, tc.meanChange)
			}
		})
	}
	if _, err := Compare(Estimate{Value: 5}, Estimate{Value: 6, Lo: 5, Hi: 7}, Level); !errors.Is(err, ErrNoInterval) {
		t.Errorf("against a value without an interval: %v", err)
	}
}

// Three repetitions that agree to a percent, each with a window interval of
// ±40 % (a p99.9 of a short window): their agreement is luck, and a change of
// a fifth is not significant against what each says of itself; without the
// windows' intervals it would be.
func TestRepetitionsAreNoSurerThanTheirWindows(t *testing.T) {
	side := func(mu float64, windows bool) Estimate {
		e := Estimate{Reps: []float64{mu * 0.99, mu, mu * 1.01}}
		if windows {
			for _, v := range e.Reps {
				e.RepLo, e.RepHi = append(e.RepLo, v/1.4), append(e.RepHi, v*1.4)
			}
		}
		return e
	}
	for _, tc := range []struct {
		windows, want bool
	}{{false, true}, {true, false}} {
		c, err := Compare(side(1000, tc.windows), side(800, tc.windows), Level)
		if err != nil {
			t.Fatal(err)
		}
		if c.Significant() != tc.want {
			t.Errorf("windows' intervals given %v: %+.1f %% [%+.1f, %+.1f] significant %v, want %v",
				tc.windows, 100*c.Rel, 100*c.Lo, 100*c.Hi, c.Significant(), tc.want)
		}
	}
}
