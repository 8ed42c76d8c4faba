package archive

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/core"
)

var hlogName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// WriteHlogs writes one HdrHistogram interval log per system, phase and repetition
// into dir, in the format HdrHistogram's log readers take: one line per interval and
// op, tagged with the op (response time) and, for fixed-rate phases, with
// "<op>_service" (service time). Times are relative to the phase start, which the log
// gives as its StartTime and BaseTime. It returns the files written.
func (a *Archive) WriteHlogs(dir string) ([]string, error) {
	rows, err := a.Intervals()
	if err != nil {
		return nil, err
	}
	type phaseKey struct {
		system string
		index  int
		rep    int
	}
	byPhase := map[phaseKey][]IntervalRow{}
	for _, r := range rows {
		k := phaseKey{r.System, r.PhaseIndex, r.Repetition}
		byPhase[k] = append(byPhase[k], r)
	}
	var files []string
	for _, p := range a.Manifest.Phases {
		rs := byPhase[phaseKey{p.System, p.Index, p.Repetition}]
		if len(rs) == 0 {
			continue
		}
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Interval < rs[j].Interval })
		name := fmt.Sprintf("%d-%s", p.Index, p.Name)
		if a.Manifest.Repeat > 1 && p.Kind == core.PhaseMeasured {
			name += fmt.Sprintf("-r%d", p.Repetition)
		}
		path := filepath.Join(dir, hlogName.ReplaceAllString(p.System, "_"), hlogName.ReplaceAllString(name, "_")+".hlog")
		if err := writeHlog(path, p, rs); err != nil {
			return files, fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

func writeHlog(path string, p PhaseInfo, rows []IntervalRow) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	base := p.Started.UnixMilli()
	lw := hdrhistogram.NewHistogramLogWriter(f)
	lw.SetBaseTime(base)
	for _, err := range []error{
		lw.OutputLogFormatVersion(),
		lw.OutputComment(fmt.Sprintf("cmpbench %s phase %q (repetition %d): %s; %s", p.System, p.Name, p.Repetition, p.Workload, p.Shape)),
		lw.OutputComment("values in nanoseconds; Tag=<op> is response time, Tag=<op>_service service time"),
		lw.OutputStartTime(base),
		lw.OutputBaseTime(base),
		lw.OutputLegend(),
	} {
		if err != nil {
			return err
		}
	}
	for _, r := range rows {
		for _, h := range []struct {
			tag string
			enc []byte
		}{{r.Op, r.RespHDR}, {r.Op + "_service", r.SvcHDR}} {
			hist, err := core.DecodeHist(h.enc)
			if err != nil {
				return err
			}
			if hist == nil {
				continue // empty interval, or service time equal to response time
			}
			hist.SetTag(h.tag)
			hist.SetStartTimeMs(base + r.StartNs/1e6)
			hist.SetEndTimeMs(base + r.EndNs/1e6)
			if err := lw.OutputIntervalHistogram(hist); err != nil {
				return err
			}
		}
	}
	return f.Sync()
}
