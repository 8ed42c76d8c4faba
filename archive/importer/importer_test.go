package importer

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/compare"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
)

// The fixtures under testdata/ are real outputs of memtier_benchmark and YCSB;
// testdata/README.md says how each was made or where it was taken from. Cases the
// fixtures do not cover are built in the tests, in the layout the tools' sources
// write, and say so.

// writeArchive writes an imported run as cmpbench import does (tables, report,
// commit) and checks what every archive must satisfy: it verifies, its report
// regenerates byte for byte, it compares with itself, and it exports.
func writeArchive(t *testing.T, r *Run) *archive.Archive {
	t.Helper()
	out := t.TempDir()
	w, err := r.Write(out, "20261203-000000-import-test-000000", archive.BuildInfo{Version: "test", Commit: "test"}, []string{"cmpbench", "import"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.Finish(r.Status, r.Ended)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := report.Render(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := w.AddFile(f.Name, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if errs := archive.Verify(dir); len(errs) > 0 {
		t.Fatalf("the imported archive does not verify: %v", errs)
	}
	a, err = archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := report.Generate(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range again {
		if old, err := a.ReadFile(f.Name); err != nil || !bytes.Equal(old, f.Data) {
			t.Errorf("%s does not regenerate byte for byte (%v)", f.Name, err)
		}
	}
	rows := compare.Compare(a, a, compare.Defaults)
	// Phases that did not end ok, and loads, are not compared.
	if err := compare.Comparable(rows); err != nil && a.Manifest.Status == core.RunComplete && a.Manifest.Phases[0].Kind == core.PhaseMeasured {
		t.Errorf("the archive does not compare with itself: %v", err)
	}
	for _, row := range rows {
		// Unchanged by the fixed bands; within noise where repetitions judge.
		if row.Compared() && row.Verdict != compare.Unchanged && row.Verdict != compare.WithinNoise {
			t.Errorf("compared with itself, %s %s %s is %s", row.Phase, row.Op, row.Metric, row.Verdict)
		}
	}
	var csv bytes.Buffer
	if err := a.WriteSummaryCSV(&csv); err != nil || strings.Count(csv.String(), "\n") != len(a.Summary)+1 {
		t.Errorf("export csv: %v\n%s", err, csv.String())
	}
	if _, err := a.WriteHlogs(filepath.Join(t.TempDir(), "hlog")); err != nil {
		t.Errorf("export hlog: %v", err)
	}
	if a.Manifest.Imported == nil || a.Manifest.Imported.Source != r.Info.Source || len(a.Manifest.Imported.SourceSHA256) != 64 {
		t.Errorf("manifest imported = %+v", a.Manifest.Imported)
	}
	md, _ := a.ReadFile(archive.ReportFile)
	for _, c := range r.Info.Caveats {
		if !strings.Contains(shown(md), c) {
			t.Errorf("report.md lacks the caveat %q", c)
		}
	}
	return a
}

// caveatsInclude checks that some caveat holds each of want.
func caveatsInclude(t *testing.T, r *Run, want ...string) {
	t.Helper()
	all := strings.Join(r.Info.Caveats, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("no caveat says %q; caveats:\n%s", w, all)
		}
	}
}

// within reports whether got is within 0.1% (cmpbench's histogram resolution) of want.
func within(got, want int64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return float64(d) <= 0.001*float64(want)+1
}

// sumIntervals sums a phase's intervals' counts per op.
func sumIntervals(p Phase) map[core.OpKind]core.OpInterval {
	out := map[core.OpKind]core.OpInterval{}
	for _, iv := range p.Intervals {
		for _, o := range iv.Ops {
			s := out[o.Op]
			s.AddCounts(&o)
			out[o.Op] = s
		}
	}
	return out
}

func TestWholeRunIsOneInterval(t *testing.T) {
	p := Phase{Info: archive.PhaseInfo{ElapsedNs: 5e9, IntervalNs: 1e9}, Totals: []core.OpInterval{{Op: core.OpGet, OK: 7}}}
	p.wholeRun()
	if len(p.Intervals) != 1 || p.Intervals[0].End != 5e9 || p.Intervals[0].Ops[0].OK != 7 || p.Info.IntervalNs != 5e9 {
		t.Errorf("wholeRun: %+v, interval %d", p.Intervals, p.Info.IntervalNs)
	}
}

// shown is report.md as a reader sees it: without the backslashes that keep
// an import's words from being Markdown (`\[UPDATE\]` reads "[UPDATE]").
func shown(md []byte) string {
	return regexp.MustCompile(`\\([!-/:-@[-`+"`"+`{-~])`).ReplaceAllString(string(md), "$1")
}
