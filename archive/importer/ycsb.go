package importer

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// ycsbOps are the YCSB operations cmpbench has op kinds for.
var ycsbOps = map[string]core.OpKind{"READ": core.OpRead, "UPDATE": core.OpUpdate, "INSERT": core.OpInsert, "SCAN": core.OpScan}

// YCSB reads YCSB's text output at path, and with o.HDRPrefix its HdrHistogram
// logs. Every error it returns is the input's, naming the file and, where it
// applies, the line.
func YCSB(path string, o Options) (*Run, error) {
	l, err := parseYCSB(path)
	if err != nil {
		return nil, err
	}
	r, err := newRun(ToolYCSB, path, o)
	if err != nil {
		return nil, err
	}
	r.Info.Version = l.version
	r.secrets = ycsbSecrets(l.props)
	r.System.Endpoint = ycsbEndpoint(l.props)
	y := &ycsbImport{r: r, l: l, path: path, prefix: o.HDRPrefix}
	p, err := y.phase(o.Phase)
	if err != nil {
		return nil, err
	}
	r.Phases = []Phase{p}
	r.Started, r.Ended = p.Info.Started, p.Info.Ended
	y.caveats()
	return r, nil
}

// ycsbImport is one import of YCSB output, as it goes.
type ycsbImport struct {
	r      *Run
	l      *ycsbLog
	path   string
	prefix string
	// names are the imported ops' measurement names, in OpKind order.
	names    []string
	skipped  []string
	mixed    []string // ops whose latencies include failures (older YCSB)
	failOnly []string // ops that only failed
	noPct    map[string][]string
	interval string // where the intervals come from, or why there are none
	// intendedOnly: measurement.interval=intended, so the op's own measurements are
	// from the intended start (response time), and no service time was recorded.
	intendedOnly bool
}

// phase builds the output's phase: its manifest entry, its totals and its
// intervals.
func (y *ycsbImport) phase(name string) (Phase, error) {
	info := y.phaseInfo(name)
	y.sortOps()
	y.intendedOnly = y.l.props["measurement.interval"] == "intended"
	open := info.Rate > 0
	hists := map[string]*hdrLog{}
	totals, err := y.totals(hists, open)
	if err != nil {
		return Phase{}, err
	}
	y.r.Info.ResponseTime = y.responseTime(totals, open)
	intervals, err := y.intervals(hists, totals, open, &info)
	if err != nil {
		return Phase{}, err
	}
	if !info.Started.IsZero() {
		info.Ended = info.Started.Add(time.Duration(info.ElapsedNs))
	}
	ph := Phase{Info: info, Intervals: intervals, Totals: totals}
	ph.wholeRun()
	return ph, nil
}

// phaseInfo is the phase's manifest entry as the command line and the summary
// describe it: its name, load, planned length and count, and interval.
func (y *ycsbImport) phaseInfo(name string) archive.PhaseInfo {
	l, p := y.l, y.l.props
	load := p["dotransactions"] == "false"
	info := archive.PhaseInfo{System: y.r.System.Name, Name: name, Kind: core.PhaseMeasured, Status: core.StatusOK,
		ElapsedNs: int64(l.runtime * 1e6), Workload: ycsbWorkload(p, l)}
	if info.Name == "" {
		info.Name = "ycsb-run"
		if load {
			info.Name = "ycsb-load"
		}
	}
	info.Connections = 1 // YCSB's default threadcount
	if v, ok := p["threadcount"]; ok {
		info.Connections, _ = strconv.Atoi(v)
	} else if l.cmdline == nil {
		info.Connections = 0
	}
	info.Rate, _ = strconv.ParseFloat(p["target"], 64)
	info.Shape = shape(info.Connections, info.Rate)
	info.DurationNs = info.ElapsedNs
	if v, err := strconv.ParseInt(p["maxexecutiontime"], 10, 64); err == nil {
		info.DurationNs = v * int64(time.Second)
	}
	count := "operationcount"
	if load {
		count = "insertcount"
		if _, ok := p[count]; !ok {
			count = "recordcount"
		}
	}
	info.Ops, _ = strconv.ParseInt(p[count], 10, 64)
	interval := 10
	if v, err := strconv.Atoi(p["status.interval"]); err == nil && v > 0 {
		interval = v
	}
	info.IntervalNs = int64(interval) * int64(time.Second)
	return info
}

