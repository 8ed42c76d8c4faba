package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		n     int64
		parts int
	}{{10, 3}, {10_000, 7}, {5, 5}, {3, 8}, {0, 2}} {
		var next int64
		for k := range tc.parts {
			start, count := Split(tc.n, tc.parts, k)
			if start != next {
				t.Fatalf("Split(%d,%d,%d) starts at %d, want %d", tc.n, tc.parts, k, start, next)
			}
			q := tc.n / int64(tc.parts)
			if count != q && count != q+1 {
				t.Fatalf("Split(%d,%d,%d) = %d items", tc.n, tc.parts, k, count)
			}
			next += count
		}
		if next != tc.n {
			t.Fatalf("Split(%d,%d) covers %d", tc.n, tc.parts, next)
		}
	}
}

func TestClassOf(t *testing.T) {
	tests := []struct {
		err  error
		want ErrorClass
	}{
		{&OpError{Class: ErrClassOOM, Err: errors.New("OOM")}, ErrClassOOM},
		{fmt.Errorf("wrapped: %w", &OpError{Class: ErrClassProtocol, Err: errors.New("x")}), ErrClassProtocol},
		{context.DeadlineExceeded, ErrClassTimeout},
		{os.ErrDeadlineExceeded, ErrClassTimeout},
		{io.EOF, ErrClassConnection},
		{syscall.ECONNREFUSED, ErrClassConnection},
		{&net.OpError{Op: "dial", Err: errors.New("no route")}, ErrClassConnection},
		{errors.New("anything"), ErrClassOther},
	}
	for _, tc := range tests {
		if got := ClassOf(tc.err); got != tc.want {
			t.Errorf("ClassOf(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

func TestTotalsMergeExactly(t *testing.T) {
	// Intervals encoded apart, summed by Totals in sparse form, equal one histogram of
	// every value: percentiles, maximum and the encoded histogram itself.
	all, allLag := NewHistogram(), NewHistogram()
	tt := NewTotals(true)
	for w := range 5 {
		svc, lag := NewHistogram(), NewHistogram()
		for i := range 10_000 {
			v := int64((i*7919+w*104729)%5_000_000 + 1)
			svc.RecordValue(v)
			all.RecordValue(v)
			lag.RecordValue(int64(i%300 + 1))
			allLag.RecordValue(int64(i%300 + 1))
		}
		o := OpInterval{Op: OpGet, OK: 10_000, Hits: 9_000, Misses: 1_000}
		o.Errors[ErrClassTimeout] = 2
		var err error
		if o.Service, err = Summarize(svc); err != nil {
			t.Fatal(err)
		}
		o.Response = o.Service
		if o.Lag, err = Summarize(lag); err != nil {
			t.Fatal(err)
		}
		if err := tt.Add(&IntervalReport{Index: w, Ops: []OpInterval{o}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tt.Result()
	if err != nil || len(res) != 1 {
		t.Fatalf("%v %d", err, len(res))
	}
	got := res[0]
	if got.OK != 50_000 || got.Hits != 45_000 || got.Misses != 5_000 || got.Errors[ErrClassTimeout] != 10 {
		t.Fatalf("counts %+v", got)
	}
	want, _ := Summarize(all)
	wantLag, _ := Summarize(allLag)
	for _, c := range []struct {
		name      string
		got, want Latency
	}{{"service", got.Service, want}, {"response", got.Response, want}, {"lag", got.Lag, wantLag}} {
		g, w := c.got, c.want
		if g.Count != w.Count || g.P50 != w.P50 || g.P90 != w.P90 || g.P99 != w.P99 || g.P999 != w.P999 || g.P9999 != w.P9999 || g.Max != w.Max {
			t.Errorf("%s: merged %+v, all values %+v", c.name, g, w)
		}
		h, err := g.Histogram()
		if err != nil || !h.Equals(mustHist(t, w)) {
			t.Errorf("%s: merged histogram differs from the histogram of all values (%v)", c.name, err)
		}
	}
}

func mustHist(t *testing.T, l Latency) *hdrhistogram.Histogram {
	t.Helper()
	h, err := l.Histogram()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestClientLagged(t *testing.T) {
	us := int64(time.Microsecond)
	tests := []struct {
		name      string
		lag, svc  int64
		want      bool
		closedRun bool
	}{
		{"lag below the service time", 150 * us, 300 * us, false, false},
		{"lag above the service time but below the floor", 180 * us, 100 * us, false, false},
		{"lag above both", 900 * us, 300 * us, true, false},
		{"closed loop has no lag", 0, 300 * us, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := OpInterval{Op: OpGet, Service: Latency{Count: 10, P99: tc.svc}}
			if !tc.closedRun {
				o.Lag = Latency{Count: 10, P99: tc.lag}
			}
			if got := ClientLagged([]OpInterval{o}); got != tc.want {
				t.Fatalf("ClientLagged = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	got := ShellQuote([]string{"redis-server", "--save", "", "--dir", "/tmp/a b", "--port", "{port}", "it's"})
	want := `redis-server --save '' --dir '/tmp/a b' --port {port} 'it'\''s'`
	if got != want {
		t.Fatalf("%s", got)
	}
}

func TestSDKVersionOf(t *testing.T) {
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Path: "example.com/etcd-adapter", Version: "v1.2.0"}, Deps: []*debug.Module{{Path: ModulePath, Version: "v0.3.0"}}}, "v0.3.0"},
		{debug.BuildInfo{Main: debug.Module{Path: "example.com/a"}, Deps: []*debug.Module{{Path: ModulePath, Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../cmpbench"}}}}, "v0.0.0-00010101000000-000000000000 => ../cmpbench"},
		{debug.BuildInfo{Main: debug.Module{Path: "example.com/a"}}, "unknown"},
	} {
		if got := sdkVersionOf(&tc.bi); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.bi.Main, got, tc.want)
		}
	}
}

func TestCutErrorSample(t *testing.T) {
	short := "timeout: read tcp 127.0.0.1:3000: i/o timeout"
	if got := CutErrorSample(short); got != short {
		t.Errorf("a short sample changed: %q", got)
	}
	long := strings.Repeat("é", MaxErrorSampleBytes) // two bytes each
	got := CutErrorSample(long)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, fmt.Sprintf("… (%d bytes more)", len(long)-MaxErrorSampleBytes)) || len(got) > MaxErrorSampleBytes+40 {
		t.Errorf("cut to %d bytes: %q", len(got), got[len(got)-40:])
	}
}

func TestYAMLNames(t *testing.T) {
	fsys := fstest.MapFS{
		"defs/b.yaml":     {Data: []byte("b")},
		"defs/a.yaml":     {Data: []byte("a")},
		"defs/notes.txt":  {Data: []byte("not a definition")},
		"defs/sub/c.yaml": {Data: []byte("in a subdirectory")},
		"defs/dir.yaml/x": {Data: []byte("a directory named like a file")},
		"other/d.yaml":    {Data: []byte("another directory")},
	}
	for _, tc := range []struct {
		dir  string
		want []string
	}{
		{"defs", []string{"a", "b"}},
		{"other", []string{"d"}},
		{"missing", nil},
	} {
		if got := YAMLNames(fsys, tc.dir); !slices.Equal(got, tc.want) {
			t.Errorf("YAMLNames(%q) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}
