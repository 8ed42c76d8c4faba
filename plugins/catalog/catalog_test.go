package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 25's weak answer: a plugin file that is there but not executable used to
// be reported as not found.
func TestNotExecutablePluginIsNamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, BinaryPrefix+"kv")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Lookup("kv")
	if err == nil || !strings.Contains(err.Error(), path+" is there but not executable (chmod +x it)") {
		t.Fatalf("Lookup of a plugin that is not executable: %v", err)
	}
	if _, err := c.Lookup("absent"); err == nil || !strings.Contains(err.Error(), `adapter "absent" not found`) {
		t.Fatalf("Lookup of an absent plugin: %v", err)
	}
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if c, err = Discover([]string{dir}); err != nil {
		t.Fatal(err)
	}
	if e, err := c.Lookup("kv"); err != nil || e.Path != path {
		t.Fatalf("Lookup of an executable plugin: %+v %v", e, err)
	}
}
