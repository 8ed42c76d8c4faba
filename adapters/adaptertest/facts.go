package adaptertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core"
)

// checkFacts checks, of an adapter that reads facts (core.FactReader), that
// what it reads of a capture's sections is one line a fact and holds no
// credential.
func checkFacts(t *testing.T, a core.Adapter, sections map[string]string, secret string) {
	t.Helper()
	r, ok := a.(core.FactReader)
	if !ok {
		return
	}
	f := r.Facts(sections)
	for name, fact := range map[string]core.Fact{"durability": f.Durability, "replication": f.Replication, "memory": f.Memory, "threads": f.Threads} {
		for _, s := range []string{fact.Words, fact.Class} {
			if strings.ContainsAny(s, "\r\n") || secret != "" && strings.Contains(s, secret) {
				t.Errorf("fact %s %q: more than a line, or the credential", name, s)
			}
		}
	}
}

// FactsOfCaptures reads, with the adapter's fact reader, the captures of each
// directory under dir (its files <section>.txt, as an archive keeps them) and
// checks what it reads against the directory's facts.json, which update
// rewrites. It returns the facts by directory name, for checks of their own.
func FactsOfCaptures(t *testing.T, r core.FactReader, dir string, update bool) map[string]core.Facts {
	t.Helper()
	dirs, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]core.Facts{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		sections := map[string]string{}
		files, _ := filepath.Glob(filepath.Join(dir, d.Name(), "*.txt"))
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sections[strings.TrimSuffix(filepath.Base(f), ".txt")] = string(text)
		}
		facts := r.Facts(sections)
		out[d.Name()] = facts
		b, err := json.MarshalIndent(facts, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, '\n')
		golden := filepath.Join(dir, d.Name(), "facts.json")
		if update {
			if err := os.WriteFile(golden, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if want, err := os.ReadFile(golden); err != nil || string(want) != string(b) {
			t.Errorf("%s: the facts differ from %s (go test -update to accept):\n%s", d.Name(), golden, b)
		}
	}
	return out
}

// FactIs checks a fact an adapter read: its class, and words holding want; a
// class "" wants the fact unknown.
func FactIs(t *testing.T, got core.Fact, class, want string) {
	t.Helper()
	if got.Class != class || !strings.Contains(got.Words, want) || class == "" && got.Known() {
		t.Errorf("fact %+v, want %q in its words (class %q)", got, want, class)
	}
}
