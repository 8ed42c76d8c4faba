package archive

import (
	"math"
	"sort"
)

// Spread summarises repeated measurements of one number.
type Spread struct {
	N                int
	Median, Min, Max float64
	CV               float64 // coefficient of variation: population stddev / mean
}

// SpreadOf summarises v.
func SpreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	sp := Spread{N: n, Median: s[n/2], Min: s[0], Max: s[n-1]}
	if n%2 == 0 {
		sp.Median = (s[n/2-1] + s[n/2]) / 2
	}
	var sum, sq float64
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(n)
	for _, x := range s {
		sq += (x - mean) * (x - mean)
	}
	if mean != 0 {
		sp.CV = math.Sqrt(sq/float64(n)) / math.Abs(mean)
	}
	return sp
}
