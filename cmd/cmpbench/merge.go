package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/suiterun"
)

func newMergeCmd(g *globals) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "merge ARCHIVE|DIR...",
		Short: "Merge the archives of the shards of a run (run --shard I/N) into one archive",
		Long: `merge checks that the archives are shards of one run (the same suite text, seed,
scale, repetitions, systems, shard count and --start-at; it refuses otherwise,
naming both archives and what differs), then writes one archive under --out: counts and errors added up, latency
histograms merged (never percentiles averaged), rates and NS decided on the sums
against the whole target, each shard's client-bound, lag and host-saturated flags and machine load, host and start
skew kept per phase. A directory that is not itself an archive stands for every
shard archive in it. Merging merges gives the merge of all. verify, report, compare
and export accept the result; it is complete when it holds every shard.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeArchives(g, math.MaxInt, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(cmd.Context(), g, args, wait, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long until the archives found cover every shard, or one says its shard ended interrupted or failed (for a merge started beside the shards, before they made their directory)")
	writes(cmd, "out", true)
	return cmd
}

// mergePoll is how often merge --wait looks for the shards' archives again.
const mergePoll = 2 * time.Second

func runMerge(ctx context.Context, g *globals, args []string, wait time.Duration, stdout, stderr io.Writer) error {
	if wait < 0 {
		return inputErr("--wait must not be negative")
	}
	deadline := time.Now().Add(wait)
	var archives []*archive.Archive
	var shards []int
	var said string
	for {
		found, err := archive.ShardArchives(args)
		if err == nil {
			archives, shards, err = archive.CheckShards(found)
		}
		if err != nil && (!errors.Is(err, archive.ErrNoShards) || time.Now().After(deadline)) {
			return badInput(err)
		}
		if err == nil {
			now, why := mergeNow(archives, shards, time.Now().After(deadline))
			if why != "" {
				fmt.Fprintf(stderr, "merge: %s\n", why)
			}
			if now {
				break
			}
			// Said when it changes, not at every look: a wait can last hours.
			if msg := fmt.Sprintf("merge: %d of %d shards finished; waiting", len(shards), archives[0].Manifest.Shard.Count); msg != said {
				fmt.Fprintln(stderr, msg)
				said = msg
			}
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(mergePoll):
		}
	}
	if n := archives[0].Manifest.Shard.Count; len(shards) < n {
		fmt.Fprintf(stderr, "warning: merging %d of %d shards (%s): %s; the result is not the whole run\n", len(shards), n, intsString(shards), missingShards(shards, n))
	}
	out, err := filepath.Abs(g.out)
	if err != nil {
		return badInput(err)
	}
	red := &redact.Redactor{}
	if s, err := loadSystems(g); err == nil {
		red = s.Redactor()
	}
	base := archives[0].Manifest
	runID := fmt.Sprintf("%s-%s-%s-merged", base.Shard.StartAt.UTC().Format("20060102-150405"), base.Suite.Name, base.Shard.PlanHash)
	if len(shards) < base.Shard.Count {
		runID += "-" + strings.ReplaceAll(intsString(shards), ",", "-")
	}
	version, commit := core.BuildVersion()
	w, err := archive.Merge(archives, shards, out, runID, red.Strings(os.Args), archive.BuildInfo{Version: version, Commit: commit}, red)
	if err != nil {
		var refused *archive.MergeError
		if errors.As(err, &refused) {
			return badInput(err)
		}
		return err
	}
	status := archive.MergedStatus(archives)
	dir, tables, err := suiterun.FinishArchive(w, status, archive.MergedEnd(archives))
	if err != nil {
		// A merge is made again from its inputs: nothing half-written is left.
		w.Discard()
		return err
	}
	stdout.Write(tables.Compact)
	fmt.Fprintf(stdout, "Merged %d shards of %d: %s\nArchive: %s\nReport:  %s\nPage:    %s\n", len(shards), base.Shard.Count, status, dir, filepath.Join(dir, archive.ReportFile), filepath.Join(dir, report.HTMLFile))
	if status != core.RunComplete || len(shards) < base.Shard.Count {
		return errFailed
	}
	return nil
}

// mergeNow says whether merge --wait merges the shards found, and why it does
// before it has all of them: a shard whose run ended interrupted or failed (a
// shard killed, the others then stopped; a shard that gave up waiting for one
// that never came) means the merge can never be whole, and saying so now beats
// waiting out --wait.
func mergeNow(archives []*archive.Archive, shards []int, expired bool) (bool, string) {
	count := archives[0].Manifest.Shard.Count
	if len(shards) == count {
		return true, ""
	}
	if un := archive.UnfinishedShards(archives); len(un) > 0 {
		return true, fmt.Sprintf("shard %d's run ended %s, so the merge cannot be the whole run; not waiting for %s",
			un[0].Shard, un[0].Status, shardNames(absentShards(shards, count)))
	}
	return expired, ""
}

// missingShards says which shards of count are not among have.
func missingShards(have []int, count int) string {
	absent := absentShards(have, count)
	if len(absent) == 1 {
		return shardNames(absent) + " is missing"
	}
	return shardNames(absent) + " are missing"
}

func absentShards(have []int, count int) []int {
	var absent []int
	for i := range count {
		if !slices.Contains(have, i) {
			absent = append(absent, i)
		}
	}
	return absent
}

// shardNames is "shard 1" or "shards 1, 2".
func shardNames(ids []int) string {
	if len(ids) == 1 {
		return fmt.Sprintf("shard %d", ids[0])
	}
	return "shards " + strings.ReplaceAll(intsString(ids), ",", ", ")
}

func intsString(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}
