package ycsb

import (
	"bytes"
	"compress/flate"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cmpbench/cmpbench/core"
)

var update = flag.Bool("update", false, "rewrite the golden op streams")

func spec(w Mix) Spec {
	s := Spec{RecordCount: 1000, FieldCount: 10, FieldLength: 128, InsertOrder: InsertHashed, KeyPrefix: "user", InsertStart: 2_000_000_000}
	w.Apply(&s)
	return s
}

func TestFNVHash64MatchesYCSB(t *testing.T) {
	// Reference values printed by YCSB's Utils.fnvhash64, run with Java 17.
	for _, tc := range []struct{ in, want int64 }{
		{0, 6284781860667377211},
		{1, 8517097267634966620},
		{99999, 7592201923306675823},
		{100_000_000, 8183854946431771896},
		{2_000_000_000, 5655798423661812753},
	} {
		if got := FNVHash64(tc.in); got != tc.want {
			t.Errorf("FNVHash64(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestGoldenOpStreams pins the first operations of worker 0 of 2 of each workload.
func TestGoldenOpStreams(t *testing.T) {
	for _, w := range []Mix{WorkloadA, WorkloadB, WorkloadC, WorkloadD} {
		t.Run(w.Name, func(t *testing.T) {
			var b bytes.Buffer
			s := NewPhase(spec(w), 42, 2, false).Source(0)
			var op core.Op
			for range 40 {
				s.Next(&op)
				s.Acknowledge() // as the engine does, each op done before the next at depth 1
				fmt.Fprintf(&b, "%s %s", op.Kind, op.Key)
				if op.Values != nil {
					fmt.Fprintf(&b, " %dx%d", len(op.Values), len(op.Values[0]))
				}
				if op.Kind == core.OpUpdate && !op.WholeRecord {
					fmt.Fprintf(&b, " %s", op.Fields[0])
				}
				b.WriteString("\n")
			}
			golden := filepath.Join("testdata", "ycsb_"+strings.ToLower(w.Name)+".golden")
			if *update {
				os.WriteFile(golden, b.Bytes(), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Fatalf("stream differs from %s (go test -update to accept):\n%s", golden, b.String())
			}
		})
	}
}

func TestMixProportions(t *testing.T) {
	for _, w := range []Mix{WorkloadA, WorkloadB, WorkloadC, WorkloadD} {
		s := NewPhase(spec(w), 7, 1, false).Source(0)
		counts := map[core.OpKind]int{}
		var op core.Op
		const n = 100_000
		for range n {
			s.Next(&op)
			counts[op.Kind]++
		}
		for _, p := range []struct {
			kind  core.OpKind
			share float64
		}{{core.OpRead, w.Read}, {core.OpUpdate, w.Update}, {core.OpInsert, w.Insert}} {
			if got := float64(counts[p.kind]) / n; math.Abs(got-p.share) > 0.01 {
				t.Errorf("%s: %s share %.3f, want %.2f", w.Name, p.kind, got, p.share)
			}
		}
	}
}

func TestLoadWritesEveryRecordOnceWithCheckableValues(t *testing.T) {
	sp := spec(WorkloadC)
	sp.RecordCount = 1001
	seen := map[string]bool{}
	for w := range 7 {
		s := NewPhase(sp, 3, 7, true).Source(w)
		_, quota := core.Split(sp.RecordCount, 7, w)
		var op core.Op
		for range quota {
			s.Next(&op)
			if op.Kind != core.OpInsert || len(op.Values) != 10 || len(op.Values[9]) != 128 {
				t.Fatalf("load op %+v", op)
			}
			seen[string(op.Key)] = true
		}
	}
	if len(seen) != 1001 {
		t.Fatalf("%d distinct records loaded, want 1001", len(seen))
	}
	// Record 17's field 3 can be recomputed by anyone with the seed.
	s := NewPhase(sp, 3, 1, true).Source(0)
	var op core.Op
	for range 18 {
		s.Next(&op)
	}
	want := make([]byte, 128)
	LoadValue(want, 3, 17, 3)
	if !bytes.Equal(op.Values[3], want) || string(op.Key) != string(Key(nil, &sp, 17)) {
		t.Fatal("load values are not the recomputable ones")
	}
	for _, c := range want {
		if c < ' ' || c > '~' {
			t.Fatalf("value byte %q is not printable", c)
		}
	}
}

func TestInsertsOfPhasesAndWorkersNeverCollide(t *testing.T) {
	keys := map[string]bool{}
	for _, start := range []int64{2_000_000_000, 4_000_000_000} {
		sp := spec(WorkloadD)
		sp.InsertStart = start
		ph := NewPhase(sp, 1, 4, false)
		for w := range 4 {
			s := ph.Source(w)
			var op core.Op
			for range 20_000 {
				s.Next(&op)
				if op.Kind == core.OpInsert {
					if keys[string(op.Key)] {
						t.Fatalf("%s inserted twice", op.Key)
					}
					keys[string(op.Key)] = true
				}
			}
		}
	}
}

func TestUniformReadsOnlyInitialRecords(t *testing.T) {
	sp := spec(WorkloadD)
	sp.Distribution = DistUniform // the seed's D-Uniform
	initial := map[string]bool{}
	for n := range sp.RecordCount {
		initial[string(Key(nil, &sp, n))] = true
	}
	s := NewPhase(sp, 9, 3, false).Source(1)
	var op core.Op
	for range 20_000 {
		s.Next(&op)
		if op.Kind == core.OpRead && !initial[string(op.Key)] {
			t.Fatalf("D-Uniform read %s, not an initial record", op.Key)
		}
	}
}

func TestZipfianIsSkewedAndScrambled(t *testing.T) {
	z := newScrambledZipfian(rand.New(rand.NewPCG(1, 2)), 1000)
	counts := make([]int, 1000)
	const n = 200_000
	for range n {
		counts[z.Next()]++
	}
	sorted := append([]int(nil), counts...)
	sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
	// With theta 0.99 over 10^10 items hashed onto 1000, the most popular 1% of the
	// records take a large share; uniform would give them 1%.
	top := 0
	for _, c := range sorted[:10] {
		top += c
	}
	if share := float64(top) / n; share < 0.10 {
		t.Fatalf("top 1%% of records got %.1f%% of requests", share*100)
	}
	// Scrambled: the most popular record is not record 0, and popular ones are spread.
	hot := 0
	for i, c := range counts {
		if c == sorted[0] {
			hot = i
		}
	}
	if hot == 0 && counts[1] == sorted[1] {
		t.Fatal("popular records are clustered at the start")
	}
}

func TestZipfianFollowsZipfsLaw(t *testing.T) {
	// The unscrambled generator over 10,000 items: frequency of rank r ~ 1/r^0.99.
	// Gray et al.'s method is exact for ranks 1 and 2 and approximate for the head;
	// fit the slope of log frequency over log rank across ranks 10 to 1000.
	z := newZipfian(0, 9999, 0)
	rng := rand.New(rand.NewPCG(5, 6))
	counts := make([]float64, 10000)
	const n = 2_000_000
	for range n {
		counts[z.next(rng, z.items)]++
	}
	if p := counts[0] / n; math.Abs(p-1/z.zetan) > 0.005 {
		t.Errorf("rank 1 drawn with p=%.4f, want 1/zeta=%.4f", p, 1/z.zetan)
	}
	var sx, sy, sxx, sxy, m float64
	for r := 10; r <= 1000; r++ {
		x, y := math.Log(float64(r)), math.Log(counts[r-1])
		sx, sy, sxx, sxy, m = sx+x, sy+y, sxx+x*x, sxy+x*y, m+1
	}
	slope := (m*sxy - sx*sy) / (m*sxx - sx*sx)
	if slope > -0.9 || slope < -1.1 {
		t.Fatalf("log-log slope %.3f, want about -0.99", slope)
	}
}

func TestLatestFavoursRecentInserts(t *testing.T) {
	sp := spec(WorkloadD)
	s := NewPhase(sp, 11, 1, false).Source(0)
	var op core.Op
	inserted := map[string]int{}
	var reads, recent int
	for i := range 100_000 {
		s.Next(&op)
		switch op.Kind {
		case core.OpInsert:
			inserted[string(op.Key)] = i
		case core.OpRead:
			reads++
			if at, ok := inserted[string(op.Key)]; ok && i-at < 2000 {
				recent++
			}
		}
	}
	// Reads of records inserted in the last 2% of the stream: a uniform chooser over
	// 1000 + ~5000 records would give under 2%.
	if share := float64(recent) / float64(reads); share < 0.3 {
		t.Fatalf("%.1f%% of reads hit recent inserts", share*100)
	}
}

func BenchmarkNextRead(b *testing.B) {
	s := NewPhase(spec(WorkloadB), 1, 1, false).Source(0)
	var op core.Op
	b.ReportAllocs()
	for b.Loop() {
		s.Next(&op)
	}
}

func BenchmarkNextLoad(b *testing.B) {
	sp := spec(WorkloadC)
	sp.RecordCount = 1 << 40
	s := NewPhase(sp, 1, 1, true).Source(0)
	var op core.Op
	b.ReportAllocs()
	for b.Loop() {
		s.Next(&op)
	}
}

// TestNoOpWithoutAShare: the operation is chosen by cumulative proportion and the
// last kind with a share takes what rounding leaves, so a kind with no share (here
// SCAN, which adapters reject) is never chosen.
func TestNoOpWithoutAShare(t *testing.T) {
	sp := spec(WorkloadB)
	sp.Read, sp.Update = 0.99999, 0 // the shares leave 1e-5 unassigned
	sp.MaxScanLength = 10
	s := NewPhase(sp, 3, 1, false).Source(0)
	var op core.Op
	for i := range 1_000_000 {
		s.Next(&op)
		if op.Kind != core.OpRead {
			t.Fatalf("op %d is a %s; the mix has only READ", i, op.Kind)
		}
	}
}

// TestRunValuesAreFreshRandomBytes: every value an UPDATE or INSERT writes is new
// pseudo-random printable text, as YCSB's RandomByteIterator, not a window of a
// small pool that engines which compress or deduplicate would shrink.
func TestRunValuesAreFreshRandomBytes(t *testing.T) {
	s := NewPhase(spec(WorkloadA), 5, 1, false).Source(0)
	var op core.Op
	var all bytes.Buffer
	chunks := map[string]bool{}
	for all.Len() < 1<<20 {
		s.Next(&op)
		for _, v := range op.Values {
			for _, c := range v {
				if c < ' ' || c > '~' {
					t.Fatalf("value byte %q is not printable", c)
				}
			}
			for i := 0; i+16 <= len(v); i += 16 {
				if chunks[string(v[i:i+16])] {
					t.Fatalf("a 16-byte run of a value repeats after %d bytes", all.Len())
				}
				chunks[string(v[i:i+16])] = true
			}
			all.Write(v)
		}
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	w.Write(all.Bytes())
	w.Close()
	// 95 printable symbols carry log2(95)/8 = 82% of a byte's entropy.
	if ratio := float64(z.Len()) / float64(all.Len()); ratio < 0.8 {
		t.Fatalf("1 MiB of values compresses to %.0f%%", ratio*100)
	}
}

func BenchmarkNextUpdateHeavy(b *testing.B) {
	s := NewPhase(spec(WorkloadA), 1, 1, false).Source(0)
	var op core.Op
	b.ReportAllocs()
	for b.Loop() {
		s.Next(&op)
	}
}

func TestUpdateWritesOneRandomFieldByDefault(t *testing.T) {
	sp := spec(WorkloadA)
	s := NewPhase(sp, 13, 1, false).Source(0)
	var op core.Op
	seen := map[string]int{}
	updates := 0
	for range 20_000 {
		s.Next(&op)
		if op.Kind == core.OpRead && len(op.Fields) != sp.FieldCount {
			t.Fatalf("a READ expects %d fields; it reads every field", len(op.Fields))
		}
		if op.Kind != core.OpUpdate {
			continue
		}
		updates++
		if op.WholeRecord || len(op.Fields) != 1 || len(op.Values) != 1 || len(op.Values[0]) != sp.FieldLength {
			t.Fatalf("update of %d fields (%d values), whole record %v; YCSB's default writes one", len(op.Fields), len(op.Values), op.WholeRecord)
		}
		seen[string(op.Fields[0])]++
	}
	// The field is uniform over all of them, as YCSB's fieldchooser.
	for i := range sp.FieldCount {
		if n := seen[string(FieldName(i))]; math.Abs(float64(n)/float64(updates)-0.1) > 0.02 {
			t.Errorf("field%d in %d of %d updates", i, n, updates)
		}
	}
	sp.WriteAllFields = true
	s = NewPhase(sp, 13, 1, false).Source(0)
	for range 100 {
		s.Next(&op)
		if op.Kind == core.OpUpdate && (!op.WholeRecord || len(op.Fields) != sp.FieldCount || len(op.Values) != sp.FieldCount) {
			t.Fatalf("write_all_fields: update of %d fields, whole record %v", len(op.Fields), op.WholeRecord)
		}
	}
}

// TestLatestIsSharedByTheWorkersOfAPhase: as YCSB's one AcknowledgedCounterGenerator
// for all client threads, a worker's latest reads favour the records any worker
// inserted, once those inserts are acknowledged, and never one that is not.
func TestLatestIsSharedByTheWorkersOfAPhase(t *testing.T) {
	sp := spec(WorkloadD)
	ph := NewPhase(sp, 17, 2, false)
	writer, reader := ph.Source(0), ph.Source(1)
	var op core.Op
	inserted := map[string]bool{}
	for len(inserted) < 200 {
		writer.Next(&op)
		if op.Kind == core.OpInsert {
			inserted[string(op.Key)] = true
		}
		if a, ok := any(writer).(core.Acknowledger); ok {
			a.Acknowledge()
		}
	}
	// The writer's last op may be an insert in flight: the reader must not read it.
	var inFlight string
	for inFlight == "" {
		writer.Next(&op)
		if op.Kind == core.OpInsert {
			inFlight = string(op.Key)
		}
	}
	reads, recent := 0, 0
	for range 20_000 {
		reader.Next(&op)
		if op.Kind != core.OpRead {
			continue
		}
		reads++
		if string(op.Key) == inFlight {
			t.Fatalf("read %s, whose insert has not finished", op.Key)
		}
		if inserted[string(op.Key)] {
			recent++
		}
	}
	// 200 of 1,200 records, the most recent: zipfian over recency gives them far
	// more than their 17%; a reader that sees only its own inserts gives them none.
	if share := float64(recent) / float64(reads); share < 0.3 {
		t.Fatalf("%.1f%% of the reader's reads hit the writer's inserts", share*100)
	}
}

func TestInsertCounterAcknowledgesInOrder(t *testing.T) {
	c := newInsertCounter(8)
	for range 5 {
		c.claim()
	}
	for _, step := range []struct{ ack, want int64 }{{1, 0}, {2, 0}, {0, 3}, {4, 3}, {3, 5}} {
		c.acknowledge(step.ack)
		if got := c.acked.Load(); got != step.want {
			t.Fatalf("after acknowledging %d: %d acknowledged, want %d", step.ack, got, step.want)
		}
	}
	// An insert a whole window ahead of an unfinished one stops the wait for it.
	stuck := c.claim() // 5, never acknowledged
	for range 8 {
		c.acknowledge(c.claim())
	}
	if got := c.acked.Load(); got <= stuck {
		t.Fatalf("%d acknowledged: a straggler held the window", got)
	}
	c.acknowledge(stuck) // late: it must not take back its slot
	for range 3 {
		c.acknowledge(c.claim())
	}
	if got, want := c.acked.Load(), c.next.Load(); got != want {
		t.Fatalf("%d acknowledged of %d finished", got, want)
	}
}

func TestInsertCounterConcurrently(t *testing.T) {
	c := newInsertCounter(64)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range 20_000 {
				i := c.claim()
				if rng.IntN(16) == 0 {
					runtime.Gosched()
				}
				c.acknowledge(i)
			}
		}()
	}
	wg.Wait()
	if got := c.acked.Load(); got != 8*20_000 {
		t.Fatalf("%d acknowledged of %d", got, 8*20_000)
	}
}

func BenchmarkNextLatest(b *testing.B) {
	s := NewPhase(spec(WorkloadD), 1, 1, false).Source(0)
	var op core.Op
	b.ReportAllocs()
	for b.Loop() {
		s.Next(&op)
		s.Acknowledge()
	}
}

func TestYCSBDescribeSaysWhatAnUpdateWrites(t *testing.T) {
	y := Spec{RecordCount: 10, FieldCount: 10, FieldLength: 128, Distribution: DistZipfian}
	WorkloadA.Apply(&y)
	if got, want := y.Describe(), "ycsb read 0.5 update 0.5 (1 field) zipfian, 10x128B, 10 records"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	y.WriteAllFields = true
	if got := y.Describe(); !strings.Contains(got, "update 0.5 (all fields)") {
		t.Errorf("%q", got)
	}
}

// Issue 46: a pipelined connection has several operations in flight, and the
// engine acknowledges each as it finishes, oldest first: an insert counts as
// finished when its own acknowledgement comes, not when the next op is asked.
func TestPipelinedInsertsAreAcknowledgedInOrder(t *testing.T) {
	sp := spec(Mix{Name: "inserts", Insert: 1, Distribution: DistLatest})
	p := NewPhase(sp, 42, 1, false)
	s := p.Source(0)
	var op core.Op
	for range 4 { // four inserts in flight
		s.Next(&op)
		if op.Kind != core.OpInsert {
			t.Fatalf("op %s, want INSERT", op.Kind)
		}
	}
	for i, want := range []int64{0, 1, 2} {
		if got := p.inserts.acked.Load(); got != want {
			t.Fatalf("after %d acknowledgements: %d inserts finished, want %d", i, got, want)
		}
		s.Acknowledge()
	}
	s.Next(&op) // asking for another finishes none
	if got := p.inserts.acked.Load(); got != 3 {
		t.Fatalf("%d inserts finished, want 3", got)
	}
}
