package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cmpbench/cmpbench/archive"
	"github.com/cmpbench/cmpbench/workloads/suites"
)

// Shell completion (cobra's `cmpbench completion bash|zsh|fish`) of what only
// cmpbench knows: the systems a systems file defines, the built-in suites and suite
// files, the archives under --out.

// completeFlag registers a flag's completion; it fails only for a flag the command
// does not have, or one registered twice: a mistake in cmpbench.
func completeFlag(cmd *cobra.Command, flag string, f cobra.CompletionFunc) {
	if err := cmd.RegisterFlagCompletionFunc(flag, f); err != nil {
		panic(err)
	}
}

// completeSystems completes the comma-separated value of --systems: the names the
// systems file (--config, else ./cmpbench.yaml and the built-in systems) defines,
// and after a comma those not named yet.
func completeSystems(g *globals) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		s, err := loadSystems(g)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		named, last := "", toComplete
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			named, last = toComplete[:i+1], toComplete[i+1:]
		}
		var out []cobra.Completion
		for _, n := range s.Names() {
			if !strings.HasPrefix(n, last) || slices.Contains(strings.Split(named, ","), n) {
				continue
			}
			c := named + n
			sys, problems := s.Lookup(n)
			if len(problems) > 0 {
				continue // not usable here: its server is not on PATH, a variable is unset
			}
			if desc, _, _ := strings.Cut(strings.TrimSpace(sys.Description), "\n"); desc != "" {
				c = cobra.CompletionWithDesc(c, desc)
			}
			out = append(out, c)
		}
		// No space after a name: a comma and another name may follow.
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// completeSuite completes --suite: the built-in suites, and suite files (*.yaml,
// *.yml) and the directories on the way to them.
func completeSuite(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	if !strings.Contains(toComplete, "/") {
		for _, n := range suites.Names() {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
	}
	dir, base := filepath.Split(toComplete)
	entries, _ := os.ReadDir(filepath.Join(".", dir))
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		st, err := os.Stat(filepath.Join(".", dir, name))
		switch {
		case err != nil:
		case st.IsDir():
			out = append(out, dir+name+"/")
		case strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"):
			out = append(out, dir+name)
		}
	}
	directive := cobra.ShellCompDirectiveNoFileComp
	if len(out) == 1 && strings.HasSuffix(out[0], "/") {
		directive |= cobra.ShellCompDirectiveNoSpace // a directory: its files follow
	}
	return out, directive
}

// completeArchives completes the first n arguments with the archives under --out
// (the in-progress run directories for recover); where none match, with
// directories.
func completeArchives(g *globals, n int, inProgress bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		dirs := archive.Finished(g.out)
		if inProgress {
			dirs = archive.InProgress(g.out)
		}
		var out []cobra.Completion
		for _, d := range dirs {
			if strings.HasPrefix(d, toComplete) {
				out = append(out, d)
			}
		}
		if len(out) == 0 {
			return nil, cobra.ShellCompDirectiveFilterDirs
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
