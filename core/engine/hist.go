package engine

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/cmpbench/cmpbench/core"
)

// recorder is a latency histogram laid out exactly as hdrhistogram-go lays out
// core.NewHistogram (1 ns to 60 s, 3 significant digits: 27,648 counters), which
// also remembers the counters it has touched. Merging, resetting, reading
// percentiles and encoding then cost as much as the distinct latencies recorded in
// an interval, a few hundred, instead of a pass over every counter each (and the
// library's encoder allocates once per counter and a megabyte of compressor state
// per call). Recording is an index computation and an increment; nothing
// allocates once a recorder has been used. Its encoding is the library's V2 format
// compressed at zlib's fastest level (the library's own takes three times as
// long); the library decodes it to the same histogram (tests check it).
type recorder struct {
	counts  []int64
	touched []int32 // indices of the nonzero counters, in the order first touched
	total   int64
}

// The geometry of core.NewHistogram, as hdrhistogram-go derives it.
const (
	unitMagnitude               = 0  // floor(log2(HistMin))
	subBucketHalfCountMagnitude = 10 // ceil(log2(2 * 10^HistDigits)) - 1
	subBucketCount              = 1 << (subBucketHalfCountMagnitude + 1)
	subBucketHalfCount          = subBucketCount / 2
	subBucketMask               = (subBucketCount - 1) << unitMagnitude
)

var countsLen = func() int {
	buckets := 1
	for v := int64(subBucketCount) << unitMagnitude; v <= core.HistMax; v <<= 1 {
		buckets++
	}
	return (buckets + 1) * subBucketHalfCount
}()

func newRecorder() *recorder {
	return &recorder{counts: make([]int64, countsLen), touched: make([]int32, 0, 256)}
}

func bucketIndex(v int64) int {
	return 64 - bits.LeadingZeros64(uint64(v|subBucketMask)) - unitMagnitude - (subBucketHalfCountMagnitude + 1)
}

func countsIndex(v int64) int {
	b := bucketIndex(v)
	sub := int(v >> uint(b+unitMagnitude))
	return (b+1)<<subBucketHalfCountMagnitude + sub - subBucketHalfCount
}

// valueAt is the lowest value counted at index i.
func valueAt(i int) int64 {
	b := i>>subBucketHalfCountMagnitude - 1
	sub := i&(subBucketHalfCount-1) + subBucketHalfCount
	if b < 0 {
		sub -= subBucketHalfCount
		b = 0
	}
	return int64(sub) << uint(b+unitMagnitude)
}

// highestEquivalent is the highest value counted at the same index as v.
func highestEquivalent(v int64) int64 {
	b := bucketIndex(v)
	sub := v >> uint(b+unitMagnitude)
	size := int64(1) << uint(unitMagnitude+b)
	if sub >= subBucketCount {
		size <<= 1
	}
	return (sub << uint(b+unitMagnitude)) + size - 1
}

// record counts one value, already clamped to [core.HistMin, core.HistMax].
func (r *recorder) record(v int64) {
	i := countsIndex(v)
	if r.counts[i] == 0 {
		r.touched = append(r.touched, int32(i))
	}
	r.counts[i]++
	r.total++
}

// mergeInto adds r's counts to dst.
func (r *recorder) mergeInto(dst *recorder) {
	for _, i := range r.touched {
		if dst.counts[i] == 0 {
			dst.touched = append(dst.touched, i)
		}
		dst.counts[i] += r.counts[i]
	}
	dst.total += r.total
}

func (r *recorder) reset() {
	for _, i := range r.touched {
		r.counts[i] = 0
	}
	r.touched = r.touched[:0]
	r.total = 0
}

