package core

import (
	"slices"
	"testing"
	"time"
)

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
			if got := Restarted(StatsSample{Stats: tc.before}, StatsSample{Stats: tc.after}); got != tc.want {
				t.Fatalf("Restarted = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNotRestartedWaitsForEveryNode(t *testing.T) {
	before := map[string]string{
		StatUptime + "@a:1": "500", StatUptime + "@b:1": "500", StatUptime + "@c:1": "500", "namespace.objects@a:1": "9",
	}
	for _, tc := range []struct {
		name  string
		after map[string]string
		want  []string
	}{
		{"nothing yet", before, []string{"a:1", "b:1", "c:1"}},
		{"one node back", map[string]string{StatUptime + "@a:1": "3", StatUptime + "@b:1": "510", StatUptime + "@c:1": "510"}, []string{"b:1", "c:1"}},
		{"two nodes down", map[string]string{StatUptime + "@a:1": "3"}, []string{"b:1", "c:1"}},
		{"all restarted", map[string]string{StatUptime + "@a:1": "30", StatUptime + "@b:1": "8", StatUptime + "@c:1": "1"}, nil},
	} {
		if got := NotRestarted(StatsSample{Stats: before}, StatsSample{Stats: tc.after}); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	single := map[string]string{StatInstance: "x", StatUptime: "100"}
	if got := NotRestarted(StatsSample{Stats: single}, StatsSample{Stats: map[string]string{StatInstance: "y", StatUptime: "2"}}); got != nil {
		t.Errorf("a single server that restarted: %q", got)
	}
	if got := NotRestarted(StatsSample{Stats: single}, StatsSample{Stats: single}); !slices.Equal(got, []string{"the server"}) {
		t.Errorf("a single server that did not restart: %q", got)
	}
	if got := RestartKeys(map[string]string{"memory.used": "1"}); got != nil {
		t.Errorf("no restart keys: %q", got)
	}
}

// A node that restarted long before the second sample may have run longer by then
// than it had at the first: its start, sample time minus uptime, moved.
func TestRestartedFromTheStartTime(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	at := func(s int, uptime string) StatsSample {
		return StatsSample{At: t0.Add(time.Duration(s) * time.Second), Stats: map[string]string{StatUptime: uptime}}
	}
	for _, tc := range []struct {
		name          string
		before, after StatsSample
		want          string
	}{
		{"ran on", at(0, "5"), at(300, "305"), ""},
		{"whole seconds and a slow answer", at(0, "5"), at(300, "303"), ""},
		{"restarted early in a long phase", at(0, "5"), at(300, "200"), "started again 1m40s after the first sample (uptime 200 s)"},
		{"uptime went down", at(0, "500"), at(10, "2"), "uptime went from 500 s to 2 s"},
	} {
		if got := Restarted(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
