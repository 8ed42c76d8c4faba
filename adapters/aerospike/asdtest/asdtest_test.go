package asdtest

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core/config"
)

const conf = `namespace ycsb {
  replication-factor 1
  storage-engine device {
    file {dir}/ycsb.dat
    filesize {data_gib}G
  }
}
`

func TestSet(t *testing.T) {
	for _, tc := range []struct {
		name, section, key, value, want string
		added                           bool
	}{
		{"replaces a setting", "storage-engine device {", "filesize", "128M",
			"    file {dir}/ycsb.dat\n    filesize 128M\n  }", false},
		{"adds one at the section's start", "storage-engine device {", "stop-writes-used-pct", "1",
			"  storage-engine device {\n    stop-writes-used-pct 1\n    file", true},
		{"leaves a nested section's setting alone", "namespace ycsb {", "file", "x",
			"namespace ycsb {\n  file x\n  replication-factor 1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Set(conf, tc.section, tc.key, tc.value)
			lines := strings.Count(conf, "\n")
			if tc.added {
				lines++
			}
			if !strings.Contains(got, tc.want) || strings.Count(got, "\n") != lines {
				t.Errorf("got\n%s\nwant %d lines holding\n%s", got, lines, tc.want)
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Error("a section the configuration does not have is not a defect")
		}
	}()
	Set(conf, "xdr {", "dc", "x")
}

// The spec is the built-in definition's provision fields, as core/runner starts
// them, with {data_gib} given.
func TestSpec(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes int
	}{{Single, 0}, {Cluster, 3}} {
		sys := Builtin(t, tc.name)
		s := Spec(sys, DataGiB)
		p := sys.Provision
		if s.Name != tc.name || s.Nodes != tc.nodes || s.Command[0] != "asd" || s.Files[ConfigFile] != p.Files[ConfigFile] ||
			len(s.Dirs) != 2 || s.Vars[config.DataGiBPlaceholder] != "1" || s.ReadyTimeout != time.Duration(p.ReadyTimeout) || s.StopTimeout != time.Duration(p.StopTimeout) {
			t.Errorf("%s: spec %+v", tc.name, s)
		}
	}
}

func TestProcessState(t *testing.T) {
	if st := processState(os.Getpid()); st != 'R' && st != 'S' {
		t.Errorf("this process is in state %q", st)
	}
	if st := processState(-1); st != 0 {
		t.Errorf("no process: state %q", st)
	}
}
