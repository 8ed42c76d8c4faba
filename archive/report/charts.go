package report

import (
	"fmt"

	"github.com/cmpbench/cmpbench/archive/report/chart"
	"github.com/cmpbench/cmpbench/archive/report/section"
)

// chartsDir holds an archive's chart files.
const chartsDir = section.ChartsDir

// reportCharts are the report's charts, each described once by the section
// that owns it (chart.Chart): report.md lists them, in the order of all, and
// draws each as its SVG file; report.html shows each in its section, in the
// same order.
type reportCharts struct {
	summary []*chart.Chart         // every measured phase side by side: the bars
	groups  []groupCharts          // the methods' sections'
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

// groupsCharts are the charts of each method's section (methodParts), in its
// order.
func (d *data) groupsCharts() []groupCharts {
	var out []groupCharts
	for _, p := range d.methodParts() {
		out = append(out, groupCharts{anchor: p.Anchor, name: p.Title, charts: p.Charts})
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

// namePart makes a name of the archive's safe in a file name or an anchor
// (section.NamePart).
func namePart(name string) string { return section.NamePart(name) }
