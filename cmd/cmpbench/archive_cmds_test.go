package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
)

// generated writes the generated run's archive (no servers needed) under
// dir/name and returns its directory.
func generated(t *testing.T, dir, name string, opt archivetest.Options) string {
	t.Helper()
	a, err := archivetest.Write(filepath.Join(dir, name), opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestCompareExitCodes(t *testing.T) {
	dir := t.TempDir()
	a := generated(t, dir, "a", archivetest.Options{})
	tests := []struct {
		name   string
		b      archivetest.Options
		code   int
		stdout []string
		stderr string
	}{
		{"same run", archivetest.Options{}, 0, []string{"0 regressions"}, ""},
		{"nothing in common", archivetest.Options{Systems: []string{"redis", "valkey"}}, 2, []string{"missing"},
			"nothing to compare: A and B share no measured phase (system, phase and op); A has fast/closed-1:10, fast/rate-5000, slow/closed-1:10, slow/rate-5000; B has redis/closed-1:10"},
		{"a phase failed in B", archivetest.Options{FailPhase: "closed-1:10"}, 1,
			[]string{"fast closed-1:10 GET ops/s 1000 failed — failed", "ended ok in A but not in B: fast/closed-1:10 (failed)", "0 regressions"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := generated(t, t.TempDir(), "b", tc.b)
			page := filepath.Join(t.TempDir(), "compare.html")
			r := cli(t, dir, nil, "compare", "--fail-on-regression", "--html", page, a, b)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.stderr)
			}
			out := strings.Join(strings.Fields(r.stdout), " ")
			// The page is written whenever there was something to compare.
			if _, err := os.Stat(page); (err == nil) != (tc.code != 2) || (tc.code != 2) != strings.Contains(r.stdout, "Page: "+page) {
				t.Errorf("exit %d: page %s: %v; stdout %s", r.code, page, err, r.stdout)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
				}
			}
		})
	}
}

// editManifest sets a top-level field of an archive's manifest.json and puts the
// file's new SHA-256 into SHA256SUMS, so that `sha256sum -c` still passes.
func editManifest(t *testing.T, dir, field string, value any) {
	t.Helper()
	path := filepath.Join(dir, archive.ManifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m[field] = value
	if b, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dir, archive.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		if strings.HasSuffix(l, "  "+archive.ManifestFile) {
			l = fmt.Sprintf("%x  %s", sha256.Sum256(b), archive.ManifestFile)
		}
		out = append(out, l)
	}
	if err := os.WriteFile(filepath.Join(dir, archive.SumsFile), []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyFindsAStatusMadeComplete(t *testing.T) {
	dir := t.TempDir()
	a := generated(t, dir, "a", archivetest.Options{FailPhase: "closed-1:10"})
	if r := cli(t, dir, nil, "verify", a); r.code != 0 {
		t.Fatalf("verify of the archive as written: exit %d\n%s", r.code, r.stderr)
	}
	editManifest(t, a, "status", "complete")
	r := cli(t, dir, nil, "verify", a)
	want := `verify: manifest.json: status "complete", but phase "closed-1:10" of fast (#1, repetition 0) ended failed`
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant 1 and %q", r.code, r.stderr, want)
	}
}
