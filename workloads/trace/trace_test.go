package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/cmpbench/cmpbench/core"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestFactsOfEachFormat reads each format's sample trace, plain, gzip and
// zstd: the facts are golden, and compression changes only the file's.
func TestFactsOfEachFormat(t *testing.T) {
	for _, tc := range []struct{ file, format string }{
		{"cmpbench.csv", FormatCSV},
		{"twitter.csv", FormatTwitter},
		{"monitor.txt", FormatMonitor},
	} {
		t.Run(tc.format, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			f, err := ReadFacts(path, tc.format)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(f, "", "  ")
			golden := filepath.Join("testdata", tc.file+".facts.json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(want) != string(got)+"\n" {
				t.Errorf("facts of %s:\n%s\nwant (%s):\n%s", path, got, golden, want)
			}
			plain, _ := os.ReadFile(path)
			for _, c := range []string{CompressionGzip, CompressionZstd} {
				cf, err := ReadFacts(compressed(t, plain, c), tc.format)
				if err != nil {
					t.Fatal(err)
				}
				if cf.Compression != c || cf.SHA256 == f.SHA256 {
					t.Errorf("%s: compression %q, SHA-256 %s (plain's %s)", c, cf.Compression, cf.SHA256, f.SHA256)
				}
				cf.Compression, cf.SHA256, cf.Size = f.Compression, f.SHA256, f.Size
				if !equalFacts(cf, f) {
					t.Errorf("%s: facts %+v, plain's %+v", c, cf, f)
				}
			}
		})
	}
}

func equalFacts(a, b Facts) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// compressed writes data compressed as c into a temporary file.
func compressed(t *testing.T, data []byte, c string) string {
	t.Helper()
	var buf bytes.Buffer
	switch c {
	case CompressionGzip:
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(data)
		_ = w.Close()
	case CompressionZstd:
		w, _ := zstd.NewWriter(&buf)
		_, _ = w.Write(data)
		_ = w.Close()
	}
	path := filepath.Join(t.TempDir(), "trace."+c)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeTrace(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.trace")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadLineNamesFileAndLine: a line that is not of its format is an error
// naming file:line and what is wrong.
func TestBadLineNamesFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, format, content, want string
	}{
		{"csv fields", FormatCSV, "0,get,a,0\n1,get,b\n", ":2: cmpbench-csv: want time,op,key,value_size[,ttl]: 3 fields"},
		{"csv time", FormatCSV, "# c\nx,get,a,0\n", `:2: cmpbench-csv: time "x" is not a non-negative whole number`},
		{"csv size", FormatCSV, "1.5,set,a,-3\n", `:1: cmpbench-csv: value size "-3" is not a non-negative whole number`},
		{"csv no key", FormatCSV, "1,get,,0\n", ":1: cmpbench-csv: no key"},
		{"twitter fields", FormatTwitter, "0,k,1,2,3,get,0\n0,k,1,2,get,0\n", ":2: twitter-cache: want timestamp,key,key_size,value_size,client_id,operation,ttl: 6 fields"},
		{"twitter time", FormatTwitter, "0.5,k,1,2,3,get,0\n", `:1: twitter-cache: timestamp "0.5" is not a non-negative whole number`},
		{"monitor quote", FormatMonitor, "OK\n1.0 [0 lua] \"get\" \"a\n", `:2: monitor: argument 2: the quote is not closed`},
		{"monitor client", FormatMonitor, "1.0 \"get\" \"a\"\n", `:1: monitor: want [<db> <client>] after the time`},
		{"monitor escape", FormatMonitor, "1.0 [0 lua] \"get\" \"a\\q\"\n", `:1: monitor: argument 2: unknown escape \q`},
		{"empty", FormatCSV, "# nothing\n", "holds no request (1 lines of cmpbench-csv)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTrace(t, tc.content)
			_, err := ReadFacts(path, tc.format)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want %s and %q", err, path, tc.want)
			}
		})
	}
}

