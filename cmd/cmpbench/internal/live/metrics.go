package live

import (
	"slices"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cmpbench/cmpbench/core"
)

// Buckets are the latency histograms' upper bounds, in seconds: 5 µs to 60 s,
// each 1.26 times the one before (72 buckets). A quantile Prometheus reads of
// them is within one bucket of the archive's, which the HdrHistogram holds to
// three digits.
var Buckets = prometheus.ExponentialBucketsRange(5e-6, 60, 72)

// The metrics' descriptions. Labels stay bounded: the run's systems, phases
// and op kinds, outcomes and error classes, phase and run states; never a key,
// a connection or a run id but in cmpbench_run_info.
var (
	opsDesc = prometheus.NewDesc("cmpbench_operations_total",
		"Operations by outcome (ok, miss, or the error class), per system, phase and op; repetitions of a phase add up.",
		[]string{"system", "phase", "op", "outcome"}, nil)
	latencyDescs = [numKinds]*prometheus.Desc{
		prometheus.NewDesc("cmpbench_response_seconds", "Response time of successful operations, from the intended send (a closed loop's equals its service time).", []string{"system", "phase", "op"}, nil),
		prometheus.NewDesc("cmpbench_service_seconds", "Service time of successful operations, from the actual send.", []string{"system", "phase", "op"}, nil),
		prometheus.NewDesc("cmpbench_send_lag_seconds", "The client's own delay before each send, of a fixed-rate phase's successful operations.", []string{"system", "phase", "op"}, nil),
	}
	achievedDesc = prometheus.NewDesc("cmpbench_achieved_rate", "Successful operations per second: the last interval's while the phase runs, the phase's once it ended.", []string{"system", "phase"}, nil)
	targetDesc   = prometheus.NewDesc("cmpbench_target_rate", "A fixed-rate phase's target, operations per second.", []string{"system", "phase"}, nil)
	connsDesc    = prometheus.NewDesc("cmpbench_connections_open", "Connections the client held open at the end of the phase's latest interval (its side probe's and subscribers' among them), as its engine counted them when they opened and were lost; 0 once the phase ended. Absent before the phase's first interval, and for a plugin built before capability engine.conns, which does not count them.", []string{"system", "phase"}, nil)
	openedDesc   = prometheus.NewDesc("cmpbench_connections_opened_total", "Connections the client opened for the phase: before its clock, and again after a loss; repetitions add up. Absent where cmpbench_connections_open is.", []string{"system", "phase"}, nil)
	lostDesc     = prometheus.NewDesc("cmpbench_connections_lost_total", "Connections the client lost during the phase (failed, closed by the server, or dropped after a timeout, an unreadable reply or a cluster change); the engine reopens one for its next request, never a broken subscriber; repetitions add up. Absent where cmpbench_connections_open is.", []string{"system", "phase"}, nil)
	cpuDesc      = prometheus.NewDesc("cmpbench_client_cpu_cores", "CPU the client's processes used over the last interval, in cores: cmpbench itself and its plugin processes together.", []string{"process"}, nil)
	indexDesc    = prometheus.NewDesc("cmpbench_phase_index", "The place in the run (1-based) of the phase under way, or of the last one that started.", nil, nil)
	phasesDesc   = prometheus.NewDesc("cmpbench_phases", "The phases of the run, every system's and repetition's.", nil, nil)
	pStateDesc   = prometheus.NewDesc("cmpbench_phase_state", "1 for the state each phase is in (its latest repetition's), 0 for the others.", []string{"system", "phase", "state"}, nil)
	rStateDesc   = prometheus.NewDesc("cmpbench_run_state", "1 for the state the run is in, 0 for the others.", []string{"state"}, nil)
	infoDesc     = prometheus.NewDesc("cmpbench_run_info", "The run: its id and suite.", []string{"run_id", "suite"}, nil)
)

var (
	phaseStates = []string{statePending, stateRunning, string(core.StatusOK), string(core.StatusFailed), string(core.StatusInterrupted), string(core.StatusSkipped)}
	runStates   = []string{stateRunning, string(core.RunComplete), string(core.RunFailed), string(core.RunInterrupted)}
)

// stampedFor is how long after its end a phase's counters and histograms keep
// the time its last interval ended: its last values land where they were
// measured, and then, before Prometheus would refuse a sample that old, they
// carry the scrape's time.
const stampedFor = 10 * time.Minute

// collector is the run's metrics, read from its state at each scrape.
type collector struct{ l *Live }

