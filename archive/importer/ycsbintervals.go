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
	sums := map[string]*core.OpInterval{}
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
				if y.intendedOnly {
					o.Response, o.Service = o.Service, core.Latency{}
				}
			}
			switch {
			case !open && o.Response.Count == 0:
				o.Response = o.Service
			case !open && o.Service.Count == 0:
				o.Service = o.Response
			}
			if sums[n] == nil {
				sums[n] = &core.OpInterval{}
			}
			sums[n].AddCounts(&o)
			iv.Ops = append(iv.Ops, o)
		}
		out = append(out, iv)
	}
	for k, n := range y.names {
		if s := sums[n]; s.OK != totals[k].OK || s.Errors != totals[k].Errors {
			y.interval = fmt.Sprintf("YCSB's status lines count %d %s successes and %d failures, its totals %d and %d, so intervals.parquet holds the whole run as one interval", s.OK, n, s.ErrorTotal(), totals[k].OK, totals[k].ErrorTotal())
			return nil, nil
		}
	}
	y.interval = fmt.Sprintf("Intervals are YCSB's status lines (every %s): their percentiles are YCSB's, without histograms", time.Duration(info.IntervalNs))
	return out, nil
}

// statusLatency reads one [OP: Count=..., Max=..., 99=...] of a status line (µs).
func statusLatency(v map[string]float64) core.Latency {
	return core.Latency{Count: int64(v["Count"]), P50: usToNs(v["50"]), P90: usToNs(v["90"]), P99: usToNs(v["99"]),
		P999: usToNs(v["99.9"]), P9999: usToNs(v["99.99"]), Max: usToNs(v["Max"])}
}

// hdrIntervals lays out the HdrHistogram logs' intervals. YCSB logs every
// measurement's interval at each status line, one after the other, and once more
// at the end: histograms that end within tickGap of each other are one interval.
func (y *ycsbImport) hdrIntervals(hists map[string]*hdrLog, totals []core.OpInterval, open bool, info *archive.PhaseInfo) ([]core.IntervalReport, time.Time, error) {
	const tickGap = 250 * time.Millisecond
	var start time.Time
	var ends []time.Time
	for _, l := range hists {
		for _, iv := range l.Intervals {
			if start.IsZero() || iv.Start.Before(start) {
				start = iv.Start
			}
			ends = append(ends, iv.End)
		}
	}
	if len(ends) == 0 {
		y.interval = "no operation succeeded, so intervals.parquet holds the whole run as one interval"
		return nil, time.Time{}, nil
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	var ticks []time.Time // each interval's end: the last histogram end of its group
	for _, e := range ends {
		if len(ticks) > 0 && e.Sub(ticks[len(ticks)-1]) <= tickGap {
			ticks[len(ticks)-1] = e
			continue
		}
		ticks = append(ticks, e)
	}
	tick := func(e time.Time) int {
		return sort.Search(len(ticks), func(i int) bool { return !ticks[i].Before(e) })
	}
	out := make([]core.IntervalReport, len(ticks))
	for i := range ticks {
		from := start
		if i > 0 {
			from = ticks[i-1]
		}
		out[i] = core.IntervalReport{Index: i, Start: from.Sub(start), End: ticks[i].Sub(start)}
	}
	for k, n := range y.names {
		per := make([]core.OpInterval, len(ticks))
		for i := range per {
			per[i] = core.OpInterval{Op: ycsbOps[n]}
		}
		add := func(name string, into func(o *core.OpInterval, h *hdrhistogram.Histogram) error) error {
			l := hists[name]
			if l == nil {
				return nil
			}
			for _, iv := range l.Intervals {
				if err := into(&per[tick(iv.End)], iv.Hist); err != nil {
					return err
				}
			}
			return nil
		}
		err := add(n, func(o *core.OpInterval, h *hdrhistogram.Histogram) (err error) {
			o.OK += h.TotalCount()
			o.Service, err = mergeLatency(o.Service, h)
			return err
		})
		if err == nil {
			err = add("Intended-"+n, func(o *core.OpInterval, h *hdrhistogram.Histogram) (err error) {
				o.Response, err = mergeLatency(o.Response, h)
				return err
			})
		}
		if err != nil {
			return nil, time.Time{}, err
		}
		if errs := totals[k].ErrorTotal(); errs > 0 {
			c, ok := oneClass(totals[k].Errors)
			failed := hists[n+"-FAILED"]
			if failed == nil {
				if l, err := readHdrLog(y.prefix + n + "-FAILED.hdr"); err == nil {
					failed = l
					if err := y.r.addFile(y.prefix + n + "-FAILED.hdr"); err != nil {
						return nil, time.Time{}, err
					}
				}
			}
			if !ok || failed == nil {
				y.interval = fmt.Sprintf("%s's failures cannot be placed in intervals by class (no %s-FAILED.hdr, or failures of more than one kind), so intervals.parquet holds the whole run as one interval", n, n)
				return nil, start, nil
			}
			for _, iv := range failed.Intervals {
				per[tick(iv.End)].Errors[c] += iv.Hist.TotalCount()
			}
		}
		for i := range per {
			if y.intendedOnly {
				per[i].Response, per[i].Service = per[i].Service, core.Latency{}
			}
			if !open {
				switch {
				case per[i].Response.Count == 0:
					per[i].Response = per[i].Service
				case per[i].Service.Count == 0:
					per[i].Service = per[i].Response
				}
			}
			out[i].Ops = append(out[i].Ops, per[i])
		}
	}
	var sum core.OpInterval
	for k := range y.names {
		sum = core.OpInterval{}
		for i := range out {
			sum.AddCounts(&out[i].Ops[k])
		}
		if sum.OK != totals[k].OK || sum.Errors != totals[k].Errors {
			y.interval = fmt.Sprintf("the HdrHistogram logs count %d %s successes and %d failures, the totals %d and %d, so intervals.parquet holds the whole run as one interval", sum.OK, y.names[k], sum.ErrorTotal(), totals[k].OK, totals[k].ErrorTotal())
			return nil, start, nil
		}
	}
	y.interval = "Intervals and histograms are YCSB's HdrHistogram logs', exact to their 3 significant digits"
	return out, start, nil
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
