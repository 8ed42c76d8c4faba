package workloads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/plugins"
	_ "github.com/cmpbench/cmpbench/workloads"
)

// hotKeys is a workload written the way an outsider would add one: this type,
// its suite section and its registration below, and nothing else anywhere.
// Every connection SETs and GETs a few hot keys in turn.
type hotKeys struct {
	Keys      int    `json:"keys"`
	KeyPrefix string `json:"key_prefix"`
	ValueSize int    `json:"value_size"`
}

func (h hotKeys) Kind() string                 { return "hotkeys" }
func (h hotKeys) Describe() string             { return fmt.Sprintf("hotkeys %d x %dB", h.Keys, h.ValueSize) }
func (h hotKeys) OpKinds() []core.OpKind       { return []core.OpKind{core.OpSet, core.OpGet} }
func (h hotKeys) ProbeOps() (_, _ core.OpKind) { return core.OpGet, core.OpSet }
func (h hotKeys) Validate(int) []error {
	if h.Keys < 1 || h.ValueSize < 1 {
		return []error{fmt.Errorf("hotkeys: keys and value_size must be at least 1")}
	}
	return nil
}

type hotKeysDoc struct {
	Keys      int    `yaml:"keys"`
	ValueSize int    `yaml:"value_size"`
	KeyPrefix string `yaml:"key_prefix"`
}

func (d *hotKeysDoc) Resolve(p *core.PhaseSpec) []error {
	p.Workload = hotKeys{Keys: d.Keys, ValueSize: d.ValueSize, KeyPrefix: cmpOr(d.KeyPrefix, "hot:")}
	return nil
}

// hotSource alternates SET and GET over the keys, starting at its connection's.
type hotSource struct {
	keys  [][]byte
	value []byte
	n     int
}

func (s *hotSource) Next(op *core.Op) {
	op.Key = s.keys[(s.n/2)%len(s.keys)]
	op.Kind, op.Value = core.OpGet, nil
	if s.n%2 == 0 {
		op.Kind, op.Value = core.OpSet, s.value
	}
	s.n++
}

type hotStreams struct{ spec hotKeys }

func (h hotStreams) Source(conn int) core.OpSource {
	s := &hotSource{value: make([]byte, h.spec.ValueSize), n: 2 * conn}
	for i := range h.spec.Keys {
		s.keys = append(s.keys, []byte(h.spec.KeyPrefix+strconv.Itoa(i)))
	}
	return s
}

func (h hotStreams) ProbeSource(core.OpKind) core.OpSource { return h.Source(0) }

