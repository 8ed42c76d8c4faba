package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// The shards of a run (cmpbench run --shard I/N) are separate processes, often on
// separate machines, that run their parts of one plan against the same systems.
// They meet before every step, to agree that all can run it and when it starts,
// and after it, to learn how the whole step ended: a ladder stops, a load is
// validated, a broken system is skipped on every shard alike. They start the first
// phase at --start-at and every later one shortly after the last shard is ready.

// ShardNote is what a shard tells the others at a meeting.
type ShardNote struct {
	Shard int       `json:"shard"`
	At    time.Time `json:"at"` // when it arrived
	// Run identifies the run the shard belongs to (DirMeeting.Run); empty in the
	// notes of a cmpbench from before it was written.
	Run string `json:"run,omitempty"`
	// Problem says why the shard cannot run the step; every shard then skips it.
	Problem string `json:"problem,omitempty"`
	// After a step: how it ended on the shard, its successful issued operations,
	// its elapsed time and its target rate.
	Status    core.PhaseStatus `json:"status,omitempty"`
	OK        int64            `json:"ok,omitempty"`
	ElapsedNs int64            `json:"elapsed_ns,omitempty"`
	Rate      float64          `json:"rate,omitempty"`
}

// Meeting is where the shards of a run meet.
type Meeting interface {
	// Meet leaves mine at point and waits, at most wait, until every shard has
	// left its note there; it returns all the notes in shard order.
	Meet(ctx context.Context, point string, mine ShardNote, wait time.Duration) ([]ShardNote, error)
}

// DirMeeting is a Meeting in a directory every shard can read and write (a shared
// volume): each note is a file, written whole under a temporary name and renamed.
type DirMeeting struct {
	Dir   string
	Shard plan.Shard
	// Poll is how often it looks for the others' notes (DefaultPoll when 0).
	Poll time.Duration
	// Waiting, when set, is told what a meeting still waits for once it has
	// waited WaitingAfter, and again every WaitingEvery: a shard waiting for
	// another that may never come says so, also under --quiet.
	Waiting func(point string, missing []string, waited, left time.Duration)
	// Run identifies this shard's run (its plan and --start-at). Its notes carry
	// it, and a note carrying another is a shard of another run, or a note left
	// by an earlier run in a reused directory: the meeting ends at once with a
	// *StrangerError instead of counting it as the shard that was awaited.
	Run string
	// Strangers, when set, is asked while a meeting waits (at once, then every
	// StrangerPoll) whether a shard of another run was found where this one
	// can see it (cmd looks in --out); its error, a *StrangerError, ends the
	// meeting.
	Strangers func() error
}

// StrangerError is a shard of another run found by a shard of this one where
// they could be taken for shards of one run: started with different --start-at,
// seeds or plans, or the same shard twice. It is bad input, and stops the run
// at once rather than waiting out the meeting.
type StrangerError struct{ Why string }

func (e *StrangerError) Error() string { return e.Why }

// StrangerPoll is how often a waiting DirMeeting asks Strangers.
var StrangerPoll = time.Second

// When a DirMeeting says what it waits for (variables for tests).
var (
	WaitingAfter = 5 * time.Second
	WaitingEvery = time.Minute
)

// DefaultPoll is how often a DirMeeting looks for the other shards' notes.
const DefaultPoll = 20 * time.Millisecond