// sortOps sorts the measurements into the ops imported, in OpKind order, and the
// ops skipped for want of an op kind.
func (y *ycsbImport) sortOps() {
	y.noPct = map[string][]string{}
	for name, me := range y.l.measures {
		if _, ok := ycsbOps[name]; ok && me.haveOps {
			y.names = append(y.names, name)
		} else if me.haveOps && me.ops > 0 && name != "CLEANUP" && !strings.HasPrefix(name, "Intended-") && !y.failure(name) {
			y.skipped = append(y.skipped, fmt.Sprintf("%s (%s)", name, strconv.FormatFloat(me.ops, 'f', -1, 64)))
		}
	}
	sort.Slice(y.names, func(a, b int) bool { return ycsbOps[y.names[a]] < ycsbOps[y.names[b]] })
	sort.Strings(y.skipped)
}

// totals are the imported ops' totals, in OpKind order; hists gets the
// HdrHistogram logs read.
func (y *ycsbImport) totals(hists map[string]*hdrLog, open bool) ([]core.OpInterval, error) {
	var totals []core.OpInterval
	for _, n := range y.names {
		t, err := y.opTotal(n, hists, open)
		if err != nil {
			return nil, err
		}
		totals = append(totals, t)
	}
	return totals, nil
}

// opTotal is an op's totals: its outcomes and its service and response times.
func (y *ycsbImport) opTotal(n string, hists map[string]*hdrLog, open bool) (core.OpInterval, error) {
	me := y.l.measures[n]
	t := core.OpInterval{Op: ycsbOps[n]}
	ok, errs := y.outcomes(n)
	t.OK, t.Errors = ok, errs
	timed := int64(me.ops)
	switch {
	case ok == 0:
		y.failOnly = append(y.failOnly, fmt.Sprintf("%s (%d)", n, t.ErrorTotal()))
	case timed != ok && timed == ok+t.ErrorTotal():
		y.mixed = append(y.mixed, fmt.Sprintf("%s (%d of %d failed)", n, t.ErrorTotal(), timed))
	case timed != ok:
		return t, fmt.Errorf("%s:%d: [%s]: %d Operations but %d Return=OK: not one run's output?", y.path, me.firstRow, n, timed, ok)
	}
	svc, err := y.successLatency(n, hists, timed, ok)
	if err != nil {
		return t, err
	}
	resp := core.Latency{}
	if _, has := y.l.measures["Intended-"+n]; has {
		if resp, err = y.successLatency("Intended-"+n, hists, timed, ok); err != nil {
			return t, err
		}
	} else if y.intendedOnly {
		resp, svc = svc, core.Latency{} // YCSB recorded intended latencies under the op's name
	}
	t.Service, t.Response = svc, resp
	fillClosedLoop(&t, open)
	return t, nil
}

// successLatency is a measurement's distribution as one of the successes: without
// its histogram when it timed failures too (timed operations, ok successes), empty
// when there was no success.
func (y *ycsbImport) successLatency(name string, hists map[string]*hdrLog, timed, ok int64) (core.Latency, error) {
	lat, err := y.latency(name, hists)
	if err != nil {
		return lat, err
	}
	if timed != ok {
		lat.HDR = nil // its histogram is not of the successes alone
	}
	if ok == 0 {
		lat = core.Latency{}
	}
	return lat, nil
}

// responseTime says what the phase's response-time columns hold.
func (y *ycsbImport) responseTime(totals []core.OpInterval, open bool) string {
	switch {
	case y.l.cmdline == nil:
		return "taken as equal to service time: the output has no command line, so the phase is taken as closed loop"
	case y.intendedOnly && open:
		return "from YCSB's intended start times (measurement.interval=intended); service time was not recorded"
	case len(totals) > 0 && open && totals[0].Response.Count > 0:
		return responseIntended
	case open:
		return responseUnknown
	}
	return responseClosed
}

