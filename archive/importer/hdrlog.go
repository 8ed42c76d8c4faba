package importer

import (
	"errors"
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

// parseHdrLog reads an HdrHistogram interval log from r; name is the file's, for
// its errors.
func parseHdrLog(r io.Reader, name string) (*hdrLog, error) {
	p := &hdrLogParser{l: &hdrLog{}}
	lr := newLineReader(r, name, 64<<20)
	for lr.next() {
		header, err := p.header(lr)
		if err != nil {
			return nil, err
		}
		if header {
			continue
		}
		iv, err := p.interval(lr)
		if err != nil {
			return nil, err
		}
		p.l.Intervals = append(p.l.Intervals, iv)
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if len(p.l.Intervals) == 0 {
		return nil, fmt.Errorf("%s: no interval histograms: not an HdrHistogram log, or an empty one", name)
	}
	return p.l, nil
}

// hdrLogParser is the state of a log's reading: what its header lines said.
type hdrLogParser struct {
	l        *hdrLog
	base     float64 // the times' base, seconds since the epoch
	haveBase bool
	endTimes bool // the second field is the interval's end, not its length
}

// header reads the line when it is a blank, comment or legend line, saying whether
// it was.
func (p *hdrLogParser) header(lr *lineReader) (bool, error) {
	line := lr.line
	switch {
	case line == "":
	case strings.HasPrefix(line, "#[StartTime:"):
		v, err := leadingFloat(strings.TrimPrefix(line, "#[StartTime:"))
		if err != nil {
			return true, lr.bad("StartTime: %v", err)
		}
		p.l.Start = unixSeconds(v)
	case strings.HasPrefix(line, "#[BaseTime:"):
		v, err := leadingFloat(strings.TrimPrefix(line, "#[BaseTime:"))
		if err != nil {
			return true, lr.bad("BaseTime: %v", err)
		}
		p.base, p.haveBase = v, true
	case strings.HasPrefix(line, "#"):
	case strings.HasPrefix(line, `"StartTimestamp"`):
		p.endTimes = strings.Contains(line, `"EndTimestamp"`)
	default:
		return false, nil
	}
	return true, nil
}

// interval reads an interval line: [Tag=tag,]start,length or end,max,histogram.
func (p *hdrLogParser) interval(lr *lineReader) (logInterval, error) {
	iv := logInterval{}
	line := lr.line
	if rest, ok := strings.CutPrefix(line, "Tag="); ok {
		tag, fields, ok := strings.Cut(rest, ",")
		if !ok {
			return iv, lr.bad("a Tag= line without an interval")
		}
		iv.Tag, line = tag, fields
	}
	f := strings.Split(line, ",")
	if len(f) != 4 {
		return iv, lr.bad("want start,length,max,histogram; got %d fields", len(f))
	}
	start, err1 := strconv.ParseFloat(f[0], 64)
	second, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil {
		return iv, lr.bad("interval times %q, %q are not numbers", f[0], f[1])
	}
	iv.Start, iv.End = p.times(start, second)
	if iv.End.Before(iv.Start) {
		return iv, lr.bad("the interval ends before it starts")
	}
	h, err := hdrhistogram.Decode([]byte(f[3]))
	if err != nil {
		return iv, lr.bad("histogram: %v", err)
	}
	iv.Hist = h
	return iv, nil
}

// times are an interval's absolute start and end, from its line's first two fields.
func (p *hdrLogParser) times(start, second float64) (time.Time, time.Time) {
	if !p.haveBase {
		// As the reference readers do: times more than a year before the start
		// time are relative to it, others absolute.
		if !p.l.Start.IsZero() && start < float64(p.l.Start.Unix())-365*24*3600 {
			p.base = float64(p.l.Start.UnixNano()) / 1e9
		}
		p.haveBase = true
	}
	if p.endTimes {
		return unixSeconds(start), unixSeconds(second)
	}
	return unixSeconds(start + p.base), unixSeconds(start + second + p.base)
}

// readPrefixedHdrLog reads an HdrHistogram log that --hdr-prefix names; why says
// why the tool should have written it, for the error when it is not there.
func readPrefixedHdrLog(file, why string) (*hdrLog, error) {
	l, err := readHdrLog(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file (--hdr-prefix): %s", file, why)
	}
	return l, err
}

// addCountedFile records an HdrHistogram file the import read, once it holds as
// many operations as the output counts; counted says where the output counts them.
func (r *Run) addCountedFile(file string, holds, count int64, counted string) error {
	if holds != count {
		return fmt.Errorf("%s holds %d operations, but %s %d: not files of the same run?", file, holds, counted, count)
	}
	return r.addFile(file)
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
