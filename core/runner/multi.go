package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
)

// Multi drives one system from several plugin processes (cmpbench run
// --processes K), for a client machine where one process stops scaling: every
// phase is split over them as over shards (plan.SplitSpec), they start it together
// and their intervals are merged as they arrive, exactly (counts add up,
// histograms merge), so that the runner sees one phase. Everything but running a
// phase (capture, stats, counts, validation) goes to the first process.
type Multi struct {
	drivers []Driver
}

// NewMulti drives a system from drivers, the first answering for all.
func NewMulti(drivers []Driver) *Multi { return &Multi{drivers: drivers} }

var _ Driver = (*Multi)(nil)

// multiLead is how long after RunPhase the processes start a phase together: time
// for each to open its connections.
func multiLead(spec core.PhaseSpec) time.Duration {
	return 500*time.Millisecond + time.Duration(spec.Connections)*time.Millisecond
}

// Info implements Driver.
func (m *Multi) Info() core.Info { return m.drivers[0].Info() }

// Pid implements Driver: the first process's.
func (m *Multi) Pid() int { return m.drivers[0].Pid() }

// Pids are every process's.
func (m *Multi) Pids() []int {
	pids := make([]int, len(m.drivers))
	for i, d := range m.drivers {
		pids[i] = d.Pid()
	}
	return pids
}

// Exited implements Driver: any process that exited makes the runner launch all
// of them again.
func (m *Multi) Exited() bool {
	return slices.ContainsFunc(m.drivers, func(d Driver) bool { return d.Exited() })
}

// Open implements Driver: every process opens the system.
func (m *Multi) Open(ctx context.Context, sys core.SystemConfig) error {
	for i, d := range m.drivers {
		if err := d.Open(ctx, sys); err != nil {
			if i == 0 {
				return err
			}
			return fmt.Errorf("process %d: %w", i, err)
		}
	}
	return nil
}

// Capture implements Driver.
func (m *Multi) Capture(ctx context.Context) (core.Capture, error) { return m.drivers[0].Capture(ctx) }

// Stats implements Driver.
func (m *Multi) Stats(ctx context.Context) (map[string]string, error) {
	return m.drivers[0].Stats(ctx)
}

// Count implements Driver.
func (m *Multi) Count(ctx context.Context) (int64, error) { return m.drivers[0].Count(ctx) }

// Flush implements Driver.
func (m *Multi) Flush(ctx context.Context) error { return m.drivers[0].Flush(ctx) }

// Validate implements Driver.
func (m *Multi) Validate(ctx context.Context, load core.PhaseSpec, expected int64) (core.Validation, error) {
	return m.drivers[0].Validate(ctx, load, expected)
}

// Close implements Driver.
func (m *Multi) Close(ctx context.Context) error {
	var errs []error
	for _, d := range m.drivers {
		errs = append(errs, d.Close(ctx))
	}
	return errors.Join(errs...)
}

// Kill implements Driver.
func (m *Multi) Kill() {
	for _, d := range m.drivers {
		d.Kill()
	}
}

// RunPhase implements Driver: each process runs its part of the phase, from the
// same moment; interval i is passed on, merged, once every process has sent it
// or ended.
func (m *Multi) RunPhase(ctx context.Context, spec core.PhaseSpec, onInterval func(core.IntervalReport)) (core.PhaseEnd, error) {
	k := len(m.drivers)
	parts := make([]core.PhaseSpec, k)
	start := time.Now().Add(multiLead(spec))
	if spec.StartAt.After(start) {
		start = spec.StartAt
	}
	for i := range k {
		p, err := plan.SplitSpec(spec, plan.Shard{Index: i, Count: k}, int64(1)<<40)
		if err != nil {
			return core.PhaseEnd{}, fmt.Errorf("--processes %d: %w", k, err)
		}
		p.StartAt = start
		parts[i] = p
	}
	mg := &intervalMerger{k: k, open: spec.OpenLoop(), pending: map[int][]core.IntervalReport{}, sent: make([]int, k), done: make([]bool, k), emit: onInterval}
	for i := range mg.sent {
		mg.sent[i] = -1
	}
	ends := make([]core.PhaseEnd, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i, d := range m.drivers {
		wg.Go(func() {
			ends[i], errs[i] = d.RunPhase(ctx, parts[i], func(r core.IntervalReport) { mg.add(i, r) })
			mg.end(i)
		})
	}
	wg.Wait()
	if mg.err != nil {
		return core.PhaseEnd{}, mg.err
	}
	for i, err := range errs {
		if err != nil {
			return mergeEnds(ends, spec.OpenLoop()), fmt.Errorf("process %d: %w", i, err)
		}
	}
	return mergeEnds(ends, spec.OpenLoop()), nil
}

// intervalMerger passes interval i on once every process has sent it or ended:
// each sends its intervals in order.
type intervalMerger struct {
	mu      sync.Mutex
	k       int
	open    bool
	pending map[int][]core.IntervalReport
	sent    []int  // the last interval index each process sent
	done    []bool // the process's phase ended
	next    int    // the next index to pass on
	emit    func(core.IntervalReport)
	err     error
}

func (m *intervalMerger) add(proc int, r core.IntervalReport) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending[r.Index] = append(m.pending[r.Index], r)
	m.sent[proc] = r.Index
	m.flush()
}

