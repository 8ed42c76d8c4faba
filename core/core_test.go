package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
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

func TestMergeIsExact(t *testing.T) {
	// Per-worker histograms merged per interval, then per phase, equal one histogram
	// of every value.
	all := NewHistogram()
	var parts []*OpInterval
	for w := range 5 {
		o := &OpInterval{Op: OpGet, Service: NewHistogram()}
		for i := range 10_000 {
			v := int64((i*7919+w*104729)%5_000_000 + 1)
			o.Service.RecordValue(v)
			all.RecordValue(v)
			o.OK++
		}
		parts = append(parts, o)
	}
	var total OpInterval
	for _, p := range parts {
		total.Merge(p)
	}
	if total.OK != 50_000 || !total.Service.Equals(all) {
		t.Fatal("merged histogram differs from the histogram of all values")
	}
	enc, err := EncodeHist(total.Service)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHist(enc)
	if err != nil || !back.Equals(all) {
		t.Fatalf("encode/decode round trip: %v", err)
	}
}

func TestShellQuote(t *testing.T) {
	got := ShellQuote([]string{"redis-server", "--save", "", "--dir", "/tmp/a b", "--port", "{port}", "it's"})
	want := `redis-server --save '' --dir '/tmp/a b' --port {port} 'it'\''s'`
	if got != want {
		t.Fatalf("%s", got)
	}
}
