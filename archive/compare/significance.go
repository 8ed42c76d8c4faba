package compare

import (
	"fmt"
	"math"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core/confidence"
)

// formatWithIntervals is the first archive format whose summary rows hold
// intervals (archive.FormatVersion 3): before it, every change is judged by
// the fixed bands, as it always was.
const formatWithIntervals = 3

// What a row's interval comes from (Row.Basis).
const (
	// ByRepetitions: both sides' repetitions, so run-to-run variance is in it.
	ByRepetitions = "repetitions"
	// ByWindow: a side ran once; its window's interval covers the noise within
	// that run only.
	ByWindow = "window"
)

// level is the confidence asked, the default where none is.
func (o Options) level() float64 {
	if o.Confidence == 0 {
		return confidence.Level
	}
	return o.Confidence
}

// interval is the change of metric m from A's rows ra to B's rows rb with its
// interval (confidence.Compare) and what that comes from; false where a side
// says nothing of how sure it is: an archive before intervals, or a window
// too short for one and a single repetition.
func (p pair) interval(m metric, ra, rb []archive.SummaryRow, o Options) (confidence.Change, string, bool) {
	if !p.a.intervals || !p.b.intervals {
		return confidence.Change{}, "", false
	}
	ea, eb := estimate(ra, m), estimate(rb, m)
	c, err := confidence.Compare(ea, eb, o.level())
	if err != nil { // confidence.ErrNoInterval
		return confidence.Change{}, "", false
	}
	if len(ea.Reps) < 2 || len(eb.Reps) < 2 {
		return c, ByWindow, true
	}
	return c, ByRepetitions, true
}

// estimate is m on one side: its repetitions' values when there are several,
// else its one value with that window's interval.
func estimate(rows []archive.SummaryRow, m metric) confidence.Estimate {
	var e confidence.Estimate
	for _, r := range rows {
		if m.has(r) {
			e.Value = m.value(r)
			e.Lo, e.Hi = m.interval(r)
			e.Reps = append(e.Reps, e.Value)
			e.RepLo, e.RepHi = append(e.RepLo, e.Lo), append(e.RepHi, e.Hi)
		}
	}
	if len(e.Reps) > 1 {
		// The repetitions decide, their spread never taken below what each
		// one's window interval says of it.
		e.Value, e.Lo, e.Hi = 0, 0, 0
	} else {
		e.Reps, e.RepLo, e.RepHi = nil, nil, nil
	}
	return e
}

// judgeSignificant judges a change whose interval c is known: a regression or
// an improvement when c lies wholly on the change's side of zero (significant
// at the level asked) and the change is beyond the threshold, else within
// noise.
func judgeSignificant(change float64, c confidence.Change, lowerIsBetter bool, o Options) string {
	size := math.Abs(change)
	significant := change > 0 && c.Lo > 0 || change < 0 && c.Hi < 0
	if !significant || size < Resolution || size <= o.Threshold {
		return WithinNoise
	}
	return direction(change, lowerIsBetter)
}

// judged counts the compared rows by what judged them.
type judged struct {
	compared, withInterval, byWindow, byBands int
}

func tally(rows []Row) judged {
	var t judged
	for _, r := range rows {
		if !r.Compared() {
			continue
		}
		t.compared++
		switch r.Basis {
		case "":
			t.byBands++
		case ByWindow:
			t.withInterval++
			t.byWindow++
		default:
			t.withInterval++
		}
	}
	return t
}

// notes say, once each, where a change was not judged by both sides'
// repetitions: by the fixed bands (no interval), or by a single run's
// interval, which does not hold the run-to-run variance.
func (t judged) notes() []string {
	var out []string
	switch {
	case t.byBands == 0:
	case t.byBands == t.compared:
		out = append(out, "no interval: judged by the fixed thresholds")
	default:
		out = append(out, fmt.Sprintf("no interval for %d of %d metrics (too few intervals or operations): those judged by the fixed thresholds", t.byBands, t.compared))
	}
	if t.byWindow > 0 {
		out = append(out, fmt.Sprintf("%d of %d metrics judged by a single run's interval, which covers the noise within the run only, not from run to run: --repeat 3 or more on both sides covers that too", t.byWindow, t.compared))
	}
	return out
}
