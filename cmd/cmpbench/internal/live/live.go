// Package live serves a run as it happens (cmpbench run --live): a page like
// report.html that fills in through server-sent events, and /metrics in the
// Prometheus text format. It is an Observer of the runner beside the progress
// display, fed the same interval stream the archive is written from: nothing
// it does is on a plugin's path, and its work per interval is the host's.
package live

import (
	"fmt"
	"slices"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive/report"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// Options say what a live run shows.
type Options struct {
	RunID, Suite string
	Plan         *plan.Plan
	// Redactor takes out of every text served what it takes out of the archive.
	Redactor *redact.Redactor
	// ETA says how long the run still takes (the progress display's); nil: not
	// said.
	ETA func() string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// maxNotes bounds the notes and warnings the page lists: the latest.
const maxNotes = 20

// Live is a run as its page and its metrics show it. Its Observer methods are
// called from the runner's goroutine, ClientSampled from the sampler's, its
// handlers from the server's: one lock guards its state.
type Live struct {
	o   Options
	red *redact.Redactor
	now func() time.Time

	mu       sync.Mutex
	steps    []*stepState // in the order the runner goes through them
	byKey    map[stepKey]*stepState
	pools    map[poolKey]*pool
	cur      *stepState // the phase under way, or the last one that started
	done     int        // steps the run is through
	started  time.Time
	state    string // running, or the run's status once it ended
	report   string // the archive's report.html, once written
	notes    []string
	cpu      map[string]map[int]float64 // per process name and pid: the latest sample's cores
	problems int                        // intervals whose histograms could not be read
	version  uint64                     // counts the changes
	changed  chan struct{}              // closed and replaced on every change
	cached   []byte                     // the snapshot of cachedAt
	cachedAt uint64
}

// New follows a run of o.Plan.
func New(o Options) *Live {
	l := &Live{o: o, red: o.Redactor, now: o.Now, byKey: map[stepKey]*stepState{}, pools: map[poolKey]*pool{},
		state: stateRunning, cpu: map[string]map[int]float64{}, changed: make(chan struct{})}
	if l.now == nil {
		l.now = time.Now
	}
	if l.red == nil {
		l.red = redact.New()
	}
	l.started = l.now()
	if o.Plan == nil {
		return l
	}
	labels := phaseLabels(o.Plan.Steps)
	for i, st := range o.Plan.Steps {
		s := &stepState{step: st, pos: i, color: max(0, slices.Index(o.Plan.Systems, st.System)), label: l.red.String(labels[st.Index]), state: statePending}
		l.steps = append(l.steps, s)
		l.byKey[keyOf(st)] = s
	}
	return l
}

// phaseLabels names each phase (by its index) in the metrics: its name, or
// its name and index where two phases share a name.
func phaseLabels(steps []plan.Step) map[int]string {
	names := map[string]map[int]bool{}
	for _, st := range steps {
		if names[st.Spec.Name] == nil {
			names[st.Spec.Name] = map[int]bool{}
		}
		names[st.Spec.Name][st.Index] = true
	}
	out := map[int]string{}
	for _, st := range steps {
		out[st.Index] = st.Spec.Name
		if len(names[st.Spec.Name]) > 1 {
			out[st.Index] = fmt.Sprintf("%s#%d", st.Spec.Name, st.Index+1)
		}
	}
	return out
}

// SetRunID names the run, once it has its id.
func (l *Live) SetRunID(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.o.RunID = id
	l.touch()
}

// SetETA gives the function that says how long the run still takes.
func (l *Live) SetETA(eta func() string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.o.ETA = eta
}

// touch says that the state changed (lock held).
func (l *Live) touch() {
	l.version++
	close(l.changed)
	l.changed = make(chan struct{})
}

// SystemStarted: the steps of the systems before it are done.
func (l *Live) SystemStarted(s core.SystemRun, _ int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, st := range l.steps {
		if st.step.System == s.Name {
			l.done = max(l.done, i)
			break
		}
	}
	l.touch()
}

// PhaseStarted follows a phase.
func (l *Live) PhaseStarted(st plan.Step, _ int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.byKey[keyOf(st)]
	if s == nil {
		return
	}
	s.state = stateRunning
	s.anchor = time.Time{}
	threshold := core.DefaultStallThreshold
	if st.Spec.Probe != nil {
		threshold = st.Spec.Probe.StallThreshold()
	}
	s.stalls = report.NewStallFinder(threshold)
	l.cur = s
	l.done = max(l.done, s.pos)
	p := l.poolOf(s)
	p.running, p.target, p.achieved = true, st.Spec.Rate, 0
	p.open, p.known = 0, false
	clear(l.cpu)
	l.touch()
}

func (l *Live) poolOf(s *stepState) *pool {
	k := poolKey{s.step.System, s.step.Index}
	p := l.pools[k]
	if p == nil {
		p = &pool{system: l.red.String(s.step.System), phase: s.label}
		l.pools[k] = p
	}
	return p
}

// Interval follows the phase through one more interval.
func (l *Live) Interval(st plan.Step, r core.IntervalReport) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.byKey[keyOf(st)]
	if s == nil || s.state != stateRunning {
		return
	}
	p := l.poolOf(s)
	if s.anchor.IsZero() {
		s.anchor = now.Add(-r.End)
	}
	if c := r.Conns; c != nil { // what the engine counted, never the phase's spec
		p.open, p.known = c.Open, true
		p.opened, p.lost, p.counted = p.opened+int64(c.Opened), p.lost+int64(c.Lost), true
	}
	var merged [numKinds]*hdrhistogram.PackedHistogram
	for i := range r.Ops {
		if r.Ops[i].Op >= core.NumOpKinds {
			continue
		}
		if err := p.add(&r.Ops[i], st.Spec.OpenLoop(), &merged); err != nil {
			l.problems++
		}
	}
	s.addInterval(&r, merged)
	p.at, p.achieved = s.anchor.Add(r.End), s.lastRate
	l.touch()
}

// PhaseEnded keeps how a phase ended and the flags it raised.
func (l *Live) PhaseEnded(st plan.Step, r *core.PhaseRun) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.byKey[keyOf(st)]
	if s == nil {
		return
	}
	if s.stalls == nil {
		s.stalls = report.NewStallFinder(core.DefaultStallThreshold)
	}
	s.ended(r)
	l.done = max(l.done, s.pos+1)
	if p := l.pools[poolKey{st.System, st.Index}]; p != nil {
		// The engine closes the phase's connections once it ended.
		p.running, p.achieved, p.open, p.endedAt = false, s.lastRate, 0, l.now()
	}
	l.touch()
}

