package suiterun

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core/config"
	"github.com/cmpbench/cmpbench/core/plan"
	_ "github.com/cmpbench/cmpbench/workloads" // the memtier workload
	"github.com/cmpbench/cmpbench/workloads/suites"
)

// The memtier suite at --scale 0.01 writes 10,000 keys of 3+5 B and 2560 B on
// average: 25,680,000 B (core/plan's tests work out every suite). A system
// cmpbench starts gets a warning when that is more than the memory available or the
// disk free where its data directory goes; a system it does not start never does.
func TestEstimateWarnsOfDataThatDoesNotFit(t *testing.T) {
	systems, err := config.LoadSystemsData("cmpbench.yaml", []byte("systems:\n  remote: {adapter: resp, endpoint: \"127.0.0.1:6379\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := suites.Get("memtier")
	suite, err := plan.ParseSuite("memtier.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(suite, []string{"redis", "remote"}, 0.01, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	const mb = 1_000_000
	for _, tc := range []struct {
		name string
		room room
		want string // "" for no warning
	}{
		{"room enough", room{mem: 26 * mb, dir: "/data", disk: 26 * mb}, ""},
		{"unknown room", room{mem: -1, dir: "/data", disk: -1}, ""},
		{"short of memory", room{mem: 25 * mb, dir: "/data", disk: 1000 * mb},
			"redis is started here and its phases write 25.7 MB to it, more than the 25.0 MB of memory available (a server that holds its data in memory, as redis does, needs it all): it may run out of room"},
		{"short of both", room{mem: 2 * mb, dir: "/data", disk: 3 * mb},
			"more than the 2.0 MB of memory available (a server that holds its data in memory, as redis does, needs it all) and the 3.0 MB free in /data, where its data directory is"},
		{"short of disk", room{mem: 1000 * mb, dir: "/data", disk: 0},
			"write 25.7 MB to it, more than the 0 B free in /data, where its data directory is (a server that persists writes it there)"},
	} {
		es, warnings := estimates(p, systems, tc.room)
		if len(es) != 2 || es[0].System != "redis" || es[1].System != "remote" || es[0].Bytes != 25_680_000 || es[1].Bytes != es[0].Bytes {
			t.Fatalf("%s: estimates %+v", tc.name, es)
		}
		switch {
		case tc.want == "" && len(warnings) > 0:
			t.Errorf("%s: warned %q", tc.name, warnings)
		case tc.want != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.want)):
			t.Errorf("%s: warnings %q, want one with %q", tc.name, warnings, tc.want)
		}
	}
}
