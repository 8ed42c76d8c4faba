package sweep

import "testing"

func TestKnee(t *testing.T) {
	pt := func(c int, tp float64, p99ms float64) Point {
		return Point{Connections: c, Throughput: tp, P99: int64(p99ms * 1e6), OK: true}
	}
	// Seed 000's 03d: read keeps growing, write flattens at 32.
	read := []Point{pt(8, 39_500, 1), pt(16, 90_700, 1), pt(32, 154_500, 1), pt(64, 235_200, 1)}
	write := []Point{pt(8, 50_000, 2), pt(16, 90_000, 3), pt(32, 120_000, 5), pt(64, 125_000, 9)}
	failedNext := []Point{pt(8, 10_000, 1), pt(16, 20_000, 1), {Connections: 32}}
	for _, tc := range []struct {
		name   string
		points []Point
		gain   float64
		bound  int64
		want   int
	}{
		{"still growing: the last step", read, DefaultKneeGain, 0, 3},
		{"flattens: the step before the gain falls under 10%", write, DefaultKneeGain, 0, 2},
		{"a higher bar", write, 0.5, 0, 1},
		{"a p99 bound", write, DefaultKneeGain, 4e6, 1},
		{"the next step failed", failedNext, DefaultKneeGain, 0, 1},
		{"the first step failed", []Point{{Connections: 8}}, DefaultKneeGain, 0, -1},
		{"nothing measured", nil, DefaultKneeGain, 0, -1},
		{"exactly 10% more is growth", []Point{pt(1, 100, 1), pt(2, 110, 1), pt(4, 120, 1)}, DefaultKneeGain, 0, 1},
	} {
		if got := Knee(tc.points, tc.gain, tc.bound); got != tc.want {
			t.Errorf("%s: knee %d, want %d", tc.name, got, tc.want)
		}
	}
}
