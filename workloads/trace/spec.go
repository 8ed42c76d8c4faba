// Package trace replays request traces — Twitter's cache traces, Redis MONITOR
// output, cmpbench's own CSV — at their recorded times or as fast as possible,
// streamed from the file (plain, gzip or zstd), never read whole.
package trace

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

// Kind is the workload's name in suites (`trace:`) and archives.
const Kind = "trace"

func init() {
	core.RegisterWorkload(core.WorkloadKind{
		Name:    Kind,
		Doc:     func() core.WorkloadDoc { return &doc{} },
		Decode:  core.DecodeJSON[Spec],
		Streams: newStreams,
	})
}

// Replay modes.
const (
	// ReplayRecorded sends each request at its recorded time (divided by
	// Speed) from the phase start: an open loop, its response time counted
	// from that time, as a fixed-rate phase's.
	ReplayRecorded = "recorded"
	// ReplayOrdered sends the requests in the trace's order as fast as the
	// connections go: a closed loop, each connection taking the next request.
	ReplayOrdered = "ordered"
	// ReplayWarm writes, in the trace's order and as fast as the connections
	// go, a value for each key the trace reads before it writes it, of the
	// size the read recorded: the warm-up before a replay.
	ReplayWarm = "warm"
)

// Spec is a trace replayed.
type Spec struct {
	// File is the trace's path, absolute: the plugin process opens it too.
	File   string  `json:"file"`
	Format string  `json:"format"`
	Replay string  `json:"replay"`
	Speed  float64 `json:"speed"` // recorded times are divided by it
	// KeyPrefix is put before every key of the trace: the same trace key is
	// always the same store key.
	KeyPrefix string `json:"key_prefix"`
	Facts     Facts  `json:"facts"`
	// Skip are the op kinds the system's adapter lacks (Fit): the trace's
	// requests of them are skipped and counted, as those of no op kind are.
	Skip []string `json:"skip,omitempty"`
	// DropTTL says the adapter keeps no TTL (Fit): SETs are sent without one.
	DropTTL bool `json:"drop_ttl,omitempty"`
}

// Kind implements core.Workload.
func (s Spec) Kind() string { return Kind }

// Describe is e.g. "trace cmpbench-csv t.csv.zst: 1000000 requests over 1m40s, recorded x2".
func (s Spec) Describe() string {
	d := fmt.Sprintf("trace %s %s: %d requests over %s, %s", s.Format, filepath.Base(s.File), s.Facts.Requests,
		time.Duration(s.Facts.SpanNs()), s.Replay)
	if s.Replay == ReplayRecorded && s.Speed != 1 {
		d += fmt.Sprintf(" x%g", s.Speed)
	}
	if s.Replay == ReplayWarm {
		return d
	}
	if n := s.Facts.Requests - s.replayed(""); n > 0 {
		d += fmt.Sprintf(", %d skipped", n)
		if len(s.Skip) > 0 {
			d += fmt.Sprintf(" (%s among them: the adapter has none)", strings.Join(s.Skip, ", "))
		}
	}
	if s.DropTTL && s.Facts.TTLs > 0 && !slices.Contains(s.Skip, core.OpSet.String()) {
		d += fmt.Sprintf(", %d TTLs not kept (the adapter keeps none)", s.Facts.TTLs)
	}
	return d
}

// replayKinds are the op kinds a trace's requests may be replayed as.
var replayKinds = []core.OpKind{core.OpGet, core.OpSet, core.OpDelete, core.OpIncr}

// OpKinds implements core.Workload: what the trace's replayed requests are.
func (s Spec) OpKinds() []core.OpKind {
	if s.Replay == ReplayWarm {
		return []core.OpKind{core.OpSet}
	}
	var ks []core.OpKind
	for _, k := range replayKinds {
		if s.replayed(k.String()) > 0 {
			ks = append(ks, k)
		}
	}
	return ks
}

// replayed is how many requests are replayed as op kind k ("" for all
// replayed) on the system's adapter: the trace's, but for the kinds it skips.
func (s Spec) replayed(k string) int64 {
	if k != "" {
		if slices.Contains(s.Skip, k) {
			return 0
		}
		return s.Facts.Replayed(k)
	}
	var n int64
	for _, k := range replayKinds {
		n += s.replayed(k.String())
	}
	return n
}

