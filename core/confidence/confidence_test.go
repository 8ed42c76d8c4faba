package confidence

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/gonum/stat/distuv"
)

// window is a simulated measured window: n intervals of one second, each
// with its operations and their latencies, drawn from known distributions.
type window struct {
	n      int     // intervals
	rate   float64 // true mean operations a second
	rateSD float64 // relative spread of an interval's rate
	phi    float64 // autocorrelation of consecutive intervals (AR(1))
	mu     float64 // latency: lognormal, ln ns
	sigma  float64
	tau    float64 // spread of an interval's latency scale (lognormal, AR(1) too)
	drift  float64 // the rate's change across the window, relative (-0.2: falls by a fifth)
	warm   float64 // how much lower the rate starts, recovering within the first fifth
	step   float64 // the rate's change from the window's middle on, relative
}

// truth is the window's true rate and its latency's true quantile q.
func (w window) truth(q float64) (rate, quantile float64) {
	// ln latency = mu + ln scale + sigma Z, ln scale stationary N(0, tau^2):
	// ln latency is N(mu, sigma^2 + tau^2).
	ln := distuv.Normal{Mu: w.mu, Sigma: math.Sqrt(w.sigma*w.sigma + w.tau*w.tau)}
	return w.rate, math.Exp(ln.Quantile(q))
}

// draw simulates one window: its intervals, and the whole window's latencies.
func (w window) draw(rng *rand.Rand) ([]Span, Values) {
	spans := make([]Span, w.n)
	var all []int64
	// AR(1) with stationary standard deviation 1.
	ar := func(prev float64) float64 { return w.phi*prev + math.Sqrt(1-w.phi*w.phi)*rng.NormFloat64() }
	a, s := rng.NormFloat64(), rng.NormFloat64()
	for i := range spans {
		a, s = ar(a), ar(s)
		trend := 1 + w.drift*(float64(i)/float64(w.n-1)-0.5) - w.warm*math.Exp(-float64(i)/(float64(w.n)/15))
		if i >= w.n/2 {
			trend += w.step
		}
		ops := math.Max(0, math.Round(w.rate*trend*(1+w.rateSD*a)+math.Sqrt(w.rate)*rng.NormFloat64()))
		lat := make([]int64, int(ops))
		for j := range lat {
			lat[j] = int64(math.Exp(w.mu + w.tau*s + w.sigma*rng.NormFloat64()))
		}
		all = append(all, lat...)
		spans[i] = Span{Ops: ops, Seconds: 1, Lat: Sorted(lat)}
	}
	return spans, Sorted(all)
}

// Intervals drawn from known distributions, with and without autocorrelation
// between intervals, contain the true throughput and percentiles in 93-97 % of
// 1,000 simulated windows.
func TestCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 simulated windows a case")
	}
	const runs = 1000
	qs := []float64{0.5, 0.99, 0.999}
	for _, tc := range []struct {
		name string
		w    window
	}{
		{"independent intervals", window{n: 60, rate: 1500, rateSD: 0.05, mu: math.Log(500_000), sigma: 0.5}},
		{"autocorrelated intervals", window{n: 60, rate: 1500, rateSD: 0.05, phi: 0.5, mu: math.Log(500_000), sigma: 0.5, tau: 0.1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var rateIn int
			quantIn := make([]int, len(qs))
			for range runs {
				spans, window := tc.w.draw(rng)
				iv, err := Rate(spans, Level)
				if err != nil {
					t.Fatal(err)
				}
				rate, _ := tc.w.truth(0.5)
				if iv.Lo <= rate && rate <= iv.Hi {
					rateIn++
				}
				for i, q := range qs {
					iv, err := Quantile(spans, window, q, Level)
					if err != nil {
						t.Fatal(err)
					}
					_, x := tc.w.truth(q)
					if iv.Lo <= x && x <= iv.Hi {
						quantIn[i]++
					}
				}
			}
			check := func(what string, in int) {
				c := float64(in) / runs
				t.Logf("%s: %.1f %%", what, 100*c)
				if c < 0.93 || c > 0.97 {
					t.Errorf("%s: the 95 %% interval contained the truth in %.1f %% of %d windows, want 93-97 %%", what, 100*c, runs)
				}
			}
			check("throughput", rateIn)
			for i, q := range qs {
				check(fmt.Sprintf("p%g", 100*q), quantIn[i])
			}
		})
	}
}

