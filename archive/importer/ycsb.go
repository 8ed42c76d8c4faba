package importer

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
)

// YCSB's text output, as site.ycsb.Client, StatusThread, the measurements and
// TextMeasurementsExporter write it:
//
//	Command line: -db site.ycsb.db.RedisClient -s -P workloads/workloada -p redis.host=... -load
//	YCSB Client 0.17.0
//	2022-09-03 17:07:47:680 0 sec: 0 operations; est completion in 0 second      status lines (-s, stderr):
//	2022-09-03 17:07:47:879 0 sec: 1000 operations; 4255.32 current ops/sec; [READ: Count=479, Max=13207,
//	    Min=83, Avg=146.54, 90=153, 99=298, 99.9=13207, 99.99=13207] [UPDATE: ...]  each interval's counts
//	[OVERALL], RunTime(ms), 235
//	[OVERALL], Throughput(ops/sec), 4255.31914893617
//	[READ], Operations, 479                          successful READs only (failed ones are READ-FAILED)
//	[READ], AverageLatency(us), 146.53653444676408
//	[READ], MinLatency(us), 83  /  MaxLatency(us)  /  95thPercentileLatency(us)  /  99thPercentileLatency(us)
//	[READ], Return=OK, 479                           every outcome, failures too
//	[READ-FAILED], Operations, 5                     ...with their own latencies
//	[Intended-READ], Operations, 479                 with measurement.interval=both: from the intended start
//
// Latencies are microseconds in HdrHistograms of 3 significant digits. Older
// versions wrote numbers as doubles ("1.0E7"), return codes as integers
// ("Return=0") and counted failures among an op's Operations; measurementtype=
// histogram adds bucket lines ("[READ], 0, 1234") and gives percentiles in ms.
// hdrhistogram.fileoutput=true writes each measurement's interval histograms to
// <hdrhistogram.output.path><NAME>.hdr, one interval per status line and one more
// at the end.

// ycsbOps are the YCSB operations cmpbench has op kinds for.
var ycsbOps = map[string]core.OpKind{"READ": core.OpRead, "UPDATE": core.OpUpdate, "INSERT": core.OpInsert, "SCAN": core.OpScan}

// ycsbMeasure is one measurement's summary lines.
type ycsbMeasure struct {
	ops      float64
	haveOps  bool
	max      float64
	pct      map[float64]float64 // µs
	returns  map[string]int64
	buckets  bool
	firstRow int
}

// ycsbStatus is one status line.
type ycsbStatus struct {
	at    time.Time
	ops   map[string]map[string]float64 // measurement -> Count, Max, 50, 90, ...
	lined int
}

type ycsbLog struct {
	version    string
	cmdline    []string
	props      map[string]string
	runtime    float64 // ms
	haveRun    bool
	throughput float64
	measures   map[string]*ycsbMeasure
	status     []ycsbStatus
	countless  bool // status lines without per-op counts (measurementtype=histogram)
}

var (
	ycsbRow    = regexp.MustCompile(`^\[([^\]]+)\], ([^,]+), (.+)$`)
	ycsbStatLn = regexp.MustCompile(`(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}:\d{3}) (\d+) sec: (\d+) operations;(.*)$`)
	ycsbPart   = regexp.MustCompile(`\[([A-Za-z][A-Za-z0-9_-]*)(: | )([^\]]*)\]`)
	ycsbPctKey = regexp.MustCompile(`^(\d+(?:\.\d+)?)(?:st|nd|rd|th)?PercentileLatency\((us|ms)\)$`)
)

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