// percentileRank is hdrhistogram-go's: the rank, in [1, total], of a percentile.
func percentileRank(p float64, total int64) int64 {
	rank := (p/100)*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// encoder turns recorders into core.Latency, reusing its buffers and its
// compressor from one interval to the next.
type encoder struct {
	payload, inner, out bytes.Buffer
	zw                  *zlib.Writer
	varint              [10]byte
}

// Cookies and header size of the V2 encoding, as hdrhistogram-go writes it.
const (
	v2EncodingCookie           = 0x1c849303 | 0x10
	v2CompressedEncodingCookie = 0x1c849304 | 0x10
	v2HeaderSize               = 40
)

// summarize reads r's percentiles and encodes it; an empty recorder gives the zero
// Latency.
func (enc *encoder) summarize(r *recorder) (core.Latency, error) {
	if r == nil || r.total == 0 {
		return core.Latency{}, nil
	}
	slices.Sort(r.touched)
	l := core.Latency{Count: r.total}
	targets := [...]struct {
		p   float64
		dst *int64
	}{{50, &l.P50}, {90, &l.P90}, {99, &l.P99}, {99.9, &l.P999}, {99.99, &l.P9999}}
	next, cum := 0, int64(0)
	for _, i := range r.touched {
		cum += r.counts[i]
		for next < len(targets) && cum >= percentileRank(targets[next].p, r.total) {
			*targets[next].dst = highestEquivalent(valueAt(int(i)))
			next++
		}
	}
	last := int(r.touched[len(r.touched)-1])
	l.Max = highestEquivalent(valueAt(last))

	// The payload: ZigZag LEB128 counts over [0, last], runs of zeros as their
	// negated length (a single zero as 0).
	enc.payload.Reset()
	prev := -1
	for _, i32 := range r.touched {
		i := int(i32)
		if zeros := i - prev - 1; zeros > 1 {
			enc.putVarint(-int64(zeros))
		} else if zeros == 1 {
			enc.putVarint(0)
		}
		enc.putVarint(r.counts[i])
		prev = i
	}
	enc.inner.Reset()
	var h [v2HeaderSize]byte
	binary.BigEndian.PutUint32(h[0:], v2EncodingCookie)
	binary.BigEndian.PutUint32(h[4:], uint32(enc.payload.Len()))
	binary.BigEndian.PutUint32(h[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(h[12:], uint32(core.HistDigits))
	binary.BigEndian.PutUint64(h[16:], uint64(core.HistMin))
	binary.BigEndian.PutUint64(h[24:], uint64(core.HistMax))
	binary.BigEndian.PutUint64(h[32:], math.Float64bits(1))
	enc.inner.Write(h[:])
	enc.inner.Write(enc.payload.Bytes())

	enc.out.Reset()
	var outer [8]byte
	enc.out.Write(outer[:]) // cookie and length, filled in below
	if enc.zw == nil {
		var err error
		if enc.zw, err = zlib.NewWriterLevel(&enc.out, zlib.BestSpeed); err != nil {
			return core.Latency{}, err
		}
	} else {
		enc.zw.Reset(&enc.out)
	}
	if _, err := enc.zw.Write(enc.inner.Bytes()); err != nil {
		return core.Latency{}, err
	}
	if err := enc.zw.Close(); err != nil {
		return core.Latency{}, err
	}
	raw := enc.out.Bytes()
	binary.BigEndian.PutUint32(raw[0:], v2CompressedEncodingCookie)
	binary.BigEndian.PutUint32(raw[4:], uint32(len(raw)-8))
	l.HDR = make([]byte, base64.StdEncoding.EncodedLen(len(raw)))
	base64.StdEncoding.Encode(l.HDR, raw)
	return l, nil
}

// putVarint appends v as hdrhistogram's ZigZag LEB128 (at most 9 bytes, the last
// one holding 8 bits).
func (enc *encoder) putVarint(v int64) {
	u := uint64((v << 1) ^ (v >> 63))
	b := enc.varint[:0]
	for n := 0; ; n++ {
		if n == 8 {
			b = append(b, byte(u))
			break
		}
		if u>>7 == 0 {
			b = append(b, byte(u))
			break
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	enc.payload.Write(b)
}
