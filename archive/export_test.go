package archive

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// EditManifest rewrites an archive's manifest.json through edit, and SHA256SUMS
// after it: an edit that `sha256sum -c` cannot see.
func EditManifest(dir string, edit func(*Manifest)) error {
	m, err := readManifestFile(dir)
	if err != nil {
		return err
	}
	edit(&m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return Resum(dir)
}

// EditTable rewrites one of an archive's tables through edit, and SHA256SUMS.
func EditTable[T any](dir, name string, edit func([]T) []T) error {
	var rows []T
	path := filepath.Join(dir, name)
	meta, err := readParquet(path, &rows)
	if err != nil {
		return err
	}
	t, err := createTable[T](path, meta)
	if err != nil {
		return err
	}
	if err := t.write(edit(rows)); err != nil {
		t.abort()
		return err
	}
	if err := t.close(); err != nil {
		return err
	}
	return Resum(dir)
}

// Resum rewrites SHA256SUMS for the files the archive holds now.
func Resum(dir string) error {
	files, err := listFiles(dir)
	if err != nil {
		return err
	}
	sums, err := checksums(dir, files, nil)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, SumsFile), sums, 0o644)
}
