package suiterun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/runner"
)

// A shard that meets a shard of another run — in the directory where they meet,
// or in the --out they share (archive.ShardStranger) — stops at once as bad input
// (exit 2), naming both, rather than waiting out the grace for shards that will
// never come. A shard of a run whose shards have all met once goes on: a
// stranger found then is the stranger's mistake, and it stops.

// shardMeeting is where a shard meets the others of its run, which stops the run
// when it meets a shard of another run instead.
type shardMeeting struct {
	runner.DirMeeting
	stop context.CancelCauseFunc

	mu      sync.Mutex
	met     bool // the shards of the run met once
	refused *runner.StrangerError
}

// Meet implements runner.Meeting.
func (m *shardMeeting) Meet(ctx context.Context, point string, mine runner.ShardNote, wait time.Duration) ([]runner.ShardNote, error) {
	notes, err := m.DirMeeting.Meet(ctx, point, mine, wait)
	m.mu.Lock()
	defer m.mu.Unlock()
	var se *runner.StrangerError
	switch {
	case err == nil:
		m.met = true
	case errors.As(err, &se) && m.refused == nil:
		m.refused = se
		m.stop(se)
	}
	return notes, err
}

func (m *shardMeeting) hasMet() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.met
}

// refusal is the stranger that stopped the run, or nil.
func (m *shardMeeting) refusal() *runner.StrangerError {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.refused
}

// runIdentity is what the notes of a shard say of its run: what its shards share.
func runIdentity(h archive.Header) string {
	return fmt.Sprintf("plan %s, --start-at %s", h.Shard.PlanHash, h.Shard.StartAt.UTC().Format(time.RFC3339))
}

// meeting is where a shard meets the others; ctx's stop ends the run when it
// meets a shard of another run. A shard waiting for another says so, also under
// --quiet.
func (r *Run) meeting(prog Progress, stop context.CancelCauseFunc) *shardMeeting {
	p, startAt, dir := r.p, r.sh.startAt, r.meetDir
	m := &shardMeeting{stop: stop}
	m.DirMeeting = runner.DirMeeting{Dir: dir, Shard: p.Shard, Run: runIdentity(r.h),
		Waiting: func(point string, missing []string, waited, left time.Duration) {
			prog.Warn(fmt.Sprintf("shard %s waits for shard %s at %s (for %s; it gives up in %s): are they running, with --start-at %s and --sync-dir %s?",
				p.Shard, strings.Join(missing, ", "), point, waited.Round(time.Second), left.Round(time.Second), startAt.Format(time.RFC3339), dir))
		},
		Strangers: func() error {
			if m.hasMet() {
				return nil
			}
			if _, se := r.stranger(); se != nil {
				return se
			}
			return nil
		},
	}
	return m
}

// stranger finds in --out a shard that could be taken for one of this shard's
// run but is not, and says so; nil when there is none.
func (r *Run) stranger() (*archive.RunningShard, *runner.StrangerError) {
	for _, o := range archive.RunningShards(r.out, r.w.Dir()) {
		d := archive.ShardStranger(r.h, &o.Manifest)
		if d == "" {
			continue
		}
		them := o.Manifest.Shard
		return &o, &runner.StrangerError{Why: fmt.Sprintf("shard %s (--start-at %s, in %s) and shard %d/%d (--start-at %s, in %s, cmpbench pid %d) "+
			"run suite %s on the same systems into one --out, but are not shards of one run: %s; "+
			"stop them, and start every shard of a run with the same --start-at, --seed, --scale, --repeat, suite and shard count",
			r.p.Shard, r.sh.startAt.Format(time.RFC3339), r.w.Dir(), them.Shards[0], them.Count, them.StartAt.UTC().Format(time.RFC3339), o.Dir, o.Pid,
			r.suite.Name, d)}
	}
	return nil, nil
}

// strangerLinger bounds how long a shard that found a stranger as it started
// keeps its in-progress directory: the stranger, there first and waiting for its
// shards, looks every runner.StrangerPoll and stops too on seeing it.
const strangerLinger = 10 * time.Second

// refuseStranger stops a shard that finds a stranger in --out as it starts,
// before it contacts any system: it keeps its directory until the stranger
// stopped too (or strangerLinger), then removes it, having measured nothing.
func (r *Run) refuseStranger() error {
	o, se := r.stranger()
	if se == nil {
		return nil
	}
	for end := time.Now().Add(strangerLinger); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if _, live := archive.Live(o.Dir); !live {
			break
		}
	}
	r.w.Discard()
	return core.BadInput{Err: fmt.Errorf("%w; this shard measured nothing and keeps no archive", se)}
}

// endRefused ends a run stopped by a stranger it met: one that measured nothing
// (it stops before the first phase) keeps no archive; one that did is finished
// as it stands, and its refusal returned after.
func (r *Run) endRefused(res *core.RunResult) error {
	se := r.meet.refusal()
	if se == nil {
		return nil
	}
	for _, p := range res.Phases {
		if p.Intervals > 0 || len(p.Totals) > 0 {
			return nil
		}
	}
	r.w.Discard()
	return core.BadInput{Err: fmt.Errorf("%w; this shard measured nothing and keeps no archive", se)}
}
