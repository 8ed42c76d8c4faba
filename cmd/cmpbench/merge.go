package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/redact"
)

func newMergeCmd(g *globals) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "merge ARCHIVE|DIR...",
		Short: "Merge the archives of the shards of a run (run --shard I/N) into one archive",
		Long: `merge checks that the archives are shards of one plan (the same suite text, seed,
scale, repetitions, systems and shard count; it refuses otherwise, naming what
differs), then writes one archive under --out: counts and errors added up, latency
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
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long until the archives found cover every shard (for a merge started beside the shards)")
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
	for {
		found, err := archive.ShardArchives(args)
		if err == nil {
			archives, shards, err = archive.CheckShards(found)
		}
		switch {
		case err != nil && (!errors.Is(err, archive.ErrNoShards) || time.Now().After(deadline)):
			return badInput{err}
		case err == nil && (len(shards) == archives[0].Manifest.Shard.Count || time.Now().After(deadline)):
		default:
			if err == nil {
				fmt.Fprintf(stderr, "merge: %d of %d shards finished; waiting\n", len(shards), archives[0].Manifest.Shard.Count)
			}
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(mergePoll):
			}
			continue
		}
		break
	}
	if n := archives[0].Manifest.Shard.Count; len(shards) < n {
		fmt.Fprintf(stderr, "warning: merging %d of %d shards (%s); the result is not the whole run\n", len(shards), n, intsString(shards))
	}
	out, err := filepath.Abs(g.out)
	if err != nil {
		return badInput{err}
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
			return badInput{err}
		}
		return err
	}
	status := archive.MergedStatus(archives)
	dir, tables, err := finishArchive(w, status, archive.MergedEnd(archives))
	if err != nil {
		// A merge is made again from its inputs: nothing half-written is left.
		w.Discard()
		return err
	}
	stdout.Write(tables)
	fmt.Fprintf(stdout, "Merged %d shards of %d: %s\nArchive: %s\nReport:  %s\n", len(shards), base.Shard.Count, status, dir, filepath.Join(dir, archive.ReportFile))
	if status != core.RunComplete || len(shards) < base.Shard.Count {
		return errFailed
	}
	return nil
}

func intsString(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}