// TestMonitorUnquotes: MONITOR's quoting (sdscatrepr) is undone for keys and
// value sizes.
func TestMonitorUnquotes(t *testing.T) {
	p, _ := newParser(FormatMonitor)
	var r request
	line := []byte(`1339518083.200000 [0 lua] "SET" "say \"hi\"\x00\\" "a\r\nb"`)
	if err := p.parse(line, &r); err != nil {
		t.Fatal(err)
	}
	if string(r.op) != "set" || string(r.key) != "say \"hi\"\x00\\" || r.size != 4 || r.at != 1339518083200000000 {
		t.Errorf("got op %q key %q size %d at %d", r.op, r.key, r.size, r.at)
	}
}

// streamsOf makes the streams of a phase of conns connections (a window of
// all when sharded) replaying path.
func streamsOf(t *testing.T, s Spec, base, conns, all int) *streams {
	t.Helper()
	st, err := newStreams(core.PhaseSpec{Name: "replay", Connections: conns, ConnBase: base, ConnTotal: all, Seed: 7, Workload: s})
	if err != nil {
		t.Fatal(err)
	}
	return st.(*streams)
}

func specOf(t *testing.T, path, format, replay string) Spec {
	t.Helper()
	f, err := ReadFacts(path, format)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(path)
	return Spec{File: abs, Format: format, Replay: replay, Speed: 1, KeyPrefix: "p:", Facts: f}
}

type sent struct {
	at    int64
	kind  core.OpKind
	key   string
	size  int
	ttl   time.Duration
	delta int64
}

// drain takes every request of a phase's streams, round robin over its
// connections as a closed loop would.
func drain(st *streams, conns int) []sent {
	var out []sent
	srcs := make([]*source, conns)
	for i := range srcs {
		srcs[i] = st.Source(i).(*source)
	}
	var op core.Op
	for live := conns; live > 0; {
		live = 0
		for _, s := range srcs {
			at, ok := s.Due()
			if !ok {
				continue
			}
			live++
			s.Next(&op)
			out = append(out, sent{at, op.Kind, string(op.Key), len(op.Value), op.TTL, op.Delta})
		}
	}
	return out
}

func synthFile(t *testing.T, o Synth, compression string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "synth.trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Write(f, compression); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayIsTheTraceSplitByKey: a phase replays exactly the trace's
// replayed requests, and the parts of a sharded phase (windows of its
// connections) each a share by key hash that together are the whole, every
// key in one part.
func TestReplayIsTheTraceSplitByKey(t *testing.T) {
	o := DefaultSynth()
	o.Requests, o.Keys, o.Rate = 20_000, 2_000, 5_000
	path := synthFile(t, o, CompressionZstd)
	s := specOf(t, path, FormatCSV, ReplayOrdered)
	whole := drain(streamsOf(t, s, 0, 4, 0), 4)
	if int64(len(whole)) != s.Facts.Replayed("") {
		t.Fatalf("replayed %d, the trace's facts say %d", len(whole), s.Facts.Replayed(""))
	}
	count := func(ss []sent, k core.OpKind) (n int64) {
		for _, x := range ss {
			if x.kind == k {
				n++
			}
		}
		return n
	}
	if g, w := count(whole, core.OpGet), s.Facts.Replayed("GET"); g != w {
		t.Errorf("GETs %d, want %d", g, w)
	}
	if d := s.Facts.Replayed("DELETE"); d == 0 || count(whole, core.OpDelete) != d || s.Facts.Skipped() != 0 {
		t.Errorf("DELETEs %d of the trace's %d, skipped %d: want every request replayed, deletes as DELETE", count(whole, core.OpDelete), d, s.Facts.Skipped())
	}
	var parts []sent
	owner := map[string]int{}
	for i, w := range [][2]int{{0, 1}, {1, 2}, {3, 1}} { // 3 parts of the 4 connections
		part := drain(streamsOf(t, s, w[0], w[1], 4), w[1])
		for _, x := range part {
			if o, ok := owner[x.key]; ok && o != i {
				t.Fatalf("key %s in parts %d and %d", x.key, o, i)
			}
			owner[x.key] = i
		}
		parts = append(parts, part...)
	}
	key := func(a, b sent) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) }
	slices.SortFunc(parts, key)
	slices.SortFunc(whole, key)
	if !slices.Equal(parts, whole) {
		t.Errorf("the parts replayed %d requests, not the whole's %d", len(parts), len(whole))
	}
}

