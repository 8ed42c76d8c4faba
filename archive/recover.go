package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/redact"
)

// Recover reopens the in-progress directory of a run whose cmpbench died (SIGKILL,
// power loss, a disk that filled up while finishing) so that it can be finished as
// an archive with status interrupted: every phase that ended is kept as it was; a
// phase that was running keeps the intervals that reached the disk and is marked
// partial. The caller finishes it like a run: Finish, the report, Commit.
func Recover(dir string, red *redact.Redactor) (*Writer, error) {
	m, err := recoverable(dir)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(dir)
	// A run still going holds its lock: recovering its directory under it would
	// take its spools and leave it unable to finish.
	lock, err := lockRun(parent, m.RunID)
	if err != nil {
		return nil, err
	}
	// The manifest is written again in this format (an older one's phases read
	// into it: format1.go), as its Parquet files' metadata say.
	m.FormatVersion = FormatVersion
	w := &Writer{dir: dir, final: filepath.Join(parent, m.RunID), red: red, m: m, running: -1, recoveredStatus: core.RunInterrupted, lock: lock}
	ok := false
	defer func() {
		if !ok {
			lock.release()
		}
	}()
	if m.Status != StatusInProgress {
		w.recoveredStatus = m.Status
	} else {
		w.m.Recovered = true
	}
	if _, err := os.Stat(w.final); err == nil {
		return nil, fmt.Errorf("archive %s already exists", w.final)
	}
	if err := w.recoverFiles(); err != nil {
		return nil, err
	}
	ended, err := w.endedPhases()
	if err != nil {
		return nil, err
	}
	if err := w.reopenSpools(); err != nil {
		return nil, err
	}
	if err := w.recoverRunningPhases(ended); err != nil {
		w.closeSpools()
		return nil, err
	}
	if err := w.saveManifest(); err != nil {
		w.closeSpools()
		return nil, err
	}
	ok = true
	return w, nil
}

// recoverable reads the manifest of a directory that Recover may finish: a run
// that did not finish, in a format version this cmpbench reads.
func recoverable(dir string) (Manifest, error) {
	m, err := readManifestFile(dir)
	if err != nil {
		return m, err
	}
	// A directory still under its temporary name whose manifest has a final status
	// is one whose Commit stopped between its last two renames: it is finished
	// again as it was.
	if m.Status != StatusInProgress && !strings.HasSuffix(filepath.Base(dir), ".partial") {
		return m, fmt.Errorf("%s: status %q: only a run that did not finish can be recovered", dir, m.Status)
	}
	if m.FormatVersion > FormatVersion {
		return m, fmt.Errorf("%s: archive format version %d is newer than this cmpbench reads (%d)", dir, m.FormatVersion, FormatVersion)
	}
	return m, nil
}

// recoverFiles puts back what a Commit that stopped half-way moved or left: the
// spool files moved aside, the validations, the captures; its leftovers are
// removed, to be rewritten by the next Commit.
func (w *Writer) recoverFiles() error {
	dir, parent := w.dir, filepath.Dir(w.dir)
	spoolDir := filepath.Join(dir, SpoolDir)
	if _, err := os.Stat(spoolDir); errors.Is(err, os.ErrNotExist) {
		// Commit had moved the spools aside when it stopped.
		if err := os.Rename(filepath.Join(parent, spoolAside(w.m.RunID)), spoolDir); err != nil {
			return fmt.Errorf("%s: its spool files are missing: %w", dir, err)
		}
	}
	if b, err := readRegular(filepath.Join(dir, ValidationFile)); err == nil {
		if w.vals, err = parseValidations(b); err != nil {
			return err
		}
	}
	for _, f := range []string{SumsFile, ManifestFile + ".final", ManifestFile + ".tmp", ValidationFile + ".tmp"} {
		_ = os.Remove(filepath.Join(dir, f))
	}
	return w.recoverCaptures()
}

// endedPhases are the phases whose rows reached the summary spool: they had
// ended, and only their manifest entries were not saved yet.
func (w *Writer) endedPhases() (map[phaseID][]SummaryRow, error) {
	ended := map[phaseID][]SummaryRow{}
	err := readSpoolFrom(filepath.Join(w.dir, SpoolDir, spoolSummary), 0, func(r *SummaryRow) error {
		id := phaseID{System: r.System, Index: r.PhaseIndex, Name: r.Phase, Repetition: r.Repetition}
		ended[id] = append(ended[id], *r)
		return nil
	})
	return ended, err
}

// reopenSpools opens the spool files for appending, after dropping a row a crash
// cut short: what is appended now must start a line.
func (w *Writer) reopenSpools() error {
	for _, name := range []string{spoolSummary, spoolIntervals, spoolProbe, spoolServerStats, spoolClientStats} {
		if err := dropTornLine(filepath.Join(w.dir, SpoolDir, name)); err != nil {
			return err
		}
	}
	return w.openSpools()
}

