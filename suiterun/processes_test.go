package suiterun

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core/plan"
)

func TestCPURanges(t *testing.T) {
	for _, tc := range []struct {
		cpus []int
		want string
	}{
		{nil, ""},
		{[]int{3}, "3"},
		{[]int{0, 1, 2, 3}, "0-3"},
		{[]int{0, 1, 2, 3, 6}, "0-3,6"},
		{[]int{0, 2, 4, 5}, "0,2,4-5"},
	} {
		if got := cpuRanges(tc.cpus); got != tc.want {
			t.Errorf("cpuRanges(%v) = %q, want %q", tc.cpus, got, tc.want)
		}
	}
}

// --processes and --client-cpus are checked before anything starts: the number
// of processes, and enough CPUs for each.
func TestProcessesOf(t *testing.T) {
	for _, tc := range []struct {
		o       Options
		want    [][]int
		wantErr string
	}{
		{o: Options{Processes: 1}},
		{o: Options{Processes: 2}},
		{o: Options{Processes: 0}, wantErr: "--processes must be between 1 and 64, got 0"},
		{o: Options{Processes: 65}, wantErr: "--processes must be between 1 and 64, got 65"},
		{o: Options{Processes: 2, ClientCPUs: "0"}, wantErr: "--client-cpus 0 has 1 CPUs for 2 processes: each needs one at least"},
		{o: Options{Processes: 1, ClientCPUs: "x"}, wantErr: "--client-cpus: "},
		{o: Options{Processes: 1, ClientCPUs: "0"}, want: [][]int{{0}}},
	} {
		got, err := processesOf(tc.o, &plan.Plan{})
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%+v: error %v, want %q", tc.o, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%+v: %v", tc.o, err)
		case tc.wantErr == "" && len(got) != len(tc.want):
			t.Errorf("%+v: CPUs %v, want %v", tc.o, got, tc.want)
		}
	}
}

func TestProcessesWarning(t *testing.T) {
	if w := processesWarning(4, 4); w != "" {
		t.Errorf("4 processes on 4 CPUs: warned %q", w)
	}
	if w := processesWarning(8, 4); !strings.HasPrefix(w, "--processes 8 runs 8 load processes per system on 4 CPUs") || !strings.HasSuffix(w, "(--processes 4 or fewer here)") {
		t.Errorf("8 processes on 4 CPUs: %q", w)
	}
}
