package archive

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
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

// DropColumns rewrites one of an archive's tables without the named columns, as a
// table written before they were added, with its file metadata, and SHA256SUMS.
func DropColumns(dir, name string, drop ...string) error {
	path := filepath.Join(dir, name)
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return err
	}
	meta := map[string]string{}
	for _, kv := range pf.MetaData().KeyValueMetadata() {
		if kv.Key != arrowSchemaKey && kv.Value != nil {
			meta[kv.Key] = *kv.Value
		}
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return err
	}
	tbl, err := fr.ReadTable(context.Background())
	pf.Close()
	if err != nil {
		return err
	}
	defer tbl.Release()
	var fields []arrow.Field
	var cols []arrow.Column
	for i, f := range tbl.Schema().Fields() {
		if !slices.Contains(drop, f.Name) {
			fields = append(fields, f)
			cols = append(cols, *tbl.Column(i))
		}
	}
	kept := array.NewTable(arrow.NewSchema(fields, nil), cols, tbl.NumRows())
	defer kept.Release()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fw, err := pqarrow.NewFileWriter(kept.Schema(), f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return err
	}
	if err := fw.WriteTable(kept, 1<<16); err != nil {
		fw.Close()
		return err
	}
	for _, k := range sortedKeys(meta) {
		if err := fw.AppendKeyValueMetadata(k, meta[k]); err != nil {
			fw.Close()
			return err
		}
	}
	if err := fw.Close(); err != nil { // closes f
		return err
	}
	return Resum(dir)
}

// Crash leaves w as a cmpbench that died would: its directory as it is, and its
// lock file there but no longer held (the kernel drops a dead process's locks).
func Crash(w *Writer) {
	if w.lock != nil {
		_ = w.lock.f.Close()
		w.lock = nil
	}
}
