package archive

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// UnverifiedError refuses an archive that does not verify to a command that
// judges it or takes what it records (audit, compare, report, rerun, merge): an
// edited or damaged archive may no longer say what was run, so nothing is drawn
// from it.
type UnverifiedError struct {
	Dir string
	// Refused says what is not done with it: "it is not audited".
	Refused  string
	Problems []error
}

// maxProblemsShown is how many of Verify's problems a refusal lists.
const maxProblemsShown = 10

func (e *UnverifiedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not verify, so %s (an archive changed after its run may not say what was run):", e.Dir, e.Refused)
	for i, p := range e.Problems {
		if i == maxProblemsShown {
			fmt.Fprintf(&b, "\n  and %d more: cmpbench verify %s", len(e.Problems)-i, e.Dir)
			break
		}
		b.WriteString("\n  " + p.Error())
	}
	return b.String()
}

// OpenVerified opens an archive for a command that judges it or takes what it
// records, once it verifies; one that does not is an *UnverifiedError saying
// refused ("it is not audited") and every problem Verify found.
func OpenVerified(dir, refused string) (*Archive, error) {
	a, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if errs := Verify(dir); len(errs) > 0 {
		return nil, &UnverifiedError{Dir: dir, Refused: refused, Problems: errs}
	}
	return a, nil
}

// Verify checks an archive: every file listed in SHA256SUMS exists and matches, no
// file is unlisted, the manifest is readable and not newer than this code, the
// tables belong to the manifest's run, and what the manifest, the tables and
// validation.json each say agrees (see crossCheck): SHA256SUMS can be recomputed
// after an edit, a run's own account of itself cannot be edited consistently so
// easily. It returns every problem found.
func Verify(dir string) []error {
	if m, err := readManifestFile(dir); err == nil && m.Status == StatusInProgress {
		_, err := ReadManifest(dir) // says what to do
		return []error{err}
	}
	var errs []error
	sums, err := readRegular(filepath.Join(dir, SumsFile))
	if err != nil {
		return []error{fmt.Errorf("%s: %w", SumsFile, err)}
	}
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for n := 1; sc.Scan(); n++ {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(want) != 64 || name == "" {
			errs = append(errs, fmt.Errorf("%s:%d: not a sha256sum line", SumsFile, n))
			continue
		}
		// What SHA256SUMS names is read: only files of the archive, never a
		// path out of it, a link, or a device whose reading never ends.
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			errs = append(errs, fmt.Errorf("%s:%d: %q is not a path inside the archive", SumsFile, n, name))
			continue
		}
		listed[name] = true
		path := filepath.Join(dir, filepath.FromSlash(name))
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			errs = append(errs, fmt.Errorf("%s: %w", name, errNotRegular))
			continue
		}
		got, err := core.FileSHA256(path)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		case got != want:
			errs = append(errs, fmt.Errorf("%s: checksum mismatch (the file was changed after the run)", name))
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", SumsFile, err))
	}
	files, err := listFiles(dir)
	if err != nil {
		return append(errs, err)
	}
	for _, f := range files {
		if !listed[f] {
			errs = append(errs, fmt.Errorf("%s: not listed in %s", f, SumsFile))
		}
	}
	a, err := Open(dir)
	if err != nil {
		return append(errs, err)
	}
	return append(errs, a.crossCheck()...)
}

// An archive says several things twice: the manifest's run status sums up how its
// phases, systems and validations ended; each summary row repeats its phase's
// manifest entry (name, kind, shape, status, duration, flags, CPU) and its op's
// counts, which are also the sums of the phase's interval rows and the totals of
// its histograms; rates are counts over the duration; each validation's expected
// count is a load's successful writes; the manifest lists the capture files under
// systems/. crossCheck checks that each pair agrees, so that an edit of one (a
// status made "complete", a count made rounder) shows even with SHA256SUMS
// recomputed.

// phaseKey names a phase in every table: the manifest's phases are unique by it.
type phaseKey struct {
	system     string
	index, rep int
}

func keyOfPhase(p *PhaseInfo) phaseKey { return phaseKey{p.System, p.Index, p.Repetition} }

// describe names a phase in a message.
func describe(p *PhaseInfo) string {
	return fmt.Sprintf("phase %q of %s (#%d, repetition %d)", p.Name, p.System, p.Index, p.Repetition)
}

// tableRef is what every table row says about its phase.
type tableRef struct {
	system     string
	index      int
	name       string
	repetition int
}

