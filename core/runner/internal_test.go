package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	"github.com/cmpbench/cmpbench/core/redact"
)

func TestConcurrencyIsTheLargestPhasePlusItsProbe(t *testing.T) {
	step := func(conns int, probe float64) plan.Step {
		st := plan.Step{Spec: core.PhaseSpec{Connections: conns}}
		if probe >= 0 {
			st.Spec.Probe = &core.ProbeSpec{Rate: probe}
		}
		return st
	}
	for _, tc := range []struct {
		steps []plan.Step
		want  int
	}{
		{nil, 0},
		{[]plan.Step{step(50, -1)}, 50},
		{[]plan.Step{step(50, -1), step(64, 200)}, 65},
		{[]plan.Step{step(64, 0), step(10, 200)}, 64},
	} {
		if got := concurrency(tc.steps); got != tc.want {
			t.Errorf("concurrency = %d, want %d", got, tc.want)
		}
	}
}

func TestTimeoutsGrowWithTheData(t *testing.T) {
	for _, tc := range []struct {
		p           *config.Provision
		loaded      int64
		ready, stop time.Duration
	}{
		{nil, 5_000_000, config.DefaultReadyTimeout, config.DefaultStopTimeout},
		{&config.Provision{}, 5_000_000, config.DefaultReadyTimeout, config.DefaultStopTimeout},
		{&config.Provision{ReadyTimeout: config.Duration(time.Minute), StopTimeout: config.Duration(300 * time.Second)}, 100_000_000, time.Minute, 300 * time.Second},
		{&config.Provision{ReadyTimeout: config.Duration(time.Minute), ReadyPerMillion: config.Duration(10 * time.Second), StopPerMillion: config.Duration(time.Second)},
			100_000_000, time.Minute + 1000*time.Second, config.DefaultStopTimeout + 100*time.Second},
		{&config.Provision{ReadyPerMillion: config.Duration(10 * time.Second)}, 0, config.DefaultReadyTimeout, config.DefaultStopTimeout},
	} {
		r := &systemRunner{sys: &config.System{Provision: tc.p}, loaded: tc.loaded}
		if got := r.readyTimeout(); got != tc.ready {
			t.Errorf("%+v, %d records: ready timeout %s, want %s", tc.p, tc.loaded, got, tc.ready)
		}
		if got := r.stopTimeout(); got != tc.stop {
			t.Errorf("%+v, %d records: stop timeout %s, want %s", tc.p, tc.loaded, got, tc.stop)
		}
	}
}

func TestDataGiB(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		bytes, want int64
	}{
		{0, 1},
		{100_000 * 1400, 1},    // ycsb at --scale 0.001: 140 MB
		{gib / 4, 1},           // exactly four times fits in 1 GiB
		{gib/4 + 1, 2},         // one byte more needs another
		{136_300_000_000, 508}, // ycsb at scale 1: 136.3 GB
	} {
		if got := DataGiB(tc.bytes); got != tc.want {
			t.Errorf("DataGiB(%d) = %d, want %d", tc.bytes, got, tc.want)
		}
	}
}

type noteTaker struct {
	nopObserver
	notes, prompts []string
}

func (o *noteTaker) Note(m string) { o.notes = append(o.notes, m) }

type prompted struct{ noteTaker }

func (o *prompted) Prompt(m string) { o.prompts = append(o.prompts, m) }

// What the user must do now reaches a Prompter as a prompt, any other observer as a
// note.
func TestPromptFallsBackToNote(t *testing.T) {
	n := &noteTaker{}
	prompt(n, "restart it")
	p := &prompted{}
	prompt(p, "restart it")
	if len(n.notes) != 1 || len(p.prompts) != 1 || len(p.notes) != 0 {
		t.Fatalf("observer: notes %q; prompter: notes %q, prompts %q", n.notes, p.notes, p.prompts)
	}
}

// A capture is redacted whole: its sections, what was refused and the facts
// its adapter read of it.
func TestCaptureIsRedactedWhole(t *testing.T) {
	cp := core.Capture{Sections: map[string]string{"config": "masterauth s3cret\n"}, Refused: []string{"AUTH s3cret"},
		Facts: &core.Facts{Memory: core.Fact{Words: "maxmemory-policy s3cret", Class: "limit s3cret"}}}
	got := redactCapture(cp, redact.New("s3cret"))
	for _, s := range []string{got.Sections["config"], got.Refused[0], got.Facts.Memory.Words, got.Facts.Memory.Class} {
		if strings.Contains(s, "s3cret") {
			t.Errorf("not redacted: %q", s)
		}
	}
	if cp.Facts.Memory.Words != "maxmemory-policy s3cret" {
		t.Errorf("the adapter's capture changed: %q", cp.Facts.Memory.Words)
	}
}
