package report

import (
	"fmt"
	"html/template"
	"strings"
)

// Another page of cmpbench's (the live page of a run) draws its charts with
// report.js's own code, which report.html inlines byte for byte as archived
// (an archive's report.html regenerates identically, so report.js never
// changes for another page's sake). report.js is one closure: its drawing
// functions, then report.html's loop over its figures, then the resizing. The
// page's own code takes the loop's place, inside the closure, where draw,
// drawPanels, plots and height are in scope.
const (
	figureLoop = "  document.querySelectorAll(\"figure.chart\").forEach(function (fig) {\n"
	resizing   = "  function resize(width) {\n"
)

// Assets are what a page inlines instead of fetching it: uPlot, its script
// and the style, report.html's own.
type Assets struct {
	UPlot, Script template.JS
	UPlotCSS, CSS template.CSS
}

// PageAssets are report.html's assets with own in place of report.html's loop
// over its figures: a page that draws the same charts, its own way.
func PageAssets(own string) (Assets, error) {
	in, err := inline()
	if err != nil {
		return Assets{}, err
	}
	head, tail, err := splitReportJS(string(in.Script))
	if err != nil {
		return Assets{}, err
	}
	return Assets{UPlot: in.UPlot, Script: template.JS(head + own + tail), UPlotCSS: in.UPlotCSS, CSS: in.CSS}, nil
}

// splitReportJS is report.js around its loop over report.html's figures.
func splitReportJS(js string) (head, tail string, err error) {
	loop := strings.Index(js, figureLoop)
	resize := strings.Index(js, resizing)
	if loop < 0 || resize < loop {
		return "", "", fmt.Errorf("report.js: its loop over the figures (%q) is not before its resizing (%q)", strings.TrimSpace(figureLoop), strings.TrimSpace(resizing))
	}
	return js[:loop], js[resize:], nil
}