var registerHotKeys = sync.OnceFunc(func() {
	core.RegisterWorkload(core.WorkloadKind{
		Name:    "hotkeys",
		Doc:     func() core.WorkloadDoc { return &hotKeysDoc{} },
		Decode:  core.DecodeJSON[hotKeys],
		Streams: func(p core.PhaseSpec) (core.Streams, error) { return hotStreams{p.Workload.(hotKeys)}, nil },
	})
})

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestANewWorkloadIsOnePackageAndItsRegistration follows a workload that only
// registered itself through everything a workload meets: a suite (with its own
// keys checked, file:line), the plan, the plugin boundary, the engine and the
// archive's manifest.
func TestANewWorkloadIsOnePackageAndItsRegistration(t *testing.T) {
	registerHotKeys()

	suite, err := plan.ParseSuite("hot.yaml", []byte(`name: hot
phases:
  - name: hammer
    connections: 3
    ops: 600
    duration: 10s
    hotkeys: {keys: 4, value_size: 16}
`))
	if err != nil {
		t.Fatal(err)
	}
	spec := suite.Phases[0]
	if spec.Workload != (hotKeys{Keys: 4, ValueSize: 16, KeyPrefix: "hot:"}) || spec.Probe == nil || spec.Probe.Op != core.OpGet {
		t.Fatalf("resolved %+v, probe %+v", spec.Workload, spec.Probe)
	}

	for _, tc := range []struct{ yaml, want string }{
		{"    hotkeys: {keys: 4, value_sise: 16}\n", `bad.yaml:6: unknown key "value_sise" (known: key_prefix, keys, value_size)`},
		{"    hotkeys: {keys: 0, value_size: 16}\n", "hotkeys: keys and value_size must be at least 1"},
		{"    hotkeys: {keys: 1, value_size: 1}\n    memtier: {key_max: 10}\n", "hotkeys and memtier given: a phase has one workload"},
		{"    hotkeyz: {keys: 1}\n", "unknown key \"hotkeyz\" (known: connections, duration, hotkeys,"},
	} {
		_, err := plan.ParseSuite("bad.yaml", []byte("name: bad\nphases:\n  - name: p\n    connections: 1\n    duration: 1s\n"+tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}

	// Across the plugin boundary as its kind and JSON.
	m, err := plugins.PhaseToProto(spec)
	if err != nil {
		t.Fatal(err)
	}
	if m.GetWorkloadKind() != "hotkeys" || string(m.GetWorkloadSpec()) != `{"keys":4,"key_prefix":"hot:","value_size":16}` {
		t.Fatalf("on the wire: %s %s", m.GetWorkloadKind(), m.GetWorkloadSpec())
	}
	got, err := plugins.PhaseFromProto(m)
	if err != nil || got.Workload != spec.Workload {
		t.Fatalf("from the wire: %+v %v", got.Workload, err)
	}
	m.WorkloadSpec = []byte(`{"keys":4,"hot_ratio":2}`)
	if _, err := plugins.PhaseFromProto(m); err == nil || !strings.Contains(err.Error(), `unknown field "hot_ratio"`) {
		t.Fatalf("a field the plugin does not know: %v", err)
	}

	// The engine runs its streams, as a plugin does.
	streams, err := core.NewStreams(got)
	if err != nil {
		t.Fatal(err)
	}
	store := &memStore{m: map[string][]byte{}}
	got.Probe = nil
	end := engine.Run(context.Background(), engine.Config{
		Spec:      got,
		Connect:   func(context.Context) (core.Conn, error) { return store, nil },
		NewSource: func(i int) (core.OpSource, error) { return streams.Source(got.ConnBase + i), nil },
		Emit:      func(core.IntervalReport) {},
		Executor:  engine.ExecGoroutines,
	})
	if end.Status != core.StatusOK {
		t.Fatalf("phase %s: %s", end.Status, end.Error)
	}
	var sets, gets int64
	for _, o := range end.Totals {
		switch o.Op {
		case core.OpSet:
			sets = o.OK
		case core.OpGet:
			gets = o.OK
		}
	}
	if sets != 300 || gets != 300 || len(store.m) != 4 {
		t.Fatalf("%d SETs, %d GETs, %d keys", sets, gets, len(store.m))
	}

	// The archive keeps the spec under the kind's name and reads it back.
	b, err := json.Marshal(archive.PhaseInfo{Name: "hammer", Spec: got.Workload})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"hotkeys":{"keys":4,"key_prefix":"hot:","value_size":16}`) {
		t.Fatalf("archived as %s", b)
	}
	var back archive.PhaseInfo
	if err := json.Unmarshal(b, &back); err != nil || back.Spec != got.Workload {
		t.Fatalf("read back %+v: %v", back.Spec, err)
	}
	// Archives are read leniently: a field of a newer cmpbench is ignored, and a
	// kind this binary does not know is kept as it was when the phase is
	// written again (a merge).
	newer := strings.Replace(string(b), `"value_size":16`, `"value_size":16,"burst":3`, 1)
	newer = strings.Replace(newer, `"name":"hammer"`, `"name":"hammer","later_kind":{"x":1}`, 1)
	if err := json.Unmarshal([]byte(newer), &back); err != nil || back.Spec != got.Workload {
		t.Fatalf("a newer archive: %+v: %v", back.Spec, err)
	}
	if again, err := json.Marshal(back); err != nil || !strings.Contains(string(again), `"later_kind":{"x":1}`) {
		t.Fatalf("written again: %s %v", again, err)
	}
	two := strings.Replace(string(b), `"name":"hammer"`, `"name":"hammer","memtier":{"key_max":1}`, 1)
	if err := json.Unmarshal([]byte(two), &back); err == nil || !strings.Contains(err.Error(), "two workloads") {
		t.Fatalf("two workloads in a phase: %v", err)
	}

	// A plugin says which kinds its build runs; one without this kind is
	// refused before the run.
	info := core.Info{Name: "old", Ops: []core.OpKind{core.OpGet, core.OpSet}, Workloads: []string{"memtier", "ycsb"}}
	if err := info.CanRun(got.Workload); err == nil || !strings.Contains(err.Error(), "plugin old was built without the hotkeys workload") {
		t.Fatalf("a plugin without the kind: %v", err)
	}
	info.Workloads = append(info.Workloads, "hotkeys")
	if err := info.CanRun(got.Workload); err != nil {
		t.Fatal(err)
	}
}

// TestKindsAreRegisteredOnce: the built-ins are there, and a second kind of a
// name, or one named like an archived phase field, is refused.
func TestKindsAreRegisteredOnce(t *testing.T) {
	registerHotKeys()
	for _, k := range []string{"memtier", "ycsb", "pubsub", "hotkeys"} {
		if _, ok := core.LookupWorkload(k); !ok {
			t.Errorf("kind %s is not registered", k)
		}
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "registered twice") {
				t.Errorf("registering memtier again: %v", r)
			}
		}()
		core.RegisterWorkload(core.WorkloadKind{Name: "memtier", Doc: func() core.WorkloadDoc { return nil },
			Decode: core.DecodeJSON[hotKeys], Streams: func(core.PhaseSpec) (core.Streams, error) { return nil, nil }})
	}()
	for name, owner := range map[string]string{"status": "an archived phase", "probe": "a suite's phase"} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "is a key of "+owner) {
					t.Errorf("registering %s: %v", name, r)
				}
			}()
			core.RegisterWorkload(core.WorkloadKind{Name: name, Doc: func() core.WorkloadDoc { return nil },
				Decode: core.DecodeJSON[hotKeys], Streams: func(core.PhaseSpec) (core.Streams, error) { return nil, nil }})
		}()
	}
	if _, err := json.Marshal(archive.PhaseInfo{Spec: named("status")}); err == nil || !strings.Contains(err.Error(), `kind "status" is also the name of a phase field`) {
		t.Errorf("a kind named like a phase field: %v", err)
	}
}

type named string

func (n named) Kind() string           { return string(n) }
func (n named) Describe() string       { return string(n) }
func (n named) OpKinds() []core.OpKind { return nil }
func (n named) Validate(int) []error   { return nil }

// memStore is a server in memory, for the engine to run against.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memStore) Do(_ context.Context, op *core.Op) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch op.Kind {
	case core.OpSet:
		s.m[string(op.Key)] = append([]byte(nil), op.Value...)
	case core.OpGet:
		v, ok := s.m[string(op.Key)]
		if !ok {
			return core.ErrMiss
		}
		op.RespBytes = len(v)
	}
	return nil
}

func (s *memStore) Close() error { return nil }
