package archive_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core/redact"
)

func write(t *testing.T, red *redact.Redactor) string {
	t.Helper()
	res, m := archivetest.Run()
	p, err := archive.Create(t.TempDir(), res, m, red)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := p.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return dir
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
	res, m := archivetest.Run()
	res.Systems[0].Capture.Sections["info"] = "masterauth:leaked-secret-1"
	red := redact.New("leaked-secret-1")
	// Captures are redacted on their way in; a secret in the manifest is caught at Commit.
	m.CommandLine = []string{"cmpbench", "--password", "leaked-secret-1"}
	out := t.TempDir()
	p, err := archive.Create(out, res, m, red)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(); err == nil || !strings.Contains(err.Error(), "manifest.json contains a secret") {
		t.Fatalf("commit: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, res.RunID)); !os.IsNotExist(err) {
		t.Fatal("an archive with a secret got its final name")
	}
	info, _ := os.ReadFile(filepath.Join(p.Dir, "systems/fast/info.txt"))
	if strings.Contains(string(info), "leaked-secret-1") {
		t.Fatal("capture written unredacted")
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

func TestWriteFailureLeavesNoFinalDirectory(t *testing.T) {
	// A full disk, simulated with /dev/full under one of the archive's file names.
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	res, m := archivetest.Run()
	out := t.TempDir()
	pending := filepath.Join(out, archive.PendingName(res.RunID))
	os.MkdirAll(pending, 0o755)
	if err := os.Symlink("/dev/full", filepath.Join(pending, archive.IntervalsFile)); err != nil {
		t.Fatal(err)
	}
	_, err := archive.Create(out, res, m, nil)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("create on a full disk: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, res.RunID)); !os.IsNotExist(err) {
		t.Fatal("a directory exists under the final name")
	}
}
