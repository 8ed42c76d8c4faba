// Command schedlat reads a Go execution trace of a cmpbench process
// (CMPBENCH_TRACE, core/gotrace) and prints, for each phase, how long goroutines
// waited to run once they could: from being made runnable (a reply or a timer
// woke an event loop; a channel or the network woke anything else) to running.
// That wait is the Go runtime's share of the client's send lag; what the kernel
// adds (a thread waiting for a CPU) is not in a Go trace (bench/README.md says
// how it was measured). For the longest waits of the event loops it shows what
// held the processors (Ps) when the wait began, and whether the garbage
// collector was marking or the world stopped then. The tracer itself stops the
// world briefly once a second, to start a new generation of the trace: a wait
// at a whole second may be its doing.
//
//	go run ./bench/schedlat TRACE [longest]     # longest: how many waits to detail (default 5)
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/exp/trace"
)

// wait is one goroutine's wait from runnable to running.
type wait struct {
	role    string
	at, dur int64 // ns since the trace's first event
	busy    []string
	gc      bool
}

// reader follows goroutine and processor states through the trace.
type reader struct {
	start    int64
	roles    map[trace.GoID]string
	runnable map[trace.GoID]wait // waits begun: when, and what ran then
	running  map[trace.ProcID]trace.GoID
	gc       int // GC mark phases and stop-the-worlds in progress
	phases   []phase
	cur      *phase
}

type phase struct {
	name       string
	begin, end int64
	waits      []wait
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: schedlat TRACE [longest]")
		os.Exit(2)
	}
	longest := 5
	if len(os.Args) > 2 {
		n, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "schedlat: longest:", err)
			os.Exit(2)
		}
		longest = n
	}
	phases, err := read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "schedlat:", err)
		os.Exit(1)
	}
	for _, p := range phases {
		report(p, longest)
	}
}

func read(path string) ([]phase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr, err := trace.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := &reader{start: -1, roles: map[trace.GoID]string{}, runnable: map[trace.GoID]wait{}, running: map[trace.ProcID]trace.GoID{}}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return r.phases, nil
		}
		if err != nil {
			return r.phases, fmt.Errorf("%s: %w", path, err)
		}
		r.event(ev)
	}
}

func (r *reader) event(ev trace.Event) {
	t := int64(ev.Time())
	if r.start < 0 {
		r.start = t
	}
	t -= r.start
	switch ev.Kind() {
	case trace.EventRegionBegin, trace.EventRegionEnd:
		r.region(ev, t)
	case trace.EventRangeBegin, trace.EventRangeEnd:
		if name := ev.Range().Name; name == "GC concurrent mark phase" || strings.HasPrefix(name, "stop-the-world") {
			if ev.Kind() == trace.EventRangeBegin {
				r.gc++
			} else if r.gc > 0 {
				r.gc--
			}
		}
	case trace.EventStateTransition:
		r.transition(ev, t)
	}
}

func (r *reader) region(ev trace.Event, t int64) {
	name, ok := strings.CutPrefix(ev.Region().Type, "phase ")
	if !ok {
		return
	}
	if ev.Kind() == trace.EventRegionBegin {
		r.phases = append(r.phases, phase{name: name, begin: t})
		r.cur = &r.phases[len(r.phases)-1]
		return
	}
	if r.cur != nil {
		r.cur.end = t
		r.cur = nil
	}
}

func (r *reader) transition(ev trace.Event, t int64) {
	st := ev.StateTransition()
	if st.Resource.Kind != trace.ResourceGoroutine {
		return
	}
	g := st.Resource.Goroutine()
	from, to := st.Goroutine()
	r.learn(g, st.Stack) // its start, or where it stopped
	if ev.Goroutine() == g {
		r.learn(g, ev.Stack()) // its own stack, not its creator's
	}
	switch {
	case to == trace.GoRunnable && from != trace.GoRunning && from != trace.GoRunnable:
		// Woken: not preempted (the goroutine's own CPU use), and not the
		// tracer restating, once a second, that a runnable goroutine still is.
		r.runnable[g] = wait{at: t, busy: r.busy(), gc: r.gc > 0}
	case to == trace.GoRunning:
		if w, ok := r.runnable[g]; ok && r.cur != nil {
			w.role, w.dur = r.role(g), t-w.at
			r.cur.waits = append(r.cur.waits, w)
		}
		delete(r.runnable, g)
		r.running[ev.Proc()] = g
	}
	if from == trace.GoRunning && to != trace.GoRunning {
		for p, rg := range r.running {
			if rg == g {
				delete(r.running, p)
			}
		}
	}
}

// busy names what runs on the Ps.
func (r *reader) busy() []string {
	var b []string
	for _, g := range r.running {
		b = append(b, r.role(g))
	}
	slices.Sort(b)
	return b
}

// roleOf names goroutines by a function their stacks show, first match first.
var roleOf = []struct{ fn, role string }{
	{"engine.(*loop).run", "event loop"},
	{"engine.(*collector).run", "collector"},
	{"engine.(*worker).run", "probe/worker"},
	{"runtime.gcBgMarkWorker", "GC worker"},
	{"grpc", "gRPC"},
}

// learn names goroutine g from a stack of its own, unless named already by a
// more telling one.
func (r *reader) learn(g trace.GoID, s trace.Stack) {
	if s == trace.NoStack {
		return
	}
	best := len(roleOf)
	if n, ok := r.roles[g]; ok {
		best = slices.IndexFunc(roleOf, func(k struct{ fn, role string }) bool { return k.role == n })
	}
	for f := range s.Frames() {
		for i, k := range roleOf[:best] {
			if strings.Contains(f.Func, k.fn) {
				r.roles[g], best = k.role, i
				break
			}
		}
	}
}

func (r *reader) role(g trace.GoID) string {
	if n, ok := r.roles[g]; ok {
		return n
	}
	return "other"
}

func report(p phase, longest int) {
	fmt.Printf("phase %s (%.1f s): runnable to running\n", p.name, float64(p.end-p.begin)/1e9)
	by := map[string][]int64{}
	for _, w := range p.waits {
		by[w.role] = append(by[w.role], w.dur)
	}
	roles := make([]string, 0, len(by))
	for k := range by {
		roles = append(roles, k)
	}
	slices.Sort(roles)
	for _, k := range roles {
		d := by[k]
		slices.Sort(d)
		q := func(f float64) float64 { return float64(d[min(len(d)-1, int(f*float64(len(d))))]) / 1e3 }
		fmt.Printf("  %-13s %8d waits: p50 %7.1f us, p99 %7.1f us, p99.9 %8.1f us, max %8.1f us\n", k, len(d), q(0.5), q(0.99), q(0.999), float64(d[len(d)-1])/1e3)
	}
	var loops []wait
	for _, w := range p.waits {
		if w.role == "event loop" {
			loops = append(loops, w)
		}
	}
	slices.SortFunc(loops, func(a, b wait) int { return int(b.dur - a.dur) })
	for _, w := range loops[:min(longest, len(loops))] {
		busy := "nothing (an idle P: a thread had to be woken)"
		if len(w.busy) > 0 {
			busy = strings.Join(w.busy, ", ")
		}
		gc := ""
		if w.gc {
			gc = "; GC running"
		}
		fmt.Printf("    loop waited %7.1f us from %.3f s; the Ps ran: %s%s\n", float64(w.dur)/1e3, float64(w.at-p.begin)/1e9, busy, gc)
	}
}
