package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

// The shards of a run (cmpbench run --shard I/N) each write an archive; Merge
// makes one archive of them, exactly: counts add up, histograms merge (never
// percentiles averaged), and the rates, sustained or not, are decided again on the
// sums against the whole target. A merge is itself a shard archive holding several
// shards, so merging merges gives the merge of all.

// planKey is what makes two runs shards of one plan.
type planKey struct {
	Suite   string          `json:"suite"`
	YAML    string          `json:"yaml"`
	Seed    uint64          `json:"seed"`
	Scale   float64         `json:"scale"`
	Repeat  int             `json:"repeat"`
	Shards  int             `json:"shards"`
	Systems []planKeySystem `json:"systems"`
}

type planKeySystem struct {
	Name       string         `json:"name"`
	Adapter    string         `json:"adapter"`
	Definition map[string]any `json:"definition"`
}

func planKeyOf(suite SuiteInfo, seed uint64, scale float64, repeat, shards int, systems []SystemInfo) planKey {
	k := planKey{Suite: suite.Name, YAML: suite.YAML, Seed: seed, Scale: scale, Repeat: repeat, Shards: shards}
	for _, s := range systems {
		k.Systems = append(k.Systems, planKeySystem{Name: s.Name, Adapter: s.Adapter, Definition: s.Definition})
	}
	return k
}

// PlanHash identifies the plan of a sharded run: the suite's text, seed, scale,
// repetitions, the number of shards and the systems as defined (secrets as
// ${VAR} references, never their values).
func PlanHash(h Header, shards int) string {
	return planKeyOf(h.Suite, h.Seed, h.Scale, h.Repeat, shards, h.Systems).hash()
}

func (k planKey) hash() string {
	b, _ := json.Marshal(k) // maps marshal in key order: the same plan, the same bytes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func manifestPlanKey(m *Manifest) planKey {
	return planKeyOf(m.Suite, m.Seed, m.Scale, m.Repeat, m.Shard.Count, m.Systems)
}

// planDifference names the first thing in which two archives' plans differ, or "".
func planDifference(a, b *Manifest) string {
	ka, kb := manifestPlanKey(a), manifestPlanKey(b)
	switch {
	case ka.Suite != kb.Suite:
		return fmt.Sprintf("suite %q vs %q", ka.Suite, kb.Suite)
	case ka.YAML != kb.YAML:
		return fmt.Sprintf("the text of suite %q", ka.Suite)
	case ka.Seed != kb.Seed:
		return fmt.Sprintf("--seed %d vs %d", ka.Seed, kb.Seed)
	case ka.Scale != kb.Scale:
		return fmt.Sprintf("--scale %g vs %g", ka.Scale, kb.Scale)
	case ka.Repeat != kb.Repeat:
		return fmt.Sprintf("--repeat %d vs %d", ka.Repeat, kb.Repeat)
	case ka.Shards != kb.Shards:
		return fmt.Sprintf("shard count %d vs %d", ka.Shards, kb.Shards)
	}
	na, nb := systemNames(ka.Systems), systemNames(kb.Systems)
	if !slices.Equal(na, nb) {
		return fmt.Sprintf("--systems %s vs %s", strings.Join(na, ","), strings.Join(nb, ","))
	}
	for i := range ka.Systems {
		if !reflect.DeepEqual(ka.Systems[i], kb.Systems[i]) {
			return fmt.Sprintf("the definition of system %s", ka.Systems[i].Name)
		}
	}
	if ha, hb := a.Shard.PlanHash, b.Shard.PlanHash; ha != hb {
		return fmt.Sprintf("plan hash %s vs %s", ha, hb)
	}
	return ""
}