func (r tableRef) key() phaseKey { return phaseKey{r.system, r.index, r.repetition} }

func (r tableRef) String() string {
	return describe(&PhaseInfo{System: r.system, Index: r.index, Name: r.name, Repetition: r.repetition})
}

// crossCheck returns every disagreement between the manifest, the tables and
// validation.json.
func (a *Archive) crossCheck() []error {
	vals, err := a.Validations()
	if err != nil {
		return []error{err}
	}
	errs := checkManifest(&a.Manifest, vals)
	c := &checker{a: a, phases: map[phaseKey]*PhaseInfo{}, reported: map[string]bool{}}
	for i := range a.Manifest.Phases {
		p := &a.Manifest.Phases[i]
		if _, dup := c.phases[keyOfPhase(p)]; !dup {
			c.phases[keyOfPhase(p)] = p
		}
	}
	c.summary()
	c.intervals()
	c.otherTables()
	c.validations(vals)
	c.captures()
	return append(errs, c.errs...)
}

// checkManifest checks what the manifest and validation.json say about the run
// as a whole.
func checkManifest(m *Manifest, vals []core.Validation) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(ManifestFile+": "+format, args...)) }
	switch m.Status {
	case core.RunComplete, core.RunFailed, core.RunInterrupted:
	default:
		bad("status %q is not one of complete, failed, interrupted", m.Status)
	}
	systems := map[string]bool{}
	for _, s := range m.Systems {
		if systems[s.Name] {
			bad("system %s is listed twice", s.Name)
		}
		systems[s.Name] = true
	}
	seen := map[phaseKey]bool{}
	for i := range m.Phases {
		p := &m.Phases[i]
		if !systems[p.System] {
			bad("%s: its system is not among the systems", describe(p))
		}
		if seen[keyOfPhase(p)] {
			bad("%s is listed twice", describe(p))
		}
		seen[keyOfPhase(p)] = true
		switch p.Status {
		case core.StatusOK, core.StatusFailed, core.StatusInterrupted, core.StatusSkipped:
		default:
			bad("%s has status %q, which no finished phase has", describe(p), p.Status)
		}
		if p.Partial && !m.Recovered {
			bad("%s is partial, but the archive was not recovered", describe(p))
		}
		if p.ElapsedNs < 0 || p.ClientStalledNs < 0 || p.ClientStalledNs > p.ElapsedNs {
			bad("%s: client stalled %d ns of its elapsed %d ns", describe(p), p.ClientStalledNs, p.ElapsedNs)
		}
		if p.Status == core.StatusOK && p.Kind == core.PhaseMeasured && core.StalledTooLong(time.Duration(p.ElapsedNs), time.Duration(p.ClientStalledNs)) {
			bad("%s ended ok, but its client was not running for %d ns of its %d ns", describe(p), p.ClientStalledNs, p.ElapsedNs)
		}
	}
	for _, pl := range m.Plugins {
		if !systems[pl.System] {
			bad("plugin %s drove system %s, which is not among the systems", pl.Path, pl.System)
		}
	}
	for _, v := range vals {
		if !systems[v.System] {
			errs = append(errs, fmt.Errorf("%s: validation %q of system %s, which is not among the systems of %s", ValidationFile, v.Point, v.System, ManifestFile))
		}
	}
	if m.Recovered && m.Status != core.RunInterrupted {
		bad("status %q, but the archive was recovered (recovered: true), which leaves it interrupted", m.Status)
	}
	if m.Status != core.RunComplete {
		return errs
	}
	// A run is complete only when every phase ended ok, every system ran and
	// every validation passed (core/runner).
	for i := range m.Phases {
		if p := &m.Phases[i]; p.Status != core.StatusOK {
			bad("status %q, but %s ended %s", m.Status, describe(p), p.Status)
		}
	}
	for _, s := range m.Systems {
		if s.Error != "" {
			bad("status %q, but system %s was not run: %s", m.Status, s.Name, oneLine(s.Error))
		}
	}
	for _, v := range vals {
		if !v.OK() {
			errs = append(errs, fmt.Errorf("%s: status %q in %s, but validation %q of %s failed: %s", ValidationFile, m.Status, ManifestFile, v.Point, v.System, oneLine(v.Problems[0])))
		}
	}
	return errs
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// checker holds what the table checks gather.
type checker struct {
	a      *Archive
	phases map[phaseKey]*PhaseInfo
	errs   []error
	// ops are the summary rows by phase and op; sums the interval rows' counts;
	// seen the interval indexes of each phase.
	ops  map[phaseKey]map[string]*SummaryRow
	sums map[phaseKey]map[string]*Counts
	seen map[phaseKey]map[int]bool
	// reported keeps one message per table and phase that is not in the manifest.
	reported map[string]bool
}

