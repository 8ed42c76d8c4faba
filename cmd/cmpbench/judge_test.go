package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive/archivetest"
)

// Issue 43, bug 6: commands that judge an archive verify it first. `audit` of
// an archive whose systems/<name>/ capture was edited used to say "No mismatch
// found" while verify failed; compare, report and rerun judged such archives too.
// Each now refuses it, exit 1, naming the file and the disagreement, and prints
// no judgement.
func TestJudgingCommandsVerifyFirst(t *testing.T) {
	edits := []struct {
		name string
		opt  archivetest.Options
		edit func(t *testing.T, a string)
		want string // the disagreement verify names
	}{
		{"a capture edited", archivetest.Options{}, func(t *testing.T, a string) {
			f, err := os.OpenFile(filepath.Join(a, "systems", "fast", "info.txt"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString("maxmemory:1024\n"); err != nil {
				t.Fatal(err)
			}
		}, "systems/fast/info.txt: checksum mismatch"},
		{"the status made complete, SHA256SUMS recomputed", archivetest.Options{FailPhase: "closed-1:10"}, func(t *testing.T, a string) {
			editManifest(t, a, "status", "complete")
		}, `manifest.json: status "complete", but phase "closed-1:10" of fast`},
	}
	commands := []struct {
		refused string
		args    func(edited, good string) []string
	}{
		{"it is not audited", func(e, _ string) []string { return []string{"audit", e} }},
		{"it is not compared", func(e, g string) []string { return []string{"compare", e, g} }},
		{"it is not compared", func(e, g string) []string { return []string{"compare", g, e} }},
		{"its report is not regenerated", func(e, _ string) []string { return []string{"report", e} }},
		{"it is not run again", func(e, _ string) []string { return []string{"rerun", e} }},
	}
	for _, ed := range edits {
		dir := t.TempDir()
		good := generated(t, dir, "good", ed.opt)
		edited := generated(t, dir, "edited", ed.opt)
		ed.edit(t, edited)
		for _, c := range commands {
			args := c.args(edited, good)
			t.Run(ed.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				r := cli(t, dir, nil, args...)
				want := edited + " does not verify, so " + c.refused
				if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, ed.want) || r.stdout != "" {
					t.Errorf("exit %d\nstdout %q\nstderr %q\nwant 1, no output and %q, %q", r.code, r.stdout, r.stderr, want, ed.want)
				}
			})
		}
	}
}
