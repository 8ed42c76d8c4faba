package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/redact"
)

// A run's archive is written while the run goes on. Create makes the in-progress
// directory (a hidden name next to the final one) before any system is contacted;
// each system's captures land there when it starts, each interval's rows are
// appended to spool files as it arrives, and each phase's totals, its server and
// client samples and an updated manifest are synced to disk when it ends. The
// manifest says "in_progress" until Commit renames the directory to its final
// name, so that a crash leaves every finished phase on disk under a name that
// never claims to be complete; Recover finishes such a directory later.

// Header is what is known about a run before it starts.
type Header struct {
	RunID    string
	Cmpbench BuildInfo
	Host     core.HostFacts
	// CommandLine is the cmpbench command line, secrets redacted.
	CommandLine []string
	Seed        uint64
	Scale       float64
	Repeat      int
	Suite       SuiteInfo
	// Systems are the systems' definitions as written, in run order.
	Systems []SystemInfo
	Started time.Time
	// Shard places a shard's run among the shards of its plan (PlanHash); nil
	// for a run of a whole plan.
	Shard *ShardInfo
	// Imported is set for a run imported from another tool's output.
	Imported *ImportInfo
	// Processes is how many plugin processes generate each system's load (0 or
	// 1: one).
	Processes int
	// Live: the run is served as it goes (run --live).
	Live bool
}

// Writer writes one run's archive as the run goes. Its methods are the runner's
// sink; they may be called from several goroutines.
type Writer struct {
	mu     sync.Mutex
	dir    string // the in-progress directory
	final  string
	red    *redact.Redactor
	m      Manifest
	defs   map[string]SystemInfo
	spools map[string]*spool
	vals   []core.Validation
	// running is the index in m.Phases of the phase that runs, or -1; its
	// intervals start at runningFrom in the intervals spool.
	running     int
	runningFrom int64
	// recoveredStatus is what Recover says the archive's status is.
	recoveredStatus core.RunStatus
	// lock is held while the directory is written (archive/lock.go), and
	// released once it is committed.
	lock *runLock
}

// PendingName is the in-progress name of the archive of runID.
func PendingName(runID string) string { return "." + runID + ".partial" }

// spoolAside is where Commit moves the spools while it finishes.
func spoolAside(runID string) string { return "." + runID + ".spool" }

// Create makes the in-progress directory of a run under outDir and writes its first
// manifest, so that an unusable outDir shows before anything else happens.
func Create(outDir string, h Header, red *redact.Redactor) (*Writer, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	final := filepath.Join(outDir, h.RunID)
	if _, err := os.Stat(final); err == nil {
		return nil, fmt.Errorf("archive %s already exists", final)
	}
	lock, err := lockRun(outDir, h.RunID)
	if err != nil {
		return nil, err
	}
	w := &Writer{dir: filepath.Join(outDir, PendingName(h.RunID)), final: final, red: red, defs: map[string]SystemInfo{}, running: -1, lock: lock}
	if err := os.Mkdir(w.dir, 0o755); err != nil {
		lock.release()
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(w.dir, SpoolDir), 0o755); err != nil {
		return nil, err
	}
	w.m = Manifest{
		FormatVersion: FormatVersion, RunID: h.RunID, Status: StatusInProgress, Cmpbench: h.Cmpbench, Host: h.Host,
		CommandLine: h.CommandLine, Started: h.Started, Seed: h.Seed, Scale: h.Scale, Repeat: h.Repeat, Suite: h.Suite,
		Systems: []SystemInfo{}, Plugins: []PluginInfo{}, Phases: []PhaseInfo{}, Shard: h.Shard, Imported: h.Imported, Processes: h.Processes, Live: h.Live,
	}
	for _, s := range h.Systems {
		w.defs[s.Name] = s
	}
	if err := w.openSpools(); err != nil {
		return nil, err
	}
	if err := w.saveManifest(); err != nil {
		w.closeSpools()
		return nil, err
	}
	return w, nil
}

func (w *Writer) openSpools() error {
	w.spools = map[string]*spool{}
	for _, name := range []string{spoolSummary, spoolIntervals, spoolProbe, spoolServerStats, spoolClientStats} {
		s, err := openSpool(filepath.Join(w.dir, SpoolDir, name))
		if err != nil {
			w.closeSpools()
			return err
		}
		w.spools[name] = s
	}
	return nil
}

func (w *Writer) closeSpools() error {
	var errs []error
	for name, s := range w.spools {
		errs = append(errs, s.close())
		delete(w.spools, name)
	}
	return errors.Join(errs...)
}