// TestRecordedTimesAndSpeed: a recorded replay's requests are due at their
// recorded times from the first, divided by the speed; keys keep their
// identity behind the prefix; writes write the recorded size.
func TestRecordedTimesAndSpeed(t *testing.T) {
	s := specOf(t, "testdata/cmpbench.csv", FormatCSV, ReplayRecorded)
	want := []sent{
		{0, core.OpSet, "p:user:1", 100, 0, 0},
		{250_000, core.OpGet, "p:user:1", 0, 0, 0},
		{1_000_000, core.OpGet, "p:user:2", 0, 0, 0},
		{500_000_000, core.OpDelete, "p:user:1", 0, 0, 0},
		{1_250_000_000, core.OpSet, "p:user:2", 4096, time.Minute, 0},
		{2_000_000_001, core.OpGet, "p:user:2", 0, 0, 0},
	}
	if got := drain(streamsOf(t, s, 0, 1, 0), 1); !slices.Equal(got, want) {
		t.Errorf("speed 1:\n%v\nwant\n%v", got, want)
	}
	s.Speed = 2
	for i := range want {
		want[i].at /= 2
	}
	if got := drain(streamsOf(t, s, 0, 1, 0), 1); !slices.Equal(got, want) {
		t.Errorf("speed 2:\n%v\nwant\n%v", got, want)
	}
}

// TestWarmWritesWhatIsReadFirst: the warm-up writes each key whose first
// replayed request reads it, once, at the read's recorded size.
func TestWarmWritesWhatIsReadFirst(t *testing.T) {
	s := specOf(t, "testdata/twitter.csv", FormatTwitter, ReplayWarm)
	got := drain(streamsOf(t, s, 0, 2, 0), 2)
	want := []sent{{0, core.OpSet, "p:nz:u.EpcYZhK_", 228, 0, 0}, {0, core.OpSet, "p:ab:q9dJ0x", 12, 0, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("warm-up %v, want %v", got, want)
	}
}

// TestNextDoesNotAllocate: a source's Due and Next allocate nothing, reading
// included.
func TestNextDoesNotAllocate(t *testing.T) {
	o := DefaultSynth()
	o.Requests = 50_000
	path := synthFile(t, o, CompressionZstd)
	src := streamsOf(t, specOf(t, path, FormatCSV, ReplayRecorded), 0, 1, 0).Source(0).(*source)
	var op core.Op
	src.Next(&op)
	if n := testing.AllocsPerRun(10_000, func() {
		src.Due()
		src.Next(&op)
	}); n != 0 {
		t.Errorf("%g allocations per request", n)
	}
}

// TestStreamsRefuseAChangedFile: a trace whose size is not its facts' is not
// replayed.
func TestStreamsRefuseAChangedFile(t *testing.T) {
	path := writeTrace(t, "0,get,a,0\n1,set,a,10\n")
	s := specOf(t, path, FormatCSV, ReplayOrdered)
	if err := os.WriteFile(path, []byte("0,get,a,0\n1,set,a,100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := newStreams(core.PhaseSpec{Name: "x", Connections: 1, Workload: s})
	if err == nil || !strings.Contains(err.Error(), "it changed") {
		t.Errorf("error %v, want the file refused", err)
	}
}

// TestResolve: a recorded replay gets the trace's mean rate at its speed and
// a duration; what a trace phase cannot be is refused.
func TestResolve(t *testing.T) {
	path, _ := filepath.Abs("testdata/cmpbench.csv")
	speed := 2.0
	p := core.PhaseSpec{Name: "r", Kind: core.PhaseMeasured, Connections: 2}
	if errs := (&doc{File: path, Speed: &speed}).Resolve(&p); len(errs) > 0 {
		t.Fatal(errs)
	}
	// 6 replayed requests over 2.000000001 s, twice as fast.
	if want := 6 / (2.000000001 / 2); p.Rate < want*0.999999 || p.Rate > want*1.000001 {
		t.Errorf("rate %g, want %g", p.Rate, want)
	}
	if want := time.Duration(1_000_000_000) + durationSlack; p.Duration != want {
		t.Errorf("duration %s, want %s", p.Duration, want)
	}
	for _, tc := range []struct {
		name string
		p    core.PhaseSpec
		d    doc
		want string
	}{
		{"rate", core.PhaseSpec{Kind: core.PhaseMeasured, Rate: 10}, doc{File: path}, "takes no rate"},
		{"pipeline", core.PhaseSpec{Kind: core.PhaseMeasured, Pipeline: 4}, doc{File: path}, "one request at a time"},
		{"load", core.PhaseSpec{Kind: core.PhaseLoad}, doc{File: path}, "measured or a warm-up"},
		{"ordered needs a duration", core.PhaseSpec{Kind: core.PhaseMeasured}, doc{File: path, Replay: ReplayOrdered}, "needs a duration"},
		{"format", core.PhaseSpec{Kind: core.PhaseMeasured}, doc{File: path, Format: "csv"}, `format "csv" is not one of`},
		{"no file", core.PhaseSpec{Kind: core.PhaseMeasured}, doc{}, "file is required"},
		{"missing", core.PhaseSpec{Kind: core.PhaseMeasured}, doc{File: "/nonexistent/t.csv"}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.d.Resolve(&tc.p)
			if len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), tc.want) {
				t.Errorf("errors %v, want %q", errs, tc.want)
			}
		})
	}
}

