package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/methods/ladder"
)

// The report reads a ladder's method from the manifest, and so draws the same
// report again from the archive alone, and names it in the ladder's tables and
// chart. The generated run's second repetition is twice as
// slow: pooled and mean differ.
func TestLadderReportNamesItsMethod(t *testing.T) {
	for _, tc := range []struct {
		method, caption, axis string
	}{
		{ladder.Pooled, "over every op of the step, repetitions pooled (histograms merged).", "repetitions pooled"},
		{ladder.Mean, "over every op of the step, the mean of the 2 repetitions' percentiles", "mean of the repetitions' percentiles"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			dir := fixtureOf(t, archivetest.Options{Ladder: tc.method, Repeat: 2})
			md, err := os.ReadFile(filepath.Join(dir, archive.ReportFile))
			if err != nil {
				t.Fatal(err)
			}
			section := string(md[strings.Index(string(md), "### Ladder rate"):])
			section, _, _ = strings.Cut(section, "\n### ")
			golden := filepath.Join("testdata", "ladder-"+tc.method+".golden.md")
			if *update {
				os.WriteFile(golden, []byte(section), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if section != string(want) {
				t.Fatalf("ladder section differs from %s (go test -update to accept):\n%s", golden, section)
			}
			if strings.Count(section, tc.caption) != 2 {
				t.Errorf("the response and service time tables do not both say %q", tc.caption)
			}
			a, err := archive.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if files, err := Generate(a); err != nil || files[0].Name != archive.ReportFile || string(files[0].Data) != string(md) {
				t.Errorf("the report regenerated from the archive differs (%v)", err)
			}
			if texts := svgTexts(t, filepath.Join(dir, "charts", "ladder-rate.svg")); !strings.Contains(texts, tc.axis) {
				t.Errorf("the chart's axis does not say %q: %s", tc.axis, texts)
			}
		})
	}
}

// A ladder cell is p50 / p99 over every op of the step: pooled, of every
// repetition's histograms merged; mean, the average of each repetition's own
// percentiles (over its ops), which is not the percentile of the whole. Whether
// the step is NS, and the rate it shows, do not depend on the method.
func TestLadderCellCombinesRepetitions(t *testing.T) {
	const ms1 = int64(time.Millisecond)
	half, three := ms1/2, 3*ms1
	for _, tc := range []struct {
		name         string
		reps         []rep
		pooled, mean string
	}{
		{"p99 1 ms and 3 ms: the mean is 2 ms, pooled the 99th of every op",
			[]rep{ladderRep(5000, repeated(98, half, 2, ms1)), ladderRep(5000, repeated(98, half, 2, three))},
			"0.500 / 1.000", "0.500 / 2.000"},
		{"a repetition's own percentile is over all its ops",
			[]rep{ladderRep(5000, repeated(50, ms1), repeated(50, three)), ladderRep(5000, repeated(50, ms1), repeated(50, ms1))},
			"1.000 / 3.000", "1.000 / 2.000"},
		{"one repetition: the methods agree",
			[]rep{ladderRep(5000, repeated(98, half, 2, three))},
			"0.500 / 3.000", "0.500 / 3.000"},
		{"a repetition not sustained: NS with the mean rate achieved",
			[]rep{ladderRep(5000, repeated(100, ms1)), ladderRep(4500, repeated(100, three))},
			"NS (4,750)", "NS (4,750)"},
		{"a repetition that did not end ok",
			[]rep{ladderRep(5000, repeated(100, ms1)), failed(ladderRep(5000, repeated(100, three)))},
			"failed", "failed"},
		{"not run: the system's ladder had stopped",
			[]rep{{info: archive.PhaseInfo{Status: core.StatusSkipped}}},
			"—", "—"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for method, want := range map[string]string{ladder.Pooled: tc.pooled, ladder.Mean: tc.mean} {
				if got := ladderCell(cell{reps: tc.reps}, method, func(r archive.SummaryRow) []byte { return r.RespHDR }); got != want {
					t.Errorf("%s: %s, want %s", method, got, want)
				}
			}
		})
	}
}

// repeated is n values of v, then m values of w, ... (pairs of a count and a value).
func repeated(pairs ...int64) []int64 {
	var out []int64
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, slices.Repeat([]int64{pairs[i+1]}, int(pairs[i]))...)
	}
	return out
}

// ladderRep is a repetition of a 5,000 ops/s step that achieved the rate given,
// its ops (GET, then SET) taking the times given.
func ladderRep(achieved float64, ops ...[]int64) rep {
	sustained := achieved >= archive.SustainedFraction*5000
	r := rep{info: archive.PhaseInfo{Status: core.StatusOK, Rate: 5000}, throughput: achieved}
	for i, values := range ops {
		h := core.NewHistogram()
		for _, v := range values {
			h.RecordValue(v)
		}
		enc, err := core.EncodeHist(h)
		if err != nil {
			panic(err)
		}
		r.rows = append(r.rows, archive.SummaryRow{Op: []string{"GET", "SET"}[i], AchievedRate: achieved, Sustained: &sustained, RespHDR: enc})
	}
	return r
}

func failed(r rep) rep {
	r.info.Status = core.StatusFailed
	return r
}
