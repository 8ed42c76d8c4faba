package core

import "runtime/debug"

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
