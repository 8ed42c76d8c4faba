package core

import "testing"

func TestRestarted(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after map[string]string
		want          string
	}{
		{"same process", map[string]string{StatInstance: "a", StatUptime: "10"}, map[string]string{StatInstance: "a", StatUptime: "15"}, ""},
		{"new instance", map[string]string{StatInstance: "a", StatUptime: "10"}, map[string]string{StatInstance: "b", StatUptime: "1"}, "instance a became b"},
		{"uptime only", map[string]string{StatUptime: "100"}, map[string]string{StatUptime: "2"}, "uptime went from 100 s to 2 s"},
		{"no keys", map[string]string{"server.x": "1"}, map[string]string{"server.x": "0"}, ""},
		{"key missing after", map[string]string{StatInstance: "a"}, map[string]string{}, ""},
		{"not a number", map[string]string{StatUptime: "x"}, map[string]string{StatUptime: "1"}, ""},
		{"one node of two", map[string]string{StatInstance + "@h:1": "a", StatInstance + "@h:2": "c", StatUptime + "@h:1": "9"},
			map[string]string{StatInstance + "@h:1": "b", StatInstance + "@h:2": "c", StatUptime + "@h:1": "1"}, "node h:1: instance a became b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Restarted(tc.before, tc.after); got != tc.want {
				t.Fatalf("Restarted = %q, want %q", got, tc.want)
			}
		})
	}
}
