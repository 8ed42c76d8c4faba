package main

import (
	"path/filepath"
	"strings"
	"testing"

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
			r := cli(t, dir, nil, "compare", "--fail-on-regression", a, b)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.stderr)
			}
			out := strings.Join(strings.Fields(r.stdout), " ")
			for _, want := range tc.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
				}
			}
		})
	}
}
