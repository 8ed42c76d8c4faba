package report

import (
	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core"
	// The built-in methods, whose sections every report of their steps has:
	// a binary with the report has them, whatever else it registers.
	_ "github.com/cmpbench/cmpbench/methods"
)

// methodParts are the sections of the methods that have one in the report
// (section.Method: a ladder's, a sweep's), one for each phase written with
// them: the methods by name, each one's phases in suite order. They are made
// once per report.
func (d *data) methodParts() []section.Part {
	if d.parts != nil {
		return *d.parts
	}
	var out []section.Part
	for _, m := range core.Methods() {
		sm, ok := m.(section.Method)
		if !ok {
			continue
		}
		for _, g := range d.methodGroups(m.Name()) {
			out = append(out, sm.Section(g))
		}
	}
	d.parts = &out
	return out
}

// methodGroups are the phases written with the method kind, in suite order,
// each with its steps as the archive holds them.
func (d *data) methodGroups(kind string) []section.Group {
	var out []section.Group
	at := map[string]int{}
	for _, ph := range d.measured {
		m := ph.info.Method
		if m == nil || m.Kind != kind {
			continue
		}
		i, seen := at[m.Of]
		if !seen {
			i = len(out)
			at[m.Of] = i
			out = append(out, section.Group{Of: m.Of, Systems: d.systems, Phases: d.m.Phases})
		}
		st := section.Step{Info: ph.info, Cells: map[string]section.Cell{}}
		for _, sys := range d.systems {
			st.Cells[sys] = d.cell(ph, sys).section()
		}
		out[i].Steps = append(out[i].Steps, st)
	}
	return out
}

// section is the cell as a method's section sees it.
func (c cell) section() section.Cell {
	var out section.Cell
	for _, r := range c.reps {
		out.Reps = append(out.Reps, r.section())
	}
	return out
}