// Fit implements core.Fitting: the requests of the op kinds the adapter lacks
// are skipped and counted; TTLs are dropped where it keeps none. A recorded
// replay's rate becomes that of what is then sent, in proportion (a shard's
// share of it stays its share); fitting again changes nothing.
func (s Spec) Fit(p core.PhaseSpec, info core.Info) core.PhaseSpec {
	before := s.replayed("")
	s.Skip, s.DropTTL = nil, !info.TTL
	if s.Replay != ReplayWarm {
		for _, k := range replayKinds {
			if s.Facts.Replayed(k.String()) > 0 && !info.Supports(k) {
				s.Skip = append(s.Skip, k.String())
			}
		}
	}
	if after := s.replayed(""); s.Replay == ReplayRecorded && p.Rate > 0 && before > 0 && after != before {
		p.Rate *= float64(after) / float64(before)
	}
	p.Workload = s
	return p
}

// Validate implements core.Workload.
func (s Spec) Validate(int) []error {
	errs := s.checkWritten()
	switch {
	case s.Facts.SHA256 == "" || s.Facts.Requests == 0:
		errs = append(errs, fmt.Errorf("trace: the facts of %s were not read (its SHA-256 and requests)", s.File))
	case s.Replay != ReplayWarm && s.replayed("") == 0:
		why := "no operation of it is one cmpbench replays"
		if len(s.Skip) > 0 {
			why = "the adapter has none of " + strings.Join(s.Skip, ", ")
		}
		errs = append(errs, fmt.Errorf("trace: none of the %d requests of %s is replayed: %s", s.Facts.Requests, s.File, why))
	}
	return errs
}

// checkWritten checks what a suite says of the trace.
func (s Spec) checkWritten() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf("trace: "+format, a...)) }
	if !filepath.IsAbs(s.File) {
		add("file %q is not an absolute path", s.File)
	}
	if _, err := newParser(s.Format); err != nil {
		add("%v", err)
	}
	switch s.Replay {
	case ReplayRecorded, ReplayOrdered, ReplayWarm:
	default:
		add("replay %q is not one of %s, %s, %s", s.Replay, ReplayRecorded, ReplayOrdered, ReplayWarm)
	}
	if !(s.Speed > 0 && s.Speed <= 1e6) {
		add("speed %g must be above 0 and at most 1e6", s.Speed)
	}
	return errs
}

// Pin implements core.Pinned: the file and its content, which a rerun must
// find unchanged.
func (s Spec) Pin() string {
	return fmt.Sprintf("trace %s (%s, %d bytes, %d requests, SHA-256 %s)", s.File, s.Format, s.Facts.Size, s.Facts.Requests, s.Facts.SHA256)
}

// Sends implements core.Finite: the trace's requests replayed as each op kind
// (the warm-up's writes are not known beforehand).
func (s Spec) Sends() map[core.OpKind]int64 {
	if s.Replay == ReplayWarm {
		return nil
	}
	out := map[core.OpKind]int64{}
	for _, k := range s.OpKinds() {
		out[k] = s.replayed(k.String())
	}
	return out
}

// Defaults for what a suite leaves out.
const (
	DefaultFormat = FormatCSV
	DefaultReplay = ReplayRecorded
	DefaultPrefix = "trace:"
	// durationSlack is added to a recorded replay's span for its default
	// duration: room for the last requests' replies.
	durationSlack = 10 * time.Second
)

// doc is the workload as a suite writes it.
type doc struct {
	File      string   `yaml:"file"`
	Format    string   `yaml:"format"`
	Replay    string   `yaml:"replay"`
	Speed     *float64 `yaml:"speed"`
	KeyPrefix *string  `yaml:"key_prefix"`
}

