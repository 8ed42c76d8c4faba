package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// Pending is an archive being written. It lives under a temporary name next to its
// final place until Commit renames it, so that a directory under a final name is
// always complete.
type Pending struct {
	Dir   string // where files are being written
	final string
	red   *redact.Redactor
}

// PendingName is the temporary name of the archive of runID.
func PendingName(runID string) string { return "." + runID + ".partial" }

// Create writes the run's tables, captures and manifest into a temporary directory
// under outDir. m carries what the caller knows (command line, host, suite, system
// definitions); the rest comes from res.
func Create(outDir string, res *core.RunResult, m Manifest, red *redact.Redactor) (*Pending, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	final := filepath.Join(outDir, res.RunID)
	if _, err := os.Stat(final); err == nil {
		return nil, fmt.Errorf("archive %s already exists", final)
	}
	p := &Pending{Dir: filepath.Join(outDir, PendingName(res.RunID)), final: final, red: red}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := p.write(res, m); err != nil {
		return p, fmt.Errorf("writing archive %s: %w", p.Dir, err)
	}
	return p, nil
}

func (p *Pending) write(res *core.RunResult, m Manifest) error {
	m.FormatVersion = FormatVersion
	m.RunID, m.Status, m.Started, m.Ended = res.RunID, res.Status, res.Started, res.Ended
	meta := map[string]string{"cmpbench.run_id": res.RunID, "cmpbench.format_version": strconv.Itoa(FormatVersion)}

	sum, err := summaryRows(res.Phases)
	if err != nil {
		return err
	}
	if err := writeParquet(filepath.Join(p.Dir, SummaryFile), sum, meta); err != nil {
		return fmt.Errorf("%s: %w", SummaryFile, err)
	}
	iv, err := intervalRows(res.Phases)
	if err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		rows any
	}{
		{IntervalsFile, iv},
		{ProbeFile, probeRows(res.Phases)},
		{ServerStats, serverStatRows(res.Phases)},
		{ClientStats, clientStatRows(res.Phases)},
	} {
		if err := writeParquet(filepath.Join(p.Dir, t.name), t.rows, meta); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}

	defs := map[string]SystemInfo{}
	for _, s := range m.Systems {
		defs[s.Name] = s
	}
	m.Systems, m.Plugins = nil, nil
	for _, sr := range res.Systems {
		si := defs[sr.Name]
		si.Name, si.Adapter, si.Endpoint, si.Provisioned = sr.Name, sr.Adapter, sr.Endpoint, sr.Provisioned
		si.Launch, si.Nodes, si.Binary, si.BinarySHA256 = sr.Launch, sr.Nodes, sr.Binary, sr.BinarySHA256
		si.Product, si.Version, si.VersionField = sr.Capture.Product, sr.Capture.Version, sr.Capture.VersionField
		si.Refused, si.CaptureError, si.Error = sr.Capture.Refused, sr.CaptureError, sr.Error
		files, err := p.writeCaptures(sr)
		if err != nil {
			return err
		}
		si.Files = files
		m.Systems = append(m.Systems, si)
		if sr.Plugin.Path != "" {
			pl := sr.Plugin
			m.Plugins = append(m.Plugins, PluginInfo{Adapter: pl.Adapter, System: sr.Name, Builtin: pl.Builtin, Path: pl.Path,
				SHA256: pl.SHA256, Version: pl.Version, SDKVersion: pl.SDKVersion, Protocol: pl.Protocol})
		}
	}
	m.Phases = nil
	for _, ph := range res.Phases {
		s := ph.Spec
		pi := PhaseInfo{
			Index: ph.Index, Repetition: ph.Repetition, System: ph.System, Name: s.Name, Kind: s.Kind, Workload: s.Workload.Describe(), Shape: plan.Shape(s),
			Connections: s.Connections, Rate: s.Rate, Poisson: s.Poisson, DurationNs: int64(s.Duration), Ops: s.Ops,
			IntervalNs: int64(s.Interval), Seed: s.Seed, Memtier: s.Workload.Memtier,
			Status: ph.End.Status, Error: ph.End.Error, ErrorSamples: ph.End.ErrorSamples, Started: ph.End.Started, Ended: ph.End.Ended, ElapsedNs: int64(ph.End.Elapsed),
			CPUUserNs: int64(ph.End.CPUUser), CPUSystemNs: int64(ph.End.CPUSystem), Intervals: len(ph.Intervals),
			ClientCores: ph.ClientCores, CoresAllowed: ph.CoresAllowed, ClientBound: ph.ClientBound,
		}
		if pr := s.Probe; pr != nil {
			pi.ProbeRate, pi.ProbeOp = pr.Rate, pr.Op.String()
		}
		m.Phases = append(m.Phases, pi)
	}
	vals := res.Validations
	if vals == nil {
		vals = []core.Validation{}
	}
	vb, err := json.MarshalIndent(vals, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(p.Dir, ValidationFile), []byte(p.red.String(string(vb))+"\n")); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(p.Dir, ManifestFile), append(b, '\n'))
}

// writeCaptures stores a system's text captures under systems/<name>/.
func (p *Pending) writeCaptures(sr core.SystemRun) ([]string, error) {
	dir := filepath.Join(p.Dir, SystemsDir, sr.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	texts := map[string]string{}
	for name, text := range sr.Capture.Sections {
		texts[name+".txt"] = text
	}
	if sr.ServerLog != "" {
		texts["server.log"] = sr.ServerLog
	}
	var files []string
	for name, text := range texts {
		if err := writeFile(filepath.Join(dir, name), []byte(p.red.String(text))); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	sort.Strings(files)
	return files, nil
}

// Commit checks that no secret reached any file, writes SHA256SUMS and moves the
// archive to its final name, which it returns.
func (p *Pending) Commit() (string, error) {
	files, err := listFiles(p.Dir)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(p.Dir, f))
		if err != nil {
			return "", err
		}
		if p.red.Leaks(b) {
			return "", fmt.Errorf("refusing to finish the archive: %s contains a secret (left in %s)", f, p.Dir)
		}
	}
	sums, err := checksums(p.Dir, files)
	if err != nil {
		return "", err
	}
	if err := writeFile(filepath.Join(p.Dir, SumsFile), sums); err != nil {
		return "", err
	}
	if err := syncDir(p.Dir); err != nil {
		return "", err
	}
	if err := os.Rename(p.Dir, p.final); err != nil {
		return "", err
	}
	return p.final, syncDir(filepath.Dir(p.final))
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

// checksums is SHA256SUMS for files, in the format `sha256sum -c` reads.
func checksums(dir string, files []string) ([]byte, error) {
	var b bytes.Buffer
	for _, f := range files {
		sum, err := core.FileSHA256(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, f)
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
