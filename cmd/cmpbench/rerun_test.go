package main

import (
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/archive"
)

func TestServerChanges(t *testing.T) {
	sys := func(name, sha, version string) archive.SystemInfo {
		return archive.SystemInfo{Name: name, BinarySHA256: sha, Product: "redis", Version: version}
	}
	for _, tc := range []struct {
		name     string
		was, now []archive.SystemInfo
		want     []string
	}{
		{"same", []archive.SystemInfo{sys("r", "aa", "7.0.15")}, []archive.SystemInfo{sys("r", "aa", "7.0.15")}, nil},
		{"other binary", []archive.SystemInfo{sys("r", "aa", "7.0.15")}, []archive.SystemInfo{sys("r", "bb", "7.0.15")}, []string{"r: the server binary differs (SHA-256 aa then, bb now)"}},
		{"other version", []archive.SystemInfo{sys("r", "", "7.0.15")}, []archive.SystemInfo{sys("r", "", "7.2.4")}, []string{"r: the server was redis 7.0.15 then, redis 7.2.4 now"}},
		{"endpoint now started", []archive.SystemInfo{sys("r", "", "7.0.15")}, []archive.SystemInfo{sys("r", "cc", "7.0.15")}, []string{"SHA-256 none recorded then, cc now"}},
		{"not in the archive", nil, []archive.SystemInfo{sys("r", "cc", "7.0.15")}, nil},
		{"a version with control characters", []archive.SystemInfo{sys("r", "", "7.0.15")}, []archive.SystemInfo{sys("r", "", "7\x1b[2J\r\u202e")},
			[]string{"r: the server was redis 7.0.15 then, redis 7␛[2J␍[U+202E] now"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serverChanges(archive.Manifest{Systems: tc.was}, archive.Manifest{Systems: tc.now})
			if len(got) != len(tc.want) {
				t.Fatalf("%q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Fatalf("%q, want %q", got[i], tc.want[i])
				}
			}
		})
	}
}
