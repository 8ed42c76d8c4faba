package archive

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cmpbench/cmpbench/core"
)

// A merge started beside the shards (merge --wait, the Kubernetes merge Job) may
// look before the shards have made their directory: that is a directory with no
// archive yet, which --wait waits for, not an input error.
func TestShardArchivesOfADirectoryNotMadeYet(t *testing.T) {
	_, err := ShardArchives([]string{filepath.Join(t.TempDir(), "runs", "x", "shards")})
	if !errors.Is(err, ErrNoShards) {
		t.Fatalf("a directory not made yet: %v, want ErrNoShards", err)
	}
}

func TestUnfinishedShards(t *testing.T) {
	shard := func(i int, status core.RunStatus) *Archive {
		return &Archive{Manifest: Manifest{Shard: &ShardInfo{Count: 3, Shards: []int{i}}, Status: status}}
	}
	merged := &Archive{Manifest: Manifest{Shard: &ShardInfo{Count: 3, Shards: []int{0, 1},
		Parts: []ShardPart{{Shard: 0, Status: core.RunComplete}, {Shard: 1, Status: core.RunComplete}}}, Status: core.RunInterrupted}}
	for _, tc := range []struct {
		name     string
		archives []*Archive
		want     []int
	}{
		{"every shard complete", []*Archive{shard(0, core.RunComplete), shard(1, core.RunComplete)}, nil},
		{"one interrupted", []*Archive{shard(0, core.RunInterrupted), shard(2, core.RunComplete)}, []int{0}},
		{"one failed", []*Archive{shard(1, core.RunFailed)}, []int{1}},
		// A merge of some shards says interrupted, yet each of its parts is whole.
		{"a partial merge of whole shards", []*Archive{merged}, nil},
	} {
		var got []int
		for _, p := range UnfinishedShards(tc.archives) {
			got = append(got, p.Shard)
		}
		if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
