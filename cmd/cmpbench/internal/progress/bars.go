package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/cmpbench/cmpbench/core/plan"
)

// bars are the live display on a terminal (mpb): a bar of the whole run, phases
// done of all, with the time so far and the ETA, and below it a bar of the phase
// under way with its last interval's ops/s and p99 and its errors so far. Lines
// (notes, a phase's start and end) go above them. A nil *bars does nothing.
type bars struct {
	p *Progress
	c *mpb.Progress

	mu    sync.Mutex // the bars are added and ended from the observer's goroutine, closed from the caller's
	run   *mpb.Bar
	phase *mpb.Bar
	total int64
	done  bool
}

// phaseTicks is the resolution of a phase's bar.
const phaseTicks = 1000

// barWidth is the width of both bars' fill; their labels before it are aligned.
const barWidth = 30

func newBars(w io.Writer, p *Progress) *bars {
	// Refreshed whatever w is, so that no line written above the bars is lost.
	b := &bars{p: p, c: mpb.New(mpb.WithOutput(w), mpb.WithAutoRefresh(), mpb.WithRefreshRate(200*time.Millisecond))}
	b.total = int64(max(1, len(p.steps)))
	b.run = b.c.New(b.total, mpb.BarStyle(), mpb.BarWidth(barWidth),
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return p.runLabel() }, decor.WCSyncWidthR)),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return p.runTiming() })))
	return b
}

// write prints a line above the bars; false once they are closed.
func (b *bars) write(text string) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return false
	}
	_, err := fmt.Fprintln(b.c, text)
	return err == nil
}

// moved sets the run's bar to the steps done; it completes only on close.
func (b *bars) moved() {
	if b == nil {
		return
	}
	b.p.mu.Lock()
	done := int64(b.p.done)
	b.p.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.run.SetCurrent(min(done, b.total-1))
	}
}

func (b *bars) phaseStarted(st plan.Step) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	if b.phase != nil {
		b.phase.Abort(true)
	}
	name := st.System + " " + st.Spec.Name
	b.phase = b.c.New(phaseTicks, mpb.BarStyle(), mpb.BarWidth(barWidth), mpb.BarRemoveOnComplete(),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncWidthR)),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return b.p.phaseLabel() })))
}

// phaseMoved sets the phase's bar; it never completes by itself, so that it stays
// until the phase ends.
func (b *bars) phaseMoved(fraction float64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.phase != nil {
		b.phase.SetCurrent(min(int64(fraction*phaseTicks), phaseTicks-1))
	}
}

func (b *bars) phaseEnded() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.phase != nil {
		b.phase.Abort(true)
		b.phase = nil
	}
}

// close ends the bars: the run's completes when every step is done and stays as
// it was otherwise (an interrupted run); the container's last frame stays on the
// terminal.
func (b *bars) close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return
	}
	b.done = true
	if b.phase != nil {
		b.phase.Abort(true)
		b.phase = nil
	}
	b.p.mu.Lock()
	done := int64(b.p.done)
	b.p.mu.Unlock()
	if done >= b.total {
		b.run.SetCurrent(b.total)
	} else {
		b.run.Abort(false)
	}
	b.mu.Unlock()
	b.c.Wait()
}

// runLabel is "run 2/5 phases".
func (p *Progress) runLabel() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("run %d/%d phases", p.done, len(p.steps))
}

// runTiming is "1m2s, ETA 40s to 1m30s", or "done in 1m2s" at the end.
func (p *Progress) runTiming() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	took := now.Sub(p.start).Round(time.Second)
	if p.closed {
		return "ended after " + took.String()
	}
	return fmt.Sprintf("%s, ETA %s", took, formatETA(p.eta(now)))
}

// phaseLabel is how far the phase under way is and how it goes.
func (p *Progress) phaseLabel() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.cur
	if c == nil {
		return ""
	}
	return c.howFar(c.elapsed(p.now())) + ", " + c.stats()
}