func parseYCSB(path string) (*ycsbLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l := &ycsbLog{props: map[string]string{}, measures: map[string]*ycsbMeasure{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", path, n, fmt.Sprintf(format, args...))
		}
		switch {
		case strings.HasPrefix(line, "YCSB Client "):
			l.version = strings.TrimSpace(strings.TrimPrefix(line, "YCSB Client "))
			continue
		case strings.HasPrefix(line, "Command line:"):
			l.cmdline = strings.Fields(strings.TrimPrefix(line, "Command line:"))
			l.props = ycsbProps(l.cmdline)
			continue
		}
		if m := ycsbStatLn.FindStringSubmatch(line); m != nil {
			at, err := time.Parse("2006-01-02 15:04:05.000", m[1][:19]+"."+m[1][20:])
			if err != nil {
				return nil, bad("status line time %q: %v", m[1], err)
			}
			st := ycsbStatus{at: at, ops: map[string]map[string]float64{}, lined: n}
			for _, part := range ycsbPart.FindAllStringSubmatch(m[4], -1) {
				if part[2] != ": " {
					l.countless = true // "[READ AverageLatency(us)=782.17]"
					continue
				}
				vals := map[string]float64{}
				for _, kv := range strings.Split(part[3], ", ") {
					k, v, ok := strings.Cut(kv, "=")
					if !ok {
						return nil, bad("status line: %q in [%s: ...] is not key=value", kv, part[1])
					}
					// DecimalFormat writes the locale's decimal separator.
					x, err := strconv.ParseFloat(strings.Replace(v, ",", ".", 1), 64)
					if err != nil {
						return nil, bad("status line: [%s: %s=%s]: not a number", part[1], k, v)
					}
					vals[k] = x
				}
				if _, ok := vals["Count"]; !ok {
					l.countless = true
					continue
				}
				st.ops[part[1]] = vals
			}
			l.status = append(l.status, st)
			continue
		}
		m := ycsbRow.FindStringSubmatch(line)
		if m == nil {
			continue // the JVM's and the binding's own output
		}
		name, metric, value := m[1], strings.TrimSpace(m[2]), strings.TrimSpace(m[3])
		if name == "OVERALL" {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return nil, bad("[OVERALL], %s: %q is not a number", metric, value)
			}
			switch metric {
			case "RunTime(ms)":
				l.runtime, l.haveRun = v, true
			case "Throughput(ops/sec)":
				l.throughput = v
			}
			continue
		}
		if strings.HasPrefix(name, "TOTAL_GC") || strings.HasSuffix(name, "_MEM_USED") || strings.HasSuffix(name, "_THREADS") || strings.HasSuffix(name, "_LOAD_AVG") {
			continue
		}
		me := l.measures[name]
		if me == nil {
			me = &ycsbMeasure{pct: map[float64]float64{}, returns: map[string]int64{}, firstRow: n}
			l.measures[name] = me
		}
		if status, ok := strings.CutPrefix(metric, "Return="); ok {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil || v < 0 {
				return nil, bad("[%s], %s: %q is not a count", name, metric, value)
			}
			me.returns[status] += int64(v)
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, bad("[%s], %s: %q is not a number", name, metric, value)
		}
		switch pm := ycsbPctKey.FindStringSubmatch(metric); {
		case metric == "Operations":
			if v < 0 {
				return nil, bad("[%s], Operations: %q is not a count", name, value)
			}
			me.ops, me.haveOps = v, true
		case metric == "MaxLatency(us)":
			me.max = v
		case pm != nil:
			q, _ := strconv.ParseFloat(pm[1], 64)
			if pm[2] == "ms" {
				v *= 1000
			}
			me.pct[q] = v
		case metric[0] >= '0' && metric[0] <= '9' || metric[0] == '>':
			me.buckets = true // measurementtype=histogram's buckets
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !l.haveRun {
		return nil, fmt.Errorf("%s: no [OVERALL], RunTime(ms) line: not YCSB output, or cut short before YCSB printed its results", path)
	}
	counted := false
	for name, me := range l.measures {
		if !me.haveOps && len(me.returns) > 0 {
			return nil, fmt.Errorf("%s:%d: [%s] has Return= lines but no Operations line: the output is cut", path, me.firstRow, name)
		}
		counted = counted || me.haveOps
	}
	if !counted {
		return nil, fmt.Errorf("%s: no [<OP>], Operations lines after [OVERALL]: the output is cut short, or YCSB ran no operation", path)
	}
	return l, nil
}

// ycsbProps reads the -p properties and the flags of YCSB's command line.
func ycsbProps(args []string) map[string]string {
	p := map[string]string{}
	for i := 0; i < len(args); i++ {
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch args[i] {
		case "-p":
			if k, v, ok := strings.Cut(next(), "="); ok {
				p[k] = v
			}
		case "-threads":
			p["threadcount"] = next()
		case "-target":
			p["target"] = next()
		case "-db":
			p["db"] = next()
		case "-P":
			p["workloadfiles"] = strings.TrimSpace(p["workloadfiles"] + " " + next())
		case "-load":
			p["dotransactions"] = "false"
		case "-t":
			p["dotransactions"] = "true"
		case "-l":
			p["label"] = next()
		}
	}
	return p
}

// ycsbSecrets are the command line's values that must reach no file.
func ycsbSecrets(p map[string]string) []string {
	secret := regexp.MustCompile(`(?i)pass|secret|token|auth|credential`)
	var out []string
	for k, v := range p {
		if v == "" {
			continue
		}
		if secret.MatchString(k) {
			out = append(out, v)
		}
		if u, err := url.Parse(v); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && pw != "" {
				out = append(out, pw)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ycsbEndpoint is the host (and port) the command line names, if it does.
func ycsbEndpoint(p map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !strings.HasSuffix(k, ".host") && !strings.HasSuffix(k, ".hosts") {
			continue
		}
		host := p[k]
		if port := p[strings.TrimSuffix(strings.TrimSuffix(k, "s"), ".host")+".port"]; port != "" && !strings.Contains(host, ":") {
			host += ":" + port
		}
		return host
	}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if strings.HasSuffix(k, ".url") {
			if u, err := url.Parse(p[k]); err == nil && u.Host != "" {
				return u.Host
			}
		}
	}
	return ""
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
}

func (y *ycsbImport) phase(name string) (Phase, error) {
	l, p := y.l, y.l.props
	load := p["dotransactions"] == "false"
	info := archive.PhaseInfo{System: y.r.System.Name, Name: name, Kind: core.PhaseMeasured, Status: core.StatusOK,
		ElapsedNs: int64(l.runtime * 1e6), Workload: ycsbWorkload(p, l)}
	if load {
		info.Kind = core.PhaseLoad
	}
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

	y.noPct = map[string][]string{}
	for name, me := range l.measures {
		if _, ok := ycsbOps[name]; ok && me.haveOps {
			y.names = append(y.names, name)
		} else if me.haveOps && me.ops > 0 && name != "CLEANUP" && !strings.HasPrefix(name, "Intended-") && !y.failure(name) {
			y.skipped = append(y.skipped, fmt.Sprintf("%s (%s)", name, strconv.FormatFloat(me.ops, 'f', -1, 64)))
		}
	}
	sort.Slice(y.names, func(a, b int) bool { return ycsbOps[y.names[a]] < ycsbOps[y.names[b]] })
	sort.Strings(y.skipped)

	intended := p["measurement.interval"]
	open := info.Rate > 0
	var totals []core.OpInterval
	hists := map[string]*hdrLog{}
	for _, n := range y.names {
		me := l.measures[n]
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
			return Phase{}, fmt.Errorf("%s:%d: [%s]: %d Operations but %d Return=OK: not one run's output?", y.path, me.firstRow, n, timed, ok)
		}
		svc, err := y.latency(n, hists)
		if err != nil {
			return Phase{}, err
		}
		if timed != ok {
			svc.HDR = nil // its histogram is not of the successes alone
		}
		if ok == 0 {
			svc = core.Latency{}
		}
		resp := core.Latency{}
		if _, has := l.measures["Intended-"+n]; has {
			if resp, err = y.latency("Intended-"+n, hists); err != nil {
				return Phase{}, err
			}
			if timed != ok {
				resp.HDR = nil
			}
			if ok == 0 {
				resp = core.Latency{}
			}
		} else if intended == "intended" {
			resp, svc = svc, core.Latency{} // YCSB recorded intended latencies under the op's name
		}
		switch {
		case !open && resp.Count == 0:
			resp = svc
		case !open && svc.Count == 0:
			svc = resp
		}
		t.Service, t.Response = svc, resp
		totals = append(totals, t)
	}
	switch {
	case l.cmdline == nil:
		y.r.Info.ResponseTime = "taken as equal to service time: the output has no command line, so the phase is taken as closed loop"
	case intended == "intended" && open:
		y.r.Info.ResponseTime = "from YCSB's intended start times (measurement.interval=intended); service time was not recorded"
	case len(totals) > 0 && open && totals[0].Response.Count > 0:
		y.r.Info.ResponseTime = responseIntended
	case open:
		y.r.Info.ResponseTime = responseUnknown
	default:
		y.r.Info.ResponseTime = responseClosed
	}
	var intervals []core.IntervalReport
	var err error
	switch {
	case y.prefix != "":
		intervals, info.Started, err = y.hdrIntervals(hists, totals, open, &info)
	case len(l.status) > 1:
		intervals, err = y.statusIntervals(totals, open, &info)
	default:
		y.interval = "YCSB printed no status lines (-s writes them to stderr), so intervals.parquet holds the whole run as one interval"
		if len(l.status) == 1 {
			info.Started = l.status[0].at
		}
	}
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

// failure reports whether a measurement is of an op's failures: OP-FAILED, or
// OP-<STATUS> with reportlatencyforeacherror or latencytrackederrors.
func (y *ycsbImport) failure(name string) bool {
	_, _, ok := failureOf(name)
	return ok
}

// ycsbStatuses are YCSB's return statuses (site.ycsb.Status) that are not
// successes.
var ycsbStatuses = map[string]bool{"ERROR": true, "NOT_FOUND": true, "NOT_IMPLEMENTED": true, "UNEXPECTED_STATE": true,
	"BAD_REQUEST": true, "FORBIDDEN": true, "SERVICE_UNAVAILABLE": true, "FAILED": true}

// failureOf splits a failure measurement's name, "READ-NOT_FOUND", into its op
// and status; READ-MODIFY-WRITE is no failure.
func failureOf(name string) (op, status string, ok bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || !ycsbStatuses[name[i+1:]] {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// ycsbErrorClass maps a YCSB status to cmpbench's error classes.
func ycsbErrorClass(status string) core.ErrorClass {
	switch status {
	case "NOT_FOUND":
		return core.ErrClassNotFound
	case "SERVICE_UNAVAILABLE":
		return core.ErrClassOverload
	}
	return core.ErrClassOther
}

// okStatus reports whether a YCSB return status is a success.
func okStatus(s string) bool { return s == "OK" || s == "BATCHED_OK" || s == "0" }

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
	me := y.l.measures[name]
	if y.prefix != "" && me.ops > 0 {
		file := y.prefix + name + ".hdr"
		l, err := readHdrLog(file)
		if errors.Is(err, os.ErrNotExist) {
			return core.Latency{}, fmt.Errorf("%s: no such file (--hdr-prefix): YCSB writes one for every measurement with hdrhistogram.fileoutput=true, and %s has %d [%s] Operations", file, y.path, int64(me.ops), name)
		}
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
		if total.TotalCount() != int64(me.ops) {
			return core.Latency{}, fmt.Errorf("%s holds %d operations, but %s's [%s] Operations is %d: not files of the same run?", file, total.TotalCount(), y.path, name, int64(me.ops))
		}
		if err := y.r.addFile(file); err != nil {
			return core.Latency{}, err
		}
		hists[name] = l
		return core.Summarize(total)
	}
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
	return lat, nil
}

func usToNs(us float64) int64 { return int64(us*1000 + 0.5) }

// errorsPerInterval spreads an op's failures of interval counts over error
// classes: possible when all its errors are of one class.
func oneClass(errs [core.NumErrorClasses]int64) (core.ErrorClass, bool) {
	var class core.ErrorClass
	n := 0
	for c, v := range errs {
		if v > 0 {
			class, n = core.ErrorClass(c), n+1
		}
	}
	return class, n <= 1
}

// statusIntervals lays out the status lines as intervals: nil, with the reason in
// y.interval, when their counts do not add up to the totals.
func (y *ycsbImport) statusIntervals(totals []core.OpInterval, open bool, info *archive.PhaseInfo) ([]core.IntervalReport, error) {
	st := y.l.status
	info.Started = st[0].at
	if y.l.countless {
		y.interval = "YCSB's status lines carry no per-operation counts (measurementtype other than hdrhistogram), so intervals.parquet holds the whole run as one interval"
		return nil, nil
	}
	var out []core.IntervalReport
	sums := map[string]*core.OpInterval{}
	for i := 1; i < len(st); i++ {
		iv := core.IntervalReport{Index: i - 1, Start: st[i-1].at.Sub(st[0].at), End: st[i].at.Sub(st[0].at)}
		for k, n := range y.names {
			vals := st[i].ops[n]
			o := core.OpInterval{Op: ycsbOps[n], OK: int64(vals["Count"])}
			for measure, m := range st[i].ops {
				op, rest, found := failureOf(measure)
				if !found || op != n {
					continue
				}
				class := ycsbErrorClass(rest)
				if rest == "FAILED" {
					c, ok := oneClass(totals[k].Errors)
					if !ok {
						y.interval = fmt.Sprintf("%s failed in more than one way and its status lines count failures together (%s-FAILED), so its intervals' errors cannot be told apart by class: intervals.parquet holds the whole run as one interval", n, n)
						return nil, nil
					}
					class = c
				}
				o.Errors[class] += int64(m["Count"])
			}
			if o.OK > 0 {
				o.Service = statusLatency(vals)
				if iv, ok := st[i].ops["Intended-"+n]; ok {
					o.Response = statusLatency(iv)
				}
			}
			switch {
			case !open && o.Response.Count == 0:
				o.Response = o.Service
			case !open && o.Service.Count == 0:
				o.Service = o.Response
			}
			if sums[n] == nil {
				sums[n] = &core.OpInterval{}
			}
			sums[n].AddCounts(&o)
			iv.Ops = append(iv.Ops, o)
		}
		out = append(out, iv)
	}
	for k, n := range y.names {
		if s := sums[n]; s.OK != totals[k].OK || s.Errors != totals[k].Errors {
			y.interval = fmt.Sprintf("YCSB's status lines count %d %s successes and %d failures, its totals %d and %d, so intervals.parquet holds the whole run as one interval", s.OK, n, s.ErrorTotal(), totals[k].OK, totals[k].ErrorTotal())
			return nil, nil
		}
	}
	y.interval = fmt.Sprintf("Intervals are YCSB's status lines (every %s): their percentiles are YCSB's, without histograms", time.Duration(info.IntervalNs))
	return out, nil
}

// statusLatency reads one [OP: Count=..., Max=..., 99=...] of a status line (µs).
func statusLatency(v map[string]float64) core.Latency {
	return core.Latency{Count: int64(v["Count"]), P50: usToNs(v["50"]), P90: usToNs(v["90"]), P99: usToNs(v["99"]),
		P999: usToNs(v["99.9"]), P9999: usToNs(v["99.99"]), Max: usToNs(v["Max"])}
}

// hdrIntervals lays out the HdrHistogram logs' intervals. YCSB logs every
// measurement's interval at each status line, one after the other, and once more
// at the end: histograms that end within tickGap of each other are one interval.
func (y *ycsbImport) hdrIntervals(hists map[string]*hdrLog, totals []core.OpInterval, open bool, info *archive.PhaseInfo) ([]core.IntervalReport, time.Time, error) {
	const tickGap = 250 * time.Millisecond
	var start time.Time
	var ends []time.Time
	for _, l := range hists {
		for _, iv := range l.Intervals {
			if start.IsZero() || iv.Start.Before(start) {
				start = iv.Start
			}
			ends = append(ends, iv.End)
		}
	}
	if len(ends) == 0 {
		y.interval = "no operation succeeded, so intervals.parquet holds the whole run as one interval"
		return nil, time.Time{}, nil
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	var ticks []time.Time // each interval's end: the last histogram end of its group
	for _, e := range ends {
		if len(ticks) > 0 && e.Sub(ticks[len(ticks)-1]) <= tickGap {
			ticks[len(ticks)-1] = e
			continue
		}
		ticks = append(ticks, e)
	}
	tick := func(e time.Time) int {
		return sort.Search(len(ticks), func(i int) bool { return !ticks[i].Before(e) })
	}
	out := make([]core.IntervalReport, len(ticks))
	for i := range ticks {
		from := start
		if i > 0 {
			from = ticks[i-1]
		}
		out[i] = core.IntervalReport{Index: i, Start: from.Sub(start), End: ticks[i].Sub(start)}
	}
	for k, n := range y.names {
		per := make([]core.OpInterval, len(ticks))
		for i := range per {
			per[i] = core.OpInterval{Op: ycsbOps[n]}
		}
		add := func(name string, into func(o *core.OpInterval, h *hdrhistogram.Histogram) error) error {
			l := hists[name]
			if l == nil {
				return nil
			}
			for _, iv := range l.Intervals {
				if err := into(&per[tick(iv.End)], iv.Hist); err != nil {
					return err
				}
			}
			return nil
		}
		err := add(n, func(o *core.OpInterval, h *hdrhistogram.Histogram) (err error) {
			o.OK += h.TotalCount()
			o.Service, err = mergeLatency(o.Service, h)
			return err
		})
		if err == nil {
			err = add("Intended-"+n, func(o *core.OpInterval, h *hdrhistogram.Histogram) (err error) {
				o.Response, err = mergeLatency(o.Response, h)
				return err
			})
		}
		if err != nil {
			return nil, time.Time{}, err
		}
		if errs := totals[k].ErrorTotal(); errs > 0 {
			c, ok := oneClass(totals[k].Errors)
			failed := hists[n+"-FAILED"]
			if failed == nil {
				if l, err := readHdrLog(y.prefix + n + "-FAILED.hdr"); err == nil {
					failed = l
					if err := y.r.addFile(y.prefix + n + "-FAILED.hdr"); err != nil {
						return nil, time.Time{}, err
					}
				}
			}
			if !ok || failed == nil {
				y.interval = fmt.Sprintf("%s's failures cannot be placed in intervals by class (no %s-FAILED.hdr, or failures of more than one kind), so intervals.parquet holds the whole run as one interval", n, n)
				return nil, start, nil
			}
			for _, iv := range failed.Intervals {
				per[tick(iv.End)].Errors[c] += iv.Hist.TotalCount()
			}
		}
		for i := range per {
			if !open {
				switch {
				case per[i].Response.Count == 0:
					per[i].Response = per[i].Service
				case per[i].Service.Count == 0:
					per[i].Service = per[i].Response
				}
			}
			out[i].Ops = append(out[i].Ops, per[i])
		}
	}
	var sum core.OpInterval
	for k := range y.names {
		sum = core.OpInterval{}
		for i := range out {
			sum.AddCounts(&out[i].Ops[k])
		}
		if sum.OK != totals[k].OK || sum.Errors != totals[k].Errors {
			y.interval = fmt.Sprintf("the HdrHistogram logs count %d %s successes and %d failures, the totals %d and %d, so intervals.parquet holds the whole run as one interval", sum.OK, y.names[k], sum.ErrorTotal(), totals[k].OK, totals[k].ErrorTotal())
			return nil, start, nil
		}
	}
	y.interval = "Intervals and histograms are YCSB's HdrHistogram logs', exact to their 3 significant digits"
	return out, start, nil
}

// mergeLatency adds a histogram to an interval's distribution.
func mergeLatency(l core.Latency, h *hdrhistogram.Histogram) (core.Latency, error) {
	sum := core.NewHistogram()
	if prev, err := l.Histogram(); err != nil {
		return l, err
	} else if prev != nil {
		sum.Merge(prev)
	}
	sum.Merge(h)
	return core.Summarize(sum)
}

func ycsbWorkload(p map[string]string, l *ycsbLog) string {
	var parts []string
	if db := p["db"]; db != "" {
		parts = append(parts, db[strings.LastIndex(db, ".")+1:])
	}
	for _, f := range strings.Fields(p["workloadfiles"]) {
		parts = append(parts, "-P "+f[strings.LastIndex(f, "/")+1:])
	}
	for _, k := range []string{"recordcount", "operationcount", "insertcount", "readproportion", "updateproportion", "insertproportion",
		"scanproportion", "readmodifywriteproportion", "requestdistribution", "fieldcount", "fieldlength", "measurement.interval"} {
		if v, ok := p[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	if len(parts) == 0 {
		return "YCSB (its command line is not in the output)"
	}
	return "YCSB " + strings.Join(parts, " ")
}

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
