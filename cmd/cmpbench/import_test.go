package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// importFixtures are the importer's real memtier and YCSB outputs.
var importFixtures, _ = filepath.Abs(filepath.Join("..", "..", "archive", "importer", "testdata"))

func TestImportArchivesWorkWithEveryCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // in report.md
	}{
		{"memtier with its .hgrm files", []string{"memtier", filepath.Join(importFixtures, "memtier", "closed.json"), "--hdr-prefix", filepath.Join(importFixtures, "memtier", "closed")},
			[]string{"Imported from memtier_benchmark's output `closed.json`", "`closed_GET_command_run_1.hgrm`", "memtier ran closed loop"}},
		{"memtier at a fixed rate, two runs", []string{"memtier", filepath.Join(importFixtures, "memtier", "rate.json"), "--system", "redis", "--phase", "rate-1000"},
			[]string{"| imported |", "response — / —", "Response time is unknown"}},
		{"YCSB with status lines", []string{"ycsb", filepath.Join(importFixtures, "ycsb", "go-redis-server-workloada.txt")},
			[]string{"Imported from ycsb `0.17.0`'s output `go-redis-server-workloada.txt`", "Intervals are YCSB's status lines"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := cli(t, dir, nil, append([]string{"import", "--out", "results"}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			a := archiveOf(t, r) // verified
			md, err := a.ReadFile("report.md")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if w == "| imported |" && slices.Contains(tc.args, "--system") {
					w = "| redis |"
				}
				if !strings.Contains(string(md), w) {
					t.Errorf("report.md lacks %q:\n%s", w, md)
				}
			}
			for _, c := range [][]string{
				{"verify", a.Dir},
				{"report", a.Dir},
				{"compare", "--fail-on-regression", a.Dir, a.Dir},
				{"export", "csv", a.Dir},
				{"export", "hlog", "--out", filepath.Join(dir, "hlog"), a.Dir},
			} {
				if r := cli(t, dir, nil, c...); r.code != 0 || c[0] == "report" && !strings.Contains(r.stdout, "byte-identical") {
					t.Errorf("cmpbench %s: exit %d\n%s\n%s", strings.Join(c, " "), r.code, r.stdout, r.stderr)
				}
			}
			if r := cli(t, dir, nil, "rerun", a.Dir); r.code != 2 || !strings.Contains(r.stderr, "was imported from") {
				t.Errorf("rerun of an imported archive: exit %d, %s", r.code, r.stderr)
			}
		})
	}
}

func TestImportBadInputExits2(t *testing.T) {
	dir := t.TempDir()
	closed, err := os.ReadFile(filepath.Join(importFixtures, "memtier", "closed.json"))
	if err != nil {
		t.Fatal(err)
	}
	cut := writeFile(t, dir, "cut.json", string(closed[:len(closed)/3]))
	notJSON := writeFile(t, dir, "run.log", "[OVERALL], RunTime(ms), 10\n")
	badLine := writeFile(t, dir, "bad.log", "[OVERALL], RunTime(ms), 10\n[READ], Operations, lots\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"truncated JSON", []string{"memtier", cut}, "cut.json:"},
		{"not memtier JSON", []string{"memtier", notJSON}, "run.log:1:2: not valid JSON"},
		{"missing .hgrm", []string{"memtier", filepath.Join(importFixtures, "memtier", "closed.json"), "--hdr-prefix", filepath.Join(dir, "gone")},
			"gone_GET_command_run_1.hgrm: no such file"},
		{"no such file", []string{"ycsb", filepath.Join(dir, "nothere.log")}, "nothere.log: no such file"},
		{"a YCSB line that is wrong", []string{"ycsb", badLine}, `bad.log:2: [READ], Operations: "lots" is not a number`},
		{"not YCSB output", []string{"ycsb", filepath.Join(importFixtures, "memtier", "closed.json")}, "no [OVERALL], RunTime(ms) line"},
		{"a system name with a slash", []string{"ycsb", badLine, "--system", "a/b"}, `--system "a/b"`},
		{"an unknown tool", []string{"wrk", "out.txt"}, `cmpbench import: unknown command "wrk" (commands: memtier, ycsb)`},
		{"no file", []string{"memtier"}, "cmpbench import memtier: want one file, got 0 arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, dir, nil, append([]string{"import", "--out", "results"}, tc.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tc.want)
			}
			if strings.Contains(tc.want, "truncated") && !strings.Contains(r.stderr, "truncated file?") {
				t.Errorf("stderr %q does not say the file is truncated", r.stderr)
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "results")); len(entries) > 0 {
		t.Errorf("bad input left %d entries under --out", len(entries))
	}
}
