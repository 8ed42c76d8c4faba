package report

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
)

// testdata/format1 is an archive of format version 1, written by the cmpbench
// of that format (a redis-server run of testdata/format1's suite: a ladder of
// two rates, repeated and averaged; a sweep; a phase at its knee), without the
// report files it generated: their sums are in its SHA256SUMS. This code reads
// its ladder, sweep and knee as methods, and regenerates every report file
// with the bytes version 1's code made.
func TestFormat1ArchiveRegeneratesByteIdentical(t *testing.T) {
	dir := filepath.Join("testdata", "format1")
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest.FormatVersion != 1 {
		t.Fatalf("format version %d: testdata/format1 is the previous format's", a.Manifest.FormatVersion)
	}
	methods := map[string]string{}
	for _, p := range a.Manifest.Phases {
		switch {
		case p.Method != nil:
			methods[p.Name] = p.Method.Kind + " " + p.Method.Of + " " + string(p.Method.Params)
		case p.Uses != nil:
			methods[p.Name] = "uses " + p.Uses.Kind + " " + p.Uses.Of
		}
	}
	for name, want := range map[string]string{
		"get@200": `ladder get {"combine":"mean"}`, "get@400": `ladder get {"combine":"mean"}`,
		"reads@1c": `sweep reads {"gain":0.2}`, "reads@2c": `sweep reads {"gain":0.2}`,
		"at-knee": "uses sweep reads",
	} {
		if methods[name] != want {
			t.Errorf("%s read as %q, want %q", name, methods[name], want)
		}
	}
	regeneratesByteIdentical(t, dir, a, 10)
}

// testdata/format2 is an archive of format version 2, written by the cmpbench
// of that format (redis-server and valkey-server, testdata/format2's suite: a
// load and two measured phases of six intervals each), without its report
// files. Version 3 says how sure each number is; an archive before it has no
// interval, and its report shows none: every file as version 2's code made it.
func TestFormat2ArchiveRegeneratesByteIdentical(t *testing.T) {
	dir := filepath.Join("testdata", "format2")
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest.FormatVersion != 2 {
		t.Fatalf("format version %d: testdata/format2 is the previous format's", a.Manifest.FormatVersion)
	}
	regeneratesByteIdentical(t, dir, a, 5)
}

// regeneratesByteIdentical checks that the report files generated from a are
// those whose sums dir's SHA256SUMS holds, and that there are at least least.
func regeneratesByteIdentical(t *testing.T, dir string, a *archive.Archive, least int) {
	t.Helper()
	files, err := Generate(a)
	if err != nil {
		t.Fatal(err)
	}
	sums := archivedSums(t, filepath.Join(dir, archive.SumsFile))
	for _, f := range files {
		sum := sha256.Sum256(f.Data)
		if want, ok := sums[f.Name]; !ok || hex.EncodeToString(sum[:]) != want {
			t.Errorf("%s: not the bytes version %d's cmpbench made (archived: %t)", f.Name, a.Manifest.FormatVersion, ok)
		}
		delete(sums, f.Name)
	}
	for name := range sums {
		if name == archive.ReportFile || name == HTMLFile || strings.HasPrefix(name, "charts/") {
			t.Errorf("%s was generated then, and not now", name)
		}
	}
	if len(files) < least {
		t.Errorf("%d files generated, want at least %d: charts are missing", len(files), least)
	}
}

// archivedSums reads an archive's SHA256SUMS: the sum of each file by name.
func archivedSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if ok {
			sums[name] = sum
		}
	}
	return sums
}
