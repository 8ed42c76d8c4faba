package archive

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

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
	type phaseKey struct {
		system string
		index  int
		rep    int
	}
	infos := map[phaseKey]PhaseInfo{}
	for _, p := range a.Manifest.Phases {
		infos[phaseKey{p.System, p.Index, p.Repetition}] = p
	}
	// Intervals are stored phase by phase, in order: each log is written as its
	// rows stream past.
	logs := map[phaseKey]*hlogFile{}
	var files []string
	err := a.EachInterval(func(r *IntervalRow) error {
		k := phaseKey{r.System, r.PhaseIndex, r.Repetition}
		l := logs[k]
		if l == nil {
			p, ok := infos[k]
			if !ok {
				return nil
			}
			name := fmt.Sprintf("%d-%s", p.Index, p.Name)
			if a.Manifest.Repeat > 1 && p.Kind == core.PhaseMeasured {
				name += fmt.Sprintf("-r%d", p.Repetition)
			}
			path := filepath.Join(dir, hlogName.ReplaceAllString(p.System, "_"), hlogName.ReplaceAllString(name, "_")+".hlog")
			var err error
			if l, err = createHlog(path, p); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			logs[k] = l
			files = append(files, path)
		}
		return l.add(r)
	})
	for _, l := range logs {
		if cerr := l.close(); err == nil {
			err = cerr
		}
	}
	return files, err
}

// hlogFile is one HdrHistogram interval log being written.
type hlogFile struct {
	f    *os.File
	lw   *hdrhistogram.HistogramLogWriter
	base int64
}

func createHlog(path string, p PhaseInfo) (*hlogFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	l := &hlogFile{f: f, lw: hdrhistogram.NewHistogramLogWriter(f), base: p.Started.UnixMilli()}
	l.lw.SetBaseTime(l.base)
	for _, err := range []error{
		l.lw.OutputLogFormatVersion(),
		l.lw.OutputComment(fmt.Sprintf("cmpbench %s phase %q (repetition %d): %s; %s", p.System, p.Name, p.Repetition, p.Workload, p.Shape)),
		l.lw.OutputComment("values in nanoseconds; Tag=<op> is response time, Tag=<op>_service service time, Tag=<op>_lag the client's send lag"),
		l.lw.OutputStartTime(l.base),
		l.lw.OutputBaseTime(l.base),
		l.lw.OutputLegend(),
	} {
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return l, nil
}

func (l *hlogFile) add(r *IntervalRow) error {
	for _, h := range []struct {
		tag string
		enc []byte
	}{{r.Op, r.RespHDR}, {r.Op + "_service", r.SvcHDR}, {r.Op + "_lag", r.LagHDR}} {
		hist, err := core.DecodeHist(h.enc)
		if err != nil {
			return err
		}
		if hist == nil {
			continue // empty interval, or service time equal to response time
		}
		hist.SetTag(h.tag)
		hist.SetStartTimeMs(l.base + r.StartNs/1e6)
		hist.SetEndTimeMs(l.base + r.EndNs/1e6)
		if err := l.lw.OutputIntervalHistogram(hist); err != nil {
			return err
		}
	}
	return nil
}

func (l *hlogFile) close() error {
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
