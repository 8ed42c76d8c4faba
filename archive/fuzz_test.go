package archive

// Fuzz targets for everything that reads bytes from an archive directory, or from
// the in-progress directory that recovery finishes: manifest.json and
// validation.json, the JSON-lines spools, the Parquet tables, SHA256SUMS and the
// encoded histograms. None may panic, whatever the bytes. Each runs as
//
//	go test -run '^$' -fuzz '^FuzzManifest$' -fuzztime 1000x ./archive/
//
// and its seeds are under testdata/fuzz/<FuzzName>/, besides the tiny archive
// each target builds. make fuzz runs them all, as make test does.

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/memtier"
)

// tinyRun hands a one-system run of one fixed-rate load to w, as a runner would;
// with ended false it stops in the middle of the phase, as a run that died there.
func tinyRun(tb testing.TB, w *Writer, ended bool) {
	tb.Helper()
	sys := core.SystemRun{Name: "s", Adapter: "resp", Endpoint: "127.0.0.1:6379",
		Capture: core.Capture{Product: "redis", Version: "7", Sections: map[string]string{"info": "redis_version:7\n"}}}
	if err := w.SystemStarted(sys); err != nil {
		tb.Fatal(err)
	}
	m := &memtier.Spec{SetRatio: 1, GetRatio: 1, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 10, KeyPrefix: "k", ValueMin: 8, ValueMax: 8}
	spec := core.PhaseSpec{Name: "load-at-100", Kind: core.PhaseLoad, Ops: 200, Connections: 1, Rate: 100, Duration: 2 * time.Second,
		Interval: time.Second, Workload: *m}
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := core.PhaseRun{System: "s", Index: 0, Spec: spec, Shape: "100 ops/s, 1 conns"}
	p.End = core.PhaseEnd{Status: core.StatusOK, Started: start, Ended: start.Add(2 * time.Second), Elapsed: 2 * time.Second}
	if err := w.PhaseStarted(&p); err != nil {
		tb.Fatal(err)
	}
	totals := core.NewTotals(true)
	for iv := range 2 {
		rep := core.IntervalReport{Index: iv, Start: time.Duration(iv) * time.Second, End: time.Duration(iv+1) * time.Second,
			Probe: []core.ProbeRecord{{Intended: time.Duration(iv) * time.Second, Start: time.Duration(iv)*time.Second + 1000, End: time.Duration(iv)*time.Second + 90_000, Op: core.OpGet}}}
		for _, k := range []core.OpKind{core.OpSet, core.OpGet} {
			o := core.OpInterval{Op: k, OK: 50, Hits: 40 * int64(k), Misses: 10 * int64(k), Bytes: 400}
			o.Errors[core.ErrClassTimeout] = 1
			svc, resp, lag := core.NewHistogram(), core.NewHistogram(), core.NewHistogram()
			for i := range int64(50) {
				svc.RecordValue(50_000 + i*1000)
				resp.RecordValue(60_000 + i*1500)
				lag.RecordValue(1000 + i)
			}
			var err error
			if o.Service, err = core.Summarize(svc); err != nil {
				tb.Fatal(err)
			}
			o.Response, _ = core.Summarize(resp)
			o.Lag, _ = core.Summarize(lag)
			rep.Ops = append(rep.Ops, o)
		}
		if !ended && iv == 1 {
			return
		}
		if err := totals.Add(&rep); err != nil {
			tb.Fatal(err)
		}
		if err := w.Interval(&p, &rep); err != nil {
			tb.Fatal(err)
		}
	}
	var err error
	if p.Totals, err = totals.Result(); err != nil {
		tb.Fatal(err)
	}
	p.Intervals = 2
	p.ServerStats = []core.StatsSample{{At: start, Point: "before", Stats: map[string]string{"commandstats.cmdstat_get": "calls=1", "memory.used_memory": "1024"}}}
	p.ClientStats = []core.ProcessSample{{At: start, Process: "plugin", Pid: 1, CPUPercent: 1, RSSBytes: 1 << 20}}
	if err := w.PhaseEnded(&p); err != nil {
		tb.Fatal(err)
	}
	if err := w.Validation(core.Validation{System: "s", Point: "after load", Expected: 200, Counted: 200, Samples: []core.SampleCheck{}, Problems: []string{}}); err != nil {
		tb.Fatal(err)
	}
}

