package archive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/redact"
	"github.com/cmpbench/cmpbench/workloads/memtier"
)

// shardArchive writes shard index of count: one fixed-rate phase of its share of
// the target rate, one second long, in which ok GETs succeeded at latency lat.
// Shard 1's machine was saturated.
func shardArchive(t *testing.T, dir string, index, count int, seed uint64, rate float64, ok int64, lat int64) string {
	t.Helper()
	return shardArchiveAt(t, dir, time.Unix(1_780_000_000, 0).UTC(), index, count, seed, rate, ok, lat)
}

// shardArchiveAt is shardArchive of a run started (--start-at) at start.
func shardArchiveAt(t *testing.T, dir string, start time.Time, index, count int, seed uint64, rate float64, ok int64, lat int64) string {
	t.Helper()
	return shardArchiveWith(t, dir, start, index, count, seed, rate, ok, lat, nil)
}

// shardArchiveWith is shardArchiveAt whose interval says its connections
// (nil: not counted).
func shardArchiveWith(t *testing.T, dir string, start time.Time, index, count int, seed uint64, rate float64, ok int64, lat int64, conns *core.Conns) string {
	t.Helper()
	h := Header{RunID: fmt.Sprintf("shard%dof%d-seed%d-%d", index, count, seed, start.Unix()), Seed: seed, Scale: 1, Repeat: 1, Started: start,
		Suite:   SuiteInfo{Name: "s", YAML: "name: s\n"},
		Systems: []SystemInfo{{Name: "r", Adapter: "resp", Definition: map[string]any{"endpoint": "127.0.0.1:1"}}},
	}
	h.Shard = &ShardInfo{Count: count, Shards: []int{index}, PlanHash: PlanHash(h, count), StartAt: h.Started}
	w, err := Create(dir, h, &redact.Redactor{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SystemStarted(core.SystemRun{Name: "r", Adapter: "resp", Endpoint: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	hist := core.NewHistogram()
	for range ok {
		_ = hist.RecordValue(lat)
	}
	l, err := core.Summarize(hist)
	if err != nil {
		t.Fatal(err)
	}
	get := core.OpInterval{Op: core.OpGet, OK: ok, Response: l, Service: l}
	spec := core.PhaseSpec{Name: "fixed", Kind: core.PhaseMeasured, Connections: 2, Rate: rate, Duration: time.Second, Interval: time.Second,
		ConnBase: 2 * index, ConnTotal: 2 * count, StartAt: h.Started,
		Workload: memtier.Spec{SetRatio: 0, GetRatio: 1, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 10, ValueMin: 1, ValueMax: 1}}
	p := &core.PhaseRun{System: "r", Spec: spec, Shape: "x"}
	p.End.Started = h.Started
	if err := w.PhaseStarted(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Interval(p, &core.IntervalReport{Index: 0, End: time.Second, Ops: []core.OpInterval{get}, Conns: conns}); err != nil {
		t.Fatal(err)
	}
	p.End = core.PhaseEnd{Status: core.StatusOK, Started: h.Started.Add(time.Duration(index) * time.Millisecond), Ended: h.Started.Add(time.Second), Elapsed: time.Second}
	p.Intervals, p.Totals = 1, []core.OpInterval{get}
	if index == 1 {
		p.Host = &core.HostLoad{Cores: 2, BusyCores: 1.95, Saturated: true}
	}
	if err := w.PhaseEnded(p); err != nil {
		t.Fatal(err)
	}
	if err := w.SystemEnded(core.SystemRun{Name: "r", Adapter: "resp", Endpoint: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(core.RunComplete, h.Started.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	d, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mergeDirs(t *testing.T, out string, dirs ...string) (*Archive, error) {
	t.Helper()
	found, err := ShardArchives(dirs)
	if err != nil {
		return nil, err
	}
	archives, shards, err := CheckShards(found)
	if err != nil {
		return nil, err
	}
	w, err := Merge(archives, shards, out, "merged", nil, BuildInfo{}, &redact.Redactor{})
	if err != nil {
		return nil, err
	}
	if _, err := w.Finish(MergedStatus(archives), MergedEnd(archives)); err != nil {
		return nil, err
	}
	d, err := w.Commit()
	if err != nil {
		return nil, err
	}
	if errs := Verify(d); len(errs) > 0 {
		t.Fatalf("the merge does not verify: %v", errs)
	}
	return Open(d)
}

// NS is decided on the merged rate against the whole target, never on each
// shard alone: a shard below its share is made up for by one above it, and two
// shards each just above the line can together be below it only if they are.
func TestMergeDecidesNSOnTheSum(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ok        [2]int64 // each shard's successes in its 1 s, of a 1,000 ops/s share
		sustained bool
	}{
		{"one short, the other ahead", [2]int64{900, 1100}, true},
		{"both a little short", [2]int64{960, 970}, false},
		{"both just above", [2]int64{975, 975}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := shardArchive(t, dir, 0, 2, 1, 1000, tc.ok[0], 1000)
			b := shardArchive(t, dir, 1, 2, 1, 1000, tc.ok[1], 9000)
			m, err := mergeDirs(t, t.TempDir(), a, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Summary) != 1 {
				t.Fatalf("%d summary rows", len(m.Summary))
			}
			r := m.Summary[0]
			if r.TargetRate != 2000 || r.Count != tc.ok[0]+tc.ok[1] || r.Sustained == nil || *r.Sustained != tc.sustained {
				t.Errorf("merged: target %g, count %d, sustained %v; want 2000, %d, %v", r.TargetRate, r.Count, *r.Sustained, tc.ok[0]+tc.ok[1], tc.sustained)
			}
			// The p99 of the pooled histograms: above 99% of the values.
			total := tc.ok[0] + tc.ok[1]
			want := int64(1000)
			if float64(tc.ok[1]) > 0.01*float64(total) {
				want = 9000
			}
			if r.RespP99 < want-want/100 || r.RespP99 > want+want/100 {
				t.Errorf("merged p99 %d, want about %d (the pooled histograms')", r.RespP99, want)
			}
			p := m.Manifest.Phases[0]
			if p.Connections != 4 || len(p.Shards) != 2 || p.StartSkewNs != int64(time.Millisecond) {
				t.Errorf("merged phase: %d connections, %d shards, skew %d", p.Connections, len(p.Shards), p.StartSkewNs)
			}
			// A shard's saturated machine marks the merged phase; the machines'
			// loads stay with their shards.
			if !p.HostSaturated || p.Host != nil || !r.HostSaturated || len(p.Shards) != 2 ||
				p.Shards[0].HostSaturated || p.Shards[0].Host != nil || !p.Shards[1].HostSaturated || p.Shards[1].Host == nil || p.Shards[1].Host.Cores != 2 {
				t.Errorf("merged host load: saturated %v (row %v), host %+v, shards %+v", p.HostSaturated, r.HostSaturated, p.Host, p.Shards)
			}
		})
	}
}

func TestMergeRefusesWhatIsNotOnePlan(t *testing.T) {
	dir := t.TempDir()
	a := shardArchive(t, dir, 0, 2, 1, 1000, 1000, 1000)
	b := shardArchive(t, dir, 1, 2, 2, 1000, 1000, 1000) // another seed
	c := shardArchive(t, dir, 0, 3, 1, 1000, 1000, 1000) // another shard count
	// Issue 43, bug 5: shard 1 of another run of the same plan, 34 s later.
	later := shardArchiveAt(t, dir, time.Unix(1_780_000_034, 0).UTC(), 1, 2, 1, 1000, 1000, 1000)
	for _, tc := range []struct {
		dirs []string
		want string
	}{
		{[]string{a, b}, "--seed 1 vs 2"},
		{[]string{a, c}, "shard count 2 vs 3"},
		{[]string{a, later}, "shards of two runs of one plan, not of one run: they differ in --start-at 2026-05-28T20:26:40Z vs 2026-05-28T20:27:14Z"},
		{[]string{later, a}, a + " and " + later + " are shards of two runs"},
		{[]string{a, a}, "shard 0 is in both"},
	} {
		_, err := mergeDirs(t, t.TempDir(), tc.dirs...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.dirs, err, tc.want)
		}
		if _, ok := err.(*MergeError); !ok {
			t.Errorf("%v: %T is not a MergeError (bad input)", tc.dirs, err)
		}
	}
}

// Issue 25, bug 8: a shard cut short (its intervals table truncated) is bad input,
// found before anything is written: merge used to fail half-way (exit 1) and leave
// an in-progress directory that recover turned into an archive failing verify.
func TestMergeChecksEveryShardBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	a := shardArchive(t, dir, 0, 2, 1, 1000, 1000, 1000)
	b := shardArchive(t, dir, 1, 2, 1, 1000, 1000, 1000)
	path := filepath.Join(b, IntervalsFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, err = mergeDirs(t, out, a, b)
	var refused *MergeError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), b+" does not verify, so it is not merged") || !strings.Contains(err.Error(), IntervalsFile) {
		t.Fatalf("merge of a truncated shard: %v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Fatalf("the refused merge wrote %v", entries)
	}
}

// A merge that fails after it has started writing leaves nothing behind: it can
// be made again from its inputs.
func TestFailedMergeLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	a := shardArchive(t, dir, 0, 2, 1, 1000, 1000, 1000)
	found, err := ShardArchives([]string{a})
	if err != nil {
		t.Fatal(err)
	}
	archives, shards, err := CheckShards(found)
	if err != nil {
		t.Fatal(err)
	}
	// The shard's table goes away between the check and the merge.
	if err := os.Remove(filepath.Join(a, IntervalsFile)); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Merge(archives, shards, out, "merged", nil, BuildInfo{}, &redact.Redactor{}); err == nil {
		t.Fatal("merged a shard without its intervals")
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Fatalf("the failed merge left %v", entries)
	}
}

// A merge of some shards is not the whole run: its status says so (it used to
// say complete).
func TestMergeOfSomeShardsIsNotComplete(t *testing.T) {
	dir := t.TempDir()
	a := shardArchive(t, dir, 0, 2, 1, 1000, 1000, 1000)
	b := shardArchive(t, dir, 1, 2, 1, 1000, 1000, 1000)
	part, err := mergeDirs(t, t.TempDir(), a)
	if err != nil {
		t.Fatal(err)
	}
	if part.Manifest.Status != core.RunInterrupted {
		t.Errorf("a merge of 1 of 2 shards: status %s", part.Manifest.Status)
	}
	// Merging it with the other shard gives the whole run.
	whole, err := mergeDirs(t, t.TempDir(), part.Dir, b)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Manifest.Status != core.RunComplete {
		t.Errorf("the merge of every shard: status %s", whole.Manifest.Status)
	}
}
