// Package ycsb generates YCSB core-workload operation streams over multi-field
// records: READ of all fields, UPDATE of one field or all, INSERT of all fields,
// SCAN; request
// distributions uniform, zipfian (scrambled, as YCSB) and latest; hashed or ordered
// record keys ("user" + FNV-1a 64 of the record number, as YCSB).
package ycsb

import (
	"math/rand/v2"
	"strconv"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/keys"
)

// Key writes the key of record n into buf.
func Key(buf []byte, spec *Spec, n int64) []byte {
	buf = append(buf[:0], spec.KeyPrefix...)
	if spec.InsertOrder == InsertHashed {
		n = FNVHash64(n)
	}
	return strconv.AppendInt(buf, n, 10)
}

// FieldName is the name of field i, as YCSB: field0, field1, ...
func FieldName(i int) []byte { return strconv.AppendInt([]byte("field"), int64(i), 10) }

// LoadValue fills dst with the value a load with seed gives field i of record n:
// printable ASCII, a pure function of its arguments.
func LoadValue(dst []byte, seed uint64, n int64, i int) {
	// FNV-1a of the three numbers' bytes seeds the stream.
	h := uint64(0xCBF29CE484222325)
	for _, v := range [3]uint64{seed, uint64(n), uint64(i)} {
		for range 8 {
			h = (h ^ (v & 0xff)) * 1099511628211
			v >>= 8
		}
	}
	fill(dst, h)
}

// printable maps a random byte to printable ASCII (space to '~').
var printable = func() (t [256]byte) {
	for i := range t {
		t[i] = ' ' + byte(i%95)
	}
	return t
}()

// fill writes printable ASCII from a splitmix64 stream, eight bytes per step, and
// returns the stream's state after it.
func fill(dst []byte, state uint64) uint64 {
	for i := 0; i < len(dst); i += 8 {
		state += core.SplitMixGamma
		z := core.Mix64(state)
		if i+8 <= len(dst) {
			d := dst[i : i+8 : i+8]
			d[0], d[1], d[2], d[3] = printable[byte(z)], printable[byte(z>>8)], printable[byte(z>>16)], printable[byte(z>>24)]
			d[4], d[5], d[6], d[7] = printable[byte(z>>32)], printable[byte(z>>40)], printable[byte(z>>48)], printable[byte(z>>56)]
			continue
		}
		for j := 0; i+j < len(dst); j++ {
			dst[i+j] = printable[byte(z>>(8*j))]
		}
	}
	return state
}

// Phase is the streams of one phase and what they share, as YCSB's client threads
// share one insert counter: inserts are numbered across the phase's workers, and
// the latest distribution reads the acknowledged ones of every worker.
type Phase struct {
	spec    Spec
	seed    uint64
	workers int
	load    bool
	inserts *insertCounter // run phases
}

// NewPhase returns the streams of a phase of workers; load selects the load streams.
func NewPhase(spec Spec, seed uint64, workers int, load bool) *Phase {
	p := &Phase{spec: spec, seed: seed, workers: workers, load: load}
	if !load {
		window := 0
		if spec.Distribution == DistLatest && spec.Insert > 0 {
			window = ackWindow
		}
		p.inserts = newInsertCounter(window)
	}
	return p
}

// insertRecord is the record number of the phase's i-th insert: a range of the
// phase's own, so that no two inserts of a run collide.
func (p *Phase) insertRecord(i int64) int64 { return p.spec.InsertStart + i }

// Source is one worker's stream. A load (kind load) inserts this worker's share of the
// initial records, in order, with LoadValue contents; a run phase mixes READ,
// UPDATE, INSERT and SCAN. It does not allocate after Phase.Source.
type Source struct {
	phase      *Phase
	spec       Spec
	seed       uint64
	rng        *rand.Rand
	choose     keys.Chooser
	load       bool
	next, last int64 // load: the next and the last record of this worker's share
	// unacked holds, oldest first, each operation filled in and not yet
	// acknowledged (a pipelined connection keeps several in flight): its
	// insert's number, or -1 for any other operation. A ring that grows to
	// the depth it meets (one slot one at a time), at most core.MaxPipeline.
	unacked    []int64
	head, n    int
	mix        mix
	fields     [][]byte
	values     [][]byte
	oneField   [][]byte // an UPDATE of one field: its name and its value
	oneValue   [][]byte
	keyBuf     []byte
	valueState uint64 // run: the splitmix64 state of UPDATE and INSERT values
}

// Source returns the stream of worker (0-based) of the phase.
func (p *Phase) Source(worker int) *Source {
	spec, seed, workers, load := p.spec, p.seed, p.workers, p.load
	s := &Source{
		phase: p, spec: spec, seed: seed, load: load, unacked: make([]int64, 1),
		rng:    rand.New(rand.NewPCG(seed^0x7963736200000000, uint64(worker)+1)),
		keyBuf: make([]byte, 0, len(spec.KeyPrefix)+20),
	}
	s.mix = newMix(&spec)
	s.fields = make([][]byte, spec.FieldCount)
	s.values = make([][]byte, spec.FieldCount)
	for i := range s.fields {
		s.fields[i] = FieldName(i)
		s.values[i] = make([]byte, spec.FieldLength)
	}
	if load {
		start, count := core.Split(spec.RecordCount, workers, worker)
		s.next, s.last = start, start+count-1
		return s
	}
	s.valueState = s.rng.Uint64()
	s.oneField, s.oneValue = make([][]byte, 1), make([][]byte, 1)
	switch spec.Distribution {
	case DistZipfian:
		s.choose = newScrambledZipfian(s.rng, spec.RecordCount)
	case DistLatest:
		s.choose = &latest{rng: s.rng, z: newZipfian(0, spec.RecordCount-1, 0), initial: spec.RecordCount, inserted: p.insertRecord, inserts: p.inserts}
	default:
		s.choose = keys.NewUniform(s.rng, 0, spec.RecordCount-1)
	}
	return s
}

