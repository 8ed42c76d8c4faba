package sampler

import (
	"fmt"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string]string{"0": "[0]", "2-5": "[2 3 4 5]", "0,2,4-6": "[0 2 4 5 6]", "1,1-2": "[1 2]", "": "", "a": "", "3-1": "", "-1": "", "0-5000": ""} {
		got, err := ParseCPUList(in)
		if s := fmt.Sprint(got); err == nil && s != want || err != nil && want != "" {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
}
