package chart

import (
	"math"
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
