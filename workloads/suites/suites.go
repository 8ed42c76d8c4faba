// Package suites holds the suites built into cmpbench, as YAML. Users can run their
// own suite files with the same format (see docs/suites.md).
package suites

import (
	"embed"
	"fmt"
	"strings"

	"github.com/cmpbench/cmpbench/core"
)

//go:embed *.yaml
var files embed.FS

// Names lists the built-in suites.
func Names() []string {
	return core.YAMLNames(files, ".")
}

// Get returns the YAML of a built-in suite.
func Get(name string) ([]byte, error) {
	b, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("suite %q is not built in (built in: %s; or give a path to a suite file)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}
