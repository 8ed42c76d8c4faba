package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cmpbench/cmpbench/core"
)

// Archive is an archive opened for reading.
type Archive struct {
	Dir      string
	Manifest Manifest
	Summary  []SummaryRow
}

// ReadManifest reads and checks manifest.json: a newer format version is refused,
// and so is a run that has not finished.
func ReadManifest(dir string) (Manifest, error) {
	m, err := readManifestFile(dir)
	if err == nil && m.Status == StatusInProgress {
		err = fmt.Errorf("%s is a run that has not finished: still going, or its cmpbench died; `cmpbench recover %s` turns it into an archive", dir, dir)
	}
	return m, err
}

// readManifestFile reads manifest.json whatever the run's status.
func readManifestFile(dir string) (Manifest, error) {
	b, err := readRegular(filepath.Join(dir, ManifestFile))
	if err != nil {
		return Manifest{}, fmt.Errorf("%s is not a cmpbench archive: %w", dir, err)
	}
	return parseManifest(b, filepath.Join(dir, ManifestFile))
}

// parseManifest decodes the manifest read from path, refusing a format version
// newer than this code or none.
func parseManifest(b []byte, path string) (Manifest, error) {
	var m Manifest
	var head struct {
		FormatVersion int `json:"format_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return m, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	switch {
	case head.FormatVersion > FormatVersion:
		return m, fmt.Errorf("%s: archive format version %d is newer than this cmpbench reads (%d); use a newer cmpbench", path, head.FormatVersion, FormatVersion)
	case head.FormatVersion < 1:
		return m, fmt.Errorf("%s: no format_version", path)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	return m, nil
}

// Enclosing returns the archive directory that path is or lies inside: the
// nearest of path (symbolic links resolved, a dangling one too: writing through
// it would create its target) and its parents that is an archive, finished or
// not, damaged or not: it holds a cmpbench manifest.json, or a manifest.json and
// a SHA256SUMS. It is how every command that writes keeps out of archives, which
// are never changed.
func Enclosing(path string) (dir string, ok bool) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	p = resolveLinks(p)
	for d := p; ; d = filepath.Dir(d) {
		if isArchiveDir(d) {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// resolveLinks resolves the links of the part of the absolute path p that
// exists, following a dangling link at its end to where it points.
func resolveLinks(p string) string {
	var rest []string
	for hops := 0; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if to, err := os.Readlink(p); err == nil && hops < 40 {
			hops++
			if !filepath.IsAbs(to) {
				to = filepath.Join(filepath.Dir(p), to)
			}
			p = to
			continue
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// isArchiveDir says whether dir is an archive or an archive's in-progress
// directory, even one whose manifest was damaged.
func isArchiveDir(dir string) bool {
	if _, err := readManifestFile(dir); err == nil {
		return true
	}
	for _, f := range []string{ManifestFile, SumsFile} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// Open reads an archive's manifest and summary.
func Open(dir string) (*Archive, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	a := &Archive{Dir: dir, Manifest: m}
	if err := a.readTable(SummaryFile, &a.Summary); err != nil {
		return nil, err
	}
	return a, nil
}

// Intervals reads intervals.parquet.
func (a *Archive) Intervals() ([]IntervalRow, error) {
	var rows []IntervalRow
	if err := a.readTable(IntervalsFile, &rows); err != nil {
		return nil, err
	}
	starts := phaseStarts(&a.Manifest)
	for i := range rows {
		rows[i].setWallStart(starts)
	}
	return rows, nil
}

// Probe reads probe.parquet.
func (a *Archive) Probe() ([]ProbeRow, error) {
	var rows []ProbeRow
	return rows, a.readTable(ProbeFile, &rows)
}

// ServerStats reads server_stats.parquet.
func (a *Archive) ServerStats() ([]ServerStatRow, error) {
	var rows []ServerStatRow
	return rows, a.readTable(ServerStats, &rows)
}

// ClientStats reads client_stats.parquet.
func (a *Archive) ClientStats() ([]ClientStatRow, error) {
	var rows []ClientStatRow
	return rows, a.readTable(ClientStats, &rows)
}

// EachInterval calls fn with every row of intervals.parquet, in order, holding one
// batch of rows at a time.
func (a *Archive) EachInterval(fn func(*IntervalRow) error) error {
	starts := phaseStarts(&a.Manifest)
	return eachRow(a, IntervalsFile, func(r *IntervalRow) error {
		r.setWallStart(starts)
		return fn(r)
	})
}

// EachProbe calls fn with every row of probe.parquet, in order.
func (a *Archive) EachProbe(fn func(*ProbeRow) error) error { return eachRow(a, ProbeFile, fn) }

// EachServerStat calls fn with every row of server_stats.parquet, in order.
func (a *Archive) EachServerStat(fn func(*ServerStatRow) error) error {
	return eachRow(a, ServerStats, fn)
}

func eachRow[T any](a *Archive, name string, fn func(*T) error) error {
	meta, err := eachParquetRow(filepath.Join(a.Dir, name), fn)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return a.checkMeta(name, meta)
}

func (a *Archive) readTable(name string, out any) error {
	meta, err := readParquet(filepath.Join(a.Dir, name), out)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return a.checkMeta(name, meta)
}

// checkMeta checks that a table is of a format this code reads and of this run.
func (a *Archive) checkMeta(name string, meta map[string]string) error {
	if v, _ := strconv.Atoi(meta["cmpbench.format_version"]); v > FormatVersion {
		return fmt.Errorf("%s: format version %d is newer than this cmpbench reads (%d)", name, v, FormatVersion)
	}
	if id := meta["cmpbench.run_id"]; id != a.Manifest.RunID {
		return fmt.Errorf("%s belongs to run %q, the manifest to %q", name, id, a.Manifest.RunID)
	}
	return nil
}

// Validations reads validation.json: the checks of loaded data.
func (a *Archive) Validations() ([]core.Validation, error) {
	b, err := a.ReadFile(ValidationFile)
	if err != nil {
		return nil, err
	}
	return parseValidations(b)
}

// parseValidations decodes validation.json.
func parseValidations(b []byte) ([]core.Validation, error) {
	var v []core.Validation
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", ValidationFile, err)
	}
	return v, nil
}

// Facts reads the facts of system s its adapter read of its captures
// (systems/<name>/facts.json): nil when the archive has none (written before
// facts were kept, or by an adapter that reads none).
func (a *Archive) Facts(s SystemInfo) (*core.Facts, error) {
	if !slices.Contains(s.Files, FactsFile) {
		return nil, nil
	}
	name := SystemsDir + "/" + s.Name + "/" + FactsFile
	b, err := a.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var f core.Facts
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &f, nil
}

// ReadFile reads a file of the archive.
func (a *Archive) ReadFile(name string) ([]byte, error) {
	b, err := readRegular(filepath.Join(a.Dir, filepath.FromSlash(name)))
	if errors.Is(err, errNotRegular) {
		return nil, fmt.Errorf("%s: %w", name, errNotRegular)
	}
	return b, err
}

// errNotRegular is a device, pipe or directory where an archive has a file: it is
// never read, since reading it might never end.
var errNotRegular = errors.New("not a regular file")

// regular returns errNotRegular unless path is a regular file (or a link to one).
func regular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errNotRegular
	}
	return nil
}

// readRegular reads a regular file.
func readRegular(path string) ([]byte, error) {
	if err := regular(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// WriteSummaryCSV writes summary.parquet as CSV, histograms left out.
func (a *Archive) WriteSummaryCSV(w io.Writer) error { return writeCSV(w, a.Summary) }