// TestSynthIsDeterministic: the same options and seed write the same bytes;
// another seed other bytes; the trace holds what was asked.
func TestSynthIsDeterministic(t *testing.T) {
	o := DefaultSynth()
	o.Requests = 5_000
	var a, b, c bytes.Buffer
	_ = o.Write(&a, CompressionNone)
	_ = o.Write(&b, CompressionNone)
	o.Seed = 2
	_ = o.Write(&c, CompressionNone)
	if !bytes.Equal(a.Bytes(), b.Bytes()) || bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatalf("same seed alike %v, another seed alike %v", bytes.Equal(a.Bytes(), b.Bytes()), bytes.Equal(a.Bytes(), c.Bytes()))
	}
	path := writeTrace(t, a.String())
	f, err := ReadFacts(path, FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	if f.Requests != o.Requests {
		t.Errorf("%d requests, want %d", f.Requests, o.Requests)
	}
	// 5,000 requests at a mean 1,000/s: about 5 s (the day's sine barely moves in it).
	if span := time.Duration(f.SpanNs()); span < 4*time.Second || span > 6*time.Second {
		t.Errorf("span %s, want about 5s", span)
	}
	if g := float64(f.Replayed("GET")) / float64(f.Requests); g < 0.88 || g > 0.92 {
		t.Errorf("GET share %.3f, want about 0.9 (%s)", g, f.Mix())
	}
}

// TestSynthDiurnal: the rate follows the day: over one period with diurnal
// 0.9, the first half (the sine above its mean) holds far more requests.
func TestSynthDiurnal(t *testing.T) {
	o := DefaultSynth()
	o.Requests, o.Rate, o.Diurnal, o.Period = 20_000, 1000, 0.9, 20*time.Second
	var buf bytes.Buffer
	if err := o.Write(&buf, CompressionNone); err != nil {
		t.Fatal(err)
	}
	p, _ := newParser(FormatCSV)
	var r request
	var first, second int
	for line := range strings.SplitSeq(buf.String(), "\n") {
		if p.parse([]byte(line), &r) != nil {
			continue
		}
		switch phase := r.at % int64(o.Period); {
		case phase < int64(o.Period)/2:
			first++
		default:
			second++
		}
	}
	if first < 3*second {
		t.Errorf("day halves %d and %d requests: want the rate to follow the sine", first, second)
	}
}

