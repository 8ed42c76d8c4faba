package archive

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// While a run goes on, its table rows are appended to spool files in the in-progress
// directory, one JSON object per line: appending survives a crash (a torn last line
// is dropped on reading), which a Parquet file, whose footer comes last, would not.
// Finishing the archive turns each spool into its Parquet table, a batch at a time.

// SpoolDir is the spool directory inside an in-progress archive.
const SpoolDir = "spool"

// Spool files, one per table.
const (
	spoolSummary     = "summary.jsonl"
	spoolIntervals   = "intervals.jsonl"
	spoolProbe       = "probe.jsonl"
	spoolServerStats = "server_stats.jsonl"
	spoolClientStats = "client_stats.jsonl"
)

// spool appends rows to one file.
type spool struct {
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
}

func openSpool(path string) (*spool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	return &spool{f: f, w: w, enc: json.NewEncoder(w)}, nil
}

// add appends each row of rows, a slice.
func addRows[T any](s *spool, rows []T) error {
	for i := range rows {
		if err := s.enc.Encode(&rows[i]); err != nil {
			return err
		}
	}
	return nil
}

// flush hands what is buffered to the kernel, and with sync to the disk.
func (s *spool) flush(sync bool) error {
	if err := s.w.Flush(); err != nil {
		return err
	}
	if sync {
		return s.f.Sync()
	}
	return nil
}

func (s *spool) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readSpoolFrom calls fn with every row of a spool file from byte offset from
// (which starts a line), in order; a missing file has no rows. A last line cut short
// by a crash is dropped; anything else that does not parse is an error naming the
// line.
func readSpoolFrom[T any](path string, from int64, fn func(*T) error) error {
	return readSpoolSized(path, from, func(r *T, _ int) error { return fn(r) })
}

// readSpoolSized is readSpoolFrom that also says each row's size in the spool.
func readSpoolSized[T any](path string, from int64, fn func(*T, int) error) error {
	err := regular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return nil // a last line without its newline was cut short
		}
		if err != nil {
			return err
		}
		var row T
		if err := json.Unmarshal(bytes.TrimSpace(line), &row); err != nil {
			return fmt.Errorf("%s:%d: %w", filepath.Base(path), n, err)
		}
		if d, ok := any(&row).(deriver); ok {
			d.derive()
		}
		if err := fn(&row, len(line)); err != nil {
			return err
		}
	}
}

// spoolToTable writes the rows of a spool file into a Parquet table, a row group
// at a time: at most maxGroupRows rows or about maxGroupBytes of spooled rows,
// whichever comes first. prepare, when not nil, completes each row first.
func spoolToTable[T any](spoolPath, tablePath string, meta map[string]string, prepare func(*T)) error {
	const maxGroupRows, maxGroupBytes = 65536, 8 << 20
	t, err := createTable[T](tablePath, meta)
	if err != nil {
		return err
	}
	var rows []T
	var bytes int
	err = readSpoolSized(spoolPath, 0, func(r *T, size int) error {
		if prepare != nil {
			prepare(r)
		}
		rows = append(rows, *r)
		bytes += size
		if len(rows) == maxGroupRows || bytes >= maxGroupBytes {
			err := t.write(rows)
			clear(rows)
			rows, bytes = rows[:0], 0
			return err
		}
		return nil
	})
	if err == nil {
		err = t.write(rows)
	}
	if err != nil {
		t.abort()
		return err
	}
	return t.close()
}
