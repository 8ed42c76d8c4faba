package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core/plan"
)

// Before a run, the dry run says what it can tell apart from the newest
// (2 % spread, 3 repetitions a side: (t(.975, 4) + t(.8, 4)) x 2 % x sqrt(2/3) = 6.0 %)
// archive of the same suite with its systems, and says so when there is none.
func TestHowSureBeforeARun(t *testing.T) {
	out := t.TempDir()
	smoke := &plan.Plan{Suite: &plan.Suite{Name: "smoke"}, Systems: []string{"slow", "other"}, Repeat: 3}
	for i, tc := range []struct {
		name string
		opt  *archivetest.Options // written under out first, when set
		p    *plan.Plan
		want []string
		not  string
	}{
		{"nothing measured yet", nil, smoke,
			[]string{"unknown before it is measured: no archive of suite smoke with these systems"}, "from "},
		{"one run, intervals", &archivetest.Options{Intervals: 10}, smoke,
			[]string{"with --repeat 3 each side", "closed-1:10 slow: a difference of ≥ ", "within one run: runs differ more"}, "fast"},
		{"newest, with repetitions", &archivetest.Options{Repeat: 3, Jitter: 0.02}, smoke,
			[]string{"closed-1:10 slow: a difference of 6.0 %; 4 repetitions to tell 5 % (spread 2.0 % over 3 repetitions)"}, "≥"},
		{"another suite", nil, &plan.Plan{Suite: &plan.Suite{Name: "ycsb"}, Systems: []string{"slow"}, Repeat: 1},
			[]string{"unknown before it is measured: no archive of suite ycsb"}, "from "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opt != nil {
				dir, err := archivetest.Write(out, *tc.opt, nil)
				if err != nil {
					t.Fatal(err)
				}
				// Each its own run ID, later than the one before.
				if err := os.Rename(dir, filepath.Join(out, fmt.Sprintf("20261201-1000%02d-smoke-%d", i, i))); err != nil {
					t.Fatal(err)
				}
			}
			var b strings.Builder
			printHowSure(&b, out, tc.p)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in:\n%s", w, b.String())
				}
			}
			if strings.Contains(b.String(), tc.not) {
				t.Errorf("%q in:\n%s", tc.not, b.String())
			}
		})
	}
}
