package archive

import (
	"fmt"
	"path/filepath"
	"slices"
)

// The shards of a run that share --out see each other's in-progress directories.
// A shard that finds there another shard of the same suite on the same systems
// that is not of its run (another --start-at, seed, scale, shard count or suite
// text, or the same shard twice) was started by mistake, and so perhaps was it:
// waiting for shards that will never come helps no one.

// RunningShard is the in-progress directory of a shard's run whose cmpbench is
// alive, and what its manifest says so far.
type RunningShard struct {
	Dir      string
	Pid      int
	Manifest Manifest
}

// RunningShards lists the shards' runs going on under outDir now, but the one in
// the directory self; not merges, which run no shard.
func RunningShards(outDir, self string) []RunningShard {
	var out []RunningShard
	for _, d := range InProgress(outDir) {
		if filepath.Clean(d) == filepath.Clean(self) {
			continue
		}
		pid, live := Live(d)
		if !live {
			continue
		}
		m, err := readManifestFile(d)
		if err != nil || m.Shard == nil || len(m.Shard.Parts) > 0 {
			continue
		}
		out = append(out, RunningShard{Dir: d, Pid: pid, Manifest: m})
	}
	return out
}

// ShardStranger says why other, a shard's run, is not of the run of the shard h
// starts, though it runs the same suite on the same systems (as defined): "they
// differ in" what the shards of one run share (RunDifference), or "both are" the
// same shard. It is "" for a shard of h's run, and for another run altogether
// (another suite, other systems).
func ShardStranger(h Header, other *Manifest) string {
	mine := &Manifest{Seed: h.Seed, Scale: h.Scale, Repeat: h.Repeat, Suite: h.Suite, Systems: h.Systems, Shard: h.Shard}
	if mine.Shard == nil || other.Shard == nil || other.Suite.Name != mine.Suite.Name {
		return ""
	}
	// A manifest names its systems as they start: an in-progress one may name
	// none yet. Its plan hash says whether they are h's: the hash of its plan
	// with h's systems.
	them := *other
	them.Systems = h.Systems
	if other.Shard.PlanHash != manifestPlanKey(&them).hash() {
		return ""
	}
	if d := RunDifference(mine, &them); d != "" {
		return "they differ in " + d
	}
	for _, s := range mine.Shard.Shards {
		if slices.Contains(other.Shard.Shards, s) {
			return fmt.Sprintf("both are shard %d/%d", s, mine.Shard.Count)
		}
	}
	return ""
}
