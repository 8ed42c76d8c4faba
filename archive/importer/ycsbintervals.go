package importer

import (
	"fmt"
	"slices"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// oneClass is the class of an op's errors when they are all of one: the class of
// the failures the intervals count together (OP-FAILED).
func oneClass(errs [core.NumErrorClasses]int64) (core.ErrorClass, bool) {
	var class core.ErrorClass
	n := 0
	for c, v := range errs {
		if v > 0 {
			class, n = core.ErrorClass(c), n+1
		}
	}
	return class, n <= 1
}

// statusIntervals lays out the status lines as intervals: nil, with the reason in
// y.interval, when their counts do not add up to the totals.
func (y *ycsbImport) statusIntervals(totals []core.OpInterval, open bool, info *archive.PhaseInfo) ([]core.IntervalReport, error) {
	st := y.l.status
	info.Started = st[0].at
	if y.l.countless {
		y.interval = "YCSB's status lines carry no per-operation counts (measurementtype other than hdrhistogram), so intervals.parquet holds the whole run as one interval"
		return nil, nil
	}
	var out []core.IntervalReport
	for i := 1; i < len(st); i++ {
		iv := core.IntervalReport{Index: i - 1, Start: st[i-1].at.Sub(st[0].at), End: st[i].at.Sub(st[0].at)}
		for k, n := range y.names {
			vals := st[i].ops[n]
			o := core.OpInterval{Op: ycsbOps[n], OK: int64(vals["Count"])}
			for measure, m := range st[i].ops {
				op, rest, found := failureOf(measure)
				if !found || op != n {
					continue
				}
				class := ycsbErrorClass(rest)
				if rest == "FAILED" {
					c, ok := oneClass(totals[k].Errors)
					if !ok {
						y.interval = fmt.Sprintf("%s failed in more than one way and its status lines count failures together (%s-FAILED), so its intervals' errors cannot be told apart by class: intervals.parquet holds the whole run as one interval", n, n)
						return nil, nil
					}
					class = c
				}
				o.Errors[class] += int64(m["Count"])
			}
			if o.OK > 0 {
				o.Service = statusLatency(vals)
				if iv, ok := st[i].ops["Intended-"+n]; ok {
					o.Response = statusLatency(iv)
				}
			}
			y.asMeasured(&o, open)
			iv.Ops = append(iv.Ops, o)
		}
		out = append(out, iv)
	}
	if k, s := countsMismatch(out, totals); k >= 0 {
		y.interval = fmt.Sprintf("YCSB's status lines count %d %s successes and %d failures, its totals %d and %d, so intervals.parquet holds the whole run as one interval", s.OK, y.names[k], s.ErrorTotal(), totals[k].OK, totals[k].ErrorTotal())
		return nil, nil
	}
	y.interval = fmt.Sprintf("Intervals are YCSB's status lines (every %s): their percentiles are YCSB's, without histograms", time.Duration(info.IntervalNs))
	return out, nil
}

// statusLatency reads one [OP: Count=..., Max=..., 99=...] of a status line (µs).
func statusLatency(v map[string]float64) core.Latency {
	return core.Latency{Count: int64(v["Count"]), P50: usToNs(v["50"]), P90: usToNs(v["90"]), P99: usToNs(v["99"]),
		P999: usToNs(v["99.9"]), P9999: usToNs(v["99.99"]), Max: usToNs(v["Max"])}
}

// asMeasured puts an interval's latencies in the columns they measure: with
// measurement.interval=intended the op's own are response times; in a closed loop
// service and response time are the same.
func (y *ycsbImport) asMeasured(o *core.OpInterval, open bool) {
	if y.intendedOnly {
		o.Response, o.Service = o.Service, core.Latency{}
	}
	fillClosedLoop(o, open)
}

// countsMismatch finds the first op whose intervals' counts do not add up to its
// totals: its index and the intervals' sum, or -1.
func countsMismatch(out []core.IntervalReport, totals []core.OpInterval) (int, core.OpInterval) {
	for k := range totals {
		var sum core.OpInterval
		for i := range out {
			sum.AddCounts(&out[i].Ops[k])
		}
		if sum.OK != totals[k].OK || sum.Errors != totals[k].Errors {
			return k, sum
		}
	}
	return -1, core.OpInterval{}
}

// hdrIntervals lays out the HdrHistogram logs' intervals, and gives their start.
// YCSB logs every measurement's interval at each status line, one after the
// other, and once more at the end: histograms that end within tickGap of each
// other are one interval.
func (y *ycsbImport) hdrIntervals(hists map[string]*hdrLog, totals []core.OpInterval, open bool, info *archive.PhaseInfo) ([]core.IntervalReport, time.Time, error) {
	ticks := newHdrTicks(hists)
	if len(ticks.ends) == 0 {
		y.interval = "no operation succeeded, so intervals.parquet holds the whole run as one interval"
		return nil, time.Time{}, nil
	}
	out := ticks.intervals()
	for k, n := range y.names {
		per, placed, err := y.hdrOpIntervals(n, totals[k], hists, ticks)
		if err != nil {
			return nil, time.Time{}, err
		}
		if !placed {
			return nil, ticks.start, nil
		}
		for i := range per {
			y.asMeasured(&per[i], open)
			out[i].Ops = append(out[i].Ops, per[i])
		}
	}
	if k, sum := countsMismatch(out, totals); k >= 0 {
		y.interval = fmt.Sprintf("the HdrHistogram logs count %d %s successes and %d failures, the totals %d and %d, so intervals.parquet holds the whole run as one interval", sum.OK, y.names[k], sum.ErrorTotal(), totals[k].OK, totals[k].ErrorTotal())
		return nil, ticks.start, nil
	}
	y.interval = "Intervals and histograms are YCSB's HdrHistogram logs', exact to their 3 significant digits"
	return out, ticks.start, nil
}

// hdrTicks are the intervals the HdrHistogram logs make together.
type hdrTicks struct {
	start time.Time   // the earliest histogram's start
	ends  []time.Time // each interval's end: the last histogram end of its group
}

// newHdrTicks groups the logs' histograms by their ends: those that end within
// tickGap of each other are one interval.
func newHdrTicks(hists map[string]*hdrLog) hdrTicks {
	const tickGap = 250 * time.Millisecond
	var t hdrTicks
	var ends []time.Time
	for _, l := range hists {
		for _, iv := range l.Intervals {
			if t.start.IsZero() || iv.Start.Before(t.start) {
				t.start = iv.Start
			}
			ends = append(ends, iv.End)
		}
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	for _, e := range ends {
		if len(t.ends) > 0 && e.Sub(t.ends[len(t.ends)-1]) <= tickGap {
			t.ends[len(t.ends)-1] = e
			continue
		}
		t.ends = append(t.ends, e)
	}
	return t
}

// index is the interval a histogram that ends at e belongs to.
func (t hdrTicks) index(e time.Time) int {
	return sort.Search(len(t.ends), func(i int) bool { return !t.ends[i].Before(e) })
}

// intervals are the intervals, without their ops.
func (t hdrTicks) intervals() []core.IntervalReport {
	out := make([]core.IntervalReport, len(t.ends))
	for i := range t.ends {
		from := t.start
		if i > 0 {
			from = t.ends[i-1]
		}
		out[i] = core.IntervalReport{Index: i, Start: from.Sub(t.start), End: t.ends[i].Sub(t.start)}
	}
	return out
}

// add puts each histogram of the log l (none when nil) into its interval's entry
// of per, through into.
func (t hdrTicks) add(per []core.OpInterval, l *hdrLog, into func(o *core.OpInterval, h *hdrhistogram.Histogram) error) error {
	if l == nil {
		return nil
	}
	for _, iv := range l.Intervals {
		if err := into(&per[t.index(iv.End)], iv.Hist); err != nil {
			return err
		}
	}
	return nil
}

// hdrOpIntervals are op n's intervals from its logs: its successes and service
// time, its response time (Intended-n) and its failures (n-FAILED); placed is
// false, with the reason in y.interval, when its failures cannot be placed.
func (y *ycsbImport) hdrOpIntervals(n string, total core.OpInterval, hists map[string]*hdrLog, ticks hdrTicks) (per []core.OpInterval, placed bool, err error) {
	per = make([]core.OpInterval, len(ticks.ends))
	for i := range per {
		per[i] = core.OpInterval{Op: ycsbOps[n]}
	}
	err = ticks.add(per, hists[n], func(o *core.OpInterval, h *hdrhistogram.Histogram) (err error) {
		o.OK += h.TotalCount()
		o.Service, err = mergeLatency(o.Service, h)
		return err
	})
	if err == nil {
		err = ticks.add(per, hists["Intended-"+n], func(o *core.OpInterval, h *hdrhistogram.Histogram) (err error) {
			o.Response, err = mergeLatency(o.Response, h)
			return err
		})
	}
	if err != nil {
		return nil, false, err
	}
	if total.ErrorTotal() == 0 {
		return per, true, nil
	}
	placed, err = y.hdrFailures(n, total, hists, ticks, per)
	return per, placed, err
}

// hdrFailures counts op n's failures into their intervals, from its -FAILED log
// (read here when the latencies did not need it), when they are all of one class;
// false, with the reason in y.interval, when they cannot be.
func (y *ycsbImport) hdrFailures(n string, total core.OpInterval, hists map[string]*hdrLog, ticks hdrTicks, per []core.OpInterval) (bool, error) {
	c, ok := oneClass(total.Errors)
	failed := hists[n+"-FAILED"]
	if failed == nil {
		if l, err := readHdrLog(y.prefix + n + "-FAILED.hdr"); err == nil {
			failed = l
			if err := y.r.addFile(y.prefix + n + "-FAILED.hdr"); err != nil {
				return false, err
			}
		}
	}
	if !ok || failed == nil {
		y.interval = fmt.Sprintf("%s's failures cannot be placed in intervals by class (no %s-FAILED.hdr, or failures of more than one kind), so intervals.parquet holds the whole run as one interval", n, n)
		return false, nil
	}
	for _, iv := range failed.Intervals {
		per[ticks.index(iv.End)].Errors[c] += iv.Hist.TotalCount()
	}
	return true, nil
}

// mergeLatency adds a histogram to an interval's distribution.
func mergeLatency(l core.Latency, h *hdrhistogram.Histogram) (core.Latency, error) {
	sum := core.NewHistogram()
	if prev, err := l.Histogram(); err != nil {
		return l, err
	} else if prev != nil {
		sum.Merge(prev)
	}
	sum.Merge(h)
	return core.Summarize(sum)
}
