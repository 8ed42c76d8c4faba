// Package chart describes a chart of a report once — its title, caption, axes,
// series and marks — and draws that one description twice: as an SVG file with
// gonum/plot (report.md's charts/*.svg) and as the JSON spec report.html's
// script hands to uPlot. So both say the same thing under the same title.
package chart

import (
	"bytes"
	"encoding/xml"
	"io"
)

// Chart is one chart: what it shows, not how either medium lays it out (sizes,
// ranges with room at the top, the legend's place are each renderer's).
type Chart struct {
	// ID names the chart in report.html's page; File is its SVG's name in the
	// archive (charts/….svg), "" for a chart only a page shows (compare's).
	ID, File string
	// Title is the chart's one line over it in both; Caption, the prose under
	// it (report.md's paragraph after the image, report.html's figcaption).
	Title, Caption string
	X, Y           Axis
	Series         []Series
	Bands          []Band  // shaded stretches of x, behind the series (stalls)
	Levels         []Level // horizontal lines: a target, a threshold
	Marks          []Mark  // labelled points: the knee, a step not sustained
	// Panels, when set, are charts stacked over the one x axis, each with its
	// own title, y axis and series (a server's fields over a phase); the
	// Chart's own Y, Series, Bands, Levels and Marks are then unused.
	Panels []Panel
}

// Panel is one of a chart's stacked panels.
type Panel struct {
	Title  string
	Y      Axis
	Series []Series
}

// Axis is an axis: its label, scale and how its ticks read.
type Axis struct {
	Label  string
	Log    bool   // logarithmic
	Format Format // how ticks read
	Zero   bool   // a linear axis that starts at 0
	// Names, on an x axis, are its categories: x = i is Names[i] (bars).
	Names []string
	// From and To, when To > From, are a stretch the axis spans at least (a
	// phase from its start to its end).
	From, To float64
}

// Format is how an axis's ticks read.
type Format string

const (
	Plain Format = ""
	// SI reads 2.8M rather than 2800000.
	SI Format = "si"
	// Percentile is an axis of 1/(1−q) on a log scale, read 90%, 99%, 99.9%.
	Percentile Format = "percentile"
)

// Series is one series: its points and how it is drawn.
type Series struct {
	// Label names the series in the legend.
	Label string
	// Color is an index into the palette: system i's color is i.
	Color int
	// Dash is the line's dash pattern: 0 solid, 1 and up dashed, each its own
	// (a page has one dash: any but 0).
	Dash int
	Line bool  // joined by a line
	Dots Shape // a mark at each point, or none
	Bars bool  // a bar at each x of a category axis, grouped with the other bar series
	// Width and Radius are the line's width and the dots' radius in points, in
	// print (0: the renderer's); a page draws its own sizes.
	Width, Radius float64
	XYs           []XY
}

// Shape is the mark drawn at each point of a series.
type Shape int

const (
	NoDots Shape = iota
	// SystemDots are a system's own shape (by the series' Color), so that
	// systems differ in print without their colors.
	SystemDots
	// Circles are filled circles.
	Circles
)

// XY is a point.
type XY struct{ X, Y float64 }

// Band is a shaded stretch of x, in a series' color.
type Band struct {
	From, To float64
	Color    int
	Label    string
}

// Level is a horizontal line at Y: a target or a threshold.
type Level struct {
	Y     float64
	Label string
	// Fit makes the y axis reach it even where no point does (a target the
	// system missed); a level that does not fit is drawn only when the data
	// reaches it.
	Fit bool
	// Category, on a chart of categories (bars), is the one whose bars the
	// level spans, counted from 1; 0 spans the whole chart.
	Category int
}

// Mark is a labelled point, in a series' color: the knee, a step not sustained.
type Mark struct {
	X, Y  float64
	Color int
	Label string
}

// Texts are what an SVG of Chart.SVG says, its text elements in order: the
// title first, then the axes' and the legend's.
func Texts(svg []byte) ([]string, error) {
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var out []string
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
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