// Meet implements Meeting.
func (d DirMeeting) Meet(ctx context.Context, point string, mine ShardNote, wait time.Duration) ([]ShardNote, error) {
	dir := filepath.Join(d.Dir, url.PathEscape(point))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("shard meeting %s: %w", point, err)
	}
	mine.Shard, mine.Run = d.Shard.Index, d.Run
	b, err := json.Marshal(mine)
	if err != nil {
		return nil, err
	}
	name := filepath.Join(dir, strconv.Itoa(d.Shard.Index)+".json")
	if err := os.WriteFile(name+".tmp", b, 0o644); err != nil {
		return nil, fmt.Errorf("shard meeting %s: %w", point, err)
	}
	if err := os.Rename(name+".tmp", name); err != nil {
		return nil, fmt.Errorf("shard meeting %s: %w", point, err)
	}
	poll := d.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	start := time.Now()
	deadline := start.Add(wait)
	tell := start.Add(WaitingAfter)
	var asked time.Time
	for {
		notes, missing, err := d.read(dir)
		if err != nil {
			return nil, fmt.Errorf("shard meeting %s: %w", point, err)
		}
		if len(missing) == 0 {
			return notes, nil
		}
		now := time.Now()
		if d.Strangers != nil && now.Sub(asked) >= StrangerPoll {
			if err := d.Strangers(); err != nil {
				return nil, fmt.Errorf("shard meeting %s: %w", point, err)
			}
			asked = now
		}
		if now.After(deadline) {
			return nil, fmt.Errorf("shard meeting %s: shard %s did not arrive within %s (in %s)", point, strings.Join(missing, ", "), wait, d.Dir)
		}
		if d.Waiting != nil && now.After(tell) {
			d.Waiting(point, missing, now.Sub(start), deadline.Sub(now))
			tell = now.Add(WaitingEvery)
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(poll):
		}
	}
}

func (d DirMeeting) read(dir string) (notes []ShardNote, missing []string, err error) {
	for i := range d.Shard.Count {
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+".json"))
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, strconv.Itoa(i))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		var n ShardNote
		if err := json.Unmarshal(b, &n); err != nil {
			return nil, nil, fmt.Errorf("shard %d's note: %w", i, err)
		}
		if n.Run != "" && d.Run != "" && n.Run != d.Run {
			return nil, nil, &StrangerError{fmt.Sprintf("%s is the note of shard %d/%d of another run (%s), not of this shard's run (%s): "+
				"shards started with different --start-at or plans meet in one --sync-dir, or an earlier run's notes stayed there; "+
				"start every shard of a run with the same --start-at, and give each run its own --sync-dir (the default, under --out, is one per plan and start)",
				filepath.Join(dir, strconv.Itoa(i)+".json"), i, d.Shard.Count, n.Run, d.Run)}
		}
		notes = append(notes, n)
	}
	return notes, missing, nil
}

// startLead is how long after the last shard is ready a step starts: time for
// every shard to hear of it and open its connections.
func startLead(spec core.PhaseSpec) time.Duration {
	return time.Second + time.Duration(spec.Connections)*time.Millisecond
}

// meetGrace is what a wait for the other shards allows for whatever a shard does
// between phases (shard 0 empties the system before a load, counts it after one).
const meetGrace = 10 * time.Minute

// meetWait bounds a wait for the other shards: until the run's start, the
// longest the others may still be running the phase before (running, its time
// bound; 0 before the first), and meetGrace. A shard whose --start-at is past,
// waiting at the first meeting for one that never comes, gives up after
// meetGrace, not after the longest phase of the plan.
func (r *systemRunner) meetWait(running time.Duration) time.Duration {
	return max(0, time.Until(r.cfg.StartAt)) + running + meetGrace
}

func meetPoint(st plan.Step, when string) string {
	return fmt.Sprintf("%s.%d.%d.%s", st.System, st.Index, st.Repetition, when)
}

// shards is the coordinator of a shard of a sharded run: before every step the
// shards meet to agree that all can run it and when it starts, and after it to
// learn how the whole step ended; shard 0 does what needs the whole data set.
type shards struct{ r *systemRunner }

func (c shards) checks() bool { return c.r.cfg.Plan.Shard.First() }

