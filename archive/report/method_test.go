package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive/archivetest"
	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core"
)

// tally is a method written the way an outsider would add one, in this file
// alone, with its part in the report: a section that tallies each system's
// successful ops per step, and a bar chart of them. (Its syntax and unit are
// those of any method: core/runner/method_test.go runs one alone and sharded.)
type tally struct{}

func init() { core.RegisterMethod(tally{}) }

func (tally) Name() string        { return "tally" }
func (tally) Doc() core.MethodDoc { return &tallyDoc{} }

// tallyDoc is `tally: {steps: N}`: the phase as written, N times.
type tallyDoc struct {
	N int `yaml:"steps"`
}

func (d *tallyDoc) Steps(w core.WrittenPhase) (core.MethodSteps, []error) {
	var out core.MethodSteps
	for i := range d.N {
		out.Steps = append(out.Steps, core.Variant{Name: fmt.Sprintf("%s#%d", w.Name, i+1)})
	}
	return out, nil
}

func (tally) Section(g section.Group) section.Part {
	var b strings.Builder
	fmt.Fprintf(&b, "### Tally %s\n\n", g.Of)
	section.TableHead(&b, "| step |", "|---|", g.Systems)
	c := &chart.Chart{ID: "tally-" + section.NamePart(g.Of), File: section.ChartsDir + "tally-" + section.NamePart(g.Of) + ".svg",
		Title: "Tally " + g.Of + ": successful ops/s per step", Caption: "Each step's successful ops/s, its first repetition.",
		X: chart.Axis{Label: "step"}, Y: chart.Axis{Label: "ops/s", Format: chart.SI, Zero: true}}
	for i, st := range g.Steps {
		fmt.Fprintf(&b, "| %s |", st.Info.Name)
		for j, sys := range g.Systems {
			reps := st.Cells[sys].Measured()
			if len(reps) == 0 {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(&b, " %s |", section.Thousands(int64(reps[0].Throughput)))
			c.Series = append(c.Series, chart.Series{Label: sys, Color: j, Dots: chart.Circles, Radius: 2, XYs: []chart.XY{{X: float64(i + 1), Y: reps[0].Throughput}}})
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return section.Part{Title: "Tally " + g.Of, Anchor: "tally-" + section.NamePart(g.Of), Markdown: b.String(), Charts: []*chart.Chart{c}}
}

// A method's part of the report, added in one file: report.md has its section
// and lists its chart, the chart's SVG is drawn, and report.html shows the
// same chart in the method's section.
func TestAMethodAddedInOneFileHasItsPartInTheReport(t *testing.T) {
	_, files, _ := renderRun(t, archivetest.Options{Method: core.MethodStep{Kind: "tally", Of: "all"}})
	md := string(fileNamed(t, files, "report.md"))
	if !strings.Contains(md, "### Tally all\n\n| step |") || !strings.Contains(md, "![Tally all: successful ops/s per step](charts/tally-all.svg)") {
		t.Fatalf("report.md lacks the tally's section or its chart:\n%s", md)
	}
	if texts := svgFirstText(t, fileNamed(t, files, "charts/tally-all.svg")); texts != "Tally all: successful ops/s per step" {
		t.Errorf("the SVG's title: %q", texts)
	}
	page := string(fileNamed(t, files, HTMLFile))
	if !strings.Contains(page, `id="tally-all"`) || !strings.Contains(page, "Tally all: successful ops/s per step") {
		t.Errorf("report.html lacks the tally's section or its chart")
	}
}

// An archive's steps of a method this binary does not know (a plugin's, a
// newer cmpbench's) keep their place in the tables, and the report says that
// the method's own section is not there rather than leave it out unsaid.
func TestAMethodNotKnownHereIsSaid(t *testing.T) {
	_, files, _ := renderRun(t, archivetest.Options{Method: core.MethodStep{Kind: "unheard", Of: "x"}})
	md := string(fileNamed(t, files, "report.md"))
	if !strings.Contains(md, "### Method `unheard` `x`\n\nThe phase `x` was written with the method `unheard`, which this cmpbench has no report section for") {
		t.Fatalf("report.md does not say the method is not known:\n%s", md)
	}
	if !strings.Contains(string(fileNamed(t, files, HTMLFile)), `id="method-unheard-x"`) {
		t.Errorf("report.html has no section for it")
	}
}