// RunDifference names the first thing in which two shard archives' runs differ, or
// "": their plans (the same suite text, seed, scale, repetitions, systems and
// shard count), then their --start-at. The start is what tells one run of a plan
// from another: the shards of one run agree on it (they meet from it on), and
// every shard archive records it, older ones too.
func RunDifference(a, b *Manifest) string {
	if d := planDifference(a, b); d != "" {
		return d
	}
	if sa, sb := a.Shard.StartAt, b.Shard.StartAt; !sa.Equal(sb) {
		return fmt.Sprintf("--start-at %s vs %s", sa.UTC().Format(time.RFC3339), sb.UTC().Format(time.RFC3339))
	}
	return ""
}

func systemNames(ss []planKeySystem) []string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	return names
}

// MergeError is a merge refused because its archives are not shards of one plan,
// or overlap: bad input.
type MergeError struct{ err error }

func (e *MergeError) Error() string { return e.err.Error() }
func (e *MergeError) Unwrap() error { return e.err }

func mergeErr(format string, a ...any) error { return &MergeError{fmt.Errorf(format, a...)} }

// ErrNoShards is a directory to merge that holds no finished archive (yet).
var ErrNoShards = errors.New("no finished archive")

// ShardArchives opens the archives to merge: each argument is an archive, or a
// directory whose finished archives are all taken.
func ShardArchives(args []string) ([]*Archive, error) {
	var dirs []string
	for _, a := range args {
		if _, err := os.Stat(filepath.Join(a, ManifestFile)); err == nil {
			dirs = append(dirs, a)
			continue
		}
		st, err := os.Stat(a)
		if errors.Is(err, fs.ErrNotExist) {
			// The shards make their directory when they start: a merge started
			// beside them (--wait) may look before.
			return nil, mergeErr("%s does not exist (yet), so it holds %w", a, ErrNoShards)
		}
		if err != nil {
			return nil, mergeErr("%s: %v", a, err)
		}
		if !st.IsDir() {
			return nil, mergeErr("%s is not an archive or a directory of archives", a)
		}
		found := Finished(a)
		if len(found) == 0 {
			return nil, mergeErr("%s holds %w", a, ErrNoShards)
		}
		dirs = append(dirs, found...)
	}
	var out []*Archive
	for _, d := range dirs {
		// Every input is checked whole before anything is written: a shard cut
		// short used to fail the merge half-way and leave an in-progress
		// directory behind.
		a, err := OpenVerified(d, "it is not merged")
		if err != nil {
			return nil, &MergeError{err}
		}
		out = append(out, a)
	}
	return out, nil
}

// UnfinishedShards are the shards whose runs ended otherwise than complete
// (interrupted, failed): with any of them a merge can never be the whole run.
func UnfinishedShards(archives []*Archive) []ShardPart {
	var out []ShardPart
	for _, a := range archives {
		for _, p := range partsOf(&a.Manifest) {
			if p.Status != core.RunComplete {
				out = append(out, p)
			}
		}
	}
	return out
}

// CheckShards checks that archives are shards of one run (RunDifference), none
// twice, and returns them in shard order with the shards they cover together.
func CheckShards(archives []*Archive) ([]*Archive, []int, error) {
	if len(archives) == 0 {
		return nil, nil, mergeErr("no archives to merge")
	}
	for _, a := range archives {
		if a.Manifest.Shard == nil {
			return nil, nil, mergeErr("%s is not a shard's archive: it ran the whole plan (cmpbench run --shard I/N writes shard archives)", a.Dir)
		}
	}
	archives = slices.Clone(archives)
	slices.SortFunc(archives, func(a, b *Archive) int { return a.Manifest.Shard.Shards[0] - b.Manifest.Shard.Shards[0] })
	first := &archives[0].Manifest
	owner := map[int]string{}
	var shards []int
	for _, a := range archives {
		if d := planDifference(first, &a.Manifest); d != "" {
			return nil, nil, mergeErr("%s and %s are not shards of one plan: they differ in %s", archives[0].Dir, a.Dir, d)
		}
		if d := RunDifference(first, &a.Manifest); d != "" {
			return nil, nil, mergeErr("%s and %s are shards of two runs of one plan, not of one run: they differ in %s (the shards of one run are started with the same --start-at)", archives[0].Dir, a.Dir, d)
		}
		for _, s := range a.Manifest.Shard.Shards {
			if prev, dup := owner[s]; dup {
				return nil, nil, mergeErr("shard %d is in both %s and %s", s, prev, a.Dir)
			}
			owner[s] = a.Dir
			shards = append(shards, s)
		}
	}
	slices.Sort(shards)
	return archives, shards, nil
}

