package core

import (
	"runtime/debug"
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
	version, commit = Version, Commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && commit == "" {
				commit = s.Value
			}
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
