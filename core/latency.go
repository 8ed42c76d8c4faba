package core

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: nanoseconds from 1 ns to 60 s at 3 significant digits.
const (
	HistMin    = 1
	HistMax    = int64(60 * time.Second)
	HistDigits = 3
)

// NewHistogram returns an empty latency histogram with the bounds every part uses.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistMin, HistMax, HistDigits)
}

// newPacked is the sparse form of NewHistogram: a few KB instead of 221 KB, for
// totals that are merged, not recorded into.
func newPacked() *hdrhistogram.PackedHistogram {
	return hdrhistogram.NewPacked(HistMin, HistMax, HistDigits)
}

// EncodeHist encodes a histogram in the standard compressed form ("HISTFAAA...");
// nil and empty histograms encode as nothing.
func EncodeHist(h *hdrhistogram.Histogram) ([]byte, error) {
	if h == nil || h.TotalCount() == 0 {
		return nil, nil
	}
	return h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
}

// DecodeHist is the inverse of EncodeHist.
func DecodeHist(b []byte) (*hdrhistogram.Histogram, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return hdrhistogram.Decode(b)
}

// Latency is one latency distribution in the form in which it crosses the plugin
// boundary and is archived: the HdrHistogram in its standard compressed encoding and
// the percentiles read from it when it was encoded, so that nobody downstream has to
// decode it to print a table. The zero value is an empty distribution.
type Latency struct {
	HDR   []byte // empty when no value was recorded
	Count int64
	// Percentiles and the maximum, in nanoseconds.
	P50, P90, P99, P999, P9999, Max int64
}

// Summarize encodes h and reads its percentiles; nil or empty gives the zero Latency.
func Summarize(h *hdrhistogram.Histogram) (Latency, error) {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}, nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return Latency{}, err
	}
	return Latency{
		HDR: b, Count: h.TotalCount(),
		P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), P9999: h.ValueAtQuantile(99.99), Max: h.Max(),
	}, nil
}

func summarizePacked(h *hdrhistogram.PackedHistogram) (Latency, error) {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}, nil
	}
	b, err := h.Encode()
	if err != nil {
		return Latency{}, err
	}
	return Latency{
		HDR: b, Count: h.TotalCount(),
		P50: h.ValueAtPercentile(50), P90: h.ValueAtPercentile(90), P99: h.ValueAtPercentile(99),
		P999: h.ValueAtPercentile(99.9), P9999: h.ValueAtPercentile(99.99), Max: h.Max(),
	}, nil
}

// Histogram decodes the distribution; nil when it is empty.
func (l Latency) Histogram() (*hdrhistogram.Histogram, error) { return DecodeHist(l.HDR) }

// Totals sums the intervals of a phase as they arrive, one total per op kind:
// counters add up and histograms merge exactly in their sparse form, so that a phase
// of any length holds a few KB per op, never its intervals.
type Totals struct {
	open bool
	ops  [NumOpKinds]*opTotal
}

type opTotal struct {
	counts         OpInterval
	resp, svc, lag *hdrhistogram.PackedHistogram
}

// NewTotals starts the totals of a phase; open says it runs at a fixed rate, where
// response time and lag are recorded apart from service time.
func NewTotals(open bool) *Totals { return &Totals{open: open} }

// Add merges one interval into the totals.
func (t *Totals) Add(r *IntervalReport) error {
	for i := range r.Ops {
		o := &r.Ops[i]
		if o.Op >= NumOpKinds {
			return fmt.Errorf("interval %d: unknown op kind %d", r.Index, o.Op)
		}
		ot := t.ops[o.Op]
		if ot == nil {
			ot = &opTotal{counts: OpInterval{Op: o.Op}, svc: newPacked()}
			if t.open {
				ot.resp, ot.lag = newPacked(), newPacked()
			}
			t.ops[o.Op] = ot
		}
		ot.counts.AddCounts(o)
		if err := mergeEncoded(ot.svc, o.Service.HDR); err != nil {
			return fmt.Errorf("interval %d %s service time: %w", r.Index, o.Op, err)
		}
		if t.open {
			if err := mergeEncoded(ot.resp, o.Response.HDR); err != nil {
				return fmt.Errorf("interval %d %s response time: %w", r.Index, o.Op, err)
			}
			if err := mergeEncoded(ot.lag, o.Lag.HDR); err != nil {
				return fmt.Errorf("interval %d %s send lag: %w", r.Index, o.Op, err)
			}
		}
	}
	return nil
}

func mergeEncoded(into *hdrhistogram.PackedHistogram, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	h, err := hdrhistogram.DecodePacked(b)
	if err != nil {
		return err
	}
	if dropped := into.Merge(h); dropped > 0 {
		return fmt.Errorf("%d values outside the histogram's range", dropped)
	}
	return nil
}

// Result is one OpInterval per op kind seen, in OpKind order, with the merged
// distributions encoded.
func (t *Totals) Result() ([]OpInterval, error) {
	var out []OpInterval
	for _, ot := range t.ops {
		if ot == nil {
			continue
		}
		o := ot.counts
		var err error
		if o.Service, err = summarizePacked(ot.svc); err != nil {
			return nil, err
		}
		o.Response = o.Service
		if t.open {
			if o.Response, err = summarizePacked(ot.resp); err != nil {
				return nil, err
			}
			if o.Lag, err = summarizePacked(ot.lag); err != nil {
				return nil, err
			}
		}
		out = append(out, o)
	}
	return out, nil
}
