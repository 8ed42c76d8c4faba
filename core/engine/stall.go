package engine

import (
	"syscall"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// The client's own availability. A process that was stopped (SIGSTOP, a
// debugger, a frozen container) or starved of CPU sends nothing and reads
// nothing meanwhile: a closed loop's rate then counts time in which no request
// could be made, a fixed-rate phase owes sends that go out late (or, past its
// deadline, never), and the side probe sees a stall that was the client's. So
// the engine watches its own clock: a goroutine that wakes every stallTick and
// notes each gap of at least core.StallGap in which the process used almost no CPU.
// A gap in which it was busy (its goroutines kept every P) is not a stall: the
// client was running.
const (
	stallTick = 20 * time.Millisecond
	// stallBusy is the share of one core above which the process counts as
	// running through a gap.
	stallBusy = 0.25
)

// stallWatch records the spans in which the client process was not running.
type stallWatch struct {
	e        *execution
	cpu      func() time.Duration // the process's CPU time
	stop     chan struct{}
	finished chan struct{}

	prev    int64 // phase clock at the last wake-up
	prevCPU time.Duration
	spans   []core.Span
}

// watchStalls starts watching the client's clock from the phase start.
func (e *execution) watchStalls() *stallWatch {
	w := &stallWatch{e: e, cpu: processCPU, stop: make(chan struct{}), finished: make(chan struct{})}
	w.prev, w.prevCPU = e.now(), w.cpu()
	go w.run()
	return w
}

func (w *stallWatch) run() {
	defer close(w.finished)
	t := time.NewTicker(stallTick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.beat(w.e.now(), w.cpu())
		case <-w.stop:
			// A process resumed after its phase's deadline ends the phase at once,
			// maybe before the ticker's next beat: the last gap is read here.
			w.beat(w.e.now(), w.cpu())
			return
		}
	}
}

// beat notes the gap since the last wake-up when it was a stall.
func (w *stallWatch) beat(now int64, cpu time.Duration) {
	gap := time.Duration(now - w.prev)
	used := cpu - w.prevCPU
	if gap >= core.StallGap && float64(used) < stallBusy*float64(gap) {
		// One tick of the gap was the wait itself.
		w.add(core.Span{Start: time.Duration(w.prev) + stallTick, End: time.Duration(now)})
	}
	w.prev, w.prevCPU = now, cpu
}

// add keeps a stall. There is at most one per core.StallGap of the phase.
func (w *stallWatch) add(s core.Span) { w.spans = append(w.spans, s) }

// finish stops the watch and puts what it saw, within the phase's elapsed
// time, into end: every stall in the total, the longest MaxStallSpans as spans.
func (w *stallWatch) finish(end *core.PhaseEnd) {
	close(w.stop)
	<-w.finished
	var in []core.Span
	for _, s := range w.spans {
		s.End = min(s.End, end.Elapsed)
		if s.End > s.Start {
			in = append(in, s)
			end.Stalled += s.End - s.Start
		}
	}
	end.Stalls = core.LongestSpans(in, core.MaxStallSpans)
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}