func (c *checker) add(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// phase returns the manifest's entry for a table row's phase, or nil after saying
// (once per table and phase) that the manifest does not have it.
func (c *checker) phase(table string, r tableRef) *PhaseInfo {
	p := c.phases[r.key()]
	if p != nil && p.Name == r.name {
		return p
	}
	if msg := fmt.Sprintf("%s: %s is not in %s", table, r, ManifestFile); !c.reported[msg] {
		c.reported[msg] = true
		if p != nil {
			msg += fmt.Sprintf(" (its #%d is %q there)", r.index, p.Name)
		}
		c.add("%s", msg)
	}
	return nil
}

// summary checks each summary row against its phase's manifest entry and itself,
// then each phase's rates against its rows.
func (c *checker) summary() {
	c.ops = map[phaseKey]map[string]*SummaryRow{}
	achieved := map[phaseKey]int64{}
	for i := range c.a.Summary {
		c.summaryRow(&c.a.Summary[i], achieved)
	}
	// Rates and sustained are of the phase: every op's count over its duration.
	for i := range c.a.Manifest.Phases {
		p := &c.a.Manifest.Phases[i]
		k := keyOfPhase(p)
		if c.phases[k] != p {
			continue
		}
		c.phaseRates(p, c.ops[k], achieved[k])
		c.messages(p, c.ops[k])
		c.sends(p, c.ops[k])
	}
}

// summaryRow indexes one summary row by phase and op (a second row of an op is
// an error), adds an issued op's count to its phase's achieved count, and checks
// the row against the manifest and itself.
func (c *checker) summaryRow(r *SummaryRow, achieved map[phaseKey]int64) {
	ref := tableRef{r.System, r.PhaseIndex, r.Phase, r.Repetition}
	p := c.phase(SummaryFile, ref)
	if p == nil {
		return
	}
	k := ref.key()
	if c.ops[k] == nil {
		c.ops[k] = map[string]*SummaryRow{}
	}
	if c.ops[k][r.Op] != nil {
		c.add("%s: %s has two rows for op %s", SummaryFile, ref, r.Op)
		return
	}
	c.ops[k][r.Op] = r
	if op, err := core.ParseOpKind(r.Op); err != nil || op.Issued() {
		achieved[k] += r.Count
	}
	c.rowRepeatsManifest(ref, r, p)
	if secs := p.RateWindow().Seconds(); secs > 0 && !agree(r.Throughput, float64(r.Count)/secs) {
		c.add("%s: %s, op %s: throughput %g, but count %d in %g s is %g", SummaryFile, ref, r.Op, r.Throughput, r.Count, secs, float64(r.Count)/secs)
	}
	c.checkRowCounts(SummaryFile, ref, r.Op, &r.Counts)
	c.checkHistograms(ref, r)
}

// rowRepeatsManifest checks that a summary row repeats its phase's manifest
// entry: kind, shape, connections, rate, status, flags, the machine's load,
// duration and CPU.
func (c *checker) rowRepeatsManifest(ref tableRef, r *SummaryRow, p *PhaseInfo) {
	same := func(field string, table, manifest any) {
		if table != manifest {
			c.add("%s: %s: %s %s, %s says %s", SummaryFile, ref, field, quote(table), ManifestFile, quote(manifest))
		}
	}
	same("kind", r.Kind, string(p.Kind))
	same("workload", r.Workload, p.Workload)
	same("shape", r.Shape, p.Shape)
	same("connections", r.Connections, p.Connections)
	same("target_rate", r.TargetRate, p.Rate)
	same("status", r.Status, string(p.Status))
	same("client_bound", r.ClientBound, p.ClientBound)
	same("client_lagged", r.ClientLagged, p.ClientLagged)
	same("host_saturated", r.HostSaturated, p.HostSaturated)
	if h := p.Host; h != nil {
		same("host_cores", r.HostCores, int64(h.Cores))
		if !agree(r.HostBusyCores, h.BusyCores) {
			c.add("%s: %s: host_busy_cores %g, %s says %g", SummaryFile, ref, r.HostBusyCores, ManifestFile, h.BusyCores)
		}
	}
	if d := math.Abs(r.ClientStalledS*1e9 - float64(p.ClientStalledNs)); d > 1000 {
		c.add("%s: %s: client_stalled_s %g, %s says client_stalled_ns %d", SummaryFile, ref, r.ClientStalledS, ManifestFile, p.ClientStalledNs)
	}
	if d := math.Abs(r.DurationS*1e9 - float64(p.ElapsedNs)); d > 1000 {
		c.add("%s: %s: duration_s %g, %s says elapsed_ns %d", SummaryFile, ref, r.DurationS, ManifestFile, p.ElapsedNs)
	}
	// A recovered phase whose end the manifest missed has its CPU only here.
	if cpu := p.CPUUserNs + p.CPUSystemNs; !(c.a.Manifest.Recovered && cpu == 0) {
		if !agree(r.ClientCPUS, float64(cpu)/1e9) {
			c.add("%s: %s: client_cpu_s %g, %s says %g s (cpu_user_ns + cpu_system_ns)", SummaryFile, ref, r.ClientCPUS, ManifestFile, float64(cpu)/1e9)
		}
		if !agree(r.HostCPUS, float64(p.HostCPUNs)/1e9) {
			c.add("%s: %s: host_cpu_s %g, %s says %g s", SummaryFile, ref, r.HostCPUS, ManifestFile, float64(p.HostCPUNs)/1e9)
		}
	}
}

// phaseRates checks each op row's achieved rate (the phase's issued operations
// over its duration) and sustained (a fixed-rate phase only).
func (c *checker) phaseRates(p *PhaseInfo, ops map[string]*SummaryRow, achieved int64) {
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		r := ops[op]
		want, secs := 0.0, p.RateWindow().Seconds()
		if secs > 0 {
			want = float64(achieved) / secs
		}
		if !agree(r.AchievedRate, want) {
			c.add("%s: %s, op %s: achieved_rate %g, but the phase's count %d in %g s is %g", SummaryFile, describe(p), r.Op, r.AchievedRate, achieved, secs, want)
		}
		switch {
		case p.Rate > 0:
			sustained := p.Status == core.StatusOK && r.AchievedRate >= SustainedFraction*p.Rate
			if r.Sustained == nil || *r.Sustained != sustained {
				c.add("%s: %s, op %s: sustained %s, but a phase with status %s at %g of %g ops/s is %s", SummaryFile, describe(p), r.Op, quote(r.Sustained), p.Status, r.AchievedRate, p.Rate, quote(sustained))
			}
		case r.Sustained != nil:
			c.add("%s: %s, op %s: sustained %v in a closed-loop phase", SummaryFile, describe(p), r.Op, *r.Sustained)
		}
	}
}