// agree meets the other shards before step i with this shard's problem with it,
// if any: a problem of any shard keeps the step from running on all (failed on
// the shard whose problem it is, skipped on the others). A ladder's step omitted
// is omitted on every shard alike, without a meeting: it was decided on the
// whole of the steps before it.
func (c shards) agree(ctx context.Context, i int, st *plan.Step, o core.Verdict) (core.Verdict, bool) {
	r := c.r
	if o.Act == core.Omit {
		return o, false
	}
	var problem string
	if o.Act != core.Proceed {
		problem = o.Why
	}
	var before time.Duration // what the others may still be running
	if i > 0 {
		before = r.steps[i-1].Spec.Duration
	}
	notes, err := r.cfg.Meeting.Meet(ctx, meetPoint(*st, "before"), ShardNote{At: time.Now(), Problem: r.cfg.Redactor.String(problem)}, r.meetWait(before))
	var stranger *StrangerError
	switch {
	case errors.As(err, &stranger):
		// The run stops on it: said once, by whoever runs the shard.
		r.skipFrom(i, core.StatusSkipped, "this shard met a shard of another run")
		return o, true
	case err != nil:
		r.skipFrom(i, core.StatusFailed, err.Error())
		return o, true
	}
	if o.Act != core.Proceed {
		return o, false
	}
	if why := shardProblems(notes, r.cfg.Plan.Shard); why != "" {
		return core.Verdict{Act: core.Skip, Why: why}, false
	}
	last := slices.MaxFunc(notes, func(a, b ShardNote) int { return a.At.Compare(b.At) }).At
	st.Spec.StartAt = last.Add(startLead(st.Spec))
	if r.cfg.StartAt.After(st.Spec.StartAt) {
		st.Spec.StartAt = r.cfg.StartAt
	}
	return o, false
}

// ended meets the other shards after a step to learn how the whole of it ended.
func (c shards) ended(ctx context.Context, st plan.Step, p *core.PhaseRun) (stepResult, error) {
	r, shard := c.r, c.r.cfg.Plan.Shard
	achieved, _ := core.Sustained(p)
	notes, err := r.cfg.Meeting.Meet(ctx, meetPoint(st, "after"), ShardNote{At: time.Now(), Status: p.End.Status, OK: issuedOK(p),
		ElapsedNs: int64(p.End.Elapsed), Rate: st.Spec.Rate}, r.meetWait(st.Spec.Duration))
	if err != nil {
		r.cfg.Observer.Warn(fmt.Sprintf("%s: %v", r.info.Name, err))
		return stepResult{}, err
	}
	whole := wholeStep(notes)
	if shard.First() {
		r.cfg.Observer.Note(fmt.Sprintf("%s: %s on all %d shards: %s, %.0f ops/s (this shard %.0f)", r.info.Name, st.Spec.Name, shard.Count, whole.Status, whole.Achieved, achieved))
	}
	return whole, nil
}

// shardProblems says why some shard cannot run a step, or "".
func shardProblems(notes []ShardNote, self plan.Shard) string {
	var whys []string
	for _, n := range notes {
		if n.Problem != "" {
			who := fmt.Sprintf("shard %d", n.Shard)
			if n.Shard == self.Index {
				who = "this shard"
			}
			whys = append(whys, who+": "+n.Problem)
		}
	}
	return strings.Join(whys, "; ")
}

func issuedOK(p *core.PhaseRun) int64 {
	var n int64
	for _, t := range p.Totals {
		if t.Op.Issued() {
			n += t.OK
		}
	}
	return n
}

// stepResult is how a step ended on all shards together: the worst status, the
// successful operations of all over the longest elapsed time against the sum of
// their targets — as `cmpbench merge` decides it.
type stepResult struct {
	core.WholeStep
	where string // " on a shard" when it ran on several
}

func wholeStep(notes []ShardNote) stepResult {
	w := stepResult{WholeStep: core.WholeStep{Status: core.StatusOK}, where: " on a shard"}
	var elapsed int64
	for _, n := range notes {
		if n.Status != core.StatusOK && w.Status == core.StatusOK {
			w.Status = n.Status
		}
		w.OK += n.OK
		w.Rate += n.Rate
		elapsed = max(elapsed, n.ElapsedNs)
	}
	if elapsed > 0 {
		w.Achieved = float64(w.OK) / (float64(elapsed) / 1e9)
	}
	return w
}
