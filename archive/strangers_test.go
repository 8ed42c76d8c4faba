package archive

import (
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core/redact"
)

// shardHeader is the header of shard index of count of a run of suite s on
// system r at endpoint, seed 1, started at start.
func shardHeader(runID string, index, count int, start time.Time, seed uint64, suite, endpoint string) Header {
	h := Header{RunID: runID, Seed: seed, Scale: 1, Repeat: 1, Started: start,
		Suite:   SuiteInfo{Name: suite, YAML: "name: " + suite + "\n"},
		Systems: []SystemInfo{{Name: "r", Adapter: "resp", Definition: map[string]any{"endpoint": endpoint}}},
	}
	h.Shard = &ShardInfo{Count: count, Shards: []int{index}, PlanHash: PlanHash(h, count), StartAt: start}
	return h
}

// Issue 43's weak answer: shards of one plan with different --start-at, sharing
// --out, each waited the full grace for the other. What makes a shard found in
// --out a stranger: the same suite on the same systems, but not of this run.
func TestShardStranger(t *testing.T) {
	at := time.Unix(1_780_000_000, 0).UTC()
	mine := shardHeader("mine", 0, 2, at, 1, "s", "127.0.0.1:1")
	for _, tc := range []struct {
		name  string
		other Header
		want  string
	}{
		{"the other shard of this run", shardHeader("o", 1, 2, at, 1, "s", "127.0.0.1:1"), ""},
		{"the same shard twice", shardHeader("o", 0, 2, at, 1, "s", "127.0.0.1:1"), "both are shard 0/2"},
		{"another --start-at", shardHeader("o", 1, 2, at.Add(34*time.Second), 1, "s", "127.0.0.1:1"), "they differ in --start-at 2026-05-28T20:26:40Z vs 2026-05-28T20:27:14Z"},
		{"another seed", shardHeader("o", 1, 2, at, 9, "s", "127.0.0.1:1"), "they differ in --seed 1 vs 9"},
		{"another shard count", shardHeader("o", 1, 3, at, 1, "s", "127.0.0.1:1"), "they differ in shard count 2 vs 3"},
		{"another suite", shardHeader("o", 1, 2, at.Add(time.Minute), 1, "t", "127.0.0.1:1"), ""},
		{"other systems", shardHeader("o", 1, 2, at.Add(time.Minute), 1, "s", "10.0.0.1:1"), ""},
		{"a run of the whole plan", Header{RunID: "o", Seed: 1, Scale: 1, Repeat: 1, Suite: mine.Suite, Systems: mine.Systems}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, started := range []bool{false, true} {
				// In progress, a manifest names its systems once they started.
				m := Manifest{Seed: tc.other.Seed, Scale: tc.other.Scale, Repeat: tc.other.Repeat, Suite: tc.other.Suite, Shard: tc.other.Shard}
				if started {
					m.Systems = tc.other.Systems
				}
				if got := ShardStranger(mine, &m); got != tc.want {
					t.Errorf("systems started %v: %q, want %q", started, got, tc.want)
				}
			}
		})
	}
}

// RunningShards are the shards' runs in progress under --out whose cmpbench is
// alive: not this one, not one whose cmpbench died, not a run of a whole plan,
// not a merge.
func TestRunningShards(t *testing.T) {
	out := t.TempDir()
	at := time.Unix(1_780_000_000, 0).UTC()
	self, err := Create(out, shardHeader("self", 0, 2, at, 1, "s", "127.0.0.1:1"), &redact.Redactor{})
	if err != nil {
		t.Fatal(err)
	}
	defer self.Discard()
	other, err := Create(out, shardHeader("other", 1, 2, at.Add(time.Second), 1, "s", "127.0.0.1:1"), &redact.Redactor{})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := Create(out, shardHeader("gone", 1, 2, at, 1, "s", "127.0.0.1:1"), &redact.Redactor{})
	if err != nil {
		t.Fatal(err)
	}
	gone.lock.f.Close() // as when its cmpbench died: the kernel drops the lock
	whole := shardHeader("whole", 0, 2, at, 1, "s", "127.0.0.1:1")
	whole.Shard = nil
	unsharded, err := Create(out, whole, &redact.Redactor{})
	if err != nil {
		t.Fatal(err)
	}
	defer unsharded.Discard()
	merging := shardHeader("merging", 0, 2, at, 1, "s", "127.0.0.1:1")
	merging.Shard.Shards, merging.Shard.Parts = []int{0, 1}, []ShardPart{{Shard: 0}, {Shard: 1}}
	merge, err := Create(out, merging, &redact.Redactor{})
	if err != nil {
		t.Fatal(err)
	}
	defer merge.Discard()

	got := RunningShards(out, self.Dir())
	if len(got) != 1 || got[0].Dir != other.Dir() || !strings.HasSuffix(got[0].Manifest.RunID, "other") || got[0].Pid <= 0 {
		t.Fatalf("running shards: %+v", got)
	}
	other.Discard()
	if got := RunningShards(out, self.Dir()); len(got) != 0 {
		t.Errorf("after the other ended: %+v", got)
	}
}