// TestOperationsAsReplayed: each format's operations become the op kinds,
// keys, sizes, TTLs and INCR deltas documented (docs/suites.md), in order;
// the others are skipped.
func TestOperationsAsReplayed(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		want         []sent
	}{
		{"twitter.csv", FormatTwitter, []sent{
			{0, core.OpGet, "p:nz:u.EpcYZhK_", 0, 0, 0},
			{0, core.OpSet, "p:nz:u.EpcYZhK_", 228, time.Hour, 0},
			{0, core.OpGet, "p:ab:q9dJ0x", 0, 0, 0},
			{0, core.OpSet, "p:ab:q9dJ0x", 40, 0, 0},
			{0, core.OpDelete, "p:zz:x", 0, 0, 0},
			{0, core.OpIncr, "p:cn:1", 0, 0, 1},
			{0, core.OpGet, "p:nz:u.EpcYZhK_", 0, 0, 0},
			{0, core.OpSet, "p:ab:q9dJ0x", 40, 0, 0},
			{0, core.OpSet, "p:ab:q9dJ0x", 40, time.Minute, 0},
			{0, core.OpIncr, "p:cn:1", 0, 0, -1},
			// append: skipped
		}},
		{"monitor.txt", FormatMonitor, []sent{
			{0, core.OpSet, "p:user:1", 11, 0, 0},
			{0, core.OpGet, "p:user:1", 0, 0, 0},
			{0, core.OpGet, "p:say \"hi\"\x00", 0, 0, 0},
			{0, core.OpDelete, "p:user:1", 0, 0, 0},
			{0, core.OpSet, "p:s:2", 3, 30 * time.Second, 0},
			{0, core.OpIncr, "p:n", 0, 0, 1},
			{0, core.OpSet, "p:t:1", 1, 10 * time.Second, 0},
			{0, core.OpSet, "p:t:2", 2, 1500 * time.Millisecond, 0},
			{0, core.OpIncr, "p:n", 0, 0, -5},
			// del of two keys: skipped
			{0, core.OpDelete, "p:t:2", 0, 0, 0},
			// hset: skipped
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			s := specOf(t, filepath.Join("testdata", tc.file), tc.format, ReplayOrdered)
			got := drain(streamsOf(t, s, 0, 1, 0), 1)
			if !slices.Equal(got, tc.want) {
				t.Errorf("replayed\n%v\nwant\n%v", got, tc.want)
			}
			if n := s.Facts.Requests - s.Facts.Replayed(""); n != s.Facts.Skipped() || int(s.Facts.Requests)-len(got) != int(n) {
				t.Errorf("%d requests, %d replayed, %d skipped", s.Facts.Requests, len(got), s.Facts.Skipped())
			}
		})
	}
}