// messages checks that the counts of a pub/sub phase's messages agree with its
// summary rows and add up.
func (c *checker) messages(p *PhaseInfo, ops map[string]*SummaryRow) {
	m := p.Messages
	if m == nil {
		return
	}
	for _, x := range []struct {
		op    core.OpKind
		count int64
	}{{core.OpPublish, m.Published}, {core.OpDeliver, m.Delivered}} {
		if r := ops[x.op.String()]; r != nil && r.Count != x.count {
			c.add("%s: %s: %s count %d, but %s says %d", SummaryFile, describe(p), x.op, r.Count, ManifestFile, x.count)
		}
	}
	if m.Delivered+m.Lost < m.Expected {
		c.add("%s: %s: messages: %d delivered and %d lost of %d expected", ManifestFile, describe(p), m.Delivered, m.Lost, m.Expected)
	}
}

// sends checks the requests of a phase whose workload sends a known number
// of each op kind (core.Finite: a trace's replayed requests): never more, and,
// in an archive of the whole run, exactly that many when the phase ended ok
// before its time bound (it ran to the end of its streams).
func (c *checker) sends(p *PhaseInfo, ops map[string]*SummaryRow) {
	f, ok := p.Spec.(core.Finite)
	if !ok {
		return
	}
	sh := c.a.Manifest.Shard
	whole := (sh == nil || sh.Complete()) && p.Status == core.StatusOK && p.ElapsedNs < p.DurationNs
	want := f.Sends()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		var sent int64
		if r := ops[k.String()]; r != nil {
			sent = r.Count + r.Errors
		}
		switch n := want[k]; {
		case sent > n:
			c.add("%s: %s: %d %s requests sent, more than the %d its workload holds (%s)", SummaryFile, describe(p), sent, k, n, p.Workload)
		case whole && sent != n:
			c.add("%s: %s: %d %s requests sent, but the phase ran to its end and its workload holds %d (%s)", SummaryFile, describe(p), sent, k, n, p.Workload)
		}
	}
}

