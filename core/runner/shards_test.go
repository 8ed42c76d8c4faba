package runner

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

func TestDirMeeting(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	got := make([][]ShardNote, 3)
	for i := range 3 {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 30 * time.Millisecond)
			m := DirMeeting{Dir: dir, Shard: plan.Shard{Index: i, Count: 3}, Poll: 5 * time.Millisecond}
			notes, err := m.Meet(context.Background(), "r.0.0.before", ShardNote{At: time.Now(), OK: int64(i + 1), Problem: map[bool]string{true: "no keys"}[i == 2]}, 5*time.Second)
			if err != nil {
				t.Error(err)
			}
			got[i] = notes
		})
	}
	wg.Wait()
	for i, notes := range got {
		if len(notes) != 3 || notes[0].OK != 1 || notes[2].OK != 3 {
			t.Fatalf("shard %d saw %+v", i, notes)
		}
		if why := shardProblems(notes, plan.Shard{Index: i, Count: 3}); !strings.Contains(why, "no keys") {
			t.Errorf("shard %d: problems %q", i, why)
		}
	}
	if why := shardProblems(got[2], plan.Shard{Index: 2, Count: 3}); why != "this shard: no keys" {
		t.Errorf("own problem: %q", why)
	}

	// A shard that never comes is named when the wait ends.
	m := DirMeeting{Dir: dir, Shard: plan.Shard{Index: 0, Count: 2}, Poll: 5 * time.Millisecond}
	_, err := m.Meet(context.Background(), "r.1.0.before", ShardNote{}, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "shard 1 did not arrive") {
		t.Errorf("a missing shard: %v", err)
	}
}

func TestWholeStepDecidesOnTheSum(t *testing.T) {
	for _, tc := range []struct {
		notes []ShardNote
		want  bool
	}{
		// One shard fell short, the other made up for it: the whole target is met.
		{[]ShardNote{{Status: core.StatusOK, OK: 900, ElapsedNs: 1e9, Rate: 1000}, {Status: core.StatusOK, OK: 1100, ElapsedNs: 1e9, Rate: 1000}}, true},
		{[]ShardNote{{Status: core.StatusOK, OK: 990, ElapsedNs: 1e9, Rate: 1000}, {Status: core.StatusOK, OK: 900, ElapsedNs: 1e9, Rate: 1000}}, false},
		{[]ShardNote{{Status: core.StatusOK, OK: 1000, ElapsedNs: 1e9, Rate: 1000}, {Status: core.StatusFailed, OK: 1000, ElapsedNs: 1e9, Rate: 1000}}, false},
		{[]ShardNote{{Status: core.StatusOK, OK: 5, ElapsedNs: 1e9}, {Status: core.StatusOK, OK: 5, ElapsedNs: 2e9}}, true},
	} {
		if got := wholeStep(tc.notes).sustained(); got != tc.want {
			t.Errorf("%+v: sustained %v, want %v", tc.notes, got, tc.want)
		}
	}
}