// intervals are the phase's intervals, from the HdrHistogram logs or the status
// lines, and its start when they tell it; nil, with the reason in y.interval, when
// there are none.
func (y *ycsbImport) intervals(hists map[string]*hdrLog, totals []core.OpInterval, open bool, info *archive.PhaseInfo) ([]core.IntervalReport, error) {
	var intervals []core.IntervalReport
	var err error
	switch {
	case y.prefix != "":
		intervals, info.Started, err = y.hdrIntervals(hists, totals, open, info)
	case len(y.l.status) > 1:
		intervals, err = y.statusIntervals(totals, open, info)
	default:
		y.interval = "YCSB printed no status lines (-s writes them to stderr), so intervals.parquet holds the whole run as one interval"
		if len(y.l.status) == 1 {
			info.Started = y.l.status[0].at
		}
	}
	return intervals, err
}

// failure reports whether a measurement is of an op's failures: OP-FAILED, or
// OP-<STATUS> with reportlatencyforeacherror or latencytrackederrors.
func (y *ycsbImport) failure(name string) bool {
	_, _, ok := failureOf(name)
	return ok
}

// outcomes are an op's successes and errors by class: from its Return= lines, else
// from its Operations and its failure measurements.
func (y *ycsbImport) outcomes(name string) (ok int64, errs [core.NumErrorClasses]int64) {
	me := y.l.measures[name]
	if len(me.returns) > 0 {
		for s, n := range me.returns {
			if okStatus(s) {
				ok += n
			} else {
				errs[ycsbErrorClass(s)] += n
			}
		}
		return ok, errs
	}
	for other, m := range y.l.measures {
		if op, status, found := failureOf(other); found && op == name && m.haveOps {
			errs[ycsbErrorClass(status)] += int64(m.ops)
		}
	}
	return int64(me.ops), errs
}

// latency is a measurement's distribution: its HdrHistogram log with --hdr-prefix,
// else the percentiles of its summary lines.
func (y *ycsbImport) latency(name string, hists map[string]*hdrLog) (core.Latency, error) {
	if y.prefix != "" && y.l.measures[name].ops > 0 {
		return y.hdrLatency(name, hists)
	}
	return y.summaryLatency(name), nil
}

// hdrLatency is a measurement's distribution from its HdrHistogram log, checked
// against its Operations; hists gets the log, in nanoseconds.
func (y *ycsbImport) hdrLatency(name string, hists map[string]*hdrLog) (core.Latency, error) {
	ops := int64(y.l.measures[name].ops)
	file := y.prefix + name + ".hdr"
	l, err := readPrefixedHdrLog(file, fmt.Sprintf("YCSB writes one for every measurement with hdrhistogram.fileoutput=true, and %s has %d [%s] Operations", y.path, ops, name))
	if err != nil {
		return core.Latency{}, err
	}
	total := core.NewHistogram()
	for i, iv := range l.Intervals {
		h, err := y.r.nanos(iv.Hist, file)
		if err != nil {
			return core.Latency{}, err
		}
		l.Intervals[i].Hist = h
		total.Merge(h)
	}
	if err := y.r.addCountedFile(file, total.TotalCount(), ops, fmt.Sprintf("%s's [%s] Operations is", y.path, name)); err != nil {
		return core.Latency{}, err
	}
	hists[name] = l
	return core.Summarize(total)
}

// summaryLatency is a measurement's distribution from the percentiles of its
// summary lines; y.noPct gets the percentiles it lacks.
func (y *ycsbImport) summaryLatency(name string) core.Latency {
	me := y.l.measures[name]
	lat := core.Latency{Count: int64(me.ops), Max: usToNs(me.max)}
	var missing, extra []string
	for _, q := range []float64{50, 90, 99, 99.9, 99.99} {
		if v, ok := me.pct[q]; ok {
			*percentileField(&lat, q) = usToNs(v)
		} else {
			missing = append(missing, "p"+strconv.FormatFloat(q, 'f', -1, 64))
		}
	}
	for _, q := range slices.Sorted(maps.Keys(me.pct)) {
		if percentileField(&core.Latency{}, q) == nil {
			extra = append(extra, "p"+strconv.FormatFloat(q, 'f', -1, 64))
		}
	}
	if len(missing) > 0 && me.ops > 0 {
		key := strings.Join(missing, ", ")
		if len(extra) > 0 {
			key += "; its " + strings.Join(extra, ", ") + " has no column here"
		}
		y.noPct[key] = append(y.noPct[key], name)
	}
	return lat
}