// Discard removes the in-progress directory and releases it: for an archive made
// from others (a merge), which can be made again, never for a run's own
// measurements.
func (w *Writer) Discard() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.closeSpools()
	_ = os.RemoveAll(w.dir)
	_ = os.RemoveAll(filepath.Join(filepath.Dir(w.dir), spoolAside(w.m.RunID)))
	w.lock.release()
	w.lock = nil
}

// Dir is the in-progress directory.
func (w *Writer) Dir() string { return w.dir }

// saveManifest replaces manifest.json atomically.
func (w *Writer) saveManifest() error {
	b, err := json.MarshalIndent(w.m, "", "  ")
	if err != nil {
		return err
	}
	return replaceFile(filepath.Join(w.dir, ManifestFile), append(b, '\n'))
}

// saveInProgress writes the manifest as it stands but with status in_progress: what
// the directory says after Finish set the final status and Commit failed.
func (w *Writer) saveInProgress() error {
	final := w.m.Status
	w.m.Status = StatusInProgress
	defer func() { w.m.Status = final }()
	return w.saveManifest()
}

// replaceFile writes data to path through a synced temporary file and a rename, so
// that path holds either its old or its new content.
func replaceFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := writeFile(tmp, data); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// SystemStarted records what the run learned about a system when it started, and
// writes its captures under systems/<name>/.
func (w *Writer) SystemStarted(sr core.SystemRun) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.setSystem(sr)
	if sr.Plugin.Path != "" {
		pl := sr.Plugin
		w.m.Plugins = append(w.m.Plugins, PluginInfo{Adapter: pl.Adapter, System: sr.Name, Builtin: pl.Builtin, Path: pl.Path,
			SHA256: pl.SHA256, Version: pl.Version, SDKVersion: pl.SDKVersion, Protocol: pl.Protocol})
	}
	if err := w.writeCaptures(sr); err != nil {
		return err
	}
	return w.saveManifest()
}

// SystemEnded records how a system ended: its error, its server's log.
func (w *Writer) SystemEnded(sr core.SystemRun) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.setSystem(sr)
	if err := w.writeCaptures(sr); err != nil {
		return err
	}
	return w.saveManifest()
}

// system is the manifest entry of a system that setSystem has recorded.
func (w *Writer) system(name string) *SystemInfo {
	for n := range w.m.Systems {
		if w.m.Systems[n].Name == name {
			return &w.m.Systems[n]
		}
	}
	return nil
}

func (w *Writer) setSystem(sr core.SystemRun) {
	si := w.defs[sr.Name]
	if cur := w.system(sr.Name); cur != nil {
		si = *cur
	}
	si.Name, si.Adapter, si.Endpoint, si.Provisioned = sr.Name, sr.Adapter, sr.Endpoint, sr.Provisioned
	si.Launch, si.Nodes, si.Binary, si.BinarySHA256 = sr.Launch, sr.Nodes, sr.Binary, sr.BinarySHA256
	si.Product, si.Version, si.VersionField = sr.Capture.Product, sr.Capture.Version, sr.Capture.VersionField
	si.Refused, si.CaptureError, si.Error = sr.Capture.Refused, sr.CaptureError, sr.Error
	if si.Files == nil {
		si.Files = []string{}
	}
	if cur := w.system(sr.Name); cur != nil {
		*cur = si
	} else {
		w.m.Systems = append(w.m.Systems, si)
	}
}

