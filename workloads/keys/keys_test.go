package keys

import (
	"math"
	"testing"

	"github.com/cmpbench/cmpbench/core"
)

func TestSplitPatternsCoverTheRangeOnce(t *testing.T) {
	tests := []struct {
		name     string
		min, max int64
		workers  int
		make     func(min, max int64, w, n int) Chooser
	}{
		{"P over 7 connections", 1, 10_000, 7, func(a, b int64, w, n int) Chooser { return NewPartitioned(a, b, w, n) }},
		{"P with uneven shares", 0, 12, 5, func(a, b int64, w, n int) Chooser { return NewPartitioned(a, b, w, n) }},
		{"S over 7 connections", 1, 10_000, 7, func(a, b int64, w, n int) Chooser { return NewSequential(a, b, w, n) }},
		{"S with one connection", 5, 9, 1, func(a, b int64, w, n int) Chooser { return NewSequential(a, b, w, n) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys := tc.max - tc.min + 1
			seen := map[int64]int{}
			for w := range tc.workers {
				c := tc.make(tc.min, tc.max, w, tc.workers)
				// Each worker's share of a load of exactly `keys` ops, as the engine splits it.
				_, quota := splitCount(keys, tc.workers, w, tc.name[0])
				for range quota {
					seen[c.Next()]++
				}
			}
			if int64(len(seen)) != keys {
				t.Fatalf("wrote %d distinct keys of %d", len(seen), keys)
			}
			for k, n := range seen {
				if n != 1 || k < tc.min || k > tc.max {
					t.Fatalf("key %d written %d times", k, n)
				}
			}
		})
	}
}

// splitCount is the engine's per-connection quota (core.Split) for P; S gives worker w
// the keys w, w+n, ..., so its count is the number of those in range.
func splitCount(keys int64, n, w int, pattern byte) (int64, int64) {
	if pattern == 'S' {
		return 0, (keys - int64(w) + int64(n) - 1) / int64(n)
	}
	return core.Split(keys, n, w)
}

func TestPartitionedWrapsWithinItsShare(t *testing.T) {
	p := NewPartitioned(1, 10, 1, 2) // share 6..10
	var got []int64
	for range 7 {
		got = append(got, p.Next())
	}
	want := []int64{6, 7, 8, 9, 10, 6, 7}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestGaussianShape(t *testing.T) {
	g := NewGaussian(NewRand(42, 0, 0), 1, 1_000_000, 0, 0)
	const n = 200_000
	var sum, sq float64
	within1 := 0
	median, sd := 500_000.5, 999_999.0/6
	for range n {
		v := float64(g.Next())
		if v < 1 || v > 1_000_000 {
			t.Fatalf("key %v out of range", v)
		}
		sum += v
		sq += v * v
		if math.Abs(v-median) <= sd {
			within1++
		}
	}
	mean := sum / n
	std := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean-median) > 0.01*median {
		t.Errorf("mean %.0f, want about %.0f", mean, median)
	}
	// Redrawing out-of-range values trims the tails beyond 3 sigma only: about 0.3%.
	if math.Abs(std-sd)/sd > 0.03 {
		t.Errorf("stddev %.0f, want about %.0f", std, sd)
	}
	if frac := float64(within1) / n; math.Abs(frac-0.6827) > 0.01 {
		t.Errorf("%.4f within one sigma, want 0.6827", frac)
	}
}

func TestGaussianCustomMedian(t *testing.T) {
	g := NewGaussian(NewRand(1, 0, 0), 0, 999, 100, 10)
	var sum float64
	for range 10_000 {
		sum += float64(g.Next())
	}
	if mean := sum / 10_000; math.Abs(mean-100) > 1 {
		t.Fatalf("mean %.1f, want 100", mean)
	}
}

func TestUniformCoversRangeEvenly(t *testing.T) {
	u := NewUniform(NewRand(7, 0, 0), 10, 19)
	counts := map[int64]int{}
	for range 100_000 {
		counts[u.Next()]++
	}
	if len(counts) != 10 {
		t.Fatalf("drew %d distinct keys of 10", len(counts))
	}
	for k, c := range counts {
		if c < 9_500 || c > 10_500 {
			t.Errorf("key %d drawn %d times of about 10000", k, c)
		}
	}
}

// Pattern Z: key k of the range is drawn with probability proportional to
// 1/k^exp, as memtier's Z.
func TestZipf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lo, hi   int64
		exp      float64
		ratioOf  [2]int64 // two keys whose frequencies are compared
		ratio    float64  // (b/a)^exp: how much more often a is drawn
		firstMin float64  // the share of the lowest key, at least
	}{
		{"memtier's default exponent", 1, 1000, 0, [2]int64{1, 2}, 2, 0.12},
		{"exponent 1", 1, 1000, 1, [2]int64{2, 8}, 4, 0.12},
		{"exponent 0.5", 1, 1000, 0.5, [2]int64{1, 4}, 2, 0.01},
		{"exponent 2", 1, 100, 2, [2]int64{1, 3}, 9, 0.55},
		{"a range from 0 counts from 1", 0, 50, 1, [2]int64{1, 5}, 5, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := NewZipf(NewRand(7, 0, 0), tc.lo, tc.hi, tc.exp)
			const n = 400_000
			counts := map[int64]int{}
			for range n {
				k := z.Next()
				if k < max(tc.lo, 1) || k > tc.hi {
					t.Fatalf("key %d outside [%d, %d]", k, tc.lo, tc.hi)
				}
				counts[k]++
			}
			a, b := counts[tc.ratioOf[0]], counts[tc.ratioOf[1]]
			if got := float64(a) / float64(b); math.Abs(got-tc.ratio)/tc.ratio > 0.06 {
				t.Errorf("key %d drawn %.3f times as often as key %d, want %.3f", tc.ratioOf[0], got, tc.ratioOf[1], tc.ratio)
			}
			if share := float64(counts[max(tc.lo, 1)]) / n; share < tc.firstMin {
				t.Errorf("the lowest key has %.3f of the draws, want at least %.3f", share, tc.firstMin)
			}
		})
	}
}
