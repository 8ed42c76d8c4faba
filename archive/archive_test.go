package archive_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/redact"
)

func write(t *testing.T, red *redact.Redactor) string {
	t.Helper()
	dir, err := archivetest.Write(t.TempDir(), archivetest.Options{}, red)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// The machine's load during a phase reaches the manifest, and its flag the summary
// table, which verify holds to the manifest.
func TestHostLoadRoundTrip(t *testing.T) {
	dir, err := archivetest.Write(t.TempDir(), archivetest.Options{HostSaturated: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if errs := archive.Verify(dir); len(errs) > 0 {
		t.Fatal(errs)
	}
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	saturated := 0
	for _, p := range a.Manifest.Phases {
		if p.HostSaturated != (p.Host != nil) || (p.Host != nil && (p.System != "slow" || p.Host.Cores != 2 || len(p.Host.Others) != 2 || p.Host.Others[0].Name != "bash")) {
			t.Errorf("%s %s: host_saturated %v, host %+v", p.System, p.Name, p.HostSaturated, p.Host)
		}
		if p.HostSaturated {
			saturated++
		}
	}
	if saturated == 0 {
		t.Fatal("no phase ran on a saturated host")
	}
	for _, r := range a.Summary {
		if want := r.System == "slow" && r.Phase != "load"; r.HostSaturated != want || (want && (r.HostCores != 2 || r.HostBusyCores != 1.97)) {
			t.Errorf("%s %s %s: host_saturated %v, host_cores %d, host_busy_cores %g", r.System, r.Phase, r.Op, r.HostSaturated, r.HostCores, r.HostBusyCores)
		}
	}
	// A hand-edited flag is caught.
	b, err := os.ReadFile(filepath.Join(dir, archive.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"host_saturated": true`, `"host_saturated": false`, 1)
	if edited == string(b) {
		t.Fatal("the manifest has no host_saturated")
	}
	if err := os.WriteFile(filepath.Join(dir, archive.ManifestFile), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := archive.Verify(dir); !strings.Contains(fmt.Sprint(errs), "host_saturated") {
		t.Errorf("verify missed the edited flag: %v", errs)
	}
}

func TestRoundTrip(t *testing.T) {
	dir := write(t, nil)
	if errs := archive.Verify(dir); len(errs) > 0 {
		t.Fatal(errs)
	}
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest.FormatVersion != archive.FormatVersion || len(a.Manifest.Phases) != 6 || len(a.Manifest.Plugins) != 2 {
		t.Fatalf("manifest %+v", a.Manifest)
	}
	if len(a.Summary) != 10 { // load: SET; two mixes: GET and SET; two systems
		t.Fatalf("%d summary rows", len(a.Summary))
	}
	for _, r := range a.Summary {
		switch {
		case r.System == "fast" && r.Phase == "closed-1:10" && r.Op == "GET":
			if r.Count != 3000 || r.Hits != 2700 || r.Misses != 300 || r.Throughput != 1000 || r.Sustained != nil || r.RespP50 != r.SvcP50 {
				t.Errorf("closed GET %+v", r)
			}
		case r.System == "slow" && r.Phase == "closed-1:10" && r.Op == "SET":
			if r.ErrOOM != 21 || r.Errors != 21 || r.Count != 3000 {
				t.Errorf("errors %+v", r)
			}
		case r.Phase == "rate-5000":
			want := r.System == "fast"
			if r.Sustained == nil || *r.Sustained != want || r.RespP99 <= r.SvcP99 || len(r.SvcHDR) == 0 {
				t.Errorf("%s fixed rate: sustained %v, resp p99 %d svc p99 %d", r.System, r.Sustained, r.RespP99, r.SvcP99)
			}
		}
	}
	iv, err := a.Intervals()
	if err != nil || len(iv) != 2*(1+3*2+3*2) {
		t.Fatalf("%d interval rows: %v", len(iv), err)
	}
	b, _ := a.ReadFile("systems/fast/info.txt")
	if !strings.Contains(string(b), "redis_version:7.0.15") {
		t.Fatal("capture not archived")
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Fatal("a temporary directory was left beside the archive")
	}
}

func TestVerifyFindsTampering(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(dir string)
		want   string
	}{
		{"flipped byte in a table", func(dir string) {
			p := filepath.Join(dir, archive.SummaryFile)
			b, _ := os.ReadFile(p)
			b[len(b)/3] ^= 1
			os.WriteFile(p, b, 0o644)
		}, "summary.parquet: checksum mismatch"},
		{"added file", func(dir string) { os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("x"), 0o644) }, "extra.txt: not listed"},
		{"removed file", func(dir string) { os.Remove(filepath.Join(dir, "systems/fast/info.txt")) }, "systems/fast/info.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := write(t, nil)
			tc.tamper(dir)
			errs := archive.Verify(dir)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tc.want) {
				t.Fatalf("verify said %v, want %q", msgs, tc.want)
			}
		})
	}
}

func TestNewerFormatIsRefused(t *testing.T) {
	dir := write(t, nil)
	p := filepath.Join(dir, archive.ManifestFile)
	b, _ := os.ReadFile(p)
	var m map[string]any
	json.Unmarshal(b, &m)
	m["format_version"] = archive.FormatVersion + 1
	b, _ = json.Marshal(m)
	os.WriteFile(p, b, 0o644)
	_, err := archive.Open(dir)
	if err == nil || !strings.Contains(err.Error(), "newer than this cmpbench reads") {
		t.Fatalf("open: %v", err)
	}
}

func TestCommitRefusesASecret(t *testing.T) {
	red := redact.New("leaked-secret-1")
	h := archivetest.Header(archivetest.Options{})
	// Captures are redacted on their way in; a secret in the manifest is caught at Commit.
	h.CommandLine = []string{"cmpbench", "--password", "leaked-secret-1"}
	out := t.TempDir()
	w, err := archive.Create(out, h, red)
	if err != nil {
		t.Fatal(err)
	}
	if err := archivetest.Feed(w, archivetest.Options{InfoExtra: "masterauth:leaked-secret-1\n"}, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(core.RunComplete, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err == nil || !strings.Contains(err.Error(), "manifest.json contains a secret") {
		t.Fatalf("commit: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, h.RunID)); !os.IsNotExist(err) {
		t.Fatal("an archive with a secret got its final name")
	}
	info, _ := os.ReadFile(filepath.Join(w.Dir(), "systems/fast/info.txt"))
	if !strings.Contains(string(info), "masterauth:[redacted]") || strings.Contains(string(info), "leaked-secret-1") {
		t.Fatalf("capture written unredacted: %q", info)
	}
	assertInProgress(t, w.Dir())
}

// fed writes the generated run into a new archive under out as a runner does,
// stopping in the middle of phase stopAfter (-1: the whole run), and returns the
// unfinished writer.
// A system's facts are archived as its adapter read them, redacted, as
// deterministic JSON (an unknown fact left out), listed among its files and
// read back; a system without facts has no facts.json.
func TestFactsAreArchived(t *testing.T) {
	h := archivetest.Header(archivetest.Options{})
	h.Systems = nil
	w, err := archive.Create(t.TempDir(), h, redact.New("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	facts := &core.Facts{
		Durability: core.Fact{Words: "appendfsync everysec: up to 1 s of writes lost on power loss", Class: "1s"},
		Memory:     core.Fact{Words: "no limit (s3cret)", Class: "unlimited"},
		Threads:    core.Fact{Words: "io-threads 1"},
	}
	for _, sr := range []core.SystemRun{
		{Name: "a", Adapter: "resp", Capture: core.Capture{Sections: map[string]string{"info": "x:1\n"}, Facts: facts}},
		{Name: "b", Adapter: "other", Capture: core.Capture{Sections: map[string]string{"info": "x:1\n"}}},
	} {
		if err := w.SystemStarted(sr); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(core.RunComplete, time.Now()); err != nil {
		t.Fatal(err)
	}
	dir, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if errs := archive.Verify(dir); len(errs) > 0 {
		t.Fatal(errs)
	}
	b, err := a.ReadFile("systems/a/facts.json")
	want := `{
  "durability": {
    "words": "appendfsync everysec: up to 1 s of writes lost on power loss",
    "class": "1s"
  },
  "memory": {
    "words": "no limit ([redacted])",
    "class": "unlimited"
  },
  "threads": {
    "words": "io-threads 1"
  }
}
`
	if err != nil || string(b) != want {
		t.Errorf("facts.json %v:\n%s", err, b)
	}
	for i, want := range []struct {
		files []string
		facts bool
	}{{[]string{"facts.json", "info.txt"}, true}, {[]string{"info.txt"}, false}} {
		s := a.Manifest.Systems[i]
		got, err := a.Facts(s)
		if !slices.Equal(s.Files, want.files) || err != nil || (got != nil) != want.facts {
			t.Errorf("%s: files %q, facts %+v %v", s.Name, s.Files, got, err)
		}
	}
}

func fed(t *testing.T, out string, stopAfter int) *archive.Writer {
	t.Helper()
	return fedWith(t, out, archivetest.Options{}, stopAfter)
}

func fedWith(t *testing.T, out string, opt archivetest.Options, stopAfter int) *archive.Writer {
	t.Helper()
	w, err := archive.Create(out, archivetest.Header(opt), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := archivetest.Feed(w, opt, stopAfter); err != nil {
		t.Fatal(err)
	}
	return w
}

// lastPhaseStillRunning rewrites dir's manifest as if cmpbench died after the last
// phase's rows reached the disk but before the manifest said how it ended; unsaid
// clears what else that manifest would lack.
func lastPhaseStillRunning(t *testing.T, dir string, unsaid func(*archive.PhaseInfo)) {
	t.Helper()
	path := filepath.Join(dir, archive.ManifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m archive.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	last := &m.Phases[len(m.Phases)-1]
	last.Status, last.ElapsedNs = core.StatusRunning, 0
	if unsaid != nil {
		unsaid(last)
	}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// assertInProgress checks that a directory does not claim to be a finished archive.
func assertInProgress(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, archive.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m archive.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Status != archive.StatusInProgress {
		t.Fatalf("%s claims status %q", dir, m.Status)
	}
	if _, err := archive.Open(dir); err == nil || !strings.Contains(err.Error(), "cmpbench recover") {
		t.Fatalf("open of an unfinished run: %v", err)
	}
}

func TestSummaryCSV(t *testing.T) {
	a, err := archive.Open(write(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := a.WriteSummaryCSV(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 1+len(a.Summary) {
		t.Fatalf("%d lines for %d rows", len(lines), len(a.Summary))
	}
	header := lines[0]
	if !strings.HasPrefix(header, "system,phase_index,phase,") || !strings.Contains(header, ",count,hits,misses,bytes,errors,errors_oom,") || strings.Contains(header, "_hdr") {
		t.Fatalf("header %s", header)
	}
	if !strings.Contains(b.String(), "fast,1,closed-1:10,0,measured,") {
		t.Fatalf("rows:\n%s", b.String())
	}
}

func TestHlogExportReadsBack(t *testing.T) {
	a, err := archive.Open(write(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	files, err := a.WriteHlogs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 {
		t.Fatalf("%d logs for 2 systems x 3 phases", len(files))
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r := hdrhistogram.NewHistogramLogReader(fh)
		counts := map[string]int64{}
		for {
			h, err := r.NextIntervalHistogram()
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if h == nil {
				break
			}
			counts[h.Tag()] += h.TotalCount()
		}
		fh.Close()
		sys := filepath.Base(filepath.Dir(f))
		phase := strings.TrimSuffix(filepath.Base(f), ".hlog")
		for _, row := range a.Summary {
			if row.System == sys && strings.HasSuffix(phase, strings.ReplaceAll(row.Phase, ":", "_")) {
				if counts[row.Op] != row.Count {
					t.Errorf("%s: %s has %d values in the log, %d in the summary", f, row.Op, counts[row.Op], row.Count)
				}
				if row.TargetRate > 0 && counts[row.Op+"_service"] != row.Count {
					t.Errorf("%s: %s service time has %d values", f, row.Op, counts[row.Op+"_service"])
				}
			}
		}
	}
}

func TestDiskFullLeavesNothingThatClaimsComplete(t *testing.T) {
	// A full disk, simulated with /dev/full under one of the archive's file names, at
	// each step of finishing; afterwards, with space again, the run is recovered.
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	for _, file := range []string{archive.IntervalsFile, "report.md", archive.SumsFile} {
		t.Run(file, func(t *testing.T) {
			out := t.TempDir()
			h := archivetest.Header(archivetest.Options{})
			w := fed(t, out, -1)
			full := filepath.Join(w.Dir(), file)
			if err := os.Symlink("/dev/full", full); err != nil {
				t.Fatal(err)
			}
			_, err := w.Finish(core.RunComplete, time.Now())
			if err == nil {
				if err = w.AddFile("report.md", []byte("# report\n")); err == nil {
					_, err = w.Commit()
				}
			}
			if err == nil || !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("finishing on a full disk: %v", err)
			}
			if _, err := os.Stat(filepath.Join(out, h.RunID)); !os.IsNotExist(err) {
				t.Fatal("a directory exists under the final name")
			}
			assertInProgress(t, w.Dir())
			if got := archive.InProgress(out); len(got) != 1 || got[0] != w.Dir() {
				t.Fatalf("in-progress runs: %v", got)
			}

			os.Remove(full)
			dir := recoverRun(t, w)
			a, err := archive.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if a.Manifest.Status != core.RunInterrupted || len(a.Manifest.Phases) != 6 || len(a.Summary) != 10 {
				t.Fatalf("recovered: status %s, %d phases, %d summary rows", a.Manifest.Status, len(a.Manifest.Phases), len(a.Summary))
			}
		})
	}
}

// recoverRun finishes the in-progress directory of a writer whose cmpbench died
// as `cmpbench recover` does.
func recoverRun(t *testing.T, crashed *archive.Writer) string {
	t.Helper()
	archive.Crash(crashed)
	w, err := archive.Recover(crashed.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(core.RunInterrupted, w.Ended()); err != nil {
		t.Fatal(err)
	}
	dir, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if errs := archive.Verify(dir); len(errs) > 0 {
		t.Fatal(errs)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Fatalf("%d entries beside the recovered archive", len(entries))
	}
	return dir
}

func TestRecoverKeepsFinishedPhasesAndMarksThePartialOne(t *testing.T) {
	out := t.TempDir()
	w, err := archive.Create(out, archivetest.Header(archivetest.Options{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The run dies in the middle of the third phase (the first system's fixed-rate
	// phase): no Finish, no Commit, the spools left open as a SIGKILL leaves them.
	if err := archivetest.Feed(w, archivetest.Options{}, 2); err != nil {
		t.Fatal(err)
	}
	assertInProgress(t, w.Dir())
	dir := recoverRun(t, w)
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := a.Manifest
	if m.Status != core.RunInterrupted || len(m.Phases) != 3 {
		t.Fatalf("status %s, %d phases", m.Status, len(m.Phases))
	}
	for i, p := range m.Phases {
		want := core.StatusOK
		if i == 2 {
			want = core.StatusInterrupted
		}
		if p.Status != want || p.Partial != (i == 2) {
			t.Errorf("phase %d %s: status %s partial %v", i, p.Name, p.Status, p.Partial)
		}
	}
	part := m.Phases[2]
	if part.Intervals != 1 || part.ElapsedNs != int64(time.Second) || !strings.Contains(part.Error, "recovered") {
		t.Fatalf("partial phase %+v", part)
	}
	var rows int
	for _, r := range a.Summary {
		if r.Phase == part.Name && r.System == part.System {
			rows++
			if r.Status != string(core.StatusInterrupted) || r.Count == 0 || r.Sustained == nil || *r.Sustained || len(r.LagHDR) == 0 {
				t.Errorf("partial phase row %+v", r)
			}
		}
	}
	if rows != 2 {
		t.Fatalf("%d summary rows for the partial phase", rows)
	}
	iv, _ := a.Intervals()
	if len(iv) != 1+6+2 { // load, closed loop, half of the fixed-rate phase
		t.Fatalf("%d interval rows", len(iv))
	}
}

func TestRecoverDoesNotCountAPhaseTwice(t *testing.T) {
	// cmpbench died after a phase's rows reached the disk but before the manifest
	// that says the phase ended did.
	out := t.TempDir()
	w := fed(t, out, -1)
	lastPhaseStillRunning(t, w.Dir(), nil)

	a, err := archive.Open(recoverRun(t, w))
	if err != nil {
		t.Fatal(err)
	}
	p := a.Manifest.Phases[len(a.Manifest.Phases)-1]
	if len(a.Summary) != 10 || p.Status != core.StatusOK || p.Partial || p.ElapsedNs != int64(3*time.Second) {
		t.Fatalf("%d summary rows; last phase %s partial %v elapsed %d", len(a.Summary), p.Status, p.Partial, p.ElapsedNs)
	}
}

// A phase whose rows reached the disk before the manifest said how it ended keeps
// its machine's load and host-saturated flag, read back from its summary rows.
func TestRecoverRestoresTheHostLoad(t *testing.T) {
	w := fedWith(t, t.TempDir(), archivetest.Options{HostSaturated: true}, -1)
	lastPhaseStillRunning(t, w.Dir(), func(last *archive.PhaseInfo) {
		if last.Host == nil || !last.HostSaturated {
			t.Fatalf("the last phase has no host load to lose: %+v", last)
		}
		last.Host, last.HostSaturated = nil, false
	})

	a, err := archive.Open(recoverRun(t, w))
	if err != nil {
		t.Fatal(err)
	}
	p := a.Manifest.Phases[len(a.Manifest.Phases)-1]
	if !p.HostSaturated || p.Host == nil || p.Host.Cores != 2 || p.Host.BusyCores != 1.97 {
		t.Fatalf("recovered phase: host_saturated %v, host %+v", p.HostSaturated, p.Host)
	}
}

// A phase whose rows reached the disk before the manifest said how it ended
// gets again how sure its numbers are, from its intervals on disk.
func TestRecoverRestoresHowSure(t *testing.T) {
	w := fed(t, t.TempDir(), -1)
	var want *archive.PhaseConfidence
	lastPhaseStillRunning(t, w.Dir(), func(last *archive.PhaseInfo) {
		if last.Confidence == nil {
			t.Fatalf("the last phase has no confidence to lose: %+v", last.Confidence)
		}
		want, last.Confidence, last.Unsteady = last.Confidence, nil, nil
	})

	a, err := archive.Open(recoverRun(t, w))
	if err != nil {
		t.Fatal(err)
	}
	p := a.Manifest.Phases[len(a.Manifest.Phases)-1]
	if !reflect.DeepEqual(p.Confidence, want) {
		t.Fatalf("recovered phase's confidence %+v, want %+v", p.Confidence, want)
	}
}

func TestFailedFinalRenameLeavesNothingThatClaimsComplete(t *testing.T) {
	out := t.TempDir()
	h := archivetest.Header(archivetest.Options{})
	w := fed(t, out, -1)
	// Something took the final name meanwhile: the last rename fails.
	os.MkdirAll(filepath.Join(out, h.RunID, "in-the-way"), 0o755)
	if _, err := w.Finish(core.RunComplete, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err == nil {
		t.Fatal("commit over an existing directory succeeded")
	}
	assertInProgress(t, w.Dir())
	if _, err := os.Stat(filepath.Join(w.Dir(), archive.SumsFile)); !os.IsNotExist(err) {
		t.Fatal("SHA256SUMS left in the unfinished directory")
	}
	os.RemoveAll(filepath.Join(out, h.RunID))
	a, err := archive.Open(recoverRun(t, w))
	if err != nil || len(a.Summary) != 10 {
		t.Fatalf("recovered: %v", err)
	}
}

func TestRecoverDropsARowCutShort(t *testing.T) {
	out := t.TempDir()
	w := fed(t, out, 2)
	// The machine lost power in the middle of a row.
	for _, name := range []string{"summary.jsonl", "intervals.jsonl"} {
		f, err := os.OpenFile(filepath.Join(w.Dir(), archive.SpoolDir, name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"System":"fast","PhaseIn`)
		f.Close()
	}
	a, err := archive.Open(recoverRun(t, w))
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest.Phases[2].Status != core.StatusInterrupted || len(a.Summary) != 5 {
		t.Fatalf("%d summary rows, phase 3 %s", len(a.Summary), a.Manifest.Phases[2].Status)
	}
}

// TestVerifyCrossChecksManifestAndTables edits an archive and recomputes
// SHA256SUMS, as someone who wants a run to look better would: verify must find
// what no longer agrees.
func TestVerifyCrossChecksManifestAndTables(t *testing.T) {
	skipInTheRaceRun(t)
	phase := func(m *archive.Manifest, system, name string) *archive.PhaseInfo {
		for i := range m.Phases {
			if m.Phases[i].System == system && m.Phases[i].Name == name {
				return &m.Phases[i]
			}
		}
		t.Fatalf("no phase %s of %s", name, system)
		return nil
	}
	failed := archivetest.Options{FailPhase: "closed-1:10"}
	tests := []struct {
		name   string
		opt    archivetest.Options
		tamper func(dir string) error
		want   []string
	}{
		{"run status edited to complete", failed, func(dir string) error {
			return archive.EditManifest(dir, func(m *archive.Manifest) { m.Status = core.RunComplete })
		}, []string{`manifest.json: status "complete", but phase "closed-1:10" of fast (#1, repetition 0) ended failed`}},
		{"phase and run status edited", failed, func(dir string) error {
			return archive.EditManifest(dir, func(m *archive.Manifest) {
				m.Status = core.RunComplete
				phase(m, "fast", "closed-1:10").Status = core.StatusOK
			})
		}, []string{`summary.parquet: phase "closed-1:10" of fast (#1, repetition 0): status "failed", manifest.json says "ok"`}},
		{"a failed validation in a complete run", archivetest.Options{}, func(dir string) error {
			v := `[{"system":"slow","point":"after load","expected":1000,"counted":990,"samples":[],"problems":["the server holds 990 keys, 1000 were written"]}]`
			if err := os.WriteFile(filepath.Join(dir, archive.ValidationFile), []byte(v), 0o644); err != nil {
				return err
			}
			return archive.Resum(dir)
		}, []string{`validation.json: status "complete" in manifest.json, but validation "after load" of slow failed: the server holds 990 keys, 1000 were written`}},
		{"a recovered run made complete", archivetest.Options{}, func(dir string) error {
			return archive.EditManifest(dir, func(m *archive.Manifest) { m.Recovered = true })
		}, []string{`manifest.json: status "complete", but the archive was recovered (recovered: true), which leaves it interrupted`}},
		{"a phase's repetition edited", archivetest.Options{}, func(dir string) error {
			return archive.EditManifest(dir, func(m *archive.Manifest) { phase(m, "slow", "rate-5000").Repetition = 1 })
		}, []string{
			`summary.parquet: phase "rate-5000" of slow (#2, repetition 0) is not in manifest.json`,
			`intervals.parquet: phase "rate-5000" of slow (#2, repetition 0) is not in manifest.json`,
			`manifest.json: phase "rate-5000" of slow (#2, repetition 1) ran 3 intervals, intervals.parquet has 0`,
		}},
		{"a phase's interval count edited", archivetest.Options{}, func(dir string) error {
			return archive.EditManifest(dir, func(m *archive.Manifest) { phase(m, "fast", "load").Intervals = 2 })
		}, []string{`manifest.json: phase "load" of fast (#0, repetition 0) ran 2 intervals, intervals.parquet has 1`}},
		{"a count edited in the summary", archivetest.Options{}, func(dir string) error {
			return archive.EditTable(dir, archive.SummaryFile, func(rows []archive.SummaryRow) []archive.SummaryRow {
				for i := range rows {
					if rows[i].System == "slow" && rows[i].Phase == "closed-1:10" && rows[i].Op == "SET" {
						rows[i].Errors, rows[i].ErrOOM = 0, 0
					}
				}
				return rows
			})
		}, []string{`summary.parquet: phase "closed-1:10" of slow (#1, repetition 0), op SET: errors 0, errors_oom 0; the rows of intervals.parquet sum to errors 21, errors_oom 21`}},
		{"an interval row dropped", archivetest.Options{}, func(dir string) error {
			return archive.EditTable(dir, archive.IntervalsFile, func(rows []archive.IntervalRow) []archive.IntervalRow {
				return slices.DeleteFunc(rows, func(r archive.IntervalRow) bool {
					return r.System == "fast" && r.Phase == "closed-1:10" && r.Interval == 2 && r.Op == "GET"
				})
			})
		}, []string{`summary.parquet: phase "closed-1:10" of fast (#1, repetition 0), op GET: count 3000, hits 2700, misses 300; the rows of intervals.parquet sum to count 2000, hits 1800, misses 200`}},
		{"a step that was not sustained made sustained", archivetest.Options{}, func(dir string) error {
			return archive.EditTable(dir, archive.SummaryFile, func(rows []archive.SummaryRow) []archive.SummaryRow {
				yes := true
				for i := range rows {
					if rows[i].System == "slow" && rows[i].Phase == "rate-5000" {
						rows[i].Sustained = &yes
					}
				}
				return rows
			})
		}, []string{`summary.parquet: phase "rate-5000" of slow (#2, repetition 0), op GET: sustained true, but a phase with status ok at 4498 of 5000 ops/s is false`}},
		{"a server sample's t edited", archivetest.Options{}, func(dir string) error {
			return archive.EditTable(dir, archive.ServerStats, func(rows []archive.ServerStatRow) []archive.ServerStatRow {
				rows[0].Time = rows[0].Time.Add(time.Second)
				return rows
			})
		}, []string{`server_stats.parquet: phase "closed-1:10" of fast (#1, repetition 0): t 2026-12-01T10:00:06Z, but t_unix_ns 1796119205000000000`}},
		{"an interval's t_start edited", archivetest.Options{}, func(dir string) error {
			return archive.EditTable(dir, archive.IntervalsFile, func(rows []archive.IntervalRow) []archive.IntervalRow {
				rows[0].WallStart = rows[0].WallStart.Add(-time.Hour)
				return rows
			})
		}, []string{`intervals.parquet: phase "load" of fast (#0, repetition 0), interval 0: t_start 2026-12-01T09:00:00Z, but manifest.json's started + start_ns is 2026-12-01T10:00:00Z`}},
		{"a capture left out of the manifest", archivetest.Options{}, func(dir string) error {
			return archive.EditManifest(dir, func(m *archive.Manifest) { m.Systems[0].Files = nil })
		}, []string{`systems/fast/info.txt: not among the files manifest.json lists for system fast`}},
		{"a system's facts that do not read", archivetest.Options{}, func(dir string) error {
			if err := os.WriteFile(filepath.Join(dir, "systems", "slow", archive.FactsFile), []byte(`{"durability": "none"}`), 0o644); err != nil {
				return err
			}
			return archive.Resum(dir)
		}, []string{`systems/slow/facts.json: json: cannot unmarshal string into Go struct field Facts.durability of type core.Fact`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := archivetest.Write(t.TempDir(), tc.opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if errs := archive.Verify(dir); len(errs) > 0 {
				t.Fatalf("before the edit: %v", errs)
			}
			if err := tc.tamper(dir); err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, e := range archive.Verify(dir) {
				msgs = append(msgs, e.Error())
			}
			for _, want := range tc.want {
				if !slices.Contains(msgs, want) {
					t.Errorf("verify said\n  %s\nwant among them\n  %s", strings.Join(msgs, "\n  "), want)
				}
			}
		})
	}
}

// TestVerifyReadsOnlyTheArchive: SHA256SUMS and the files an archive holds decide
// what verify reads; neither may take it outside the archive, or to a file that
// is not one (a device never ends).
func TestVerifyReadsOnlyTheArchive(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   string
	}{
		{"a listed path that leaves the archive", func(t *testing.T, dir string) {
			outside := filepath.Join(filepath.Dir(dir), "outside.txt")
			os.WriteFile(outside, []byte("not the archive's\n"), 0o644)
			sum, _ := core.FileSHA256(outside)
			f, _ := os.OpenFile(filepath.Join(dir, archive.SumsFile), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(sum + "  ../outside.txt\n")
			f.Close()
		}, `SHA256SUMS:12: "../outside.txt" is not a path inside the archive`},
		{"a file replaced by a link to an equal one outside", func(t *testing.T, dir string) {
			info := filepath.Join(dir, "systems", "fast", "info.txt")
			outside := filepath.Join(filepath.Dir(dir), "info.txt")
			b, _ := os.ReadFile(info)
			os.WriteFile(outside, b, 0o644)
			os.Remove(info)
			if err := os.Symlink(outside, info); err != nil {
				t.Fatal(err)
			}
		}, "systems/fast/info.txt: not a regular file"},
		{"a device in a file's place", func(t *testing.T, dir string) {
			p := filepath.Join(dir, archive.ValidationFile)
			os.Remove(p)
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "validation.json: not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := write(t, nil)
			tc.tamper(t, dir)
			done := make(chan []error, 1)
			go func() { done <- archive.Verify(dir) }()
			var msgs []string
			select {
			case errs := <-done:
				for _, e := range errs {
					msgs = append(msgs, e.Error())
				}
			case <-time.After(20 * time.Second):
				t.Fatal("verify did not return")
			}
			if !slices.Contains(msgs, tc.want) {
				t.Fatalf("verify said\n  %s\nwant among them\n  %s", strings.Join(msgs, "\n  "), tc.want)
			}
		})
	}
}

// Tables written before the timestamp columns (server and client stats' t,
// intervals' t_start) still read, with those made from t_unix_ns and from the
// phase's start; the archive still verifies, and its report is the same byte for
// byte.
func TestTablesWrittenBeforeTheTimestampColumns(t *testing.T) {
	skipInTheRaceRun(t)
	dir, err := archivetest.Write(t.TempDir(), archivetest.Options{Soak: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	type times struct {
		server, client, intervals []time.Time
		report                    map[string][]byte
	}
	read := func() times {
		t.Helper()
		if errs := archive.Verify(dir); len(errs) > 0 {
			t.Fatal(errs)
		}
		a, err := archive.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got times
		ss, err := a.ServerStats()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ss {
			got.server = append(got.server, r.Time)
		}
		cs, err := a.ClientStats()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range cs {
			got.client = append(got.client, r.Time)
		}
		started := map[string]time.Time{}
		for _, p := range a.Manifest.Phases {
			started[fmt.Sprint(p.System, p.Index, p.Repetition)] = p.Started
		}
		err = a.EachInterval(func(r *archive.IntervalRow) error {
			if want := started[fmt.Sprint(r.System, r.PhaseIndex, r.Repetition)].Add(time.Duration(r.StartNs)); !r.WallStart.Equal(want) {
				t.Errorf("%s %s interval %d: t_start %s, want %s", r.System, r.Phase, r.Interval, r.WallStart, want)
			}
			got.intervals = append(got.intervals, r.WallStart)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		files, _, err := report.Render(a)
		if err != nil {
			t.Fatal(err)
		}
		got.report = map[string][]byte{}
		for _, f := range files {
			got.report[f.Name] = f.Data
		}
		return got
	}
	now := read()
	if len(now.server) == 0 || len(now.client) == 0 || len(now.intervals) == 0 {
		t.Fatalf("%d server, %d client samples, %d intervals", len(now.server), len(now.client), len(now.intervals))
	}
	for _, drop := range []struct{ table, column string }{
		{archive.ServerStats, "t"}, {archive.ClientStats, "t"}, {archive.IntervalsFile, "t_start"},
	} {
		if err := archive.DropColumns(dir, drop.table, drop.column); err != nil {
			t.Fatal(err)
		}
		// A row type that needs the column no longer reads the table.
		type needs struct {
			T time.Time `parquet:"t"`
		}
		type needsStart struct {
			T time.Time `parquet:"t_start"`
		}
		var err error
		if drop.column == "t" {
			err = archive.EditTable(dir, drop.table, func(r []needs) []needs { return r })
		} else {
			err = archive.EditTable(dir, drop.table, func(r []needsStart) []needsStart { return r })
		}
		if err == nil || !strings.Contains(err.Error(), "is missing") {
			t.Fatalf("%s still has %s: %v", drop.table, drop.column, err)
		}
	}
	before := read()
	same := func(a, b []time.Time) bool {
		return slices.EqualFunc(a, b, func(x, y time.Time) bool { return x.Equal(y) })
	}
	if !same(now.server, before.server) || !same(now.client, before.client) || !same(now.intervals, before.intervals) {
		t.Errorf("times read from the columns and made without them differ")
	}
	if len(before.report) != len(now.report) {
		t.Fatalf("%d report files, %d before", len(before.report), len(now.report))
	}
	for name, data := range now.report {
		if !bytes.Equal(data, before.report[name]) {
			t.Errorf("%s differs without the timestamp columns", name)
		}
	}
}

// skipInTheRaceRun skips, under -short (CI's run with the race detector), a slow test
// of no concurrency of its own: CI's full run, without -short, runs it.
func skipInTheRaceRun(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow and single-threaded: run without -short (the race run skips it)")
	}
}

// Issue 25, bug 1: the directory of a run still going is refused by Recover,
// which names the process holding it, and left as it was; once the run has
// finished, its lock file is gone.
func TestRecoverRefusesARunStillGoing(t *testing.T) {
	out := t.TempDir()
	w := fed(t, out, -1)
	before, _ := os.ReadDir(filepath.Join(w.Dir(), archive.SpoolDir))
	_, err := archive.Recover(w.Dir(), nil)
	var live *archive.LiveError
	if !errors.As(err, &live) || live.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("belongs to a run still going: cmpbench (pid %d) holds its lock", os.Getpid())) {
		t.Fatalf("Recover of a live run: %v", err)
	}
	if after, _ := os.ReadDir(filepath.Join(w.Dir(), archive.SpoolDir)); len(after) != len(before) {
		t.Fatalf("Recover touched the live run's spools: %d files, then %d", len(before), len(after))
	}
	if _, err := w.Finish(core.RunComplete, time.Now()); err != nil {
		t.Fatal(err)
	}
	dir, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if errs := archive.Verify(dir); len(errs) > 0 {
		t.Fatal(errs)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Fatalf("beside the archive: %v", entries)
	}
}

// Issue 25, bug 5: a stop between writing a capture and saving the manifest (a
// full disk) used to leave a file the manifest did not list, and the recovered
// archive failed verify. Recover lists a whole capture, removes a temporary file
// cut short, and drops the captures of a system whose start was never recorded.
func TestRecoverListsCapturesWrittenAfterTheLastManifest(t *testing.T) {
	out := t.TempDir()
	w := fed(t, out, -1)
	sys := filepath.Join(w.Dir(), archive.SystemsDir)
	first, err := os.ReadDir(sys)
	if err != nil || len(first) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	name := first[0].Name()
	for path, text := range map[string]string{
		filepath.Join(sys, name, "server.log"):     "the server's last words\n",
		filepath.Join(sys, name, "server.log.tmp"): "cut sh",
		filepath.Join(sys, "ghost", "info.txt"):    "a system the manifest never named\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := archive.Open(recoverRun(t, w)) // recoverRun verifies
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range a.Manifest.Systems {
		if s.Name == name && !slices.Contains(s.Files, "server.log") {
			t.Errorf("%s: files %v", name, s.Files)
		}
		if s.Name == "ghost" {
			t.Errorf("a system without a recorded start: %+v", s)
		}
	}
	if b, err := a.ReadFile(archive.SystemsDir + "/" + name + "/server.log"); err != nil || string(b) != "the server's last words\n" {
		t.Errorf("server.log: %q %v", b, err)
	}
}
