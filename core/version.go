package core

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// Version and Commit are set at build time with
// -ldflags "-X github.com/cmpbench/cmpbench/core.Version=... -X ...core.Commit=...".
var (
	Version = "dev"
	Commit  = ""
)

// BuildVersion returns the cmpbench version and commit, falling back to what the Go
// toolchain recorded when the linker flags were not given.
func BuildVersion() (version, commit string) {
	bi, _ := debug.ReadBuildInfo()
	return buildVersionOf(Version, Commit, bi)
}

// pseudoRev is the commit at the end of a Go pseudo-version
// (v0.0.0-20261206074050-c98a9678bf17, v1.2.4-0.20261206074050-c98a9678bf17+dirty).
var pseudoRev = regexp.MustCompile(`[-.]\d{14}-([0-9a-f]{12})(\+[0-9A-Za-z.-]*)?$`)

// buildVersionOf is BuildVersion from the linker flags' values and the build
// information bi (nil when the binary has none). What Go records depends on how
// cmpbench was built: `go build` in a clone stamps vcs.revision and, since Go
// 1.24, a pseudo-version as the main module's version (+dirty with uncommitted
// changes); `go install module@version` records the module version alone, whose
// pseudo-version still names the commit; `go build` with -buildvcs=false, or in
// a linked git worktree (whose .git is a file: golang/go#58218), records neither,
// and only the linker flags (`make build`) give them then.
func buildVersionOf(ldVersion, ldCommit string, bi *debug.BuildInfo) (version, commit string) {
	version, commit = ldVersion, ldCommit
	if bi != nil {
		if version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && commit == "" {
				commit = s.Value
			}
		}
		// (The zero pseudo-version of a replaced module names no commit.)
		if m := pseudoRev.FindStringSubmatch(bi.Main.Version); m != nil && commit == "" && strings.Trim(m[1], "0") != "" {
			commit = m[1]
		}
	}
	if commit == "" {
		commit = "unknown"
	}
	return version, commit
}

// ModulePath is cmpbench's Go module.
const ModulePath = "github.com/cmpbench/cmpbench"

// SDKVersion is the version of the cmpbench module this binary was built against:
// cmpbench's own version for cmpbench itself (its built-in adapters), and for a
// third-party plugin the version its go.mod requires, with the replacement when
// it has one ("v0.3.0 => ../cmpbench", "(devel) => /src/cmpbench"): the engine a
// plugin embeds is that module's, whatever the plugin's own version is.
func SDKVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		v, _ := BuildVersion()
		return v
	}
	return sdkVersionOf(bi)
}

func sdkVersionOf(bi *debug.BuildInfo) string {
	if bi.Main.Path == ModulePath {
		v, _ := BuildVersion()
		return v
	}
	for _, d := range bi.Deps {
		if d.Path != ModulePath {
			continue
		}
		v := d.Version
		if v == "" {
			v = "(devel)"
		}
		if r := d.Replace; r != nil {
			v += " => " + r.Path
			if r.Version != "" {
				v += " " + r.Version
			}
		}
		return v
	}
	return "unknown"
}