// Resolve implements core.WorkloadDoc: it reads the trace's facts (the whole
// file, once per file and version of it in a process) and gives a recorded
// replay its rate (the trace's mean at its speed: what is held against what the
// phase achieved) and, unless the suite says, its duration.
func (d *doc) Resolve(p *core.PhaseSpec) []error {
	s := Spec{Format: d.Format, Replay: d.Replay, Speed: 1, KeyPrefix: DefaultPrefix}
	if s.Format == "" {
		s.Format = DefaultFormat
	}
	if s.Replay == "" {
		s.Replay = DefaultReplay
	}
	if d.Speed != nil {
		s.Speed = *d.Speed
	}
	if d.KeyPrefix != nil {
		s.KeyPrefix = *d.KeyPrefix
	}
	if d.File == "" {
		return []error{fmt.Errorf("trace: file is required")}
	}
	abs, err := filepath.Abs(d.File)
	if err != nil {
		return []error{fmt.Errorf("trace: file %q: %w", d.File, err)}
	}
	s.File = abs
	p.Workload = s
	if errs := s.checkWritten(); len(errs) > 0 {
		return errs
	}
	if s.Facts, err = factsOf(s.File, s.Format); err != nil {
		return []error{err}
	}
	p.Workload = s
	return s.resolvePhase(p)
}

// resolvePhase sets and checks what a trace ties to its phase.
func (s Spec) resolvePhase(p *core.PhaseSpec) []error {
	var errs []error
	if p.Rate > 0 {
		errs = append(errs, fmt.Errorf("trace: a trace phase takes no rate: replay: %s sends at the recorded times (speed: N for faster), %s as fast as it can", ReplayRecorded, ReplayOrdered))
	}
	if p.Depth() > 1 {
		errs = append(errs, fmt.Errorf("trace: a trace is replayed one request at a time per connection (pipeline %d)", p.Pipeline))
	}
	if p.Kind == core.PhaseLoad {
		errs = append(errs, fmt.Errorf("trace: a trace phase is measured or a warm-up (replay: %s writes what the trace reads first)", ReplayWarm))
	}
	if s.Replay != ReplayRecorded {
		if p.Duration == 0 {
			errs = append(errs, fmt.Errorf("trace: replay %s needs a duration (the phase's time bound)", s.Replay))
		}
		return errs
	}
	span := float64(s.Facts.SpanNs()) / s.Speed
	if span < 1e6 {
		return append(errs, fmt.Errorf("trace: %s spans %s: too little to replay at its recorded times; replay it %s", s.File, time.Duration(s.Facts.SpanNs()), ReplayOrdered))
	}
	if len(errs) == 0 {
		p.Rate = s.meanRate()
	}
	if p.Duration == 0 {
		p.Duration = time.Duration(span) + durationSlack
	}
	return errs
}

// meanRate is a recorded replay's rate: the requests it sends over the
// trace's span at its speed, to the request/s (to the hundredth below 100).
func (s Spec) meanRate() float64 {
	span := float64(s.Facts.SpanNs()) / s.Speed
	rate := float64(s.replayed("")) / (span / 1e9)
	if rate >= 100 {
		return math.Round(rate)
	}
	return max(0.01, math.Round(rate*100)/100)
}

// factsOf reads the facts of a trace, once per file version in a process:
// a suite's steps and a dry run read the file once.
func factsOf(path, format string) (Facts, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Facts{}, fmt.Errorf("trace: %w", err)
	}
	key := fmt.Sprintf("%s\x00%s\x00%d\x00%d", path, format, st.Size(), st.ModTime().UnixNano())
	factsCache.Lock()
	f, ok := factsCache.m[key]
	factsCache.Unlock()
	if ok {
		return f, nil
	}
	if f, err = ReadFacts(path, format); err != nil {
		return Facts{}, err
	}
	factsCache.Lock()
	factsCache.m[key] = f
	factsCache.Unlock()
	return f, nil
}

var factsCache = struct {
	sync.Mutex
	m map[string]Facts
}{m: map[string]Facts{}}

// Mix is the op mix as one line: "get 900 as GET, set 90 as SET, delete 10 skipped".
func (f Facts) Mix() string {
	var parts []string
	for _, o := range f.Ops {
		if o.As == "" {
			parts = append(parts, fmt.Sprintf("%s %d skipped", o.Op, o.Count))
		} else {
			parts = append(parts, fmt.Sprintf("%s %d as %s", o.Op, o.Count, o.As))
		}
	}
	return strings.Join(parts, ", ")
}
