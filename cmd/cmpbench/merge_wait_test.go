package main

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// merge --wait merges when every shard is there, when --wait is over, and as soon
// as a shard's run ended otherwise than complete: the merge Job of a run whose
// shard was killed (Kubernetes then stops the others, which end interrupted) says
// which shard is missing instead of waiting out its 2h10m. The e2e on a real
// cluster (deploy/kubernetes/e2e) kills a shard to check it there.
func TestMergeNow(t *testing.T) {
	shard := func(i int, status core.RunStatus) *archive.Archive {
		return &archive.Archive{Manifest: archive.Manifest{Shard: &archive.ShardInfo{Count: 3, Shards: []int{i}}, Status: status}}
	}
	for _, tc := range []struct {
		name     string
		archives []*archive.Archive
		shards   []int
		expired  bool
		now      bool
		why      string
	}{
		{"every shard", []*archive.Archive{shard(0, core.RunComplete), shard(1, core.RunComplete), shard(2, core.RunComplete)}, []int{0, 1, 2}, false, true, ""},
		{"some still running", []*archive.Archive{shard(0, core.RunComplete)}, []int{0}, false, false, ""},
		{"--wait over", []*archive.Archive{shard(0, core.RunComplete)}, []int{0}, true, true, ""},
		{"a shard interrupted", []*archive.Archive{shard(0, core.RunInterrupted)}, []int{0}, false, true,
			"shard 0's run ended interrupted, so the merge cannot be the whole run; not waiting for shards 1, 2"},
		{"a shard failed", []*archive.Archive{shard(0, core.RunComplete), shard(2, core.RunFailed)}, []int{0, 2}, false, true,
			"shard 2's run ended failed, so the merge cannot be the whole run; not waiting for shard 1"},
	} {
		now, why := mergeNow(tc.archives, tc.shards, tc.expired)
		if now != tc.now || why != tc.why {
			t.Errorf("%s: %v %q, want %v %q", tc.name, now, why, tc.now, tc.why)
		}
	}
	if got := missingShards([]int{0, 2}, 3); got != "shard 1 is missing" {
		t.Errorf("missingShards: %q", got)
	}
	if got := missingShards([]int{1}, 3); !strings.HasPrefix(got, "shards 0, 2 are") {
		t.Errorf("missingShards: %q", got)
	}
}