// writeCaptures stores a system's captures under systems/<name>/: its text
// captures, its server's log and the facts its adapter read of them
// (FactsFile).
func (w *Writer) writeCaptures(sr core.SystemRun) error {
	files := map[string][]byte{}
	for name, text := range sr.Capture.Sections {
		files[name+".txt"] = []byte(w.red.String(text))
	}
	if sr.ServerLog != "" {
		files["server.log"] = []byte(w.red.String(sr.ServerLog))
	}
	if sr.Capture.Facts != nil {
		b, err := json.MarshalIndent(sr.Capture.Facts.Map(w.red.String), "", "  ")
		if err != nil {
			return err
		}
		files[FactsFile] = append(b, '\n')
	}
	if len(files) == 0 {
		return nil
	}
	dir := filepath.Join(w.dir, SystemsDir, sr.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	si := w.system(sr.Name)
	for name, data := range files {
		// Through a temporary file and a rename: a capture under its own name is
		// whole, even one the manifest did not list yet when the run stopped
		// (Recover lists it).
		if err := replaceFile(filepath.Join(dir, name), data); err != nil {
			return err
		}
		if !slices.Contains(si.Files, name) {
			si.Files = append(si.Files, name)
		}
	}
	sort.Strings(si.Files)
	return nil
}

// phaseInfo describes a phase in the manifest.
func phaseInfo(p *core.PhaseRun) PhaseInfo {
	s := p.Spec
	pi := PhaseInfo{
		Method: stepOf(p.Method), Uses: usesOf(p.Uses),
		Index: p.Index, Repetition: p.Repetition, System: p.System, Name: s.Name, Kind: s.Kind, Workload: core.DescribeWorkload(s.Workload), Shape: p.Shape,
		Connections: s.Connections, Rate: s.Rate, Poisson: s.Poisson, Pipeline: s.Pipeline, DurationNs: int64(s.Duration), Ops: s.Ops,
		IntervalNs: int64(s.Interval), Seed: s.Seed, Spec: s.Workload,
		Status: p.End.Status, Error: p.End.Error, ErrorSamples: p.End.ErrorSamples, Started: p.End.Started, Ended: p.End.Ended, ElapsedNs: int64(p.End.Elapsed),
		CPUUserNs: int64(p.End.CPUUser), CPUSystemNs: int64(p.End.CPUSystem), Intervals: p.Intervals,
		ClientCores: p.ClientCores, CoresAllowed: p.CoresAllowed, ClientBound: p.ClientBound,
		HostCPUNs: int64(p.HostCPU), ClientLagged: p.ClientLagged, Host: p.Host, HostSaturated: p.Host != nil && p.Host.Saturated, Partial: p.Partial, Notes: p.End.Notes,
		Messages: p.End.PubSub, ClientStalledNs: int64(p.End.Stalled), ClientStalls: p.End.Stalls,
	}
	if pr := s.Probe; pr != nil {
		pi.ProbeRate, pi.ProbeOp, pi.ProbeStallNs = pr.Rate, pr.Op.String(), int64(pr.StallThreshold())
	}
	if s.ConnTotal > 0 {
		pi.ConnBase, pi.ConnTotal = s.ConnBase, s.ConnTotal
	}
	if !s.StartAt.IsZero() {
		t := s.StartAt.UTC()
		pi.ScheduledStart = &t
	}
	return pi
}

// stepOf and usesOf are a phase's method and the phase it used, or nil for
// none (omitted from the manifest).
func stepOf(m core.MethodStep) *core.MethodStep {
	if m.Kind == "" {
		return nil
	}
	return &m
}

func usesOf(u core.MethodRef) *core.MethodRef {
	if u.Kind == "" {
		return nil
	}
	return &u
}

// PhaseStarted records that a phase began: if the run dies during it, recovery knows
// what the intervals on disk belong to.
func (w *Writer) PhaseStarted(p *core.PhaseRun) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	sp := w.spools[spoolIntervals]
	if err := sp.flush(false); err != nil {
		return err
	}
	from, err := sp.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	pi := phaseInfo(p)
	pi.Status = core.StatusRunning
	w.m.Phases = append(w.m.Phases, pi)
	w.running, w.runningFrom = len(w.m.Phases)-1, from
	return w.saveManifest()
}

// PhaseTotals merges the running phase's intervals from the spool: for a phase
// whose plugin died before it could send its totals.
func (w *Writer) PhaseTotals(p *core.PhaseRun) ([]core.OpInterval, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.spools[spoolIntervals].flush(false); err != nil {
		return nil, err
	}
	var from int64
	if w.running >= 0 {
		from = w.runningFrom
	}
	res, _, _, err := w.totalsFromSpool(idOf(p), p.Spec.OpenLoop(), from)
	return res, err
}

// totalsFromSpool merges the spooled intervals of one phase, reading from offset
// from; it also returns how many intervals there were and where the last ended.
func (w *Writer) totalsFromSpool(id phaseID, open bool, from int64) (totals []core.OpInterval, intervals int, lastEnd int64, err error) {
	t := core.NewTotals(open)
	seen := map[int]bool{}
	err = readSpoolFrom(filepath.Join(w.dir, SpoolDir, spoolIntervals), from, func(r *IntervalRow) error {
		if r.System != id.System || r.PhaseIndex != id.Index || r.Repetition != id.Repetition {
			return nil
		}
		o, err := r.opInterval()
		if err != nil {
			return err
		}
		seen[r.Interval] = true
		lastEnd = max(lastEnd, r.EndNs)
		return t.Add(&core.IntervalReport{Index: r.Interval, Ops: []core.OpInterval{o}})
	})
	if err != nil {
		return nil, 0, 0, err
	}
	totals, err = t.Result()
	return totals, len(seen), lastEnd, err
}

