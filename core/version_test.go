package core

import (
	"runtime/debug"
	"testing"
)

// Issue 43, weak answer: a cmpbench built without the linker flags records what
// Go stamped, the commit included where Go names it: in vcs.revision (`go build`
// in a clone) or at the end of a pseudo-version (`go install module@version`).
func TestBuildVersionOf(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "c98a9678bf178264ea635b3a46d7fd9eb7982e0a"
	main := func(version string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: version}, Settings: settings}
	}
	for _, tc := range []struct {
		name                    string
		ldVersion, ldCommit     string
		bi                      *debug.BuildInfo
		wantVersion, wantCommit string
	}{
		{"make build: the linker flags win", "v0.4.0-3-gc98a967-dirty", rev, main("v0.0.0-20261206074050-c98a9678bf17+dirty", vcs("0123", "true")), "v0.4.0-3-gc98a967-dirty", rev},
		{"go build in a clone", "dev", "", main("v0.0.0-20261206074050-c98a9678bf17", vcs(rev, "false")), "v0.0.0-20261206074050-c98a9678bf17", rev},
		{"go build in a clone with changes", "dev", "", main("v0.0.0-20261206074050-c98a9678bf17+dirty", vcs(rev, "true")), "v0.0.0-20261206074050-c98a9678bf17+dirty", rev},
		{"go install of a commit", "dev", "", main("v0.0.0-20261206074050-c98a9678bf17", nil), "v0.0.0-20261206074050-c98a9678bf17", "c98a9678bf17"},
		{"go install of a commit after a tag", "dev", "", main("v0.4.1-0.20261206074050-c98a9678bf17", nil), "v0.4.1-0.20261206074050-c98a9678bf17", "c98a9678bf17"},
		{"go install of a tag", "dev", "", main("v0.4.0", nil), "v0.4.0", "unknown"},
		{"the zero pseudo-version names no commit", "dev", "", main("v0.0.0-00010101000000-000000000000", nil), "v0.0.0-00010101000000-000000000000", "unknown"},
		{"go build in a worktree or with -buildvcs=false", "dev", "", main("(devel)", nil), "dev", "unknown"},
		{"no build information", "dev", "", nil, "dev", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, c := buildVersionOf(tc.ldVersion, tc.ldCommit, tc.bi)
			if v != tc.wantVersion || c != tc.wantCommit {
				t.Errorf("%s (commit %s), want %s (commit %s)", v, c, tc.wantVersion, tc.wantCommit)
			}
		})
	}
}