// Note keeps a line of what happened.
func (l *Live) Note(msg string) { l.note(msg) }

// Warn keeps a line of what went wrong.
func (l *Live) Warn(msg string) { l.note("warning: " + msg) }

func (l *Live) note(msg string) {
	msg = core.Printable(l.red.String(msg))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes = append(l.notes, l.now().UTC().Format("15:04:05")+" "+msg)
	if len(l.notes) > maxNotes {
		l.notes = slices.Delete(l.notes, 0, len(l.notes)-maxNotes)
	}
	l.touch()
}

// ClientSampled keeps the latest CPU of each of the client's processes.
func (l *Live) ClientSampled(_ string, s core.ProcessSample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	name := "plugin"
	if s.Process == "cmpbench" {
		name = "cmpbench"
	}
	if l.cpu[name] == nil {
		l.cpu[name] = map[int]float64{}
	}
	l.cpu[name][s.Pid] = s.CPUPercent / 100
}

// Ended says how the run ended and where its report is ("" when it has none).
func (l *Live) Ended(status core.RunStatus, reportPath string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state, l.report = string(status), l.red.String(reportPath)
	l.touch()
}

// cores is a process's latest CPU use in cores (lock held): the plugin's
// processes summed.
func (l *Live) cores(name string) (float64, bool) {
	var sum float64
	for _, c := range l.cpu[name] {
		sum += c
	}
	return sum, len(l.cpu[name]) > 0
}
