package chart

import (
	"bytes"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// panelsSVG draws a chart of panels: stacked over the one x axis (labelled
// under the last), the chart's title over the first panel's, one legend at
// their right for the series of every panel.
func (c *Chart) panelsSVG() ([]byte, error) {
	plots := make([][]*plot.Plot, len(c.Panels))
	leg := plot.NewLegend()
	named := map[string]bool{}
	for j, pn := range c.Panels {
		p := plot.New()
		p.Title.Text = pn.Title
		if j == 0 {
			p.Title.Text = c.Title + "\n" + pn.Title
		}
		if j == len(c.Panels)-1 {
			p.X.Label.Text = c.X.Label
		}
		setAxis(p, &p.X, c.X)
		setAxis(p, &p.Y, pn.Y)
		if _, err := addSeries(p, pn.Series, 0); err != nil {
			return nil, err
		}
		setRange(&p.Y, pn.Y, pn.Series, nil)
		for _, s := range pn.Series {
			if named[s.Label] {
				continue
			}
			named[s.Label] = true
			ps, err := s.plotters(plotter.XYs{{}}) // for its look alone
			if err != nil {
				return nil, err
			}
			thumbs := make([]plot.Thumbnailer, len(ps))
			for i, t := range ps {
				thumbs[i] = t
			}
			leg.Add(s.Label, thumbs...)
		}
		plots[j] = []*plot.Plot{p}
	}
	h := vg.Length(len(c.Panels))*panelHeight + 0.3*vg.Inch
	cv, err := draw.NewFormattedCanvas(chartWidth, h, "svg")
	if err != nil {
		return nil, err
	}
	area, band, ok := layout(draw.New(cv), plots[0][0], leg)
	canvases := plot.Align(plots, draw.Tiles{Rows: len(c.Panels), Cols: 1, PadX: vg.Points(4), PadY: vg.Points(10)}, area)
	for j := range plots {
		plots[j][0].Legend = plot.NewLegend() // the panels share leg
		plots[j][0].Draw(canvases[j][0])
	}
	if ok {
		leg.Top, leg.Left = true, true
		leg.Draw(band)
	}
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
