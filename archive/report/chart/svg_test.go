package chart

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"testing"
)

// texts are an SVG's text elements, in order.
func texts(t *testing.T, svg []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var out []string
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			inText = el.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				out = append(out, string(el))
			}
		}
	}
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

// Every kind of chart draws: its title first, a legend entry per series,
// one per label of its levels, its marks' labels.
func TestSVG(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart *Chart
		want  []string
	}{
		{"bars with targets", bars(), []string{"r1", "r2", "target", "a", "b", "c", "9k"}},
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
				legend = append(legend, l.Label)
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
