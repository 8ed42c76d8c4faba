package chart

import (
	"slices"
	"testing"
)

// texts are an SVG's text elements, in order.
func texts(t *testing.T, svg []byte) []string {
	t.Helper()
	out, err := Texts(svg)
	if err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	return out
}

// bars is a chart of two systems' bars over three phases, with a target on
// the two that have one.
func bars() *Chart {
	c := &Chart{Title: "Throughput per phase", X: Axis{Names: []string{"a", "b", "c"}}, Y: Axis{Label: "ops/s", Format: SI, Zero: true}}
	for i, sys := range []string{"r1", "r2"} {
		c.Series = append(c.Series, Series{Label: sys, Color: i, Bars: true, XYs: []XY{{0, 1000}, {2, 3000 * float64(i+1)}}})
	}
	c.Levels = []Level{{Y: 2000, Label: "target", Fit: true, Category: 1}, {Y: 9000, Label: "target", Fit: true, Category: 3}}
	return c
}

// overTime is a chart over a phase: a system's points and line on a log
// axis, its stall shaded, a threshold the data reaches, one it does not, a
// marked point.
func overTime() *Chart {
	return &Chart{
		Title: "Latency over time", X: Axis{Label: "seconds"}, Y: Axis{Label: "ms", Log: true},
		Series: []Series{
			{Label: "r1 probe", Dots: SystemDots, Radius: 1.2, XYs: []XY{{0, 1}, {1, 1200}, {2, 2}}},
			{Label: "r1 p99", Line: true, Width: 1.5, XYs: []XY{{0, 2}, {1, 900}, {2, 3}}},
		},
		Bands:  []Band{{From: 0.9, To: 1.3, Label: "r1 stall 0.40 s"}},
		Levels: []Level{{Y: 1000, Label: "stall threshold 1 s"}, {Y: 1e6, Label: "unreached"}},
		Marks:  []Mark{{X: 1, Y: 1200, Label: "slowest"}},
	}
}

// panels is a chart of two panels, the systems in both.
func panels() *Chart {
	c := &Chart{Title: "Server stats over time", X: Axis{Label: "seconds", From: 0, To: 40}}
	for _, f := range []string{"used_memory", "defrag_q"} {
		p := Panel{Title: f, Y: Axis{Format: SI}}
		for i, sys := range []string{"r1", "r2"} {
			p.Series = append(p.Series, Series{Label: sys, Color: i, Line: true, Dots: SystemDots, XYs: []XY{{5, 1e6 * float64(i+1)}, {10, 2e6}}})
		}
		c.Panels = append(c.Panels, p)
	}
	return c
}

// Every kind of chart draws: its title first, a legend entry per series,
// one per label of its levels, its marks' labels.
func TestSVG(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart *Chart
		want  []string
	}{
		{"bars with targets", bars(), []string{"r1", "r2", "target", "a", "b", "c", "9k"}},
		{"over time", overTime(), []string{"r1 probe", "r1 p99", "stall threshold 1 s", "slowest", "1000"}},
		{"panels", panels(), []string{"used_memory", "defrag_q", "r1", "r2", "2M", "40"}},
		{"percentiles", &Chart{Title: "Latency by percentile", X: Axis{Label: "percentile", Log: true, Format: Percentile}, Y: Axis{Label: "ms", Log: true},
			Series: []Series{{Label: "r1 GET", Line: true, XYs: []XY{{1, 0.1}, {10, 0.2}, {100, 0.5}, {1000, 2}}}}}, []string{"0%", "90%", "99%", "99.9%", "r1 GET"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svg, err := tc.chart.SVG()
			if err != nil {
				t.Fatal(err)
			}
			got := texts(t, svg)
			if len(got) == 0 || got[0] != tc.chart.Title {
				t.Errorf("texts %q: the title %q is not the first", got, tc.chart.Title)
			}
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("no %q among %q", w, got)
				}
			}
			var legend []string
			for _, s := range tc.chart.Series {
				legend = append(legend, s.Label)
			}
			for _, l := range tc.chart.Levels {
				if l.Label != "unreached" {
					legend = append(legend, l.Label)
				}
			}
			for _, p := range tc.chart.Panels[min(len(tc.chart.Panels), 1):] {
				for _, s := range p.Series {
					legend = append(legend, s.Label)
				}
			}
			for _, l := range legend {
				if n := count(got, l); n != 1 {
					t.Errorf("%q in the legend %d times", l, n)
				}
			}
		})
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// A level the data does not reach is drawn neither in the chart nor in its
// legend.
func TestSVGLevelBeyondTheData(t *testing.T) {
	svg, err := overTime().SVG()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(texts(t, svg), "unreached") {
		t.Errorf("a level beyond the data is in the legend")
	}
}
