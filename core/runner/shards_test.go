package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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

	// A shard that never comes is named while the wait goes on, and when it ends.
	after, every := WaitingAfter, WaitingEvery
	WaitingAfter, WaitingEvery = 20*time.Millisecond, 100*time.Millisecond
	t.Cleanup(func() { WaitingAfter, WaitingEvery = after, every })
	var told []string
	m := DirMeeting{Dir: dir, Shard: plan.Shard{Index: 0, Count: 2}, Poll: 5 * time.Millisecond,
		Waiting: func(point string, missing []string, waited, left time.Duration) {
			told = append(told, fmt.Sprintf("%s %v %v", point, missing, waited+left > 250*time.Millisecond))
		}}
	_, err := m.Meet(context.Background(), "r.1.0.before", ShardNote{}, 250*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "shard 1 did not arrive") {
		t.Errorf("a missing shard: %v", err)
	}
	if len(told) < 2 || len(told) > 3 || told[0] != "r.1.0.before [1] false" {
		t.Errorf("told of the wait %q", told)
	}
}

// Issue 43's weak answer: shards started with different --start-at waited the
// full grace for each other. Sharing a directory, each sees the other's note and
// stops at once, naming the note, both runs and what to do; a stranger found
// elsewhere (Strangers) ends the wait too; a note of an older cmpbench, which
// names no run, is taken as before.
func TestDirMeetingStopsAtAStranger(t *testing.T) {
	dir := t.TempDir()
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, run := range []string{"plan 94713bd4 start 2026-12-07T10:00:00Z", "plan 94713bd4 start 2026-12-07T10:00:34Z"} {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 50 * time.Millisecond)
			m := DirMeeting{Dir: dir, Shard: plan.Shard{Index: i, Count: 2}, Poll: 5 * time.Millisecond, Run: run}
			_, errs[i] = m.Meet(context.Background(), "r.0.0.before", ShardNote{At: time.Now()}, time.Minute)
		})
	}
	wg.Wait()
	for i, err := range errs {
		var se *StrangerError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "10:00:00Z") || !strings.Contains(err.Error(), "10:00:34Z") ||
			!strings.Contains(err.Error(), filepath.Join(dir, "r.0.0.before", fmt.Sprintf("%d.json", 1-i))) {
			t.Errorf("shard %d: %v", i, err)
		}
	}

	found := &StrangerError{"shard 1/2 of this plan runs with --start-at 10:00:34Z in /out/.x.partial"}
	asked := 0
	m := DirMeeting{Dir: dir, Shard: plan.Shard{Index: 0, Count: 2}, Poll: 5 * time.Millisecond, Run: "a",
		Strangers: func() error {
			if asked++; asked == 2 {
				return found
			}
			return nil
		}}
	poll := StrangerPoll
	StrangerPoll = 20 * time.Millisecond
	t.Cleanup(func() { StrangerPoll = poll })
	if _, err := m.Meet(context.Background(), "r.1.0.before", ShardNote{}, time.Minute); !errors.Is(err, found) || asked != 2 {
		t.Errorf("a stranger found elsewhere: %v after %d looks", err, asked)
	}

	// A note without a run (an older cmpbench's) is a shard of this run.
	old := DirMeeting{Dir: dir, Shard: plan.Shard{Index: 1, Count: 2}, Poll: 5 * time.Millisecond}
	if _, err := old.Meet(context.Background(), "r.2.0.before", ShardNote{}, time.Second); err == nil {
		t.Fatal("shard 1 met alone")
	}
	m.Strangers = nil
	if notes, err := m.Meet(context.Background(), "r.2.0.before", ShardNote{}, time.Second); err != nil || len(notes) != 2 {
		t.Errorf("an older shard's note: %v %+v", err, notes)
	}
}

// Issue 25's weak answer: a shard whose --start-at was past waited for an absent
// shard as long as the plan's longest phase (6 h for ycsb). Before the first
// phase nothing runs elsewhere: it waits meetGrace; later, the phase the others
// may still run, and meetGrace.
func TestMeetWait(t *testing.T) {
	r := &systemRunner{cfg: Config{StartAt: time.Now().Add(-time.Hour)}}
	if got := r.meetWait(0); got != meetGrace {
		t.Errorf("first meeting, --start-at past: %s", got)
	}
	if got := r.meetWait(6 * time.Hour); got != 6*time.Hour+meetGrace {
		t.Errorf("after a 6 h load: %s", got)
	}
	r.cfg.StartAt = time.Now().Add(time.Minute)
	if got := r.meetWait(0); got < meetGrace+59*time.Second || got > meetGrace+time.Minute {
		t.Errorf("first meeting, --start-at a minute ahead: %s", got)
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
		if got := wholeStep(tc.notes).Sustained(); got != tc.want {
			t.Errorf("%+v: sustained %v, want %v", tc.notes, got, tc.want)
		}
	}
}
