package importer

import (
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

// statusOps are the operations whose outcomes YCSB reports as Return= lines
// (DB.read/update/insert/scan/delete); CLEANUP, READ-MODIFY-WRITE, the -FAILED
// and Intended- measurements have none.
var statusOps = []string{"READ", "UPDATE", "INSERT", "SCAN", "DELETE"}

// consistent checks an operation's Operations against its Return= lines: YCSB
// counts successes as Operations and every outcome as a Return= line (versions
// before 0.14 count failures among the Operations too). A log cut inside an
// operation's lines used to import its Operations as successes.
func (me *ycsbMeasure) consistent(name string) error {
	if !me.haveOps || me.ops == 0 || !slices.Contains(statusOps, name) {
		return nil
	}
	var ok, all int64
	for status, n := range me.returns {
		all += n
		if okStatus(status) {
			ok += n
		}
	}
	if len(me.returns) == 0 {
		return fmt.Errorf("[%s] has Operations %g but no Return= line: the output is cut short inside its lines", name, me.ops)
	}
	if ops := int64(me.ops); ops != ok && ops != all {
		return fmt.Errorf("[%s] has Operations %g, but its Return= lines count %d successes of %d: the output is cut short or damaged", name, me.ops, ok, all)
	}
	return nil
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

// parseYCSB reads YCSB's text output at path.
func parseYCSB(path string) (*ycsbLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l := &ycsbLog{props: map[string]string{}, measures: map[string]*ycsbMeasure{}}
	lr := newLineReader(f, path, 16<<20)
	for lr.next() {
		if err := l.readLine(lr); err != nil {
			return nil, err
		}
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if err := l.check(path); err != nil {
		return nil, err
	}
	return l, nil
}

// readLine reads one line of the output: the version, the command line, a status
// line or a summary row; the rest is the JVM's and the binding's own output.
func (l *ycsbLog) readLine(lr *lineReader) error {
	line := lr.line
	switch {
	case strings.HasPrefix(line, "YCSB Client "):
		l.version = strings.TrimSpace(strings.TrimPrefix(line, "YCSB Client "))
		return nil
	case strings.HasPrefix(line, "Command line:"):
		l.cmdline = strings.Fields(strings.TrimPrefix(line, "Command line:"))
		l.props = ycsbProps(l.cmdline)
		return nil
	}
	if m := ycsbStatLn.FindStringSubmatch(line); m != nil {
		return l.readStatus(lr, m)
	}
	if m := ycsbRow.FindStringSubmatch(line); m != nil {
		return l.readRow(lr, m[1], strings.TrimSpace(m[2]), strings.TrimSpace(m[3]))
	}
	return nil
}

// readStatus reads a status line, m its ycsbStatLn match.
func (l *ycsbLog) readStatus(lr *lineReader, m []string) error {
	at, err := time.Parse("2006-01-02 15:04:05.000", m[1][:19]+"."+m[1][20:])
	if err != nil {
		return lr.bad("status line time %q: %v", m[1], err)
	}
	st := ycsbStatus{at: at, ops: map[string]map[string]float64{}, lined: lr.n}
	for _, part := range ycsbPart.FindAllStringSubmatch(m[4], -1) {
		if part[2] != ": " {
			l.countless = true // "[READ AverageLatency(us)=782.17]"
			continue
		}
		vals, err := statusValues(lr, part[1], part[3])
		if err != nil {
			return err
		}
		if _, ok := vals["Count"]; !ok {
			l.countless = true
			continue
		}
		st.ops[part[1]] = vals
	}
	l.status = append(l.status, st)
	return nil
}

// statusValues reads the key=value list of a status line's [name: ...].
func statusValues(lr *lineReader, name, list string) (map[string]float64, error) {
	vals := map[string]float64{}
	for _, kv := range strings.Split(list, ", ") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, lr.bad("status line: %q in [%s: ...] is not key=value", kv, name)
		}
		// DecimalFormat writes the locale's decimal separator.
		x, err := strconv.ParseFloat(strings.Replace(v, ",", ".", 1), 64)
		if err != nil {
			return nil, lr.bad("status line: [%s: %s=%s]: not a number", name, k, v)
		}
		vals[k] = x
	}
	return vals, nil
}

// readRow reads a summary row, [name], metric, value.
func (l *ycsbLog) readRow(lr *lineReader, name, metric, value string) error {
	if name == "OVERALL" {
		return l.readOverall(lr, metric, value)
	}
	if strings.HasPrefix(name, "TOTAL_GC") || strings.HasSuffix(name, "_MEM_USED") || strings.HasSuffix(name, "_THREADS") || strings.HasSuffix(name, "_LOAD_AVG") {
		return nil
	}
	me := l.measures[name]
	if me == nil {
		me = &ycsbMeasure{pct: map[float64]float64{}, returns: map[string]int64{}, firstRow: lr.n}
		l.measures[name] = me
	}
	return me.readRow(lr, name, metric, value)
}

// readOverall reads an [OVERALL] row: the run time and the throughput.
func (l *ycsbLog) readOverall(lr *lineReader, metric, value string) error {
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return lr.bad("[OVERALL], %s: %q is not a number", metric, value)
	}
	switch metric {
	case "RunTime(ms)":
		l.runtime, l.haveRun = v, true
	case "Throughput(ops/sec)":
		l.throughput = v
	}
	return nil
}

// readRow reads one of the measurement's rows: a Return= count, its Operations,
// its maximum, a percentile or a histogram bucket.
func (me *ycsbMeasure) readRow(lr *lineReader, name, metric, value string) error {
	if status, ok := strings.CutPrefix(metric, "Return="); ok {
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || v < 0 {
			return lr.bad("[%s], %s: %q is not a count", name, metric, value)
		}
		me.returns[status] += int64(v)
		return nil
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return lr.bad("[%s], %s: %q is not a number", name, metric, value)
	}
	switch pm := ycsbPctKey.FindStringSubmatch(metric); {
	case metric == "Operations":
		if v < 0 {
			return lr.bad("[%s], Operations: %q is not a count", name, value)
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
	return nil
}

// check says what a complete output has that this one lacks: its run time, its
// operations' counts, their outcomes.
func (l *ycsbLog) check(path string) error {
	if !l.haveRun {
		return fmt.Errorf("%s: no [OVERALL], RunTime(ms) line: not YCSB output, or cut short before YCSB printed its results", path)
	}
	counted := false
	for _, name := range slices.Sorted(maps.Keys(l.measures)) {
		me := l.measures[name]
		if !me.haveOps && len(me.returns) > 0 {
			return fmt.Errorf("%s:%d: [%s] has Return= lines but no Operations line: the output is cut", path, me.firstRow, name)
		}
		if err := me.consistent(name); err != nil {
			return fmt.Errorf("%s:%d: %w", path, me.firstRow, err)
		}
		counted = counted || me.haveOps
	}
	if l.runtime <= 0 && counted {
		return fmt.Errorf("%s: [OVERALL], RunTime(ms) is %g: no rate can be made of it (the output is damaged)", path, l.runtime)
	}
	if !counted {
		return fmt.Errorf("%s: no [<OP>], Operations lines after [OVERALL]: the output is cut short, or YCSB ran no operation", path)
	}
	return nil
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
