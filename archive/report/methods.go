package report

import (
	"fmt"

	"github.com/cmpbench/cmpbench/archive/report/section"
	"github.com/cmpbench/cmpbench/core"
)

// methodParts are the sections of the methods that have one in the report
// (section.Method: a ladder's, a sweep's), one for each phase written with
// them: the methods by name, each one's phases in suite order; then a line
// for each method this binary does not know (its section cannot be written,
// and the report says so rather than leave it out unsaid). They are made once
// per report.
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
	out = append(out, d.unknownMethods()...)
	d.parts = &out
	return out
}

// unknownMethods are a part for each phase written with a method this binary
// has no section for: the steps are in the tables, the method's own view of
// them is not.
func (d *data) unknownMethods() []section.Part {
	var out []section.Part
	seen := map[core.MethodRef]bool{}
	for _, ph := range d.measured {
		m := ph.info.Method
		if m == nil || seen[m.Ref()] {
			continue
		}
		seen[m.Ref()] = true
		if known, ok := core.LookupMethod(m.Kind); ok {
			if _, ok := known.(section.Method); ok {
				continue
			}
		}
		out = append(out, section.Part{
			Title: "Method " + m.Kind + " " + m.Of, Anchor: "method-" + section.NamePart(m.Kind+"-"+m.Of),
			Markdown: fmt.Sprintf("### Method %s %s\n\nThe phase %s was written with the method %s, which this cmpbench has no report section for: its steps are in the tables above, what the method makes of them is not here.\n\n",
				literal(m.Kind), literal(m.Of), literal(m.Of), literal(m.Kind)),
		})
	}
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
