package report

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestReportGolden(t *testing.T) {
	res, m := archivetest.Run()
	p, err := archive.Create(t.TempDir(), res, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(p.Dir); err != nil {
		t.Fatal(err)
	}
	dir, err := p.Commit()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, archive.ReportFile))
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("report differs from %s (go test -update to accept):\n%s", golden, got)
	}
	// The report comes from the archive alone: regenerating it gives the same bytes.
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again := Markdown(a); string(again) != string(got) {
		t.Fatal("regenerated report differs")
	}
	for _, want := range []string{"**NS** 4,498 of 5,000", "oom 21", "| fast | 4,999 of 5,000 |"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
