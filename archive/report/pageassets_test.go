package report

import (
	"strings"
	"testing"
)

func TestSplitReportJS(t *testing.T) {
	real, err := assets.ReadFile("assets/report.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, js string
		ok       bool
	}{
		{"report.js as shipped", string(real), true},
		{"no loop", "(function () {\n" + resizing + "}());", false},
		{"no resizing", "(function () {\n" + figureLoop + "}());", false},
		{"resizing before the loop", "(function () {\n" + resizing + figureLoop + "}());", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, tail, err := splitReportJS(tc.js)
			if (err == nil) != tc.ok {
				t.Fatalf("error %v, want ok %t", err, tc.ok)
			}
			if !tc.ok {
				return
			}
			// Put back together around the loop, it is report.js again.
			loop := tc.js[len(head) : len(tc.js)-len(tail)]
			if !strings.HasPrefix(loop, figureLoop) || head+loop+tail != tc.js {
				t.Errorf("the parts do not make report.js again")
			}
		})
	}
}

func TestPageAssetsDrawWithReportJS(t *testing.T) {
	a, err := PageAssets("  OWN_CODE();\n")
	if err != nil {
		t.Fatal(err)
	}
	s := string(a.Script)
	for _, want := range []string{"function draw(spec, el, h)", "function drawPanels(", "  OWN_CODE();\n  function resize(width)", "}());"} {
		if !strings.Contains(s, want) {
			t.Errorf("the page's script lacks %q", want)
		}
	}
	if strings.Contains(s, figureLoop) {
		t.Errorf("the page's script still holds report.html's loop over its figures")
	}
	if a.UPlot == "" || a.CSS == "" || a.UPlotCSS == "" {
		t.Errorf("an asset is missing")
	}
}