func (m *intervalMerger) end(proc int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done[proc] = true
	m.flush()
}

// flush passes on every interval all processes are past. Called with mu held;
// the runner's callback runs under it, so intervals reach it one at a time, in
// order.
func (m *intervalMerger) flush() {
	for {
		ready := true
		for i := range m.k {
			if !m.done[i] && m.sent[i] < m.next {
				ready = false
			}
		}
		if !ready {
			return
		}
		reps, ok := m.pending[m.next]
		if !ok {
			// Nobody sent it: every process ended before it (or skipped it).
			if !m.pendingAfter(m.next) {
				return
			}
			m.next++
			continue
		}
		delete(m.pending, m.next)
		m.next++
		merged, err := mergeIntervals(reps, m.open)
		if err != nil {
			if m.err == nil {
				m.err = err
			}
			continue
		}
		m.emit(merged)
	}
}

func (m *intervalMerger) pendingAfter(i int) bool {
	for j := range m.pending {
		if j > i {
			return true
		}
	}
	return false
}

// mergeIntervals merges the same interval of several processes. Their
// connections add up; when one did not count them (a plugin built before
// engine.conns), neither does the merge. A process whose phase ended before
// the interval holds none open.
func mergeIntervals(reps []core.IntervalReport, open bool) (core.IntervalReport, error) {
	out := core.IntervalReport{Index: reps[0].Index, Start: reps[0].Start, End: reps[0].End, Conns: &core.Conns{}}
	t := core.NewTotals(open)
	for i := range reps {
		r := &reps[i]
		out.Start, out.End = min(out.Start, r.Start), max(out.End, r.End)
		out.Probe = append(out.Probe, r.Probe...)
		if r.Conns == nil {
			out.Conns = nil
		} else if out.Conns != nil {
			out.Conns.Add(*r.Conns)
		}
		if err := t.Add(r); err != nil {
			return out, err
		}
	}
	ops, err := t.Result()
	out.Ops = ops
	return out, err
}

// mergeEnds merges how the processes' phases ended: the worst status, the longest
// elapsed time, the CPU of all, the totals merged exactly.
func mergeEnds(ends []core.PhaseEnd, open bool) core.PhaseEnd {
	out := core.PhaseEnd{Status: core.StatusOK}
	t := core.NewTotals(open)
	haveTotals := true
	var errs []string
	for i, e := range ends {
		if e.Status != core.StatusOK && out.Status == core.StatusOK {
			out.Status = e.Status
		}
		if e.Error != "" {
			errs = append(errs, fmt.Sprintf("process %d: %s", i, e.Error))
		}
		for _, s := range e.ErrorSamples {
			if !slices.Contains(out.ErrorSamples, s) && len(out.ErrorSamples) < core.MaxErrorSamples {
				out.ErrorSamples = append(out.ErrorSamples, s)
			}
		}
		if !e.Started.IsZero() && (out.Started.IsZero() || e.Started.Before(out.Started)) {
			out.Started = e.Started
		}
		if e.Ended.After(out.Ended) {
			out.Ended = e.Ended
		}
		out.Elapsed = max(out.Elapsed, e.Elapsed)
		out.CPUUser += e.CPUUser
		out.CPUSystem += e.CPUSystem
		for _, n := range e.Notes {
			out.Notes = append(out.Notes, fmt.Sprintf("process %d: %s", i, n))
		}
		if len(e.Totals) == 0 {
			haveTotals = false
		}
		if err := t.Add(&core.IntervalReport{Ops: e.Totals}); err != nil {
			errs = append(errs, fmt.Sprintf("merging process %d's totals: %v", i, err))
			if out.Status == core.StatusOK {
				out.Status = core.StatusFailed
			}
		}
	}
	out.Error = strings.Join(errs, "; ")
	stalled, spans := make([]time.Duration, len(ends)), make([][]core.Span, len(ends))
	for i, e := range ends {
		stalled[i], spans[i] = e.Stalled, e.Stalls
	}
	out.Stalled, out.Stalls = core.CombinedStalls(stalled, spans)
	if haveTotals {
		// A process that sent no totals (it died) leaves them to the runner, which
		// merges what the sink kept of the intervals.
		out.Totals, _ = t.Result()
	}
	return out
}
