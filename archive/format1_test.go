package archive_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core"
)

// A run that a cmpbench of format version 1 left unfinished is recovered into
// this format: its ladder's steps read as the method's, and the manifest says
// version 2 as its Parquet files do — not version 1 with version 2's fields,
// which an older cmpbench would read without its ladders.
func TestRecoverOfAVersion1RunWritesThisFormat(t *testing.T) {
	opt := archivetest.Options{Ladder: "mean", Repeat: 2}
	w, err := archive.Create(t.TempDir(), archivetest.Header(opt), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := archivetest.Feed(w, opt, 3); err != nil {
		t.Fatal(err)
	}
	archive.Crash(w)
	asVersion1(t, filepath.Join(w.Dir(), archive.ManifestFile))
	r, err := archive.Recover(w.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Finish(core.RunInterrupted, r.Ended()); err != nil {
		t.Fatal(err)
	}
	dir, err := r.Commit()
	if err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest.FormatVersion != archive.FormatVersion {
		t.Errorf("recovered as format version %d, want %d", a.Manifest.FormatVersion, archive.FormatVersion)
	}
	steps := 0
	for _, p := range a.Manifest.Phases {
		if p.Method != nil && p.Method.Kind == "ladder" && p.Method.Of == "rate" && string(p.Method.Params) != "" {
			steps++
		}
	}
	if steps == 0 {
		t.Errorf("the ladder's steps lost their method: %+v", a.Manifest.Phases)
	}
}

// asVersion1 rewrites a manifest as format version 1 wrote it: a step of a
// ladder with the fields "ladder" and "ladder_combine".
func asVersion1(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["format_version"] = 1
	found := false
	for _, p := range m["phases"].([]any) {
		ph := p.(map[string]any)
		if method, ok := ph["method"].(map[string]any); ok {
			ph["ladder"], ph["ladder_combine"] = method["of"], "mean"
			delete(ph, "method")
			found = true
		}
	}
	if !found {
		t.Fatal("no phase of the ladder in the manifest to rewrite")
	}
	b, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
