package engine

import (
	"math/rand/v2"
	"reflect"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/core"
)

// The recorder must be indistinguishable from hdrhistogram-go's histogram of the
// same bounds: same percentiles, same maximum, and an encoding that decodes to the
// same histogram (the bytes differ only in the zlib level: ours compresses for
// speed, the library for size).
func TestRecorderMatchesHdrHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dists := []struct {
		name string
		next func() int64
	}{
		{"microseconds", func() int64 { return 20_000 + rng.Int64N(400_000) }},
		{"tiny values, bucket 0", func() int64 { return 1 + rng.Int64N(2047) }},
		{"log-uniform over the whole range", func() int64 { return int64(1 + rng.ExpFloat64()*float64(rng.Int64N(1<<34))) }},
		{"one value", func() int64 { return 123_456 }},
		{"the bounds", func() int64 {
			if rng.IntN(2) == 0 {
				return core.HistMin
			}
			return core.HistMax
		}},
		{"a stall among fast ones", func() int64 {
			if rng.IntN(1000) == 0 {
				return 50_000_000_000
			}
			return 80_000 + rng.Int64N(5000)
		}},
	}
	var enc encoder
	for _, d := range dists {
		for _, n := range []int{1, 7, 1000, 100_000} {
			r, h := newRecorder(), core.NewHistogram()
			for range n {
				v := clampLatency(d.next())
				r.record(v)
				if err := h.RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
			got, err := enc.summarize(r)
			if err != nil {
				t.Fatal(err)
			}
			want, err := core.Summarize(h)
			if err != nil {
				t.Fatal(err)
			}
			back, err := hdrhistogram.Decode(got.HDR)
			if err != nil || !back.Equals(h) {
				t.Errorf("%s, %d values: the encoding does not decode to hdrhistogram-go's histogram (%v)", d.name, n, err)
			}
			if n == 100_000 {
				t.Logf("%s: %d bytes encoded, %d by hdrhistogram-go", d.name, len(got.HDR), len(want.HDR))
			}
			got.HDR, want.HDR = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %d values: %+v, hdrhistogram-go says %+v", d.name, n, got, want)
			}
		}
	}
}

func TestRecorderMergeAndReset(t *testing.T) {
	var enc encoder
	all, a, b := newRecorder(), newRecorder(), newRecorder()
	whole := core.NewHistogram()
	for i := range int64(50_000) {
		v := 1 + (i*7919)%3_000_000
		if i%3 == 0 {
			a.record(v)
		} else {
			b.record(v)
		}
		whole.RecordValue(v)
	}
	a.mergeInto(all)
	b.mergeInto(all)
	got, _ := enc.summarize(all)
	h, err := hdrhistogram.Decode(got.HDR)
	if err != nil || !h.Equals(whole) {
		t.Fatalf("merged recorder decodes to a different histogram (%v)", err)
	}
	all.reset()
	if all.total != 0 || len(all.touched) != 0 {
		t.Fatal("reset left counts")
	}
	for i, c := range all.counts {
		if c != 0 {
			t.Fatalf("counter %d is %d after reset", i, c)
		}
	}
	if l, _ := enc.summarize(all); l.Count != 0 || l.HDR != nil {
		t.Fatal("an empty recorder must summarize to the zero Latency")
	}
}

func BenchmarkRecorderSummarize(b *testing.B) {
	r := newRecorder()
	for i := range 20000 {
		r.record(int64(50_000 + (i*7919)%2_000_000))
	}
	var enc encoder
	b.ReportAllocs()
	for b.Loop() {
		enc.summarize(r)
	}
}

func BenchmarkRecord(b *testing.B) {
	r := newRecorder()
	b.ReportAllocs()
	v := int64(1)
	for b.Loop() {
		r.record(clampLatency(v))
		v = v*31%50_000_000 + 1
	}
}

func BenchmarkRecorderSummarizeInterval(b *testing.B) {
	// One interval of one op at 20,000 ops/s: 18,000 values around 100 µs with a tail.
	r := newRecorder()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 18_000 {
		r.record(int64(60_000 + rng.ExpFloat64()*80_000))
	}
	var enc encoder
	b.ReportAllocs()
	for b.Loop() {
		enc.summarize(r)
	}
	b.ReportMetric(float64(len(r.touched)), "buckets")
}