// Interval appends one interval's rows to the spools.
func (w *Writer) Interval(p *core.PhaseRun, r *core.IntervalReport) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := idOf(p)
	if err := addRows(w.spools[spoolIntervals], intervalRows(id, r, p.Spec.OpenLoop())); err != nil {
		return err
	}
	if len(r.Probe) > 0 {
		if err := addRows(w.spools[spoolProbe], probeRows(id, r)); err != nil {
			return err
		}
	}
	// To the kernel at once (a killed cmpbench loses nothing); to the disk when the
	// phase ends.
	if err := w.spools[spoolIntervals].flush(false); err != nil {
		return err
	}
	return w.spools[spoolProbe].flush(false)
}

// PhaseEnded writes a phase's totals and samples and syncs everything the phase
// wrote. A phase that never started (skipped) is recorded too.
func (w *Writer) PhaseEnded(p *core.PhaseRun) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	pi := phaseInfo(p)
	rows := summaryRows(&pi, p.Totals)
	running := w.running >= 0 && samePhase(&w.m.Phases[w.running], &pi)
	if running && len(rows) > 0 {
		if err := w.confide(&pi, rows, w.runningFrom); err != nil {
			return err
		}
	}
	if pi.Unsteady != nil {
		p.Unsteady = pi.Unsteady.Sentence()
	}
	if running {
		w.m.Phases[w.running] = pi
		w.running = -1
	} else {
		w.m.Phases = append(w.m.Phases, pi)
	}
	if err := addRows(w.spools[spoolSummary], rows); err != nil {
		return err
	}
	if err := addRows(w.spools[spoolServerStats], serverStatRows(p)); err != nil {
		return err
	}
	if err := addRows(w.spools[spoolClientStats], clientStatRows(p)); err != nil {
		return err
	}
	for _, s := range w.spools {
		if err := s.flush(true); err != nil {
			return err
		}
	}
	return w.saveManifest()
}

func samePhase(a, b *PhaseInfo) bool {
	return a.System == b.System && a.Index == b.Index && a.Repetition == b.Repetition
}

// confide gives a phase's summary rows their confidence intervals, and the
// phase its drift, from its intervals in the spool (from offset from on).
func (w *Writer) confide(pi *PhaseInfo, rows []SummaryRow, from int64) error {
	if err := w.spools[spoolIntervals].flush(false); err != nil {
		return err
	}
	c := newConfider()
	if err := c.want(pi, rows); err != nil {
		return err
	}
	if err := readSpoolFrom(filepath.Join(w.dir, SpoolDir, spoolIntervals), from, c.add); err != nil {
		return err
	}
	c.apply(pi, rows)
	return nil
}

// Validation records one check of loaded data.
func (w *Writer) Validation(v core.Validation) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.vals = append(w.vals, v)
	return w.writeValidations()
}

// AmendValidation replaces the last validation recorded.
func (w *Writer) AmendValidation(v core.Validation) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.vals) == 0 {
		w.vals = append(w.vals, v)
	} else {
		w.vals[len(w.vals)-1] = v
	}
	return w.writeValidations()
}

func (w *Writer) writeValidations() error {
	vals := w.vals
	if vals == nil {
		vals = []core.Validation{}
	}
	vb, err := json.MarshalIndent(vals, "", "  ")
	if err != nil {
		return err
	}
	return replaceFile(filepath.Join(w.dir, ValidationFile), []byte(w.red.String(string(vb))+"\n"))
}

// Finish writes the Parquet tables from the spools and returns the archive as it
// will be, with its final status, for the report to be drawn from. The manifest on
// disk still says in_progress until Commit.
func (w *Writer) Finish(status core.RunStatus, ended time.Time) (*Archive, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.closeSpools(); err != nil {
		return nil, err
	}
	meta := map[string]string{"cmpbench.run_id": w.m.RunID, "cmpbench.format_version": strconv.Itoa(FormatVersion)}
	spoolPath := func(name string) string { return filepath.Join(w.dir, SpoolDir, name) }
	// An interval's wall-clock start is its phase's, as the manifest has it now
	// that every phase has ended, plus its start in phase time.
	starts := phaseStarts(&w.m)
	for _, t := range []struct {
		table string
		write func(string, string, map[string]string) error
		spool string
	}{
		{SummaryFile, tableOf[SummaryRow](nil), spoolSummary},
		{IntervalsFile, tableOf(func(r *IntervalRow) { r.setWallStart(starts) }), spoolIntervals},
		{ProbeFile, tableOf[ProbeRow](nil), spoolProbe},
		{ServerStats, tableOf[ServerStatRow](nil), spoolServerStats},
		{ClientStats, tableOf[ClientStatRow](nil), spoolClientStats},
	} {
		if err := t.write(spoolPath(t.spool), filepath.Join(w.dir, t.table), meta); err != nil {
			return nil, fmt.Errorf("%s: %w", t.table, err)
		}
	}
	if err := w.writeValidations(); err != nil {
		return nil, err
	}
	w.m.Status, w.m.Ended = status, ended
	a := &Archive{Dir: w.dir, Manifest: w.m}
	if err := a.readTable(SummaryFile, &a.Summary); err != nil {
		return nil, err
	}
	return a, nil
}