// checkRowCounts checks that a row's errors are the sum of its error classes.
func (c *checker) checkRowCounts(table string, ref tableRef, op string, n *Counts) {
	if sum := n.ErrOOM + n.ErrTimeout + n.ErrConn + n.ErrProtocol + n.ErrOther + n.ErrNotFound + n.ErrExists + n.ErrOverload + n.ErrInDoubt; sum != n.Errors {
		c.add("%s: %s, op %s: errors %d, but its error classes sum to %d", table, ref, op, n.Errors, sum)
	}
}

// checkHistograms checks that a summary row's histograms hold its successful
// operations: only those are timed, each once.
func (c *checker) checkHistograms(ref tableRef, r *SummaryRow) {
	for _, h := range []struct {
		column string
		enc    []byte
	}{{"resp_hdr", r.RespHDR}, {"svc_hdr", r.SvcHDR}, {"lag_hdr", r.LagHDR}} {
		if len(h.enc) == 0 {
			continue
		}
		hist, err := core.DecodeHist(h.enc)
		if err != nil {
			c.add("%s: %s, op %s: %s: %v", SummaryFile, ref, r.Op, h.column, err)
			continue
		}
		if n := hist.TotalCount(); n != r.Count {
			c.add("%s: %s, op %s: %s holds %d operations, count is %d", SummaryFile, ref, r.Op, h.column, n, r.Count)
		}
	}
}

// intervals sums the interval rows of each phase and op and checks them against
// the summary and the manifest's interval counts.
func (c *checker) intervals() {
	c.sums = map[phaseKey]map[string]*Counts{}
	c.seen = map[phaseKey]map[int]bool{}
	err := c.a.EachInterval(func(r *IntervalRow) error {
		ref := tableRef{r.System, r.PhaseIndex, r.Phase, r.Repetition}
		p := c.phase(IntervalsFile, ref)
		if p == nil {
			return nil
		}
		if want := p.Started.Add(time.Duration(r.StartNs)); !p.Started.IsZero() && !r.WallStart.Equal(want) {
			c.add("%s: %s, interval %d: t_start %s, but %s's started + start_ns is %s", IntervalsFile, ref, r.Interval,
				r.WallStart.Format(time.RFC3339Nano), ManifestFile, want.UTC().Format(time.RFC3339Nano))
		}
		k := ref.key()
		if c.sums[k] == nil {
			c.sums[k], c.seen[k] = map[string]*Counts{}, map[int]bool{}
		}
		c.seen[k][r.Interval] = true
		s := c.sums[k][r.Op]
		if s == nil {
			s = &Counts{}
			c.sums[k][r.Op] = s
		}
		addCounts(s, &r.Counts)
		c.checkRowCounts(IntervalsFile, ref, r.Op, &r.Counts)
		return nil
	})
	if err != nil {
		c.add("%v", err)
		return
	}
	for i := range c.a.Manifest.Phases {
		p := &c.a.Manifest.Phases[i]
		k := keyOfPhase(p)
		if c.phases[k] != p {
			continue // listed twice: said already
		}
		// A recovered phase whose end the manifest missed does not say how many.
		if n := len(c.seen[k]); n != p.Intervals && !(c.a.Manifest.Recovered && p.Intervals == 0) {
			c.add("%s: %s ran %d intervals, %s has %d", ManifestFile, describe(p), p.Intervals, IntervalsFile, n)
		}
		ops := map[string]bool{}
		for op := range c.ops[k] {
			ops[op] = true
		}
		for op := range c.sums[k] {
			ops[op] = true
		}
		for _, op := range slices.Sorted(maps.Keys(ops)) {
			row, sum := c.ops[k][op], c.sums[k][op]
			switch {
			case row == nil:
				c.add("%s: %s has no row for op %s, %s has its intervals", SummaryFile, describe(p), op, IntervalsFile)
			case sum == nil:
				sum = &Counts{}
				fallthrough
			default:
				if d := countsDiff(row.Counts, *sum); d != "" {
					c.add("%s: %s, op %s: %s", SummaryFile, describe(p), op, d)
				}
			}
		}
	}
}

func addCounts(into, n *Counts) {
	iv, nv := reflect.ValueOf(into).Elem(), reflect.ValueOf(n).Elem()
	for i := range iv.NumField() {
		iv.Field(i).SetInt(iv.Field(i).Int() + nv.Field(i).Int())
	}
}

