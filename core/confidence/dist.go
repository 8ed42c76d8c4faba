package confidence

import (
	"slices"
	"sort"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Hist is an HDR histogram as a Dist: its quantiles as the report shows them
// (the highest value of the bucket, HdrHistogram's ValueAtQuantile).
func Hist(h *hdrhistogram.Histogram) Dist { return hist{h} }

type hist struct{ h *hdrhistogram.Histogram }

func (d hist) Total() int64            { return d.h.TotalCount() }
func (d hist) ValueAt(q float64) int64 { return d.h.ValueAtQuantile(q * 100) }

// AtOrBelow finds the last rank whose value is at or below x: ranks' values
// rise with the rank, and HdrHistogram answers a rank (as a quantile) without
// listing its buckets.
func (d hist) AtOrBelow(x int64) int64 {
	n := d.h.TotalCount()
	return int64(sort.Search(int(n), func(i int) bool {
		return d.h.ValueAtQuantile(float64(i+1)/float64(n)*100) > x
	}))
}

// Values are latencies themselves, sorted, as a Dist: a quantile is the value
// at its rank as HdrHistogram ranks it.
type Values []int64

// Sorted sorts v in place and returns it as Values.
func Sorted(v []int64) Values {
	slices.Sort(v)
	return Values(v)
}

func (v Values) Total() int64 { return int64(len(v)) }

func (v Values) ValueAt(q float64) int64 {
	if len(v) == 0 {
		return 0
	}
	rank := int64(q*float64(len(v)) + 0.5)
	return v[min(max(rank, 1), int64(len(v)))-1]
}

func (v Values) AtOrBelow(x int64) int64 {
	i, _ := slices.BinarySearch(v, x+1)
	return int64(i)
}
