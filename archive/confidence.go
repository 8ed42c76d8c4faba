package archive

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/confidence"
)

// ciQuantiles are the response-time percentiles a summary row gives an
// interval to, with the columns that hold it.
var ciQuantiles = []struct {
	q      float64
	name   string
	lo, hi func(*SummaryRow) *int64
}{
	{0.5, "p50", func(r *SummaryRow) *int64 { return &r.RespP50Lo }, func(r *SummaryRow) *int64 { return &r.RespP50Hi }},
	{0.99, "p99", func(r *SummaryRow) *int64 { return &r.RespP99Lo }, func(r *SummaryRow) *int64 { return &r.RespP99Hi }},
	{0.999, "p99.9", func(r *SummaryRow) *int64 { return &r.RespP999Lo }, func(r *SummaryRow) *int64 { return &r.RespP999Hi }},
	{0.9999, "p99.99", func(r *SummaryRow) *int64 { return &r.RespP9999Lo }, func(r *SummaryRow) *int64 { return &r.RespP9999Hi }},
}

// PhaseConfidence is how sure a phase's own numbers are, every op merged as
// its table shows them (format 3): the 95 % intervals of its achieved rate and
// of its response time's percentiles (TimedRows merged), by percentile name;
// Note says what has none and why.
type PhaseConfidence struct {
	Rate []float64          `json:"rate,omitempty"` // [lo, hi], ops/s
	Resp map[string][]int64 `json:"resp_ns,omitempty"`
	Note string             `json:"note,omitempty"`
}

// RespOf is the interval of percentile name ("p99"); false when there is none.
func (c *PhaseConfidence) RespOf(name string) (lo, hi int64, ok bool) {
	if c == nil || len(c.Resp[name]) != 2 {
		return 0, 0, false
	}
	return c.Resp[name][0], c.Resp[name][1], true
}

// TimedRows are the rows whose latencies describe a phase: its deliveries in
// a pub/sub phase (the publishes' own round trips say little), else every op.
func TimedRows(pi *PhaseInfo, rows []SummaryRow) []SummaryRow {
	if _, ok := pi.Spec.(core.PubSubSpec); !ok {
		return rows
	}
	deliver := core.OpDeliver.String()
	for _, r := range rows {
		if r.Op == deliver {
			return []SummaryRow{r}
		}
	}
	return nil
}

// Drift is how a measured phase drifted across its window (confidence.Trend):
// significantly, and by more than a few percent.
type Drift struct {
	// What drifted: "throughput", or "p99 of get".
	What string `json:"what"`
	// Change is relative to where the window started: -0.18 fell by 18 %
	// (confidence.Drift).
	Change float64 `json:"change"`
	// AtStart: the window's first SettleS seconds differ from the rest, which
	// is steady: a warm-up that much longer would leave them out.
	AtStart bool    `json:"at_start,omitempty"`
	SettleS float64 `json:"settle_s,omitempty"`
}

