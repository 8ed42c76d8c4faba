package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
)

// writer is a command that writes what the user names: its command line (or
// environment) with target as what it writes.
type writer struct {
	label string // the command
	name  string // how the refusal names it
	dir   bool   // it writes a directory (else a file)
	cmd   func(target string) (args, env []string)
}

// writers are every command and flag, or environment variable, that names a
// file or directory cmpbench writes; in is the input archive, dir the test's
// directory (with systems.yaml).
func writers(in, dir string) []writer {
	at := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	run := []string{"run", "--systems", "redis", "--suite", "smoke", "--scale", "0.01"}
	flag := func(label, name string, dir bool, args ...string) writer {
		return writer{label, name, dir, func(target string) ([]string, []string) { return append(slices.Clone(args), name, target), nil }}
	}
	env := func(label, name string, args ...string) writer {
		return writer{label, name, true, func(target string) ([]string, []string) { return args, []string{name + "=" + target} }}
	}
	return []writer{
		flag("compare --html", "--html", false, "compare", in, in),
		flag("report --out", "--out", true, "report", in),
		flag("export hlog --out", "--out", true, "export", "hlog", in),
		flag("run --out", "--out", true, run...),
		flag("run --sync-dir", "--sync-dir", true, "--config", filepath.Join(dir, "systems.yaml"), "--out", filepath.Join(dir, "shards"),
			"run", "--systems", "kv", "--suite", "smoke", "--shard", "0/2", "--start-at", at),
		flag("rerun --out", "--out", true, "rerun", in),
		flag("merge --out", "--out", true, "merge", in),
		flag("import memtier --out", "--out", true, "import", "memtier", filepath.Join(importFixtures, "memtier", "closed.json")),
		flag("import ycsb --out", "--out", true, "import", "ycsb", filepath.Join(importFixtures, "ycsb", "go-redis-server-workloada.txt")),
		env("verify with CMPBENCH_TRACE", "CMPBENCH_TRACE", "verify", in),
		env("run with TMPDIR", "TMPDIR", run...),
	}
}

// Issue 43, bug 1: nothing writes into an archive but the run that owns it,
// whatever command and flag: `compare --html A/manifest.json` used to overwrite
// the manifest, `run --out A` to make a run inside it. Each is refused, exit 2,
// naming the flag, the path and the archive, and the archive still verifies.
func TestNothingWritesIntoAnArchive(t *testing.T) {
	dir := t.TempDir()
	in := generated(t, dir, "in", archivetest.Options{})
	writeFile(t, dir, "systems.yaml", "systems:\n  kv: {adapter: resp, endpoint: \"127.0.0.1:1\"}\n")
	targets := []struct {
		name  string
		path  func(a, links string) string
		where string
	}{
		{"the archive itself", func(a, _ string) string { return a }, "is the archive"},
		{"its manifest", func(a, _ string) string { return filepath.Join(a, archive.ManifestFile) }, "is inside the archive"},
		{"its report page", func(a, _ string) string { return filepath.Join(a, "report.html") }, "is inside the archive"},
		{"a directory inside it", func(a, _ string) string { return filepath.Join(a, "charts") }, "is inside the archive"},
		{"a new path inside it", func(a, _ string) string { return filepath.Join(a, "new", "x") }, "is inside the archive"},
		{"a link to it", func(_, links string) string { return filepath.Join(links, "link") }, "is the archive"},
		{"a dangling link into it", func(_, links string) string { return filepath.Join(links, "dangling") }, "is inside the archive"},
	}
	for _, w := range writers(in, dir) {
		for _, tg := range targets {
			t.Run(w.label+"/"+tg.name, func(t *testing.T) {
				// A fresh archive each time: one written into is no longer
				// recognised as one.
				links := t.TempDir()
				a := generated(t, links, "a", archivetest.Options{})
				for link, to := range map[string]string{"link": a, "dangling": filepath.Join(a, "new.html")} {
					if err := os.Symlink(to, filepath.Join(links, link)); err != nil {
						t.Fatal(err)
					}
				}
				path := tg.path(a, links)
				args, env := w.cmd(path)
				r := cli(t, dir, env, args...)
				want := w.name + " " + path + " " + tg.where + " " + a + ": an archive is never changed"
				if r.code != 2 || !strings.Contains(r.stderr, want) {
					t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
				}
				if errs := archive.Verify(a); len(errs) > 0 {
					t.Fatalf("%s was written into: %v", a, errs)
				}
			})
		}
	}
	// Elsewhere, they write.
	for _, args := range [][]string{{"report", in}, {"export", "hlog", in}} {
		if r := cli(t, dir, nil, append(args, "--out", filepath.Join(dir, "elsewhere"))...); r.code != 0 {
			t.Errorf("%s --out elsewhere: exit %d\n%s", args[0], r.code, r.stderr)
		}
	}
	for _, f := range []string{"report.md", "fast/1-closed-1_10.hlog"} {
		if _, err := os.Stat(filepath.Join(dir, "elsewhere", f)); err != nil {
			t.Errorf("--out elsewhere: %v", err)
		}
	}
}

// Issue 43, weak answer: an output that cannot be written is bad input found
// before any work: `compare --html` used to compare first and fail after.
func TestOutputsThatCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	in := generated(t, dir, "in", archivetest.Options{})
	writeFile(t, dir, "systems.yaml", "systems:\n  kv: {adapter: resp, endpoint: \"127.0.0.1:1\"}\n")
	file := writeFile(t, dir, "file", "")
	for _, w := range writers(in, dir) {
		targets := []struct{ name, path, why string }{
			{"under a file", filepath.Join(file, "x"), file + " is not a directory"},
		}
		if w.dir {
			targets = append(targets, struct{ name, path, why string }{"a file", file, "is not a directory"})
		} else {
			targets = append(targets,
				struct{ name, path, why string }{"in a missing directory", filepath.Join(dir, "gone", "x"), "its directory " + filepath.Join(dir, "gone") + " does not exist"},
				struct{ name, path, why string }{"a directory", dir, "is a directory: give a file name"})
		}
		for _, tg := range targets {
			t.Run(w.label+"/"+tg.name, func(t *testing.T) {
				args, env := w.cmd(tg.path)
				r := cli(t, dir, env, args...)
				want := w.name + " " + tg.path + ": " + tg.why
				if r.code != 2 || !strings.Contains(r.stderr, want) || r.stdout != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing done and %q", r.code, r.stdout, r.stderr, want)
				}
			})
		}
	}
}

// recover writes the archive beside the directory it recovers: one moved
// inside an archive is refused, and the archive is not written into.
func TestRecoverNeverWritesIntoAnArchive(t *testing.T) {
	dir := t.TempDir()
	w, err := archive.Create(filepath.Join(dir, "run"), archivetest.Header(archivetest.Options{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := archivetest.Feed(w, archivetest.Options{}, 2); err != nil {
		t.Fatal(err)
	}
	a := generated(t, dir, "a", archivetest.Options{})
	partial := filepath.Join(a, filepath.Base(w.Dir()))
	if err := os.CopyFS(partial, os.DirFS(w.Dir())); err != nil {
		t.Fatal(err)
	}
	r := cli(t, dir, nil, "recover", partial)
	want := "recover " + partial + ": its directory " + a + " is the archive " + a + ": an archive is never changed"
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
	}
	if _, err := os.Stat(filepath.Join(a, archivetest.RunID)); err == nil {
		t.Errorf("recover wrote its archive inside %s", a)
	}
}
