package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"

	"github.com/cmpbench/cmpbench/archive/report/chart"
)

// chartsDir holds an archive's chart files.
const chartsDir = "charts/"

// reportCharts are the report's charts, each described once by the section
// that owns it (chart.Chart): report.md lists them, in the order of all, and
// draws each as its SVG file; report.html shows each in its section, in the
// same order.
type reportCharts struct {
	summary []*chart.Chart         // every measured phase side by side: the bars
	groups  []groupCharts          // the ladders', then the sweeps'
	phases  map[int][]*chart.Chart // by measured phase
	order   []*chart.Chart
}

// reportCharts describes the report's charts: the bars, each measured
// phase's, and each ladder's and sweep's.
func (d *data) reportCharts() reportCharts {
	r := reportCharts{phases: map[int][]*chart.Chart{}}
	if len(d.measured) == 0 {
		return r
	}
	r.summary = d.barCharts()
	r.order = append(r.order, r.summary...)
	for _, ph := range d.measured {
		r.phases[ph.index] = d.phaseCharts(ph)
		r.order = append(r.order, r.phases[ph.index]...)
	}
	r.groups = d.groupsCharts()
	for _, g := range r.groups {
		r.order = append(r.order, g.charts...)
	}
	return r
}

// all are the charts in report.md's order.
func (r reportCharts) all() []*chart.Chart {
	return r.order
}

// groupCharts are the charts of a ladder's or a sweep's section.
type groupCharts struct {
	anchor, name string
	charts       []*chart.Chart
}

// groupsCharts are the ladders' charts, then the sweeps', in suite order.
func (d *data) groupsCharts() []groupCharts {
	var out []groupCharts
	ladders, steps := d.ladderSteps()
	for _, name := range ladders {
		g := groupCharts{anchor: "ladder-" + namePart(name), name: "Ladder " + name}
		if c := d.ladderChart(name, steps[name]); c != nil {
			g.charts = []*chart.Chart{c}
		}
		out = append(out, g)
	}
	sweeps, sweepSteps := d.sweepSteps()
	for _, name := range sweeps {
		out = append(out, groupCharts{anchor: "sweep-" + namePart(name), name: "Sweep " + name, charts: d.sweepCharts(name, sweepSteps[name])})
	}
	return out
}

// svgFiles draws every chart as its SVG file.
func svgFiles(r reportCharts) ([]File, error) {
	var out []File
	for _, c := range r.all() {
		svg, err := c.SVG()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.File, err)
		}
		out = append(out, File{c.File, svg})
	}
	return out, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// maxNamePart bounds the part of a file name or anchor made from a name in an
// archive (a phase's, a ladder's): the archive may come from anywhere.
const maxNamePart = 64

// namePart makes a name of the archive's safe in a file name or an anchor: its
// characters outside [A-Za-z0-9._-] become _, and a longer one is cut, with a
// hash of the whole so that two long names stay apart.
func namePart(name string) string {
	s := unsafeName.ReplaceAllString(name, "_")
	if len(s) <= maxNamePart {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	return s[:maxNamePart-9] + "-" + hex.EncodeToString(sum[:4])
}
