// Command checkrun checks what the e2e cluster's run left on the shared volume
// (deploy/kubernetes/e2e): the merged archive against the shards' own archives.
//
//	checkrun -n 2 -shards DIR -merged DIR            # a run whose every shard finished
//	checkrun -n 2 -shards DIR -merged DIR -missing 1 # a run whose shard 1 was killed
//
// For a whole run: the merged archive verifies, is complete and holds every shard;
// each phase's counts (operations, errors, hits, misses, bytes) are the sums of the
// shards', its load and counted phases hold exactly the suite's operations, every
// merged phase records its start skew, and shard 0's validation of the load holds.
// For a run missing a shard: the merge holds the other shards only, says it is not
// complete, and the missing shard wrote no archive.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// What the e2e's suite (deploy/kubernetes/e2e/manifests) issues over all shards.
var exactOps = map[string]int64{"load": 20000, "counted": 3001}

func main() {
	n := flag.Int("n", 2, "the number of shards")
	shardsDir := flag.String("shards", "", "the directory of the shards' archives")
	mergedDir := flag.String("merged", "", "the directory of the merged archive")
	missing := flag.Int("missing", -1, "the shard that was killed, when one was")
	flag.Parse()
	var errs []error
	if *missing < 0 {
		errs = checkWhole(*n, *shardsDir, *mergedDir)
	} else {
		errs = checkMissing(*n, *missing, *shardsDir, *mergedDir)
	}
	for _, err := range errs {
		fmt.Fprintln(os.Stderr, "checkrun:", err)
	}
	if len(errs) > 0 {
		os.Exit(1)
	}
}

// archives opens every finished archive in dir, each verified.
func archives(dir string) ([]*archive.Archive, error) {
	found := archive.Finished(dir)
	if len(found) == 0 {
		return nil, fmt.Errorf("%s holds no finished archive", dir)
	}
	var out []*archive.Archive
	for _, d := range found {
		if errs := archive.Verify(d); len(errs) > 0 {
			return nil, fmt.Errorf("%s does not verify: %w", d, errors.Join(errs...))
		}
		a, err := archive.Open(d)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func merged(dir string) (*archive.Archive, error) {
	as, err := archives(dir)
	if err != nil {
		return nil, err
	}
	if len(as) != 1 {
		return nil, fmt.Errorf("%s holds %d archives, want the one merge", dir, len(as))
	}
	return as[0], nil
}

type rowKey struct{ system, phase, op string }

func sums(as ...*archive.Archive) map[rowKey]archive.Counts {
	out := map[rowKey]archive.Counts{}
	for _, a := range as {
		for _, r := range a.Summary {
			k := rowKey{r.System, r.Phase, r.Op}
			c := out[k]
			c.Count += r.Count
			c.Hits += r.Hits
			c.Misses += r.Misses
			c.Bytes += r.Bytes
			c.Errors += r.Errors
			out[k] = c
		}
	}
	return out
}

func checkWhole(n int, shardsDir, mergedDir string) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	shards, err := archives(shardsDir)
	if err != nil {
		return []error{err}
	}
	m, err := merged(mergedDir)
	if err != nil {
		return []error{err}
	}
	if len(shards) != n {
		fail("%d shard archives, want %d", len(shards), n)
	}
	for _, s := range shards {
		if s.Manifest.Status != core.RunComplete {
			fail("shard archive %s: %s", s.Dir, s.Manifest.Status)
		}
	}
	sh := m.Manifest.Shard
	if m.Manifest.Status != core.RunComplete || !sh.Complete() || sh.Count != n || len(sh.Parts) != n {
		fail("merged %s: status %s, shards %v of %d, %d parts; want complete, all %d", m.Dir, m.Manifest.Status, sh.Shards, sh.Count, len(sh.Parts), n)
	}
	want, got := sums(shards...), sums(m)
	if len(got) == 0 || len(got) != len(want) {
		fail("merged rows %d, the shards' %d", len(got), len(want))
	}
	total := map[string]int64{}
	for k, w := range want {
		if g := got[k]; g != w {
			fail("%s %s %s: merged %+v, the shards' sum %+v", k.system, k.phase, k.op, g, w)
		}
		total[k.phase] += w.Count
		if w.Errors > 0 {
			fail("%s %s %s: %d errors", k.system, k.phase, k.op, w.Errors)
		}
	}
	for phase, ops := range exactOps {
		if total[phase] != ops {
			fail("phase %s: %d operations over all shards, the suite's %d", phase, total[phase], ops)
		}
	}
	for _, p := range m.Manifest.Phases {
		if len(p.Shards) != n || p.StartSkewNs < 0 || p.Status != core.StatusOK {
			fail("merged phase %s: %d shards, start skew %d ns, %s", p.Name, len(p.Shards), p.StartSkewNs, p.Status)
		}
		fmt.Printf("phase %-9s %s: %d shards, start skew %s, %d ops\n", p.Name, p.Status, len(p.Shards), time.Duration(p.StartSkewNs), total[p.Name])
	}
	vals, err := m.Validations()
	if err != nil || len(vals) != 1 || !vals[0].OK() || vals[0].Counted != exactOps["load"] {
		fail("the load's validation: %+v %v", vals, err)
	}
	fmt.Printf("merged %s: %s, shards %v of %d; counts are the shards' sums\n", filepath.Base(m.Dir), m.Manifest.Status, sh.Shards, sh.Count)
	return errs
}

func checkMissing(n, missing int, shardsDir, mergedDir string) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	shards, _ := archives(shardsDir) // the killed shard wrote none; the others may have
	for _, s := range shards {
		if sh := s.Manifest.Shard; sh != nil && slices.Contains(sh.Shards, missing) {
			fail("shard %d was killed, yet %s holds its finished archive", missing, s.Dir)
		}
	}
	m, err := merged(mergedDir)
	if err != nil {
		return append(errs, err)
	}
	sh := m.Manifest.Shard
	if m.Manifest.Status == core.RunComplete || sh.Complete() || slices.Contains(sh.Shards, missing) || sh.Count != n {
		fail("merged %s: status %s, shards %v of %d: a merge without shard %d presents itself as complete", m.Dir, m.Manifest.Status, sh.Shards, sh.Count, missing)
	}
	if want, got := sums(shards...), sums(m); len(shards) > 0 && fmt.Sprint(want) != fmt.Sprint(got) {
		fail("the partial merge's counts %v are not the finished shards' sums %v", got, want)
	}
	fmt.Printf("merged %s: %s, shards %v of %d; shard %d missing\n", filepath.Base(m.Dir), m.Manifest.Status, sh.Shards, sh.Count, missing)
	return errs
}