// Sentence says the drift for a caveat: "throughput fell 18 % across the
// window".
func (d *Drift) Sentence() string {
	dir := "rose"
	if d.Change < 0 {
		dir = "fell"
	}
	if d.AtStart {
		return fmt.Sprintf("%s %s %.0f %% after the window's first %.0f s: a warm-up that much longer would leave them out", d.What, dir, 100*abs(d.Change), d.SettleS)
	}
	return fmt.Sprintf("%s %s %.0f %% across the window", d.What, dir, 100*abs(d.Change))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// confider gathers, from interval rows as they are read (in order, any
// phases), what the confidence of the phases it was asked about needs: per
// phase and op, each interval's operations, length, how many of its
// operations were at or below the phase's percentiles, and its p99. It holds
// a few numbers an interval, never a histogram.
type confider struct {
	phases map[phaseKey]*phaseWindow
}

type phaseWindow struct {
	ops       map[string]*opWindow
	intervals map[int]float64 // each interval's length, s
	issued    map[int]float64 // each interval's successful issued operations
	// timed is the phase's timed ops (TimedRows) merged: their whole
	// distribution and percentiles, and each interval's counts at or below
	// them, summed over the ops.
	timed      *opWindow
	timedOps   map[string]bool
	timedTotal map[int][]int64 // per interval: total, then at or below each of timed.xs
}

type opWindow struct {
	whole confidence.Dist
	xs    []int64 // the phase's percentiles (ciQuantiles)
	spans map[int]confidence.Span
	p99   map[int]float64
}

func newConfider() *confider { return &confider{phases: map[phaseKey]*phaseWindow{}} }

// want registers a phase's summary rows: each op's whole response-time
// distribution and its percentiles.
func (c *confider) want(pi *PhaseInfo, rows []SummaryRow) error {
	pw := &phaseWindow{ops: map[string]*opWindow{}, intervals: map[int]float64{}, issued: map[int]float64{},
		timedOps: map[string]bool{}, timedTotal: map[int][]int64{}}
	var merged *hdrhistogram.PackedHistogram
	for i := range rows {
		r := &rows[i]
		ow := &opWindow{spans: map[int]confidence.Span{}, p99: map[int]float64{}}
		if len(r.RespHDR) > 0 {
			h, err := hdrhistogram.DecodePacked(r.RespHDR)
			if err != nil {
				return fmt.Errorf("%s %s: response time: %w", describe(pi), r.Op, err)
			}
			ow.whole, ow.xs = confidence.Hist(h), percentiles(confidence.Hist(h))
		}
		pw.ops[r.Op] = ow
	}
	for _, r := range TimedRows(pi, rows) {
		pw.timedOps[r.Op] = true
		if len(r.RespHDR) == 0 {
			continue
		}
		h, err := hdrhistogram.DecodePacked(r.RespHDR)
		if err != nil {
			return fmt.Errorf("%s %s: response time: %w", describe(pi), r.Op, err)
		}
		if merged == nil {
			merged = h
		} else if dropped := merged.Merge(h); dropped > 0 {
			return fmt.Errorf("%s %s: response time: %d values outside the histogram's range", describe(pi), r.Op, dropped)
		}
	}
	if merged != nil {
		pw.timed = &opWindow{whole: confidence.Hist(merged), xs: percentiles(confidence.Hist(merged))}
	}
	c.phases[keyOfPhase(pi)] = pw
	return nil
}

// percentiles are d's ciQuantiles.
func percentiles(d confidence.Dist) []int64 {
	xs := make([]int64, len(ciQuantiles))
	for i, cq := range ciQuantiles {
		xs[i] = d.ValueAt(cq.q)
	}
	return xs
}

// add reads one interval row; one of a phase not asked about is passed over.
func (c *confider) add(r *IntervalRow) error {
	pw := c.phases[phaseKey{r.System, r.PhaseIndex, r.Repetition}]
	if pw == nil {
		return nil
	}
	secs := float64(r.EndNs-r.StartNs) / 1e9
	pw.intervals[r.Interval] = secs
	if op, err := core.ParseOpKind(r.Op); err == nil && op.Issued() {
		pw.issued[r.Interval] += float64(r.Count)
	}
	ow := pw.ops[r.Op]
	if ow == nil {
		return nil
	}
	lat := counted{xs: ow.xs, at: make([]int64, len(ow.xs))} // none timed: none at or below
	var h *hdrhistogram.PackedHistogram
	if len(r.RespHDR) > 0 {
		var err error
		if h, err = hdrhistogram.DecodePacked(r.RespHDR); err != nil {
			return fmt.Errorf("%s #%d interval %d %s: response time: %w", r.Phase, r.PhaseIndex, r.Interval, r.Op, err)
		}
	}
	if h != nil && ow.whole != nil {
		lat = countedAt(confidence.Hist(h), ow.xs)
	}
	if pw.timed != nil && pw.timedOps[r.Op] {
		sum := pw.timedTotal[r.Interval]
		if sum == nil {
			sum = make([]int64, 1+len(pw.timed.xs))
		}
		if h != nil {
			at := countedAt(confidence.Hist(h), pw.timed.xs)
			sum[0] += at.total
			for i, n := range at.at {
				sum[1+i] += n
			}
		}
		pw.timedTotal[r.Interval] = sum
	}
	ow.spans[r.Interval] = confidence.Span{Ops: float64(r.Count), Seconds: secs, Lat: lat}
	if r.Count > 0 {
		ow.p99[r.Interval] = float64(r.RespP99)
	}
	return nil
}

// counted is an interval's latencies as the confidence of its phase needs
// them: how many, and how many at or below each of the phase's percentiles.
type counted struct {
	total int64
	xs    []int64
	at    []int64
}

func countedAt(d confidence.Dist, xs []int64) counted {
	return counted{total: d.Total(), xs: xs, at: confidence.CountsAtOrBelow(d, xs)}
}

func (c counted) Total() int64 { return c.total }

// ValueAt is not asked of an interval: its phase's percentiles are the whole's.
func (c counted) ValueAt(float64) int64 { panic("archive: an interval's own quantile was asked for") }

func (c counted) AtOrBelow(x int64) int64 {
	if i := slices.Index(c.xs, x); i >= 0 {
		return c.at[i]
	}
	if c.total == 0 {
		return 0
	}
	panic(fmt.Sprintf("archive: an interval was asked about %d, not one of its phase's percentiles", x))
}

// apply gives the phase's summary rows their intervals and, for a measured
// phase that ended ok, the phase its drift.
func (c *confider) apply(pi *PhaseInfo, rows []SummaryRow) {
	pw := c.phases[keyOfPhase(pi)]
	if pw == nil {
		return
	}
	pi.Confidence, pi.Unsteady = nil, nil
	if pi.Status != core.StatusOK {
		// Its numbers are kept, but not vouched for: no interval says how
		// sure they are.
		note := fmt.Sprintf("the phase ended %s", pi.Status)
		for i := range rows {
			rows[i].CINote = note
		}
		pi.Confidence = &PhaseConfidence{Note: note}
		return
	}
	order := slices.Sorted(maps.Keys(pw.intervals))
	for i := range rows {
		r := &rows[i]
		ow := pw.ops[r.Op]
		if ow == nil {
			continue
		}
		spans := make([]confidence.Span, len(order))
		for j, idx := range order {
			s, ok := ow.spans[idx]
			if !ok {
				s = confidence.Span{Seconds: pw.intervals[idx], Lat: counted{xs: ow.xs, at: make([]int64, len(ow.xs))}}
			}
			spans[j] = s
		}
		confide(r, spans, ow, latenciesUnsure(pi, r))
	}
	pi.Confidence = nil
	if len(rows) > 0 {
		why := ""
		for i := range rows {
			if why = latenciesUnsure(pi, &rows[i]); why != "" {
				break
			}
		}
		pi.Confidence = phaseConfidence(rows[0].AchievedRate, pw, order, why)
	}
	if pi.Kind != core.PhaseMeasured {
		return
	}
	pi.Unsteady = drift(pw, order, rows)
	for i := range rows {
		rows[i].Unsteady = pi.Unsteady != nil
	}
}

// latenciesUnsure says why a row's latencies get no interval though its
// window has enough intervals: they are not of what the phase asked (a
// fixed-rate phase not sustained), or of the client as much as the server
// (client-lagged). An interval would say how sure a number is that does not
// mean what its column says.
func latenciesUnsure(pi *PhaseInfo, r *SummaryRow) string {
	switch {
	case r.Sustained != nil && !*r.Sustained:
		return "latencies: not sustained, so not of the rate asked"
	case pi.ClientLagged:
		return "latencies: client-lagged, so of the client as much as the server"
	}
	return ""
}

// confide fills one row's intervals, saying in its note what has none: the
// rate's, and its latencies' unless unsure says why not (latenciesUnsure).
func confide(r *SummaryRow, spans []confidence.Span, ow *opWindow, unsure string) {
	var notes []string
	if iv, err := confidence.Rate(spans, confidence.Level); err != nil {
		notes = append(notes, err.Error())
	} else {
		est := (iv.Lo + iv.Hi) / 2
		if est > 0 {
			h := (iv.Hi - iv.Lo) / 2 / est
			r.ThroughputLo, r.ThroughputHi = r.Throughput*(1-h), r.Throughput*(1+h)
		}
	}
	switch {
	case len(notes) > 0 || ow.whole == nil:
	case unsure != "":
		notes = append(notes, unsure)
	default:
		for _, cq := range ciQuantiles {
			iv, err := confidence.Quantile(spans, ow.whole, cq.q, confidence.Level)
			if err != nil {
				notes = append(notes, cq.name+": "+err.Error())
				continue
			}
			*cq.lo(r), *cq.hi(r) = int64(iv.Lo), int64(iv.Hi)
		}
	}
	r.CINote = strings.Join(notes, "; ")
}

// phaseConfidence is the intervals of the phase's achieved rate and of its
// timed ops' percentiles, merged.
// unsure, when not empty, says why its latencies have none (latenciesUnsure).
func phaseConfidence(achieved float64, pw *phaseWindow, order []int, unsure string) *PhaseConfidence {
	pc := &PhaseConfidence{}
	rates := make([]confidence.Span, len(order))
	for j, idx := range order {
		rates[j] = confidence.Span{Ops: pw.issued[idx], Seconds: pw.intervals[idx]}
	}
	iv, err := confidence.Rate(rates, confidence.Level)
	if err != nil {
		pc.Note = err.Error()
		return pc
	}
	if est := (iv.Lo + iv.Hi) / 2; est > 0 {
		h := (iv.Hi - iv.Lo) / 2 / est
		pc.Rate = []float64{achieved * (1 - h), achieved * (1 + h)}
	}
	if unsure != "" {
		pc.Note = unsure
	}
	if pw.timed == nil || unsure != "" {
		return pc
	}
	spans := make([]confidence.Span, len(order))
	for j, idx := range order {
		c := counted{xs: pw.timed.xs, at: make([]int64, len(pw.timed.xs))}
		if sum := pw.timedTotal[idx]; sum != nil {
			c.total, c.at = sum[0], sum[1:]
		}
		spans[j] = confidence.Span{Seconds: pw.intervals[idx], Lat: c}
	}
	var notes []string
	for _, cq := range ciQuantiles {
		iv, err := confidence.Quantile(spans, pw.timed.whole, cq.q, confidence.Level)
		if err != nil {
			notes = append(notes, cq.name+": "+err.Error())
			continue
		}
		if pc.Resp == nil {
			pc.Resp = map[string][]int64{}
		}
		pc.Resp[cq.name] = []int64{int64(iv.Lo), int64(iv.Hi)}
	}
	pc.Note = strings.Join(notes, "; ")
	return pc
}

// drift is the phase's drift, if it has one: its throughput's first, then
// each op's p99 (in the rows' order).
func drift(pw *phaseWindow, order []int, rows []SummaryRow) *Drift {
	order = whole(pw, order)
	settle := func(d confidence.Drift) float64 {
		var s float64
		for _, idx := range order[:min(d.Settle, len(order))] {
			s += pw.intervals[idx]
		}
		return s
	}
	ys := make([]float64, 0, len(order))
	for _, idx := range order {
		if secs := pw.intervals[idx]; secs > 0 {
			ys = append(ys, pw.issued[idx]/secs)
		}
	}
	// The series tested: the throughput, and each op's p99 where every
	// interval has enough operations for one (p99Tail beyond it: a p99 of
	// fewer is an interval's few slowest, noise). Each is tested at
	// TrendLevel shared among them (Bonferroni), so that a steady phase is
	// flagged as rarely with many ops as with one.
	var p99s []SummaryRow
	for _, r := range rows {
		if ow := pw.ops[r.Op]; ow != nil && len(ow.p99) == len(order) && enoughForP99(ow, order) {
			p99s = append(p99s, r)
		}
	}
	level := 1 - (1-confidence.TrendLevel)/float64(1+len(p99s))
	if d, err := confidence.Trend(ys, level, confidence.SteadyRate); err == nil && d.Unsteady(confidence.SteadyRate) {
		return &Drift{What: "throughput", Change: d.Change, AtStart: d.AtStart, SettleS: settle(d)}
	}
	for _, r := range p99s {
		ow := pw.ops[r.Op]
		ys := make([]float64, len(order))
		for j, idx := range order {
			ys[j] = ow.p99[idx]
		}
		if d, err := confidence.Trend(ys, level, confidence.SteadyP99); err == nil && d.Unsteady(confidence.SteadyP99) {
			return &Drift{What: "p99 of " + r.Op, Change: d.Change, AtStart: d.AtStart, SettleS: settle(d)}
		}
	}
	return nil
}

// whole is order less its intervals shorter than half the window's median
// one: the sliver a window ends with (the replies to what was in flight when
// it closed, microseconds long) is no interval of its own, and its rate and
// p99, of a handful of operations, stand out of any trend (a quiet phase's
// throughput read as rising 14 %, and no op's p99 ever had enough operations
// to be tested).
func whole(pw *phaseWindow, order []int) []int {
	lengths := make([]float64, len(order))
	for i, idx := range order {
		lengths[i] = pw.intervals[idx]
	}
	slices.Sort(lengths)
	if len(lengths) == 0 {
		return order
	}
	half := lengths[len(lengths)/2] / 2
	kept := make([]int, 0, len(order))
	for _, idx := range order {
		if pw.intervals[idx] >= half {
			kept = append(kept, idx)
		}
	}
	return kept
}

// p99Tail is how many operations an interval needs beyond its p99 for the
// op's p99 over time to be tested for drift.
const p99Tail = 10

// enoughForP99 says whether every interval of the op has p99Tail operations
// beyond its p99.
func enoughForP99(ow *opWindow, order []int) bool {
	for _, idx := range order {
		if ow.spans[idx].Ops*(1-0.99) < p99Tail-1e-9 {
			return false
		}
	}
	return true
}
