package archive

import (
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// intervalConns reads the connections of every interval row of an archive.
func intervalConns(t *testing.T, dir string) []*core.Conns {
	t.Helper()
	if errs := Verify(dir); len(errs) > 0 {
		t.Fatalf("verify: %v", errs)
	}
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*core.Conns
	err = a.EachInterval(func(r *IntervalRow) error {
		out = append(out, r.conns())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The connections an interval counted are archived with it, and merged shards'
// add up; where none were counted the columns are null (not zero), and a table
// written before the columns reads the same.
func TestIntervalConnectionsAreArchived(t *testing.T) {
	start := time.Unix(1_780_000_000, 0).UTC()
	one := func(dir string, index, count int, c *core.Conns) string {
		return shardArchiveWith(t, dir, start, index, count, 1, 1000, 1000, 1000, c)
	}
	dir := t.TempDir()
	counted := one(dir, 0, 1, &core.Conns{Open: 3, Opened: 5, Lost: 2})
	if got := intervalConns(t, counted); len(got) != 1 || got[0] == nil || *got[0] != (core.Conns{Open: 3, Opened: 5, Lost: 2}) {
		t.Errorf("archived connections %v, want {3 5 2}", got)
	}
	if got := intervalConns(t, one(t.TempDir(), 0, 1, nil)); len(got) != 1 || got[0] != nil {
		t.Errorf("connections of a plugin that did not count them: %v, want null", got)
	}
	if err := DropColumns(counted, IntervalsFile, "conns_open", "conns_opened", "conns_lost"); err != nil {
		t.Fatal(err)
	}
	if got := intervalConns(t, counted); len(got) != 1 || got[0] != nil {
		t.Errorf("a table written before the columns: %v, want null", got)
	}

	for _, tc := range []struct {
		name   string
		shards [2]*core.Conns
		want   *core.Conns
	}{
		{"shards add up", [2]*core.Conns{{Open: 3, Opened: 3}, {Open: 2, Opened: 3, Lost: 1}}, &core.Conns{Open: 5, Opened: 6, Lost: 1}},
		{"a shard that did not count them", [2]*core.Conns{{Open: 3, Opened: 3}, nil}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := one(dir, 0, 2, tc.shards[0]), one(dir, 1, 2, tc.shards[1])
			m, err := mergeDirs(t, t.TempDir(), a, b)
			if err != nil {
				t.Fatal(err)
			}
			got := intervalConns(t, m.Dir)
			if len(got) != 1 || (got[0] == nil) != (tc.want == nil) || got[0] != nil && *got[0] != *tc.want {
				t.Errorf("merged connections %v, want %v", got, tc.want)
			}
		})
	}
}
