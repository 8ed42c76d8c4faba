package sdk

import "testing"

func TestTraceRole(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"/usr/bin/cmpbench", "plugin", "serve", "resp"}, "plugin-resp"},
		{[]string{"/opt/plugins/cmpbench-plugin-memcached"}, "plugin-cmpbench-plugin-memcached"},
		{[]string{"./myplugin", "serve"}, "plugin-myplugin"},
	} {
		if got := traceRole(tc.args); got != tc.want {
			t.Errorf("traceRole(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
