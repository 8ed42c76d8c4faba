// Package catalog finds adapters: the built-ins served by the cmpbench binary itself,
// and third-party plugin binaries named cmpbench-adapter-<name> in plugin directories.
// Every entry carries the SHA-256 of its binary, which is checked again at launch.
// A catalog checks systems against their adapters before a run (CheckSystems) and
// is the runner's Launcher of plugin processes (Launcher).
package catalog

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/plugins/host"
)

// BinaryPrefix starts the file name of every third-party adapter plugin.
const BinaryPrefix = "cmpbench-adapter-"

// ServeArgs are the arguments with which the cmpbench binary serves a built-in adapter.
func ServeArgs(name string) []string { return []string{"plugin", "serve", name} }

// DefaultDirs are searched when no --plugin-dir is given.
func DefaultDirs() []string {
	dirs := []string{"plugins.d"}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cmpbench", "plugins"))
	}
	return dirs
}

// Entry is one adapter that can be launched.
type Entry struct {
	Name    string
	Builtin bool
	Path    string // the binary: cmpbench itself for built-ins
	SHA256  string // hex
}

// Catalog is the set of adapters found.
type Catalog struct {
	entries map[string]Entry
	// Problems are plugin files that were found but cannot be used, and why.
	Problems []string
	// unusable says, by adapter name, why a plugin file found for it cannot be
	// used: Lookup's answer instead of "not found".
	unusable map[string]string
}

// Discover lists the built-in adapters and the plugin binaries in dirs. Directories
// that do not exist are skipped; a name found twice keeps its first directory.
func Discover(dirs []string) (*Catalog, error) {
	c := &Catalog{entries: map[string]Entry{}, unusable: map[string]string{}}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the cmpbench binary: %w", err)
	}
	selfSum, err := selfChecksum(self)
	if err != nil {
		return nil, err
	}
	for _, n := range core.BuiltinAdapters() {
		c.entries[n] = Entry{Name: n, Builtin: true, Path: self, SHA256: selfSum}
	}
	for _, dir := range dirs {
		files, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("plugin directory %s: %w", dir, err)
		}
		for _, f := range files {
			if !strings.HasPrefix(f.Name(), BinaryPrefix) || f.IsDir() {
				continue
			}
			name := strings.TrimPrefix(f.Name(), BinaryPrefix)
			path, _ := filepath.Abs(filepath.Join(dir, f.Name()))
			if prev, ok := c.entries[name]; ok {
				what := prev.Path
				if prev.Builtin {
					what = "the built-in adapter"
				}
				c.Problems = append(c.Problems, fmt.Sprintf("%s: ignored, %q is already %s", path, name, what))
				continue
			}
			info, err := f.Info()
			if err != nil || info.Mode()&0o111 == 0 {
				c.Problems = append(c.Problems, fmt.Sprintf("%s: ignored, not executable", path))
				if _, seen := c.unusable[name]; !seen {
					c.unusable[name] = fmt.Sprintf("%s is there but not executable (chmod +x it)", path)
				}
				continue
			}
			sum, err := core.FileSHA256(path)
			if err != nil {
				c.Problems = append(c.Problems, fmt.Sprintf("%s: ignored, %v", path, err))
				if _, seen := c.unusable[name]; !seen {
					c.unusable[name] = fmt.Sprintf("%s is there but cannot be read: %v", path, err)
				}
				continue
			}
			c.entries[name] = Entry{Name: name, Path: path, SHA256: sum}
		}
	}
	return c, nil
}

// Entries lists every adapter, sorted by name.
func (c *Catalog) Entries() []Entry {
	out := make([]Entry, 0, len(c.entries))
	for _, e := range c.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds an adapter by name.
func (c *Catalog) Lookup(name string) (Entry, error) {
	e, ok := c.entries[name]
	if why, found := c.unusable[name]; !ok && found {
		return Entry{}, fmt.Errorf("adapter %q: %s", name, why)
	}
	if !ok {
		names := make([]string, 0, len(c.entries))
		for _, e := range c.Entries() {
			names = append(names, e.Name)
		}
		return Entry{}, fmt.Errorf("adapter %q not found (have: %s; third-party plugins are files named %s%s in a plugin directory)",
			name, strings.Join(names, ", "), BinaryPrefix, name)
	}
	return e, nil
}

// Launch starts the plugin process of an adapter.
func (c *Catalog) Launch(ctx context.Context, e Entry) (*host.Driver, error) {
	var cmd *exec.Cmd
	if e.Builtin {
		cmd = exec.Command(e.Path, ServeArgs(e.Name)...)
	} else {
		cmd = exec.Command(e.Path)
	}
	sum, err := hex.DecodeString(e.SHA256)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: bad checksum %q", e.Name, e.SHA256)
	}
	d, err := host.Launch(ctx, host.Options{Cmd: cmd, Checksum: sum})
	if err != nil {
		return nil, fmt.Errorf("adapter %s (%s): %w", e.Name, e.Path, err)
	}
	if got := d.Info().Name; got != e.Name {
		d.Kill()
		return nil, fmt.Errorf("adapter %s (%s) calls itself %q", e.Name, e.Path, got)
	}
	return d, nil
}

var selfSum struct {
	once sync.Once
	sum  string
	err  error
}

func selfChecksum(path string) (string, error) {
	selfSum.once.Do(func() { selfSum.sum, selfSum.err = core.FileSHA256(path) })
	return selfSum.sum, selfSum.err
}
