package importer

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/core"
)

// An HdrHistogram interval log is a few comment lines (#[StartTime: ...],
// #[BaseTime: ...]), a legend and one line per interval: start, length or end, the
// interval's maximum and its histogram in the standard compressed encoding, base64.
// The Java library (YCSB) writes the start relative to the base time and the
// interval's length ("StartTimestamp","Interval_Length",...); the C library (memtier)
// writes absolute start and end times ("StartTimestamp","EndTimestamp",...) and no
// base time. hdrhistogram-go's reader takes the second field for a length, so the
// lines are read here.

// logInterval is one interval of an HdrHistogram log, its times absolute.
type logInterval struct {
	Tag        string
	Start, End time.Time
	Hist       *hdrhistogram.Histogram
}

// hdrLog is a whole HdrHistogram interval log.
type hdrLog struct {
	Start     time.Time // #[StartTime: ...], zero when absent
	Intervals []logInterval
}

// readHdrLog reads the HdrHistogram interval log at path.
func readHdrLog(path string) (*hdrLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseHdrLog(f, path)
}

func parseHdrLog(r io.Reader, name string) (*hdrLog, error) {
	l := &hdrLog{}
	var base float64
	haveBase, endTimes := false, false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, n, fmt.Sprintf(format, args...))
		}
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "#[StartTime:"):
			v, err := leadingFloat(strings.TrimPrefix(line, "#[StartTime:"))
			if err != nil {
				return nil, bad("StartTime: %v", err)
			}
			l.Start = unixSeconds(v)
			continue
		case strings.HasPrefix(line, "#[BaseTime:"):
			v, err := leadingFloat(strings.TrimPrefix(line, "#[BaseTime:"))
			if err != nil {
				return nil, bad("BaseTime: %v", err)
			}
			base, haveBase = v, true
			continue
		case strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, `"StartTimestamp"`):
			endTimes = strings.Contains(line, `"EndTimestamp"`)
			continue
		}
		iv := logInterval{}
		if rest, ok := strings.CutPrefix(line, "Tag="); ok {
			tag, fields, ok := strings.Cut(rest, ",")
			if !ok {
				return nil, bad("a Tag= line without an interval")
			}
			iv.Tag, line = tag, fields
		}
		f := strings.Split(line, ",")
		if len(f) != 4 {
			return nil, bad("want start,length,max,histogram; got %d fields", len(f))
		}
		start, err1 := strconv.ParseFloat(f[0], 64)
		second, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			return nil, bad("interval times %q, %q are not numbers", f[0], f[1])
		}
		if !haveBase {
			// As the reference readers do: times more than a year before the start
			// time are relative to it, others absolute.
			if !l.Start.IsZero() && start < float64(l.Start.Unix())-365*24*3600 {
				base = float64(l.Start.UnixNano()) / 1e9
			}
			haveBase = true
		}
		end := start + second
		if endTimes {
			end = second
		} else {
			end += base
		}
		iv.Start, iv.End = unixSeconds(start+base), unixSeconds(end)
		if endTimes {
			iv.Start = unixSeconds(start)
		}
		if iv.End.Before(iv.Start) {
			return nil, bad("the interval ends before it starts")
		}
		h, err := hdrhistogram.Decode([]byte(f[3]))
		if err != nil {
			return nil, bad("histogram: %v", err)
		}
		iv.Hist = h
		l.Intervals = append(l.Intervals, iv)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(l.Intervals) == 0 {
		return nil, fmt.Errorf("%s: no interval histograms: not an HdrHistogram log, or an empty one", name)
	}
	return l, nil
}

func leadingFloat(s string) (float64, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return 0, fmt.Errorf("no time")
	}
	return strconv.ParseFloat(strings.TrimSuffix(fields[0], "]"), 64)
}

// unixSeconds is a time the logs give in seconds with up to microseconds (they
// print 3 decimals), rounded to the microsecond so that float noise does not show.
func unixSeconds(s float64) time.Time {
	return time.UnixMicro(int64(math.Round(s * 1e6))).UTC()
}

// nanos re-records a histogram of microseconds (memtier's and YCSB's unit) in
// cmpbench's histogram of nanoseconds: every bucket's count at its highest
// equivalent value times 1000, the value the tools' own percentiles report. Values
// above core.HistMax (60 s) are kept at it; clamped says how many were.
func nanos(us *hdrhistogram.Histogram) (h *hdrhistogram.Histogram, clamped int64, err error) {
	h = core.NewHistogram()
	for _, b := range us.Distribution() {
		if b.Count == 0 {
			continue
		}
		v := b.To * 1000
		if v > core.HistMax {
			v, clamped = core.HistMax, clamped+b.Count
		}
		if err := h.RecordValues(max(v, core.HistMin), b.Count); err != nil {
			return nil, 0, err
		}
	}
	return h, clamped, nil
}
