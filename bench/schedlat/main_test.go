package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime/trace"
	"testing"
	"time"
)

// A trace of this test, with a phase region in which goroutines are woken by a
// channel, reads back as that phase with their waits.
func TestReadFindsPhasesAndWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.trace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		t.Skip("tracing is on already (go test -trace):", err)
	}
	region := trace.StartRegion(context.Background(), "phase fixed")
	ch := make(chan int)
	done := make(chan struct{})
	go func() {
		for range ch {
		}
		close(done)
	}()
	for i := range 100 {
		ch <- i
		time.Sleep(10 * time.Microsecond)
	}
	close(ch)
	<-done
	region.End()
	trace.Stop()
	f.Close()

	phases, err := read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 1 || phases[0].name != "fixed" || phases[0].end <= phases[0].begin {
		t.Fatalf("phases %+v, want one named fixed", phases)
	}
	if n := len(phases[0].waits); n < 50 {
		t.Fatalf("%d waits from runnable to running, want one per wake-up (about 100)", n)
	}
}
