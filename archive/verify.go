package archive

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cmpbench/cmpbench/core"
)

// Verify checks an archive: every file listed in SHA256SUMS exists and matches, no
// file is unlisted, the manifest is readable and not newer than this code, and the
// tables belong to the manifest's run. It returns every problem found.
func Verify(dir string) []error {
	if m, err := readManifestFile(dir); err == nil && m.Status == StatusInProgress {
		_, err := ReadManifest(dir) // says what to do
		return []error{err}
	}
	var errs []error
	sums, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		return []error{fmt.Errorf("%s: %w", SumsFile, err)}
	}
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for n := 1; sc.Scan(); n++ {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(want) != 64 || name == "" {
			errs = append(errs, fmt.Errorf("%s:%d: not a sha256sum line", SumsFile, n))
			continue
		}
		listed[name] = true
		got, err := core.FileSHA256(filepath.Join(dir, filepath.FromSlash(name)))
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		case got != want:
			errs = append(errs, fmt.Errorf("%s: checksum mismatch (the file was changed after the run)", name))
		}
	}
	files, err := listFiles(dir)
	if err != nil {
		return append(errs, err)
	}
	for _, f := range files {
		if !listed[f] {
			errs = append(errs, fmt.Errorf("%s: not listed in %s", f, SumsFile))
		}
	}
	a, err := Open(dir)
	if err != nil {
		return append(errs, err)
	}
	if err := a.EachInterval(func(*IntervalRow) error { return nil }); err != nil {
		errs = append(errs, err)
	}
	if err := a.EachProbe(func(*ProbeRow) error { return nil }); err != nil {
		errs = append(errs, err)
	}
	if err := a.EachServerStat(func(*ServerStatRow) error { return nil }); err != nil {
		errs = append(errs, err)
	}
	if _, err := a.ClientStats(); err != nil {
		errs = append(errs, err)
	}
	phases := map[string]bool{}
	for _, p := range a.Manifest.Phases {
		phases[p.System+"\x00"+p.Name] = true
	}
	for _, r := range a.Summary {
		if !phases[r.System+"\x00"+r.Phase] {
			errs = append(errs, fmt.Errorf("%s: phase %q of system %q is not in the manifest", SummaryFile, r.Phase, r.System))
		}
	}
	return errs
}