// recoverRunningPhases settles the phases the manifest still says are running:
// one whose summary reached the disk ended (ended holds its rows), any other is
// kept as partial with the intervals that reached the disk.
func (w *Writer) recoverRunningPhases(ended map[phaseID][]SummaryRow) error {
	for i := range w.m.Phases {
		pi := &w.m.Phases[i]
		if pi.Status != core.StatusRunning {
			continue
		}
		if rows, ok := ended[phaseID{System: pi.System, Index: pi.Index, Name: pi.Name, Repetition: pi.Repetition}]; ok {
			endedFromSummary(pi, rows[0])
			// How sure its numbers are, and whether it drifted, come again
			// from its intervals on disk, as when it ended; its rows already
			// hold theirs, so the copies computed here are dropped.
			if err := w.confide(pi, slices.Clone(rows), 0); err != nil {
				return fmt.Errorf("phase %s of %s: %w", pi.Name, pi.System, err)
			}
			continue
		}
		if err := w.recoverPhase(pi); err != nil {
			return fmt.Errorf("phase %s of %s: %w", pi.Name, pi.System, err)
		}
	}
	return nil
}

// endedFromSummary completes the manifest entry of a phase that ended from its
// summary row; what only the entry held (errors, intervals, CPU) is lost, and
// its error says so. Its confidence and drift are the caller's to recompute.
func endedFromSummary(pi *PhaseInfo, r SummaryRow) {
	pi.Status, pi.ElapsedNs = core.PhaseStatus(r.Status), int64(r.DurationS*1e9)
	pi.Ended = pi.Started.Add(time.Duration(pi.ElapsedNs))
	pi.ClientLagged, pi.ClientBound = r.ClientLagged, r.ClientBound
	pi.ClientStalledNs = int64(math.Round(r.ClientStalledS * 1e9))
	pi.HostSaturated = r.HostSaturated
	if r.HostCores > 0 {
		pi.Host = &core.HostLoad{Cores: int(r.HostCores), BusyCores: r.HostBusyCores}
	}
	if pi.Error == "" {
		pi.Error = "recovered: the phase ended and its results reached the disk, but not how it ended (errors, intervals, CPU)"
	}
}

// recoverCaptures makes the manifest list exactly the captures under systems/:
// a capture written whole (under its own name: captures are written through a
// temporary file and a rename) after the manifest was last saved is listed; a
// temporary file a stop cut short is removed, and so are the captures of a
// system whose start the manifest never recorded.
func (w *Writer) recoverCaptures() error {
	root := filepath.Join(w.dir, SystemsDir)
	systems, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, sd := range systems {
		dir := filepath.Join(root, sd.Name())
		si := w.system(sd.Name())
		if si == nil || !sd.IsDir() {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			continue
		}
		files, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, f := range files {
			name := f.Name()
			switch {
			case strings.HasSuffix(name, ".tmp") || !f.Type().IsRegular():
				if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
					return err
				}
			case !slices.Contains(si.Files, name):
				si.Files = append(si.Files, name)
			}
		}
		sort.Strings(si.Files)
	}
	return nil
}

// recoverPhase sums the intervals of a phase that was running when the run died.
func (w *Writer) recoverPhase(pi *PhaseInfo) error {
	id := phaseID{System: pi.System, Index: pi.Index, Name: pi.Name, Repetition: pi.Repetition}
	res, intervals, lastEnd, err := w.totalsFromSpool(id, pi.Rate > 0, 0)
	if err != nil {
		return err
	}
	pi.Status, pi.Partial, pi.Intervals = core.StatusInterrupted, true, intervals
	pi.ElapsedNs = lastEnd
	pi.Ended = pi.Started.Add(time.Duration(lastEnd))
	pi.Error = fmt.Sprintf("cmpbench stopped during this phase (recovered): the %d intervals that reached the disk are kept", intervals)
	rows := summaryRows(pi, res)
	if err := w.confide(pi, rows, 0); err != nil {
		return err
	}
	if err := addRows(w.spools[spoolSummary], rows); err != nil {
		return err
	}
	return w.spools[spoolSummary].flush(true)
}

// RecoveredStatus is the status a recovered archive gets: interrupted, or the status
// of a run whose archive was complete but for its final rename.
func (w *Writer) RecoveredStatus() core.RunStatus { return w.recoveredStatus }

// dropTornLine cuts a spool file after its last complete line.
func dropTornLine(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil || size == 0 {
		return err
	}
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && err != io.EOF {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if keep := start + int64(i) + 1; keep != size {
				return f.Truncate(keep)
			}
			return nil
		}
		end = start
	}
	return f.Truncate(0)
}

// Ended is when the recovered run was last seen working: the end of its last
// phase, or its start.
func (w *Writer) Ended() time.Time {
	end := w.m.Started
	for _, p := range w.m.Phases {
		if p.Ended.After(end) {
			end = p.Ended
		}
	}
	return end
}

// Finished lists the archives under outDir whose runs ended: the directories, not
// hidden as in-progress ones are, that hold a manifest.
func Finished(outDir string) []string {
	return runDirs(outDir, func(name, dir string) bool {
		if strings.HasPrefix(name, ".") {
			return false
		}
		_, err := os.Stat(filepath.Join(dir, ManifestFile))
		return err == nil
	})
}

// InProgress lists the in-progress run directories under outDir: runs going on now,
// or runs whose cmpbench died, which `cmpbench recover` can finish.
func InProgress(outDir string) []string {
	return runDirs(outDir, func(name, dir string) bool {
		if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".partial") {
			return false
		}
		_, err := readManifestFile(dir)
		return err == nil
	})
}

// runDirs lists the directories under outDir that keep says are runs.
func runDirs(outDir string, keep func(name, dir string) bool) []string {
	entries, err := os.ReadDir(outDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if dir := filepath.Join(outDir, e.Name()); e.IsDir() && keep(e.Name(), dir) {
			out = append(out, dir)
		}
	}
	return out
}