// tableOf is spoolToTable of rows of type T, each completed by prepare.
func tableOf[T any](prepare func(*T)) func(string, string, map[string]string) error {
	return func(spool, table string, meta map[string]string) error {
		return spoolToTable(spool, table, meta, prepare)
	}
}

// AddFile writes a generated file (report, chart) into the archive before Commit.
func (w *Writer) AddFile(name string, data []byte) error {
	return WriteGenerated(w.dir, name, data)
}

// Commit checks that no secret reached any file, writes the final manifest and
// SHA256SUMS and moves the archive to its final name, which it returns. Until the
// very last rename, the directory's manifest says in_progress; if anything fails,
// the directory is left as it was, to be finished by Recover.
func (w *Writer) Commit() (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	aside := filepath.Join(filepath.Dir(w.dir), spoolAside(w.m.RunID))
	spoolDir := filepath.Join(w.dir, SpoolDir)
	files, err := listFiles(w.dir)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if leak, err := w.leaks(filepath.Join(w.dir, f)); err != nil || leak {
			if err != nil {
				return "", err
			}
			return "", fmt.Errorf("refusing to finish the archive: %s contains a secret (left in %s)", f, w.dir)
		}
	}
	final, err := json.MarshalIndent(w.m, "", "  ")
	if err != nil {
		return "", err
	}
	final = append(final, '\n')
	// The spools leave the archive (they are not part of it) but stay next to it
	// until the end, for Recover.
	if err := os.Rename(spoolDir, aside); err != nil {
		return "", err
	}
	undo := func(err error) (string, error) {
		_ = os.Rename(aside, spoolDir)
		return "", err
	}
	tmp := filepath.Join(w.dir, ManifestFile+".final")
	if err := writeFile(tmp, final); err != nil {
		os.Remove(tmp)
		return undo(err)
	}
	files, err = listFiles(w.dir)
	if err != nil {
		os.Remove(tmp)
		return undo(err)
	}
	sums, err := checksums(w.dir, files, map[string]string{ManifestFile + ".final": ManifestFile})
	if err == nil {
		err = writeFile(filepath.Join(w.dir, SumsFile), sums)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(w.dir, ManifestFile))
	}
	if err != nil {
		os.Remove(tmp)
		os.Remove(filepath.Join(w.dir, SumsFile))
		return undo(err)
	}
	err = syncDir(w.dir)
	if err == nil {
		err = os.Rename(w.dir, w.final)
	}
	if err != nil {
		// Never leave a directory that claims to be complete under the temporary name.
		_ = w.saveInProgress()
		os.Remove(filepath.Join(w.dir, SumsFile))
		return undo(err)
	}
	_ = os.RemoveAll(aside)
	w.lock.release()
	w.lock = nil
	return w.final, syncDir(filepath.Dir(w.final))
}

func (w *Writer) leaks(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return w.red.LeaksFrom(f)
}

// listFiles returns every regular file below dir, slash-separated and sorted,
// SHA256SUMS excluded.
func listFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if rel != SumsFile {
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// checksums is SHA256SUMS for files, in the format `sha256sum -c` reads; rename
// lists files that are summed under another name.
func checksums(dir string, files []string, rename map[string]string) ([]byte, error) {
	type line struct{ name, sum string }
	replaced := map[string]bool{}
	for _, to := range rename {
		replaced[to] = true
	}
	var lines []line
	for _, f := range files {
		name, renamed := rename[f]
		if !renamed {
			if replaced[f] {
				continue // the file a renamed one replaces
			}
			name = f
		}
		sum, err := core.FileSHA256(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		lines = append(lines, line{name, sum})
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].name < lines[j].name })
	var b bytes.Buffer
	for _, l := range lines {
		fmt.Fprintf(&b, "%s  %s\n", l.sum, l.name)
	}
	return b.Bytes(), nil
}

// WriteGenerated writes a generated file (report, chart) into an archive directory.
func WriteGenerated(dir, name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, name), data)
}

func writeFile(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