// A window whose rate falls by a fifth is unsteady; a steady one is flagged
// in at most 5 % of windows, autocorrelated or not.
func TestTrend(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 simulated windows a case")
	}
	const runs = 1000
	for _, tc := range []struct {
		name    string
		w       window
		lo, hi  float64 // the share of windows flagged
		atStart bool    // most flagged ones say the drift is at the start
	}{
		{"steady, independent", window{n: 60, rate: 1500, rateSD: 0.05}, 0, 0.05, false},
		{"steady, autocorrelated", window{n: 60, rate: 1500, rateSD: 0.05, phi: 0.5}, 0, 0.05, false},
		{"falls by a fifth", window{n: 60, rate: 1500, rateSD: 0.05, phi: 0.5, drift: -0.2}, 0.8, 1, false},
		{"still warming up", window{n: 60, rate: 1500, rateSD: 0.05, phi: 0.5, warm: 0.4}, 0.8, 1, true},
		{"steady, short, autocorrelated", window{n: 24, rate: 1500, rateSD: 0.05, phi: 0.5}, 0, 0.05, false},
		{"a job from mid-window takes a fifth", window{n: 24, rate: 1500, rateSD: 0.05, phi: 0.5, step: -0.2}, 0.8, 1, false},
		{"a job from mid-window takes a fifth, long", window{n: 60, rate: 1500, rateSD: 0.05, phi: 0.5, step: -0.2}, 0.8, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			flagged, atStart, changes := 0, 0, []float64(nil)
			for range runs {
				spans, _ := tc.w.draw(rng)
				ys := make([]float64, len(spans))
				for i, s := range spans {
					ys[i] = s.Ops / s.Seconds
				}
				d, err := Trend(ys, TrendLevel, SteadyRate)
				if err != nil {
					t.Fatal(err)
				}
				if d.Unsteady(SteadyRate) {
					flagged++
					changes = append(changes, d.Change)
					if d.AtStart {
						atStart++
					}
				}
			}
			share := float64(flagged) / runs
			t.Logf("flagged %.1f %%", 100*share)
			if said := atStart > flagged/2; said != tc.atStart {
				t.Errorf("%d of %d flagged said the drift is at the start", atStart, flagged)
			}
			// The drift runs from 1-drift/2 of the mean to 1+drift/2.
			want := (1+tc.w.drift/2)/(1-tc.w.drift/2) - 1
			if m := mean(changes); tc.w.drift != 0 && math.Abs(m-want) > 0.02 {
				t.Errorf("a change of %+.1f %% measured as %+.1f %% on average", 100*want, 100*m)
			}
			if share < tc.lo || share > tc.hi {
				t.Errorf("flagged unsteady in %.1f %% of %d windows, want %.0f-%.0f %%", 100*share, runs, 100*tc.lo, 100*tc.hi)
			}
		})
	}
}

// What cannot be said is said so, not given a made-up interval.
func TestTooFew(t *testing.T) {
	five := func(ops int) []Span {
		spans := make([]Span, MinIntervals)
		for i := range spans {
			lat := make([]int64, ops)
			for v := range lat {
				lat[v] = int64(1000 + v)
			}
			spans[i] = Span{Ops: float64(ops), Seconds: 1, Lat: Sorted(lat)}
		}
		return spans
	}
	window := func(spans []Span) Values {
		var all []int64
		for _, s := range spans {
			all = append(all, s.Lat.(Values)...)
		}
		return Sorted(all)
	}
	if _, err := Rate(five(10)[1:], Level); !errors.Is(err, ErrTooFewIntervals) {
		t.Errorf("rate of %d intervals: %v", MinIntervals-1, err)
	}
	if _, err := Trend([]float64{1, 2, 3, 4}, Level, SteadyRate); !errors.Is(err, ErrTooFewIntervals) {
		t.Errorf("trend of 4 intervals: %v", err)
	}
	spans := five(100)
	if _, err := Quantile(spans, window(spans), 0.9999, Level); !errors.Is(err, ErrTooFewOps) {
		t.Errorf("p99.99 of 500 operations: %v", err)
	}
	if _, err := Quantile(spans, window(spans), 0.9, Level); err != nil {
		t.Errorf("p90 of 500 operations: %v", err)
	}
	if _, _, err := Mean([]float64{1}, Level); !errors.Is(err, ErrTooFewRepetitions) {
		t.Errorf("mean of one: %v", err)
	}
}

// A histogram answers as the values it holds would, at its resolution: the
// count at or below each of its quantiles is that quantile's rank.
func TestHistAsValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	h := hdrhistogram.NewPacked(1, 3_600_000_000_000, 3)
	for range 20_000 {
		if err := h.RecordValue(int64(math.Exp(13 + 0.7*rng.NormFloat64()))); err != nil {
			t.Fatal(err)
		}
	}
	d := Hist(h)
	var xs []int64
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 0.9999, 1} {
		x := d.ValueAt(q)
		xs = append(xs, x)
		n := d.AtOrBelow(x)
		// x's bucket reaches the rank, and the buckets below it do not.
		if rank := int64(q*20_000 + 0.5); n < rank || n-h.CountAtValue(x) >= rank {
			t.Errorf("q %g: value %d, %d at or below it (%d in its bucket), want rank %d in its bucket", q, x, n, h.CountAtValue(x), rank)
		}
	}
	// In one pass, as each on its own: below the lowest, between, the
	// highest, beyond it.
	xs = append([]int64{0, 1}, append(xs, 1<<40)...)
	got := CountsAtOrBelow(d, xs)
	for i, x := range xs {
		if want := d.AtOrBelow(x); got[i] != want {
			t.Errorf("CountsAtOrBelow at %d: %d, AtOrBelow says %d", x, got[i], want)
		}
	}
}
