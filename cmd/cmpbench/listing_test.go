package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestFittedWrapsToWidth(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short lines stay", "a  b\nshort\n", "a  b\nshort\n"},
		{"a table row wraps under its last cell",
			"redis  built-in  starts: redis-server --port 1 --bind 127.0.0.1 --dir d --save '' --appendonly no\n",
			"redis  built-in  starts: redis-server --port 1 --bind 127.0.0.1 --dir d --save ''\n                 --appendonly no\n"},
		{"a text line wraps two columns in",
			"  cluster_size (int): the nodes the cluster must have before a run starts (cluster-stable with this size)\n",
			"  cluster_size (int): the nodes the cluster must have before a run starts\n    (cluster-stable with this size)\n"},
		{"what a plugin says of itself acts on no terminal",
			"memcached  third-party  error: plugin exited: \x1b[2J\x1b[31mpwned\rok\a\u202e\n",
			"memcached  third-party  error: plugin exited: ␛[2J␛[31mpwned␍ok␇[U+202E]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			f := newFitted(&out)
			f.width = 90
			f.Write([]byte(tc.in))
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tc.want)
			}
			for _, line := range strings.Split(out.String(), "\n") {
				if len(line) > 90 {
					t.Errorf("%d columns: %s", len(line), line)
				}
			}
		})
	}
}

// `cmpbench systems --profiles` asks each built-in adapter for its profiles
// (core.ProfileLister): the resp adapter's, one line each, under its heads.
func TestSystemsProfilesAsksTheAdapters(t *testing.T) {
	r := cli(t, t.TempDir(), nil, "systems", "--profiles")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "PROFILE") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"\nvalkey ", "\nkvrocks ", "\npika ", "\nredis-cloud ", "(expensive)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
}
