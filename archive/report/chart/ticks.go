package chart

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// siTicks labels large values with SI prefixes: 2.8M rather than 2800000.
type siTicks struct{}

func (siTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = siText(t.Value)
		}
	}
	return ticks
}

// siText is v with an SI prefix, four significant digits: 2.8M, 12.5k, 0.5.
func siText(v float64) string {
	unit := ""
	for _, u := range []struct {
		f float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= u.f {
			v, unit = v/u.f, u.s
			break
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + unit
}

// percentileTicks label a log axis of x = 1/(1−q) at its decades as
// percentiles: 1 is 0%, 10 is 90%, 1000 is 99.9%.
type percentileTicks struct{}

func (percentileTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = percentile(t.Value)
		}
	}
	return ticks
}

// percentile reads x = 1/(1−q) as q in percent, as report.js does.
func percentile(x float64) string {
	if x < 1.5 {
		return "0%"
	}
	return strconv.FormatFloat(100*(1-1/x), 'g', 8, 64) + "%"
}