// TestFitSkipsWhatTheAdapterLacks: on an adapter without DELETE and INCR
// that keeps no TTL, a trace's deletes and incrs are skipped (and counted,
// and said), its SETs sent without their TTL, what it sends and its rate
// are what is left; an adapter with all of them replays all, TTLs kept.
func TestFitSkipsWhatTheAdapterLacks(t *testing.T) {
	s := specOf(t, "testdata/twitter.csv", FormatTwitter, ReplayRecorded)
	p := core.PhaseSpec{Name: "r", Kind: core.PhaseMeasured, Connections: 1, Rate: s.meanRate(), Workload: s}
	full := core.Info{Name: "full", Ops: []core.OpKind{core.OpGet, core.OpSet, core.OpDelete, core.OpIncr}, TTL: true}
	bare := core.Info{Name: "bare", Ops: []core.OpKind{core.OpGet, core.OpSet}}

	if err := bare.CanRun(s); err != nil {
		t.Errorf("an adapter without DELETE and INCR refused: %v", err)
	}
	fp := bare.Fit(p)
	fs := fp.Workload.(Spec)
	if !slices.Equal(fs.Skip, []string{"DELETE", "INCR"}) || !fs.DropTTL {
		t.Errorf("fitted skip %v, drop TTL %v", fs.Skip, fs.DropTTL)
	}
	if !slices.Equal(fs.OpKinds(), []core.OpKind{core.OpGet, core.OpSet}) {
		t.Errorf("op kinds %v", fs.OpKinds())
	}
	if got := fs.Sends(); got[core.OpGet] != 3 || got[core.OpSet] != 4 || len(got) != 2 {
		t.Errorf("sends %v, want GET 3, SET 4", got)
	}
	// 7 of the 11 requests over the trace's 4 s.
	if fp.Rate != 1.75 || p.Rate != 2.5 {
		t.Errorf("rate %g (the whole trace's %g), want 1.75 and 2.5", fp.Rate, p.Rate)
	}
	if d := fs.Describe(); !strings.Contains(d, "4 skipped (DELETE, INCR among them: the adapter has none)") || !strings.Contains(d, "2 TTLs not kept") {
		t.Errorf("description %q", d)
	}
	for _, x := range drain(streamsOf(t, fs, 0, 1, 0), 1) {
		if x.kind != core.OpGet && x.kind != core.OpSet || x.ttl != 0 {
			t.Errorf("sent %v on an adapter without it", x)
		}
	}

	if again := bare.Fit(fp); again.Rate != fp.Rate || fmt.Sprint(again.Workload) != fmt.Sprint(fs) {
		t.Errorf("fitted again: rate %g, %+v; want what the first fit gave", again.Rate, again.Workload)
	}
	half := p
	half.Rate /= 2 // a shard's share
	if got := bare.Fit(half).Rate; got != fp.Rate/2 {
		t.Errorf("a shard's half of the rate fitted: %g, want %g", got, fp.Rate/2)
	}
	ff := full.Fit(p)
	if ws := ff.Workload.(Spec); len(ws.Skip) != 0 || ws.DropTTL || ff.Rate != p.Rate || len(ws.OpKinds()) != 4 {
		t.Errorf("on an adapter with all: skip %v, drop TTL %v, rate %g, kinds %v", ws.Skip, ws.DropTTL, ff.Rate, ws.OpKinds())
	}

	deletes := specOf(t, writeTrace(t, "0,delete,a,0\n1,delete,b,0\n"), FormatCSV, ReplayOrdered)
	errs := bare.Fit(core.PhaseSpec{Workload: deletes}).Workload.Validate(1)
	if !strings.Contains(fmt.Sprint(errs), "none of the 2 requests") || !strings.Contains(fmt.Sprint(errs), "the adapter has none of DELETE") {
		t.Errorf("a trace of nothing the adapter has: %v", errs)
	}
}

// TestSmallValuesAreNumbers: values of up to 18 bytes are decimal numbers (a
// counter the trace sets can be incremented); longer ones letters.
func TestSmallValuesAreNumbers(t *testing.T) {
	s := specOf(t, writeTrace(t, "0,set,a,1\n0,set,b,18\n0,set,c,19\n"), FormatCSV, ReplayOrdered)
	src := streamsOf(t, s, 0, 1, 0).Source(0)
	var op core.Op
	for _, want := range []string{"digits", "digits", "letters"} {
		src.Next(&op)
		digits := len(op.Value) > 0 && strings.Trim(string(op.Value), "123456789") == ""
		letters := strings.Trim(string(op.Value), "abcdefghijklmnopqrstuvwxyz") == ""
		if want == "digits" && !digits || want == "letters" && !letters {
			t.Errorf("value of %s %q, want %s", op.Key, op.Value, want)
		}
	}
}

// TestFactsOfAnOlderBuildAreReplayedAsTheySay: facts archived by a build that
// skipped deletes (As "") are replayed as they say, deletes skipped, so that
// a rerun of that archive sends what its facts hold.
func TestFactsOfAnOlderBuildAreReplayedAsTheySay(t *testing.T) {
	s := specOf(t, "testdata/cmpbench.csv", FormatCSV, ReplayOrdered)
	for i := range s.Facts.Ops {
		if s.Facts.Ops[i].Op == "delete" {
			s.Facts.Ops[i].As = ""
		}
	}
	got := drain(streamsOf(t, s, 0, 1, 0), 1)
	for _, x := range got {
		if x.kind == core.OpDelete {
			t.Fatalf("replayed %v, which the facts say is skipped", x)
		}
	}
	if int64(len(got)) != s.Facts.Replayed("") || len(got) != 5 {
		t.Errorf("replayed %d, the facts say %d", len(got), s.Facts.Replayed(""))
	}
}