// Merge writes the merge of shard archives (CheckShards' order) as a new run's
// archive under outDir; the caller finishes it (Finish, report, Commit).
func Merge(archives []*Archive, shards []int, outDir, runID string, commandLine []string, build BuildInfo, red *redact.Redactor) (*Writer, error) {
	base := &archives[0].Manifest
	h := Header{
		RunID: runID, Cmpbench: build, Host: base.Host, CommandLine: commandLine,
		Seed: base.Seed, Scale: base.Scale, Repeat: base.Repeat, Suite: base.Suite, Systems: base.Systems, Started: base.Started,
		Shard:     &ShardInfo{Count: base.Shard.Count, Shards: shards, PlanHash: base.Shard.PlanHash, StartAt: base.Shard.StartAt},
		Processes: base.Processes, // as its host is base's
	}
	for _, a := range archives {
		m := &a.Manifest
		h.Shard.Parts = append(h.Shard.Parts, partsOf(m)...)
		h.Started = minTime(h.Started, m.Started)
		h.Live = h.Live || m.Live
	}
	slices.SortFunc(h.Shard.Parts, func(a, b ShardPart) int { return a.Shard - b.Shard })
	w, err := Create(outDir, h, red)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Writer, error) {
		w.Discard()
		return nil, err
	}
	w.m.Systems, w.m.Plugins = base.Systems, base.Plugins
	for _, a := range archives[1:] {
		w.m.Recovered = w.m.Recovered || a.Manifest.Recovered
	}
	w.m.Recovered = w.m.Recovered || base.Recovered
	phases, err := mergePhases(archives, shards, w.m.Shard.Complete())
	if err != nil {
		return fail(err)
	}
	w.m.Phases = phases
	for _, step := range []func(*Writer, []*Archive) error{mergeIntervals, mergeSummary, mergeProbe, copyServerStats, mergeClientStats, mergeValidations, copyCaptures} {
		if err := step(w, archives); err != nil {
			return fail(err)
		}
	}
	if err := w.saveManifest(); err != nil {
		return fail(err)
	}
	return w, nil
}

// MergedStatus is how the merged shards' runs ended: complete when every one of
// them completed and the merge holds every shard. A merge of some shards is
// interrupted: it is not the whole run, and its manifest must not say complete.
func MergedStatus(archives []*Archive) core.RunStatus {
	status := core.RunComplete
	covered, count := 0, 0
	for _, a := range archives {
		for _, p := range partsOf(&a.Manifest) {
			covered++
			if p.Status != core.RunComplete && status == core.RunComplete {
				status = p.Status
			}
		}
		if sh := a.Manifest.Shard; sh != nil {
			count = sh.Count
		}
	}
	if covered < count && status == core.RunComplete {
		status = core.RunInterrupted
	}
	return status
}

