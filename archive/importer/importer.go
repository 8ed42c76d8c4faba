// Package importer turns the results of other benchmark tools — memtier_benchmark's
// JSON output and YCSB's text output, with their HdrHistogram files — into cmpbench
// archives that say, among their report's caveats, what the source could not tell.
package importer

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// Tool names, as the manifest's imported.tool records them.
const (
	ToolMemtier = "memtier_benchmark"
	ToolYCSB    = "ycsb"
)

// DefaultSystem is the system an import's numbers are of when --system does not say.
const DefaultSystem = "imported"

// Options say what a source does not: which system and phase the numbers are of
// (compare matches archives by system, phase and op), and where the tool wrote its
// HdrHistogram files.
type Options struct {
	System string // default DefaultSystem
	Phase  string // default the tool's name (memtier, ycsb-run or ycsb-load)
	// HDRPrefix is memtier's --hdr-file-prefix or YCSB's hdrhistogram.output.path.
	HDRPrefix string
}

// Run is an imported run, ready to be written as an archive.
type Run struct {
	Info    archive.ImportInfo
	System  archive.SystemInfo
	Started time.Time // zero when the source does not say
	Ended   time.Time
	Status  core.RunStatus
	Phases  []Phase
	// secrets are values of the source that must reach no file (memtier's
	// --authenticate, a password in a URI or a YCSB property).
	secrets []string
}

// Phase is one imported phase: its manifest entry, its intervals (one, the whole
// run, when the source has no per-interval data) and its totals, one per op kind in
// OpKind order.
type Phase struct {
	Info      archive.PhaseInfo
	Intervals []core.IntervalReport
	Totals    []core.OpInterval
}

// wholeRun gives a phase without per-interval data one interval, the whole run,
// holding its totals: an archive's summary is the sum of its intervals, which
// verify checks.
func (p *Phase) wholeRun() {
	if len(p.Intervals) > 0 || len(p.Totals) == 0 {
		return
	}
	p.Intervals = []core.IntervalReport{{Index: 0, End: time.Duration(p.Info.ElapsedNs), Ops: p.Totals}}
	p.Info.IntervalNs = p.Info.ElapsedNs
}

// Response-time notes: what the response-time columns of an imported phase hold.
// memtier and YCSB time each request from its actual send (service time).
const (
	responseClosed   = "equal to service time: a closed loop sends each request when the previous one returns, so its intended and actual send are the same moment, as in cmpbench's own closed-loop phases"
	responseUnknown  = "unknown: the tool timed each request from its actual send, which a late schedule delays unseen (coordinated omission); the response-time columns are empty (—)"
	responseIntended = "from YCSB's intended start times (its Intended- measurements, measurement.interval=both), so queueing behind a late schedule counts"
)

// Write creates the archive of the run under outDir, through the archive.Writer a
// run uses, and returns the writer, to be finished (tables, report, commit) as a
// run's is.
func (r *Run) Write(outDir, runID string, build archive.BuildInfo, commandLine []string) (*archive.Writer, error) {
	red := redact.New(r.secrets...)
	reps := 0
	for _, p := range r.Phases {
		reps = max(reps, p.Info.Repetition+1)
	}
	info := r.Info
	h := archive.Header{
		RunID: runID, Cmpbench: build, CommandLine: red.Strings(commandLine), Repeat: reps,
		Suite:   archive.SuiteInfo{Name: r.Info.Tool, Source: "imported", Description: fmt.Sprintf("%s results imported from %s", r.Info.Tool, r.Info.Source)},
		Systems: []archive.SystemInfo{r.System}, Started: r.Started, Imported: &info,
	}
	w, err := archive.Create(outDir, h, red)
	if err != nil {
		return nil, err
	}
	if err := w.SystemStarted(core.SystemRun{Name: r.System.Name, Endpoint: r.System.Endpoint}); err != nil {
		return nil, err
	}
	for _, p := range r.Phases {
		if err := w.PhaseImported(p.Info, p.Intervals, p.Totals); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// newRun starts a run of tool from the source file at path.
func newRun(tool, path string, o Options) (*Run, error) {
	sum, err := core.FileSHA256(path)
	if err != nil {
		return nil, err
	}
	name := o.System
	if name == "" {
		name = DefaultSystem
	}
	return &Run{
		Info:   archive.ImportInfo{Tool: tool, Source: filepath.Base(path), SourceSHA256: sum},
		System: archive.SystemInfo{Name: name, DefinedIn: "imported", Description: "the system " + tool + " measured", Files: []string{}},
		Status: core.RunComplete,
	}, nil
}

// addFile records one more file the import read.
func (r *Run) addFile(path string) error {
	sum, err := core.FileSHA256(path)
	if err != nil {
		return err
	}
	r.Info.Files = append(r.Info.Files, archive.ImportedFile{Name: filepath.Base(path), SHA256: sum})
	return nil
}

func (r *Run) caveat(format string, args ...any) {
	r.Info.Caveats = append(r.Info.Caveats, fmt.Sprintf(format, args...))
}

// shape describes a phase's load as cmpbench's plans do.
func shape(connections int, rate float64) string {
	return plan.Shape(core.PhaseSpec{Connections: connections, Rate: rate})
}

// commonCaveats are what no imported source has.
func (r *Run) commonCaveats(tool string) {
	r.caveat("%s's output records no client host, no server version or configuration, no server-side counts and no side probe, and cmpbench did not watch the client's CPU: stalls, server restarts and a client-bound load generator cannot be told from these numbers.", tool)
}

// lineReader reads a source's lines, trimmed and numbered, for errors that say
// where they are.
type lineReader struct {
	sc   *bufio.Scanner
	name string
	n    int    // the line's number, from 1
	line string // the line, trimmed
}

// newLineReader reads r, the file name's, in lines of up to maxLine bytes.
func newLineReader(r io.Reader, name string, maxLine int) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &lineReader{sc: sc, name: name}
}

// next reads the next line, saying whether there was one.
func (lr *lineReader) next() bool {
	if !lr.sc.Scan() {
		return false
	}
	lr.n++
	lr.line = strings.TrimSpace(lr.sc.Text())
	return true
}

// bad is an error of the current line, named file:line.
func (lr *lineReader) bad(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", lr.name, lr.n, fmt.Sprintf(format, args...))
}

// err is the reading's error, if it failed, naming the file.
func (lr *lineReader) err() error {
	if err := lr.sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", lr.name, err)
	}
	return nil
}

// fillClosedLoop gives a closed-loop op's missing service or response time the
// other's value: in a closed loop they are the same.
func fillClosedLoop(o *core.OpInterval, open bool) {
	if open {
		return
	}
	switch {
	case o.Response.Count == 0:
		o.Response = o.Service
	case o.Service.Count == 0:
		o.Service = o.Response
	}
}