func tinyHeader() Header {
	return Header{RunID: "tiny", Seed: 1, Scale: 1, Repeat: 1, Started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Suite:   SuiteInfo{Name: "tiny", YAML: "name: tiny\n"},
		Systems: []SystemInfo{{Name: "s", Adapter: "resp", DefinedIn: "built-in", Definition: map[string]any{"adapter": "resp"}}}}
}

// tinyArchive writes a finished archive of tinyRun and returns its directory.
func tinyArchive(tb testing.TB) string {
	tb.Helper()
	w, err := Create(tb.TempDir(), tinyHeader(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tinyRun(tb, w, true)
	if _, err := w.Finish(core.RunComplete, time.Date(2026, 12, 1, 10, 0, 3, 0, time.UTC)); err != nil {
		tb.Fatal(err)
	}
	dir, err := w.Commit()
	if err != nil {
		tb.Fatal(err)
	}
	if errs := Verify(dir); len(errs) > 0 {
		tb.Fatal(errs)
	}
	return dir
}

func readTiny(tb testing.TB, dir, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func writeTiny(tb testing.TB, path string, data []byte) {
	tb.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// FuzzManifest: manifest.json and validation.json, parsed and then verified
// against the tiny archive's tables.
func FuzzManifest(f *testing.F) {
	dir := tinyArchive(f)
	f.Add(readTiny(f, dir, ManifestFile), readTiny(f, dir, ValidationFile))
	f.Fuzz(func(t *testing.T, manifest, validations []byte) {
		m, err := parseManifest(manifest, ManifestFile)
		vals, verr := parseValidations(validations)
		if err == nil && verr == nil {
			checkManifest(&m, vals)
		}
		writeTiny(t, filepath.Join(dir, ManifestFile), manifest)
		writeTiny(t, filepath.Join(dir, ValidationFile), validations)
		Verify(dir)
		if a, err := Open(dir); err == nil {
			a.Validations()
		}
	})
}

// FuzzSpool: the JSON-lines spool files that recovery reads, as every row type,
// cut after their last whole line, and merged into a phase's totals.
func FuzzSpool(f *testing.F) {
	out := f.TempDir()
	w, err := Create(out, tinyHeader(), nil)
	if err != nil {
		f.Fatal(err)
	}
	tinyRun(f, w, true)
	w.closeSpools()
	for _, name := range []string{spoolIntervals, spoolSummary, spoolProbe} {
		f.Add(readTiny(f, filepath.Join(w.Dir(), SpoolDir), name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, SpoolDir, spoolIntervals)
		if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		writeTiny(t, path, data)
		ids := map[phaseID]bool{}
		readSpoolFrom(path, 0, func(r *IntervalRow) error {
			if len(ids) < 4 {
				ids[phaseID{System: r.System, Index: r.PhaseIndex, Name: r.Phase, Repetition: r.Repetition}] = true
			}
			return nil
		})
		readSpoolFrom(path, 0, func(*SummaryRow) error { return nil })
		readSpoolFrom(path, 0, func(*ProbeRow) error { return nil })
		readSpoolFrom(path, 0, func(*ServerStatRow) error { return nil })
		readSpoolFrom(path, 0, func(*ClientStatRow) error { return nil })
		readSpoolFrom(path, int64(len(data)/2), func(*IntervalRow) error { return nil })
		w := &Writer{dir: dir}
		for id := range ids {
			w.totalsFromSpool(id, true, 0)
			w.totalsFromSpool(id, false, 0)
		}
		if err := dropTornLine(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Fatalf("after dropTornLine the spool ends in %q", b[len(b)-1])
		}
	})
}

// FuzzRecover: the intervals and summary spools of a run that died in its phase,
// recovered, finished and verified.
func FuzzRecover(f *testing.F) {
	out := f.TempDir()
	w, err := Create(filepath.Join(out, "seed"), tinyHeader(), nil)
	if err != nil {
		f.Fatal(err)
	}
	tinyRun(f, w, false)
	w.closeSpools()
	seed := readTiny(f, filepath.Join(w.Dir(), SpoolDir), spoolIntervals)
	// recovered finishes the run whose spools are intervals and summary and
	// returns what verify says of the archive, or why it could not be finished.
	recovered := func(t testing.TB, intervals, summary []byte) ([]error, error) {
		pending := filepath.Join(out, "run", PendingName("tiny"))
		os.RemoveAll(filepath.Dir(pending))
		if err := os.CopyFS(pending, os.DirFS(w.Dir())); err != nil {
			t.Fatal(err)
		}
		writeTiny(t, filepath.Join(pending, SpoolDir, spoolIntervals), intervals)
		writeTiny(t, filepath.Join(pending, SpoolDir, spoolSummary), summary)
		w, err := Recover(pending, nil)
		if err != nil {
			return nil, err
		}
		if _, err := w.Finish(core.RunInterrupted, w.Ended()); err != nil {
			return nil, err
		}
		dir, err := w.Commit()
		if err != nil {
			return nil, err
		}
		return Verify(dir), nil
	}
	if errs, err := recovered(f, seed, nil); err != nil || len(errs) > 0 {
		f.Fatalf("the seed does not recover: %v %v", err, errs)
	}
	f.Add(seed, []byte{})
	f.Fuzz(func(t *testing.T, intervals, summary []byte) {
		recovered(t, intervals, summary)
	})
}

// FuzzParquet: a table file, read as each of the archive's tables.
func FuzzParquet(f *testing.F) {
	dir := tinyArchive(f)
	for _, name := range []string{SummaryFile, IntervalsFile, ProbeFile, ServerStats, ClientStats} {
		f.Add(readTiny(f, dir, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "table.parquet")
		writeTiny(t, path, data)
		var s []SummaryRow
		readParquet(path, &s)
		eachParquetRow(path, func(*IntervalRow) error { return nil })
		var p []ProbeRow
		readParquet(path, &p)
		eachParquetRow(path, func(*ServerStatRow) error { return nil })
		var c []ClientStatRow
		readParquet(path, &c)
	})
}

// FuzzSums: SHA256SUMS of the tiny archive, verified.
func FuzzSums(f *testing.F) {
	dir := tinyArchive(f)
	f.Add(readTiny(f, dir, SumsFile))
	f.Fuzz(func(t *testing.T, data []byte) {
		writeTiny(t, filepath.Join(dir, SumsFile), data)
		Verify(dir)
	})
}

// FuzzHistogram: an encoded HdrHistogram from a table or a spool row, decoded as
// the report and verify do and merged into totals as recovery does. The input is
// tried as it is and as the inflated body of the standard encoding, wrapped, so
// that the decoder's header and counts are reached, not only its base64 and zlib.
func FuzzHistogram(f *testing.F) {
	h := core.NewHistogram()
	for i := range int64(100) {
		h.RecordValue(1000 + i*i*37)
	}
	enc, err := core.EncodeHist(h)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc)
	if body, err := inflated(enc); err == nil {
		f.Add(body)
	} else {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, enc := range [][]byte{data, wrapped(data)} {
			if h, err := core.DecodeHist(enc); err == nil && h != nil {
				h.ValueAtQuantile(99)
				h.TotalCount()
			}
			r := IntervalRow{Op: "GET", RespHDR: enc, SvcHDR: enc, LagHDR: enc}
			o, err := r.opInterval()
			if err != nil {
				t.Fatal(err)
			}
			for _, open := range []bool{true, false} {
				totals := core.NewTotals(open)
				if totals.Add(&core.IntervalReport{Ops: []core.OpInterval{o}}) == nil {
					totals.Result()
				}
			}
		}
	})
}

// inflated is the body of a standard ("HISTFAAA...") encoding: base64, then an
// 8-byte header (cookie, length), then zlib.
func inflated(enc []byte) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(string(enc))
	if err != nil {
		return nil, err
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// wrapped is the inverse of inflated.
func wrapped(body []byte) []byte {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(body)
	zw.Close()
	raw := binary.BigEndian.AppendUint32(nil, uint32(hdrhistogram.V2CompressedEncodingCookieBase))
	raw = binary.BigEndian.AppendUint32(raw, uint32(z.Len()))
	return []byte(base64.StdEncoding.EncodeToString(append(raw, z.Bytes()...)))
}
