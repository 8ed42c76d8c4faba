package memtier

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/keys"
)

func base() Spec {
	return Spec{
		SetRatio: 1, GetRatio: 10, SetPattern: 'R', GetPattern: 'R',
		KeyMin: 1, KeyMax: 10_000, KeyPrefix: "kv_", ValueMin: 256, ValueMax: 256,
	}
}

func keyIndex(t *testing.T, op *core.Op, prefix string) int64 {
	t.Helper()
	s := string(op.Key)
	if !strings.HasPrefix(s, prefix) {
		t.Fatalf("key %q lacks prefix %q", s, prefix)
	}
	n, err := strconv.ParseInt(s[len(prefix):], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRatioIsExact(t *testing.T) {
	for _, r := range [][2]int{{1, 10}, {1, 19}, {1, 1}, {19, 1}, {1, 0}, {0, 1}} {
		spec := base()
		spec.SetRatio, spec.GetRatio = r[0], r[1]
		s := New(spec, 1, 0, 1)
		cycle := r[0] + r[1]
		var sets, gets int
		var op core.Op
		for range cycle * 100 {
			s.Next(&op)
			if op.Kind == core.OpSet {
				sets++
			} else {
				gets++
			}
		}
		if sets != r[0]*100 || gets != r[1]*100 {
			t.Errorf("ratio %d:%d gave %d sets, %d gets", r[0], r[1], sets, gets)
		}
	}
}

func TestMissFraction(t *testing.T) {
	for _, f := range []float64{0.1, 0.05, 0.5} {
		for _, p := range []keys.Pattern{'R', 'G'} {
			spec := base()
			spec.SetRatio, spec.GetRatio = 0, 1
			spec.GetPattern = p
			spec.MissFraction = f
			s := New(spec, 3, 0, 1)
			const n = 100_000
			misses := 0
			var op core.Op
			for range n {
				s.Next(&op)
				if keyIndex(t, &op, "kv_") > spec.KeyMax {
					misses++
				}
			}
			if got := float64(misses) / n; math.Abs(got-f) > 0.01 {
				t.Errorf("pattern %c miss fraction %.3f, want %.2f ± 0.01", p, got, f)
			}
		}
	}
}

func TestUniformMissesWidenTheRange(t *testing.T) {
	// For R, reads with 10% misses must be uniform over a range widened by 1/0.9.
	spec := base()
	spec.SetRatio, spec.GetRatio = 0, 1
	spec.KeyMax = 900
	spec.MissFraction = 0.1
	s := New(spec, 9, 0, 1)
	var op core.Op
	var hi int64
	for range 200_000 {
		s.Next(&op)
		hi = max(hi, keyIndex(t, &op, "kv_"))
	}
	if hi != 1000 {
		t.Fatalf("largest key read %d, want the widened range's end 1000", hi)
	}
}

func TestValueSizes(t *testing.T) {
	spec := base()
	spec.SetRatio, spec.GetRatio = 1, 0
	spec.ValueMin, spec.ValueMax = 1024, 4096
	s := New(spec, 5, 0, 1)
	var op core.Op
	lo, hi := 1<<30, 0
	var prev []byte
	distinct := 0
	for range 10_000 {
		s.Next(&op)
		lo, hi = min(lo, len(op.Value)), max(hi, len(op.Value))
		if !bytes.Equal(prev, op.Value[:16]) {
			distinct++
		}
		prev = append(prev[:0], op.Value[:16]...)
	}
	if lo < 1024 || hi > 4096 || lo > 1100 || hi < 4000 {
		t.Fatalf("value sizes %d..%d, want spread over 1024..4096", lo, hi)
	}
	if distinct < 9_000 {
		t.Fatalf("only %d distinct value prefixes in 10000 values", distinct)
	}
}

func TestSameSeedSameStream(t *testing.T) {
	a, b := New(base(), 11, 3, 8), New(base(), 11, 3, 8)
	c := New(base(), 12, 3, 8)
	var oa, ob, oc core.Op
	differs := false
	for range 1000 {
		a.Next(&oa)
		b.Next(&ob)
		c.Next(&oc)
		if oa.Kind != ob.Kind || !bytes.Equal(oa.Key, ob.Key) || !bytes.Equal(oa.Value, ob.Value) {
			t.Fatal("same seed gave different streams")
		}
		if !bytes.Equal(oa.Key, oc.Key) {
			differs = true
		}
	}
	if !differs {
		t.Fatal("a different seed gave the same keys")
	}
}

func TestLoadWithPWritesEveryKeyOnce(t *testing.T) {
	spec := base()
	spec.SetRatio, spec.GetRatio = 1, 0
	spec.SetPattern = 'P'
	const workers = 7
	seen := map[string]int{}
	for w := range workers {
		s := New(spec, 1, w, workers)
		_, quota := core.Split(spec.Keys(), workers, w)
		var op core.Op
		for range quota {
			s.Next(&op)
			seen[string(op.Key)]++
		}
	}
	if len(seen) != 10_000 {
		t.Fatalf("wrote %d distinct keys, want 10000", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s written %d times", k, n)
		}
	}
}

func BenchmarkNext(b *testing.B) {
	spec := base()
	spec.MissFraction = 0.1
	s := New(spec, 1, 0, 1)
	var op core.Op
	b.ReportAllocs()
	for b.Loop() {
		s.Next(&op)
	}
}