func usToNs(us float64) int64 { return int64(us*1000 + 0.5) }

// caveats says what the YCSB output lacks.
func (y *ycsbImport) caveats() {
	r, l := y.r, y.l
	r.commonCaveats(ToolYCSB)
	switch {
	case l.cmdline == nil:
		r.caveat("The output has no YCSB command line: its thread count (connections, shown as 0) and any -target are unknown. The phase is taken as closed loop, where YCSB's latencies (service time, from each operation's start to its end) are also the response time; had YCSB run at a -target, its response time would be unknown (coordinated omission).")
	case r.Info.ResponseTime == responseClosed:
		r.caveat("YCSB ran closed loop (no -target): its latencies, from each operation's start to its end, are service time, which in a closed loop is also the response time (as in cmpbench's own closed-loop phases).")
	case r.Info.ResponseTime == responseUnknown:
		r.caveat("Response time is unknown: YCSB ran at -target %s ops/s but timed each operation from its actual start (measurement.interval=op), so an operation the schedule held back shows no delay (coordinated omission). The response-time columns are empty; the service-time columns hold YCSB's latencies.", l.props["target"])
	default:
		r.caveat("Response time is YCSB's: %s.", r.Info.ResponseTime)
	}
	if y.prefix != "" {
		r.caveat("Percentiles come from YCSB's HdrHistogram logs (3 significant digits of microseconds), each bucket re-recorded in cmpbench's nanosecond histogram at its upper bound.")
	} else {
		r.caveat("YCSB's output has no histograms: each summary holds the percentiles YCSB printed (microseconds) and its maximum, and the archive no HdrHistogram; give --hdr-prefix with YCSB's hdrhistogram.fileoutput logs for exact ones.")
		if fo := l.props["hdrhistogram.fileoutput"]; fo == "true" {
			r.caveat("YCSB wrote HdrHistogram logs (hdrhistogram.fileoutput=true, output path %q) that were not given with --hdr-prefix.", l.props["hdrhistogram.output.path"])
		}
	}
	for _, missing := range slices.Sorted(maps.Keys(y.noPct)) {
		names := y.noPct[missing]
		sort.Strings(names)
		r.caveat("YCSB's summary of %s gives no %s: those show as —.", strings.Join(names, ", "), missing)
	}
	if y.interval != "" {
		r.caveat("%s.", strings.TrimSuffix(y.interval, "."))
	}
	if len(l.status) > 0 && y.prefix == "" {
		r.caveat("YCSB's status lines give local time without a zone: times are shown as if UTC.")
	}
	if l.props["dotransactions"] == "false" {
		r.caveat("YCSB loaded the records (-load): the load is imported as a measured phase, so that its numbers are in the tables and compare; cmpbench's own loads are checked against the server's key count instead, which an import cannot do.")
	}
	for _, n := range y.names {
		if l.measures[n].buckets {
			r.caveat("YCSB's measurementtype=histogram buckets (\"[%s], 0, ...\", 1 ms wide) are not imported: their percentiles are YCSB's own, converted from ms.", n)
			break
		}
	}
	if len(y.mixed) > 0 {
		r.caveat("This YCSB counted failed operations among an op's Operations and timed them with the successful ones: the percentiles of %s include failures, and their histograms are left out.", strings.Join(y.mixed, ", "))
	}
	if len(y.failOnly) > 0 {
		r.caveat("%s only failed: YCSB's latencies of failed operations are not imported (cmpbench times successes only).", strings.Join(y.failOnly, ", "))
	}
	var errs int64
	for _, t := range r.Phases[0].Totals {
		errs += t.ErrorTotal()
	}
	if errs > 0 {
		r.caveat("YCSB's [OVERALL] throughput (%.2f ops/s) counts failed operations; cmpbench's throughput counts successes only.", l.throughput)
	}
	if len(y.skipped) > 0 {
		line := fmt.Sprintf("Operations cmpbench has no op kind for are not imported: %s.", strings.Join(y.skipped, ", "))
		if l.measures["READ-MODIFY-WRITE"] != nil {
			line += " A READ-MODIFY-WRITE's read and update are counted in READ and UPDATE too, as YCSB records them, so the total throughput here is not YCSB's [OVERALL] throughput."
		}
		r.caveat("%s", line)
	}
}