// countsDiff says which counters of a summary row differ from the sums of its
// interval rows, by column name; "" when none does.
func countsDiff(row, sum Counts) string {
	cols, _ := columns(reflect.TypeOf(Counts{}))
	rv, sv := reflect.ValueOf(row), reflect.ValueOf(sum)
	var have, want []string
	for _, col := range cols {
		a, b := rv.FieldByIndex(col.index).Int(), sv.FieldByIndex(col.index).Int()
		if a != b {
			have = append(have, fmt.Sprintf("%s %d", col.name, a))
			want = append(want, fmt.Sprintf("%s %d", col.name, b))
		}
	}
	if len(have) == 0 {
		return ""
	}
	return fmt.Sprintf("%s; the rows of %s sum to %s", strings.Join(have, ", "), IntervalsFile, strings.Join(want, ", "))
}

// otherTables checks that the probe, server and client samples are of the
// manifest's phases.
func (c *checker) otherTables() {
	if err := c.a.EachProbe(func(r *ProbeRow) error {
		c.phase(ProbeFile, tableRef{r.System, r.PhaseIndex, r.Phase, r.Repetition})
		return nil
	}); err != nil {
		c.add("%v", err)
	}
	// t is t_unix_ns as a timestamp (read from a table written before t was, it
	// is made from t_unix_ns).
	sameTime := func(table string, ref tableRef, t time.Time, unixNs int64) {
		if t.UnixNano() != unixNs {
			c.add("%s: %s: t %s, but t_unix_ns %d", table, ref, t.Format(time.RFC3339Nano), unixNs)
		}
	}
	if err := c.a.EachServerStat(func(r *ServerStatRow) error {
		ref := tableRef{r.System, r.PhaseIndex, r.Phase, r.Repetition}
		c.phase(ServerStats, ref)
		sameTime(ServerStats, ref, r.Time, r.TimeUnixNs)
		return nil
	}); err != nil {
		c.add("%v", err)
	}
	rows, err := c.a.ClientStats()
	if err != nil {
		c.add("%v", err)
	}
	for _, r := range rows {
		ref := tableRef{r.System, r.PhaseIndex, r.Phase, r.Repetition}
		c.phase(ClientStats, ref)
		sameTime(ClientStats, ref, r.Time, r.TimeUnixNs)
	}
}

// validations checks that each validation expected what one of its system's
// loads wrote.
func (c *checker) validations(vals []core.Validation) {
	if sh := c.a.Manifest.Shard; sh != nil && !sh.Complete() {
		// Shard 0 validates the load of all shards: its archive, or a merge of
		// some shards, holds only part of what was loaded.
		return
	}
	for _, v := range vals {
		var written []int64
		for k, ops := range c.ops {
			if k.system != v.System || c.phases[k].Kind != core.PhaseLoad || len(ops) == 0 {
				continue
			}
			var n int64
			for _, r := range ops {
				n += r.Count
			}
			written = append(written, n)
		}
		if !slices.Contains(written, v.Expected) {
			slices.Sort(written)
			c.add("%s: validation %q of %s expected %d keys, but the loads of %s in %s wrote %v", ValidationFile, v.Point, v.System, v.Expected, v.System, SummaryFile, written)
		}
	}
}

// captures checks the capture files under systems/ against the manifest's lists.
func (c *checker) captures() {
	listed := map[string]bool{}
	for _, s := range c.a.Manifest.Systems {
		for _, f := range s.Files {
			name := SystemsDir + "/" + s.Name + "/" + f
			listed[name] = true
			if _, err := os.Stat(filepath.Join(c.a.Dir, filepath.FromSlash(name))); err != nil {
				c.add("%s: listed in %s for system %s, but missing", name, ManifestFile, s.Name)
			}
		}
		if _, err := c.a.Facts(s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.add("%v", err)
		}
	}
	root := filepath.Join(c.a.Dir, SystemsDir)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(c.a.Dir, path)
		rel = filepath.ToSlash(rel)
		if !listed[rel] {
			system, _, _ := strings.Cut(strings.TrimPrefix(rel, SystemsDir+"/"), "/")
			c.add("%s: not among the files %s lists for system %s", rel, ManifestFile, system)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		c.add("%v", err)
	}
}

// agree reports whether two derived numbers agree to within rounding.
func agree(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// quote prints a value as a message shows it: strings quoted, nil as null.
func quote(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case *bool:
		if x == nil {
			return "null"
		}
		return fmt.Sprint(*x)
	}
	return fmt.Sprint(v)
}
