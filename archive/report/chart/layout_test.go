package chart

import (
	"testing"

	"gonum.org/v1/plot/vg"
)

// Bars of one group take at most 80% of its room, so that groups never touch,
// whatever the number of systems and phases.
func TestBarWidth(t *testing.T) {
	for _, systems := range []int{1, 2, 5, 12} {
		for _, group := range []vg.Length{20, 60, 300} {
			w := barWidth(group, systems)
			if w <= 0 || w*vg.Length(systems) > group*0.8+1e-9 || w > 40 {
				t.Errorf("%d systems in a group of %v points: bars %v wide", systems, group, w)
			}
		}
	}
}
