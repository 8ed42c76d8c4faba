package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/cmpbench/cmpbench/archive"
)

// An output is a file or directory a command writes, named by the user (a flag,
// an environment variable) or derived from what they named. Every output is
// checked here, before the command does any work: nothing writes into an archive
// but the run that owns it, so that an archive still verifies whatever command
// and flag is pointed at it, and a path that cannot be written is bad input found
// at once, not after the work it was to receive.
type output struct {
	name string // how the user named it: "--html", "--out", "CMPBENCH_TRACE"
	path string
	dir  bool // a directory the command writes into (made when missing); else a file
	// advice says what to do instead when it is in an archive (default: give
	// a path outside it).
	advice string
}

// check refuses the output, as bad input naming it, its path and the archive it
// is or lies inside, or why it cannot be written.
func (o output) check() error {
	if o.path == "" {
		return nil
	}
	if a, ok := archive.Enclosing(o.path); ok {
		where, kind := "is inside the archive", "file"
		if o.dir {
			kind = "directory"
		}
		if real, ok := resolved(o.path); ok && real == a {
			where = "is the archive"
		}
		advice := o.advice
		if advice == "" {
			advice = "give a " + kind + " outside it"
		}
		return inputErr("%s %s %s %s: an archive is never changed, so that it still verifies; %s", o.name, o.path, where, a, advice)
	}
	if err := o.writable(); err != nil {
		return inputErr("%s %s: %w", o.name, o.path, err)
	}
	return nil
}

// writable says why the output cannot be written: a file needs its directory to
// exist and take new files; a directory needs the nearest part of its path that
// exists to be a directory that takes new entries (it makes the rest).
func (o output) writable() error {
	p := filepath.Clean(o.path)
	if st, err := os.Stat(p); err == nil {
		if !o.dir && st.IsDir() {
			return errors.New("is a directory: give a file name")
		}
		if o.dir && !st.IsDir() {
			return errors.New("is not a directory")
		}
		if err := unix.Access(p, unix.W_OK); err != nil {
			return fmt.Errorf("cannot be written: %w", err)
		}
		return nil
	}
	parent := filepath.Dir(p)
	for o.dir && parent != filepath.Dir(parent) {
		if _, err := os.Stat(parent); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		parent = filepath.Dir(parent)
	}
	st, err := os.Stat(parent)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("its directory %s does not exist", parent)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", parent)
	}
	if err := unix.Access(parent, unix.W_OK); err != nil {
		return fmt.Errorf("cannot be made: %s cannot be written: %w", parent, err)
	}
	return nil
}

// resolved is path absolute with its links resolved, when it exists.
func resolved(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(abs)
	return real, err == nil
}

// writesAnnotation marks the flags whose value a command writes: "file" or "dir"
// each, by flag name, comma-separated.
const writesAnnotation = "cmpbench-writes"

// writes declares that cmd writes the file or directory the flag names (a flag
// of its own, or one it inherits such as the global --out). Declared outputs are
// checked before the command runs (checkOutputs).
func writes(cmd *cobra.Command, flag string, dir bool) {
	kind := "file"
	if dir {
		kind = "dir"
	}
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	entry := flag + "=" + kind
	if prev := cmd.Annotations[writesAnnotation]; prev != "" {
		entry = prev + "," + entry
	}
	cmd.Annotations[writesAnnotation] = entry
}

// checkOutputs checks every output cmd declared with writes, before it runs.
func checkOutputs(cmd *cobra.Command, _ []string) error {
	decl := cmd.Annotations[writesAnnotation]
	if decl == "" {
		return nil
	}
	for _, entry := range strings.Split(decl, ",") {
		name, kind, _ := strings.Cut(entry, "=")
		f := cmd.Flag(name)
		if f == nil {
			return fmt.Errorf("%s declares that it writes --%s, which it does not have", cmd.CommandPath(), name)
		}
		if err := (output{name: "--" + name, path: f.Value.String(), dir: kind == "dir"}).check(); err != nil {
			return err
		}
	}
	return nil
}
