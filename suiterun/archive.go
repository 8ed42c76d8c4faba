package suiterun

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// header is what the archive records about the run before it starts.
func header(runID string, p *plan.Plan, systems *config.Systems, red *redact.Redactor) archive.Header {
	version, commit := core.BuildVersion()
	h := archive.Header{
		RunID:       runID,
		Started:     time.Now(),
		Cmpbench:    archive.BuildInfo{Version: version, Commit: commit},
		Host:        core.CollectHostFacts(),
		CommandLine: red.Strings(os.Args),
		Seed:        p.Seed,
		Scale:       p.Scale,
		Repeat:      p.Repeat,
		Suite:       archive.SuiteInfo{Name: p.Suite.Name, Description: p.Suite.Description, Source: p.Suite.Source, YAML: string(p.Suite.Text)},
	}
	for _, n := range p.Systems {
		s, _ := systems.Get(n)
		// cluster: an option of the system's adapter (the resp adapter's OSS
		// cluster API), written under options: or at the top level alike.
		cluster, _ := strconv.ParseBool(s.SystemConfig().Options["cluster"])
		si := archive.SystemInfo{Name: n, Adapter: s.Adapter, Description: s.Description, DefinedIn: s.Source, Definition: s.Raw, Cluster: cluster,
			Profile: red.String(string(s.ProfileData))}
		if t := s.TLS; t != nil && t.Enabled {
			si.TLS = t.Summary()
		}
		if s.Cost != nil {
			si.CostPerMonth = s.Cost.USDPerMonth
		}
		h.Systems = append(h.Systems, si)
	}
	return h
}

// NewRunID names a run that starts at t: its time, suite and a random suffix.
func NewRunID(t time.Time, suite string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%s-%s", t.UTC().Format("20060102-150405"), suite, hex.EncodeToString(b[:]))
}

// FinishArchive writes an archive's tables, draws its report and console tables
// from what was written, and commits it under its final name. A report that
// cannot be drawn loses nothing: the archive is committed without it, and the
// error says so.
func FinishArchive(w *archive.Writer, status core.RunStatus, ended time.Time) (dir string, tables report.Console, err error) {
	a, err := w.Finish(status, ended)
	if err != nil {
		return "", report.Console{}, err
	}
	files, tables, rerr := report.Render(a)
	for _, f := range files {
		if rerr != nil {
			break
		}
		rerr = w.AddFile(f.Name, f.Data)
	}
	if dir, err = w.Commit(); err != nil {
		return "", tables, errors.Join(err, rerr)
	}
	if rerr != nil {
		return dir, tables, fmt.Errorf("the archive %s keeps everything measured, but its report could not be drawn: %w", dir, rerr)
	}
	return dir, tables, nil
}