// MergedEnd is when the last shard's run ended.
func MergedEnd(archives []*Archive) time.Time {
	var t time.Time
	for _, a := range archives {
		if a.Manifest.Ended.After(t) {
			t = a.Manifest.Ended
		}
	}
	return t
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func partsOf(m *Manifest) []ShardPart {
	if len(m.Shard.Parts) > 0 {
		return m.Shard.Parts
	}
	return []ShardPart{{Shard: m.Shard.Shards[0], RunID: m.RunID, Host: m.Host, Cmpbench: m.Cmpbench, CommandLine: m.CommandLine, Status: m.Status}}
}

// shardPhases is a phase's parts: one per shard, from a shard's archive or from a
// merge's record of them.
func shardPhases(m *Manifest, p *PhaseInfo) []ShardPhase {
	if len(p.Shards) > 0 {
		return p.Shards
	}
	return []ShardPhase{{
		Shard: m.Shard.Shards[0], Connections: p.Connections, Rate: p.Rate, Ops: p.Ops, Status: p.Status, Error: p.Error,
		ScheduledStart: p.ScheduledStart, Started: p.Started, ElapsedNs: p.ElapsedNs,
		ClientCores: p.ClientCores, CoresAllowed: p.CoresAllowed, ClientBound: p.ClientBound, ClientLagged: p.ClientLagged,
		ClientStalledNs: p.ClientStalledNs, Host: p.Host, HostSaturated: p.HostSaturated, Notes: p.Notes,
	}}
}

// mergePhases merges the phases of the archives: the phases of every shard, in the
// order they ran; one that some shard lacks (it stopped) is merged from those
// that have it and does not end ok.
func mergePhases(archives []*Archive, shards []int, complete bool) ([]PhaseInfo, error) {
	g := groupPhases(archives)
	var out []PhaseInfo
	for _, k := range g.order {
		m, err := mergePhase(g.byKey[k], g.shardsOf[k], shards, complete)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// phaseGroups are the archives' phases grouped by phase: each phase's records and
// shard parts, the phases in the order they first appear.
type phaseGroups struct {
	order    []phaseKey
	byKey    map[phaseKey][]*PhaseInfo
	shardsOf map[phaseKey][]ShardPhase
}

// groupPhases gathers every archive's phases, by phase, in the order they ran.
func groupPhases(archives []*Archive) phaseGroups {
	g := phaseGroups{byKey: map[phaseKey][]*PhaseInfo{}, shardsOf: map[phaseKey][]ShardPhase{}}
	for _, a := range archives {
		for i := range a.Manifest.Phases {
			p := &a.Manifest.Phases[i]
			k := keyOfPhase(p)
			if _, seen := g.byKey[k]; !seen {
				g.order = append(g.order, k)
			}
			g.byKey[k] = append(g.byKey[k], p)
			g.shardsOf[k] = append(g.shardsOf[k], shardPhases(&a.Manifest, p)...)
		}
	}
	return g
}

// mergePhase merges one phase from the records ps of the shards that ran it and
// their parts; shards are all the merge holds, complete says they are the whole run.
func mergePhase(ps []*PhaseInfo, parts []ShardPhase, shards []int, complete bool) (PhaseInfo, error) {
	m := emptyMerge(ps[0], parts)
	if err := sumShardPhases(&m, ps); err != nil {
		return PhaseInfo{}, err
	}
	errs := fromShardParts(&m)
	if missing := missingShards(m.Shards, shards); missing != "" {
		errs = append(errs, fmt.Sprintf("shard %s did not run this phase", missing))
		if m.Status == core.StatusOK {
			m.Status = core.StatusFailed
		}
	}
	m.Error = strings.Join(errs, "; ")
	m.Shape = plan.Shape(core.PhaseSpec{Rate: m.Rate, Poisson: m.Poisson, Connections: m.Connections, Pipeline: m.Pipeline})
	m.ConnBase, m.ConnTotal = 0, 0
	if !complete {
		m.ConnTotal = ps[0].ConnTotal
	}
	return m, nil
}

// emptyMerge is the merge of a phase before any shard is added: the first shard's
// record with its sums, notes and errors cleared, ok, and every shard's part in
// shard order.
func emptyMerge(first *PhaseInfo, parts []ShardPhase) PhaseInfo {
	m := *first
	m.Shards = parts
	slices.SortFunc(m.Shards, func(a, b ShardPhase) int { return a.Shard - b.Shard })
	m.Connections, m.Rate, m.Ops = 0, 0, 0
	m.CPUUserNs, m.CPUSystemNs, m.HostCPUNs, m.ClientCores, m.CoresAllowed = 0, 0, 0, 0, 0
	m.Notes, m.Error, m.ErrorSamples, m.ScheduledStart, m.Host = nil, "", nil, nil, nil
	m.Status = core.StatusOK
	return m
}

// sumShardPhases adds every shard's record ps of the phase into m, refusing one
// that is not the same phase, and gives m the span from the first start to the
// last end.
func sumShardPhases(m *PhaseInfo, ps []*PhaseInfo) error {
	first, last := time.Time{}, time.Time{}
	for _, p := range ps {
		if p.Name != m.Name || p.Kind != m.Kind || p.Workload != m.Workload || p.Seed != m.Seed {
			return mergeErr("phase %s is not the same phase in every shard (%s %s seed %d vs %s %s seed %d)", describe(m), m.Name, m.Workload, m.Seed, p.Name, p.Workload, p.Seed)
		}
		addShardPhase(m, p)
		if p.Ended.After(last) {
			last = p.Ended
		}
		if !p.Started.IsZero() {
			first = minTime(first, p.Started)
		}
	}
	m.Started, m.Ended = first, last
	if first.IsZero() {
		m.Started = ps[0].Started
	}
	stalled, spans := make([]time.Duration, len(ps)), make([][]core.Span, len(ps))
	for i, p := range ps {
		stalled[i], spans[i] = time.Duration(p.ClientStalledNs), p.ClientStalls
	}
	s, sp := core.CombinedStalls(stalled, spans)
	m.ClientStalledNs, m.ClientStalls = int64(s), sp
	return nil
}

// addShardPhase adds one shard's record p of the phase into m: counts, rates and
// CPU add up, a flag any shard raised stays raised, elapsed time and intervals
// are the longest, the status the first that is not ok, and error samples are
// kept once each.
func addShardPhase(m, p *PhaseInfo) {
	m.Connections += p.Connections
	m.Rate += p.Rate
	m.Ops += p.Ops
	m.CPUUserNs += p.CPUUserNs
	m.CPUSystemNs += p.CPUSystemNs
	m.HostCPUNs += p.HostCPUNs
	m.ClientCores += p.ClientCores
	m.CoresAllowed += p.CoresAllowed
	m.ClientBound = m.ClientBound || p.ClientBound
	m.ClientLagged = m.ClientLagged || p.ClientLagged
	m.HostSaturated = m.HostSaturated || p.HostSaturated
	m.Partial = m.Partial || p.Partial
	m.ElapsedNs = max(m.ElapsedNs, p.ElapsedNs)
	m.Intervals = max(m.Intervals, p.Intervals)
	if p.ProbeRate > 0 {
		m.ProbeRate, m.ProbeOp, m.ProbeStallNs = p.ProbeRate, p.ProbeOp, p.ProbeStallNs
	}
	if p.Status != core.StatusOK && m.Status == core.StatusOK {
		m.Status = p.Status
	}
	for _, s := range p.ErrorSamples {
		if !slices.Contains(m.ErrorSamples, s) {
			m.ErrorSamples = append(m.ErrorSamples, s)
		}
	}
}

// fromShardParts takes into m what its shards' parts say: their notes, named by
// shard, the skew of the starts of those that ran, and the first scheduled start;
// it returns their errors, named by shard.
func fromShardParts(m *PhaseInfo) []string {
	var errs []string
	var lo, hi time.Time
	for _, s := range m.Shards {
		prefix := fmt.Sprintf("shard %d: ", s.Shard)
		if s.Error != "" {
			errs = append(errs, prefix+s.Error)
		}
		for _, n := range s.Notes {
			m.Notes = append(m.Notes, prefix+n)
		}
		if s.Status == core.StatusOK || s.Status == core.StatusFailed {
			lo, hi = minTime(lo, s.Started), maxTime(hi, s.Started)
		}
		if m.ScheduledStart == nil {
			m.ScheduledStart = s.ScheduledStart
		}
	}
	if !lo.IsZero() {
		m.StartSkewNs = int64(hi.Sub(lo))
	}
	return errs
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func missingShards(have []ShardPhase, shards []int) string {
	var miss []string
	for _, i := range shards {
		if !slices.ContainsFunc(have, func(s ShardPhase) bool { return s.Shard == i }) {
			miss = append(miss, fmt.Sprint(i))
		}
	}
	return strings.Join(miss, ", ")
}

// opIntervalOf turns a table row's counts and histograms back into an OpInterval;
// an empty service histogram is the response one (closed loop).
func opIntervalOf(op string, c Counts, resp, svc, lag []byte) (core.OpInterval, error) {
	kind, err := core.ParseOpKind(op)
	if err != nil {
		return core.OpInterval{}, err
	}
	o := core.OpInterval{Op: kind, OK: c.Count, Hits: c.Hits, Misses: c.Misses, Bytes: c.Bytes, Errors: c.errorsOf(),
		Response: core.Latency{HDR: resp}, Lag: core.Latency{HDR: lag}}
	o.Service = o.Response
	if len(svc) > 0 {
		o.Service = core.Latency{HDR: svc}
	}
	return o, nil
}

// mergeSummary merges every phase's totals from the shards' summary rows, and
// gives them their confidence from the merged intervals.
func mergeSummary(w *Writer, archives []*Archive) error {
	totals := map[phaseKey]*core.Totals{}
	for _, pi := range w.m.Phases {
		totals[keyOfPhase(&pi)] = core.NewTotals(pi.Rate > 0)
	}
	for _, a := range archives {
		for _, r := range a.Summary {
			o, err := opIntervalOf(r.Op, r.Counts, r.RespHDR, r.SvcHDR, r.LagHDR)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", a.Dir, SummaryFile, err)
			}
			t := totals[phaseKey{r.System, r.PhaseIndex, r.Repetition}]
			if t == nil {
				return fmt.Errorf("%s: %s has a row of phase %s #%d that its manifest lacks", a.Dir, SummaryFile, r.Phase, r.PhaseIndex)
			}
			if err := t.Add(&core.IntervalReport{Ops: []core.OpInterval{o}}); err != nil {
				return fmt.Errorf("%s: %s %s: %w", a.Dir, r.Phase, r.Op, err)
			}
		}
	}
	// Each phase's confidence from the merged intervals (mergeIntervals wrote
	// them), all phases in one pass.
	c, rows := newConfider(), make([][]SummaryRow, len(w.m.Phases))
	for i := range w.m.Phases {
		pi := &w.m.Phases[i]
		ops, err := totals[keyOfPhase(pi)].Result()
		if err != nil {
			return err
		}
		rows[i] = summaryRows(pi, ops)
		if err := c.want(pi, rows[i]); err != nil {
			return err
		}
	}
	if err := w.spools[spoolIntervals].flush(false); err != nil {
		return err
	}
	if err := readSpoolFrom(filepath.Join(w.dir, SpoolDir, spoolIntervals), 0, c.add); err != nil {
		return err
	}
	for i := range w.m.Phases {
		c.apply(&w.m.Phases[i], rows[i])
		if err := addRows(w.spools[spoolSummary], rows[i]); err != nil {
			return err
		}
	}
	return nil
}

// mergeIntervals merges interval i of a phase on every shard into interval i of
// the merged phase, streaming: the shards' tables are read side by side, in
// order, and an interval is written once every shard has passed it, so that a
// merge holds a few intervals at a time, never a phase.
func mergeIntervals(w *Writer, archives []*Archive) error {
	done := make(chan struct{})
	defer close(done)
	im := newIntervalMerge(w, archives, done)
	for _, c := range im.cursors {
		if err := c.next(); err != nil {
			return err
		}
	}
	var lastAt *intervalAt
	for {
		low, lowRow, err := im.earliest()
		if err != nil {
			return err
		}
		if low == nil {
			return nil
		}
		if lastAt != nil && low.before(*lastAt) {
			return fmt.Errorf("%s: interval rows out of order at phase %s interval %d", IntervalsFile, lowRow.Phase, lowRow.Interval)
		}
		if err := im.mergeInterval(*low, lowRow); err != nil {
			return err
		}
		lastAt = low
	}
}

// intervalMerge is the merge of the shards' interval tables under way: where each
// phase stands in the merged manifest, whether it is open loop, and a cursor on
// each shard's table.
type intervalMerge struct {
	w       *Writer
	pos     map[phaseKey]int
	open    map[phaseKey]bool
	cursors []*shardCursor
}

// newIntervalMerge starts reading every archive's interval table, until done is
// closed, into the merge w is written by.
func newIntervalMerge(w *Writer, archives []*Archive, done <-chan struct{}) *intervalMerge {
	im := &intervalMerge{w: w, pos: map[phaseKey]int{}, open: map[phaseKey]bool{}}
	for i, pi := range w.m.Phases {
		im.pos[keyOfPhase(&pi)] = i
		im.open[keyOfPhase(&pi)] = pi.Rate > 0
	}
	for _, a := range archives {
		im.cursors = append(im.cursors, readIntervals(a, done))
	}
	return im
}

// shardCursor is one shard's interval table read in order: cur is the row it is
// at, nil past the last.
type shardCursor struct {
	rows chan IntervalRow
	errc chan error
	cur  *IntervalRow
}

// readIntervals reads a's interval rows into a cursor, in the background, until
// they end or done is closed.
func readIntervals(a *Archive, done <-chan struct{}) *shardCursor {
	c := &shardCursor{rows: make(chan IntervalRow, 256), errc: make(chan error, 1)}
	go func() {
		err := a.EachInterval(func(r *IntervalRow) error {
			select {
			case c.rows <- *r:
				return nil
			case <-done:
				return errors.New("merge stopped")
			}
		})
		if err != nil {
			err = fmt.Errorf("%s: %w", a.Dir, err)
		}
		c.errc <- err
		close(c.rows)
	}()
	return c
}

// next moves c to its next row; past the last it returns how the reading ended.
func (c *shardCursor) next() error {
	r, ok := <-c.rows
	if !ok {
		c.cur = nil
		return <-c.errc
	}
	c.cur = &r
	return nil
}

// intervalAt is a place in the merged interval table: a phase (its position in
// the manifest) and an interval of it.
type intervalAt struct{ phase, interval int }

// before says a comes before b in the table.
func (a intervalAt) before(b intervalAt) bool {
	return a.phase < b.phase || a.phase == b.phase && a.interval < b.interval
}

// where is the place of row r in the merged table.
func (im *intervalMerge) where(r *IntervalRow) (intervalAt, error) {
	p, ok := im.pos[phaseKey{r.System, r.PhaseIndex, r.Repetition}]
	if !ok {
		return intervalAt{}, fmt.Errorf("%s has a row of phase %s #%d that no manifest has", IntervalsFile, r.Phase, r.PhaseIndex)
	}
	return intervalAt{p, r.Interval}, nil
}

// earliest is the earliest place any shard is at and a row there, nil when
// every shard is past its last row.
func (im *intervalMerge) earliest() (*intervalAt, *IntervalRow, error) {
	var low *intervalAt
	var lowRow *IntervalRow
	for _, c := range im.cursors {
		if c.cur == nil {
			continue
		}
		a, err := im.where(c.cur)
		if err != nil {
			return nil, nil, err
		}
		if low == nil || a.before(*low) {
			low, lowRow = &a, c.cur
		}
	}
	return low, lowRow, nil
}

// mergeInterval merges the rows every shard has at low, the earliest place, into
// one interval and writes its rows; first is one of them. The shards'
// connections add up (a shard whose phase ended before the interval holds
// none); when one did not count them, the merge does not either.
func (im *intervalMerge) mergeInterval(low intervalAt, first *IntervalRow) error {
	key := phaseKey{first.System, first.PhaseIndex, first.Repetition}
	t := core.NewTotals(im.open[key])
	iv := core.IntervalReport{Index: low.interval, Start: time.Duration(first.StartNs), End: time.Duration(first.EndNs), Conns: &core.Conns{}}
	id := phaseID{System: first.System, Index: first.PhaseIndex, Name: first.Phase, Repetition: first.Repetition}
	for _, c := range im.cursors {
		if err := im.takeRows(c, low, t, &iv); err != nil {
			return err
		}
	}
	ops, err := t.Result()
	if err != nil {
		return err
	}
	iv.Ops = ops
	return addRows(im.w.spools[spoolIntervals], intervalRows(id, &iv, im.open[key]))
}

// takeRows adds the rows c is at while they are at low into t, widens iv to their
// times, and moves c past them.
func (im *intervalMerge) takeRows(c *shardCursor, low intervalAt, t *core.Totals, iv *core.IntervalReport) error {
	for first := true; c.cur != nil; first = false {
		a, err := im.where(c.cur)
		if err != nil {
			return err
		}
		if a != low {
			return nil
		}
		r := c.cur
		iv.Start, iv.End = min(iv.Start, time.Duration(r.StartNs)), max(iv.End, time.Duration(r.EndNs))
		if first { // the shard's connections, the same on each of its op rows
			if conns := r.conns(); conns == nil {
				iv.Conns = nil
			} else if iv.Conns != nil {
				iv.Conns.Add(*conns)
			}
		}
		o, err := opIntervalOf(r.Op, r.Counts, r.RespHDR, r.SvcHDR, r.LagHDR)
		if err == nil {
			err = t.Add(&core.IntervalReport{Index: r.Interval, Ops: []core.OpInterval{o}})
		}
		if err != nil {
			return fmt.Errorf("%s phase %s interval %d: %w", IntervalsFile, r.Phase, r.Interval, err)
		}
		if err := c.next(); err != nil {
			return err
		}
	}
	return nil
}

// mergeProbe keeps every shard's side-probe requests (shard 0 probes).
func mergeProbe(w *Writer, archives []*Archive) error {
	for _, a := range archives {
		if err := a.EachProbe(func(r *ProbeRow) error { return addRows(w.spools[spoolProbe], []ProbeRow{*r}) }); err != nil {
			return fmt.Errorf("%s: %w", a.Dir, err)
		}
	}
	return nil
}

// copyServerStats keeps the server samples of the first shard: every shard sampled
// the same servers, and one series of them is what the report reads.
func copyServerStats(w *Writer, archives []*Archive) error {
	a := archives[0]
	if err := a.EachServerStat(func(r *ServerStatRow) error { return addRows(w.spools[spoolServerStats], []ServerStatRow{*r}) }); err != nil {
		return fmt.Errorf("%s: %w", a.Dir, err)
	}
	return nil
}

// mergeClientStats keeps every shard's client samples, the process named with
// its shard ("shard 1 plugin").
func mergeClientStats(w *Writer, archives []*Archive) error {
	for _, a := range archives {
		rows, err := a.ClientStats()
		if err != nil {
			return fmt.Errorf("%s: %w", a.Dir, err)
		}
		if len(a.Manifest.Shard.Parts) == 0 {
			for i := range rows {
				rows[i].Process = fmt.Sprintf("shard %d %s", a.Manifest.Shard.Shards[0], rows[i].Process)
			}
		}
		if err := addRows(w.spools[spoolClientStats], rows); err != nil {
			return err
		}
	}
	return nil
}

// mergeValidations keeps every shard's checks of loaded data (shard 0 validates).
func mergeValidations(w *Writer, archives []*Archive) error {
	for _, a := range archives {
		vals, err := a.Validations()
		if err != nil {
			return fmt.Errorf("%s: %w", a.Dir, err)
		}
		w.vals = append(w.vals, vals...)
	}
	return w.writeValidations()
}

// copyCaptures copies the first shard's captures of the systems (systems/).
func copyCaptures(w *Writer, archives []*Archive) error {
	src := filepath.Join(archives[0].Dir, SystemsDir)
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(archives[0].Dir, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(w.dir, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		b, err := readRegular(path)
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(w.dir, rel), b)
	})
}
