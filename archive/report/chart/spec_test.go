package chart

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestNumJSON(t *testing.T) {
	for _, tc := range []struct {
		n    float64
		want string
	}{{1, "1"}, {0.123456789, "0.12346"}, {123456789, "1.2346e+08"}, {math.NaN(), "null"}} {
		if b, _ := num(tc.n).MarshalJSON(); string(b) != tc.want {
			t.Errorf("%v: %s, want %s", tc.n, b, tc.want)
		}
	}
}

// What the page's script is handed: a category axis has every category, a
// series null where it has no value; levels keep whether they fit and the
// category they span; panels carry their own x values.
func TestJSON(t *testing.T) {
	c := bars()
	c.Series[0].XYs = c.Series[0].XYs[1:] // r1 has no value in a
	c.ID = "bars"
	p := panels()
	p.ID = "panels"
	b, err := JSON([]*Chart{c, p})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"x":{"label":"","names":["a","b","c"]}`,
		`"xs":[0,1,2],"series":[{"label":"r1","color":0,"line":false,"bars":true,"ys":[null,null,3000]}`,
		`{"y":2000,"label":"target","fit":true,"category":1}`,
		`"x":{"label":"seconds","min":0,"max":40}`,
		`"panels":[{"title":"used_memory","y":{"label":"","format":"si"},"xs":[5,10],"series":[{"label":"r1","color":0,"line":true,"points":true,"ys":[1e+06,2e+06]}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("no %s in\n%s", want, b)
		}
	}
	var back []map[string]any
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 2 {
		t.Errorf("%d specs, %v", len(back), err)
	}
}
