package archive_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
)

// Enclosing is how every command that writes keeps out of archives (issue 43,
// bug 1): it finds the archive a path is or lies inside through links, a
// dangling one too, and an archive whose manifest no longer parses.
func TestEnclosing(t *testing.T) {
	dir := t.TempDir()
	a, err := archivetest.Write(filepath.Join(dir, "out"), archivetest.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	damaged, err := archivetest.Write(filepath.Join(dir, "damaged"), archivetest.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(damaged, archive.ManifestFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app", archive.ManifestFile), []byte(`{"name": "a web app"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"link": a, "dangling": filepath.Join(a, "new.html"), "relative": filepath.Join("out", filepath.Base(a), "x", "y")} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"the archive", a, a},
		{"a file in it", filepath.Join(a, archive.ManifestFile), a},
		{"a path to be made in it", filepath.Join(a, "new", "dir"), a},
		{"a link to it", filepath.Join(dir, "link"), a},
		{"a dangling link into it", filepath.Join(dir, "dangling"), a},
		{"a dangling relative link into it", filepath.Join(dir, "relative"), a},
		{"a path under a dangling link into it", filepath.Join(dir, "relative", "z"), a},
		{"an archive whose manifest was damaged", filepath.Join(damaged, "report.html"), damaged},
		{"beside an archive", filepath.Join(dir, "out", "other"), ""},
		{"a directory with another tool's manifest.json", filepath.Join(dir, "app", "x"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := archive.Enclosing(tc.path)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("Enclosing(%s) = %q, %v; want %q", tc.path, got, ok, tc.want)
			}
		})
	}
}