var _ core.Acknowledger = (*Source)(nil)

// Acknowledge implements core.Acknowledger: the oldest operation Next filled in
// and not yet acknowledged has finished, so an insert among them may be read.
// The engine acknowledges every operation, in the order they were filled in.
func (s *Source) Acknowledge() {
	if s.n == 0 {
		return
	}
	if id := s.unacked[s.head]; id >= 0 {
		s.phase.inserts.acknowledge(id)
	}
	s.head = (s.head + 1) % len(s.unacked)
	s.n--
}

// Next fills op with the next operation.
func (s *Source) Next(op *core.Op) {
	op.Value, op.ScanCount, op.WholeRecord = nil, 0, false
	op.Fields = s.fields
	var n int64
	if s.load {
		n = s.next
		if s.next < s.last {
			s.next++
		}
		op.Kind = core.OpInsert
		for i, v := range s.values {
			LoadValue(v, s.seed, n, i)
		}
		op.Values = s.values
		op.Key = Key(s.keyBuf, &s.spec, n)
		s.unacknowledged(-1)
		return
	}
	pending := int64(-1)
	switch op.Kind = s.mix.pick(s.rng.Float64()); op.Kind {
	case core.OpRead:
		op.Values = nil
		n = s.choose.Next()
	case core.OpUpdate:
		n = s.choose.Next()
		if s.spec.WriteAllFields {
			op.Values, op.WholeRecord = s.randomValues(), true
			break
		}
		// One field, chosen uniformly, as YCSB's buildSingleValue.
		i := s.rng.IntN(len(s.fields))
		s.oneField[0], s.oneValue[0] = s.fields[i], s.values[i]
		s.valueState = fill(s.values[i], s.valueState)
		op.Fields, op.Values = s.oneField, s.oneValue
	case core.OpInsert:
		pending = s.phase.inserts.claim()
		n = s.phase.insertRecord(pending)
		op.Values = s.randomValues()
	default:
		op.Values = nil
		n = s.choose.Next()
		op.ScanCount = 1 + s.rng.IntN(s.spec.MaxScanLength)
	}
	op.Key = Key(s.keyBuf, &s.spec, n)
	s.unacknowledged(pending)
}

// unacknowledged keeps the operation just filled in (its insert's number, or
// -1) until it is acknowledged. The ring grows to as many as are in flight; no
// connection keeps more than core.MaxPipeline, so a caller with that many
// unacknowledged does not acknowledge, and the oldest has finished, told or
// not (as one operation at a time).
func (s *Source) unacknowledged(id int64) {
	if s.n == len(s.unacked) {
		if len(s.unacked) < core.MaxPipeline {
			grown := make([]int64, min(2*len(s.unacked), core.MaxPipeline))
			for i := range s.n {
				grown[i] = s.unacked[(s.head+i)%len(s.unacked)]
			}
			s.unacked, s.head = grown, 0
		} else {
			s.Acknowledge()
		}
	}
	s.unacked[(s.head+s.n)%len(s.unacked)] = id
	s.n++
}

// mix picks a run phase's operation kind by cumulative proportion, as YCSB's
// DiscreteGenerator. The last kind with a share takes what floating-point rounding
// leaves between its cut and 1, so a kind without a share is never chosen.
type mix struct {
	n     int
	cuts  [4]float64 // cuts[i]: the cumulative share up to and including kinds[i]
	kinds [4]core.OpKind
}

func newMix(spec *Spec) mix {
	var m mix
	cum := 0.0
	for _, p := range [...]struct {
		share float64
		kind  core.OpKind
	}{{spec.Read, core.OpRead}, {spec.Update, core.OpUpdate}, {spec.Insert, core.OpInsert}, {spec.Scan, core.OpScan}} {
		if p.share > 0 {
			cum += p.share
			m.cuts[m.n], m.kinds[m.n] = cum, p.kind
			m.n++
		}
	}
	if m.n == 0 { // no shares at all (refused by Validate): read
		m.kinds[0], m.n = core.OpRead, 1
	}
	return m
}

// pick maps u in [0, 1) to a kind.
func (m *mix) pick(u float64) core.OpKind {
	for i := range m.n - 1 {
		if u < m.cuts[i] {
			return m.kinds[i]
		}
	}
	return m.kinds[m.n-1]
}

// randomValues fills every field with fresh pseudo-random printable bytes, as
// YCSB's RandomByteIterator: a value that repeats what was written before would
// flatter engines that compress or deduplicate.
func (s *Source) randomValues() [][]byte {
	for _, v := range s.values {
		s.valueState = fill(v, s.valueState)
	}
	return s.values
}