// Describe says nothing: the metrics' labels are the run's, known as it goes
// (an unchecked collector).
func (collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the run's state. A phase under way (and for stampedFor after
// it) carries the time its latest interval ended, so that rates over its
// samples are the client's own, interval by interval, whenever they are
// scraped.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, p := range l.sortedPools() {
		stamped := !p.at.IsZero() && (p.running || now.Sub(p.endedAt) < stampedFor)
		emit := func(m prometheus.Metric) {
			if stamped {
				m = prometheus.NewMetricWithTimestamp(p.at, m)
			}
			ch <- m
		}
		for _, op := range p.ops {
			if op != nil {
				p.collectOp(op, emit)
			}
		}
		ch <- prometheus.MustNewConstMetric(achievedDesc, prometheus.GaugeValue, p.achieved, p.system, p.phase)
		if p.target > 0 {
			ch <- prometheus.MustNewConstMetric(targetDesc, prometheus.GaugeValue, p.target, p.system, p.phase)
		}
		if p.known {
			ch <- prometheus.MustNewConstMetric(connsDesc, prometheus.GaugeValue, float64(p.open), p.system, p.phase)
		}
		if p.counted {
			emit(prometheus.MustNewConstMetric(openedDesc, prometheus.CounterValue, float64(p.opened), p.system, p.phase))
			emit(prometheus.MustNewConstMetric(lostDesc, prometheus.CounterValue, float64(p.lost), p.system, p.phase))
		}
	}
	l.collectRun(ch)
}

// collectOp is one op's counters and latency histograms.
func (p *pool) collectOp(op *opPool, emit func(prometheus.Metric)) {
	name := op.counts.Op.String()
	counter := func(outcome string, n int64) {
		emit(prometheus.MustNewConstMetric(opsDesc, prometheus.CounterValue, float64(n), p.system, p.phase, name, outcome))
	}
	counter("ok", op.counts.OK-op.counts.Misses)
	if op.counts.Op.CanMiss() {
		counter("miss", op.counts.Misses)
	}
	for class, n := range op.counts.Errors {
		if n > 0 { // an error class appears once it happened: most never do
			counter(core.ErrorClass(class).String(), n)
		}
	}
	for k, h := range op.hists {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		count, sum, buckets := promBuckets(h)
		emit(prometheus.MustNewConstHistogram(latencyDescs[k], count, sum, buckets, p.system, p.phase, name))
	}
}

// promBuckets reads a latency histogram (ns) as Prometheus's: its count, its
// sum in seconds, and the cumulative count at each of Buckets.
func promBuckets(h *hdrhistogram.PackedHistogram) (uint64, float64, map[float64]uint64) {
	counts := make([]uint64, len(Buckets))
	var sum float64
	for value, n := range h.ForEachBucket {
		s := float64(value) / 1e9
		sum += s * float64(n)
		if i := sort.SearchFloat64s(Buckets, s); i < len(Buckets) {
			counts[i] += uint64(n)
		}
	}
	out := make(map[float64]uint64, len(Buckets))
	var cum uint64
	for i, b := range Buckets {
		cum += counts[i]
		out[b] = cum
	}
	return uint64(h.TotalCount()), sum, out
}

// collectRun is the run's place and state (lock held).
func (l *Live) collectRun(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, name := range []string{"cmpbench", "plugin"} {
		if c, ok := l.cores(name); ok {
			gauge(cpuDesc, c, name)
		}
	}
	index := 0
	if l.cur != nil {
		index = l.cur.pos + 1
	}
	gauge(indexDesc, float64(index))
	gauge(phasesDesc, float64(len(l.steps)))
	latest := map[poolKey]*stepState{}
	var order []poolKey
	for _, s := range l.steps {
		k := poolKey{s.step.System, s.step.Index}
		if prev, ok := latest[k]; !ok {
			order = append(order, k)
			latest[k] = s
		} else if s.state != statePending || prev.state == statePending && s.step.Repetition < prev.step.Repetition {
			latest[k] = s
		}
	}
	for _, k := range order {
		s := latest[k]
		for _, state := range phaseStates {
			gauge(pStateDesc, b2f(s.state == state), l.red.String(s.step.System), s.label, state)
		}
	}
	for _, state := range runStates {
		gauge(rStateDesc, b2f(l.state == state), state)
	}
	gauge(infoDesc, 1, l.o.RunID, l.o.Suite)
}

// sortedPools are the pools in the order of the run's systems and phases.
func (l *Live) sortedPools() []*pool {
	keys := make([]poolKey, 0, len(l.pools))
	for k := range l.pools {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b poolKey) int {
		if a.index != b.index {
			return a.index - b.index
		}
		return strings.Compare(a.system, b.system)
	})
	out := make([]*pool, len(keys))
	for i, k := range keys {
		out[i] = l.pools[k]
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
