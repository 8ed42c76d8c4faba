// Package suites holds the suites built into cmpbench, as YAML. Users can run their
// own suite files with the same format (see docs/suites.md).
package suites

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names lists the built-in suites.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Get returns the YAML of a built-in suite.
func Get(name string) ([]byte, error) {
	b, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("suite %q is not built in (built in: %s; or give a path to a suite file)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}
