package confidence

import (
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Hist is an HDR histogram (the sparse form, as cheap to decode as an
// interval's is small) as a Dist: its quantiles as the report shows them (the
// highest value of the bucket, HdrHistogram's ValueAtPercentile).
func Hist(h *hdrhistogram.PackedHistogram) Dist { return hist{h} }

type hist struct{ h *hdrhistogram.PackedHistogram }

func (d hist) Total() int64            { return d.h.TotalCount() }
func (d hist) ValueAt(q float64) int64 { return d.h.ValueAtPercentile(q * 100) }

// AtOrBelow sums the buckets whose lowest value is at or below x: x, a value
// ValueAt returned, is the highest of its bucket.
func (d hist) AtOrBelow(x int64) int64 {
	var n int64
	for v, c := range d.h.ForEachBucket {
		if v > x {
			break
		}
		n += c
	}
	return n
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

// CountsAtOrBelow is d.AtOrBelow of each of xs: for a histogram and xs in
// ascending order, in one pass over its buckets.
func CountsAtOrBelow(d Dist, xs []int64) []int64 {
	out := make([]int64, len(xs))
	h, ok := d.(hist)
	if !ok || !slices.IsSorted(xs) {
		for i, x := range xs {
			out[i] = d.AtOrBelow(x)
		}
		return out
	}
	var n int64
	i := 0
	for v, c := range h.h.ForEachBucket {
		for i < len(xs) && v > xs[i] {
			out[i] = n
			i++
		}
		if i == len(xs) {
			return out
		}
		n += c
	}
	for ; i < len(xs); i++ {
		out[i] = n
	}
	return out
}
