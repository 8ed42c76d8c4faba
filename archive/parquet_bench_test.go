package archive

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array/arreflect"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchRows are a long run's worth of interval rows: 10,000 intervals of two ops
// with histograms of realistic size.
func benchRows() []IntervalRow {
	hdr := make([]byte, 600)
	for i := range hdr {
		hdr[i] = byte(i)
	}
	rows := make([]IntervalRow, 20_000)
	for i := range rows {
		rows[i] = IntervalRow{System: "redis", PhaseIndex: 3, Phase: "closed-1:10", Interval: i / 2, StartNs: int64(i) * 1e9, EndNs: int64(i+1) * 1e9,
			Op: []string{"GET", "SET"}[i%2], Counts: Counts{Count: 100_000 + int64(i), Hits: 99_000, Bytes: 25_600_000},
			RespP50: 120_000, RespP99: 900_000, RespP999: 2_000_000, RespMax: 9_000_000, SvcP50: 110_000, SvcP99: 800_000,
			RespHDR: hdr, LagHDR: hdr[:200]}
	}
	return rows
}

// The archive's own codec (columns from `parquet` tags, laid out by reflection)
// against arrow-go's arreflect, which issue 14 asked to consider: building the
// record batch of a table's rows, and reading them back. Both cost what they do
// per row, beside the Parquet encoding, which is the same for both.
func BenchmarkRowsToRecord(b *testing.B) {
	rows := benchRows()
	b.Run("codec", func(b *testing.B) {
		t, err := createTable[IntervalRow](filepath.Join(b.TempDir(), "t.parquet"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer t.abort()
		b.ReportAllocs()
		for b.Loop() {
			t.record(rows).Release()
		}
	})
	b.Run("arreflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rec, err := arreflect.RecordFromSlice(rows, memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			rec.Release()
		}
	})
}

func BenchmarkRecordToRows(b *testing.B) {
	rows := benchRows()
	t, err := createTable[IntervalRow](filepath.Join(b.TempDir(), "t.parquet"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer t.abort()
	ours := t.record(rows)
	defer ours.Release()
	theirs, err := arreflect.RecordFromSlice(rows, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	defer theirs.Release()
	cols, err := columns(reflect.TypeFor[IntervalRow]())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := recordRows[IntervalRow](ours, cols); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("arreflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := arreflect.RecordToSlice[IntervalRow](theirs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// recordRows is the codec's read of a batch (eachParquetBatch without the file).
func recordRows[T any](rec arrow.RecordBatch, cols []column) ([]T, error) {
	n := int(rec.NumRows())
	rows := reflect.MakeSlice(reflect.SliceOf(reflect.TypeFor[T]()), n, n)
	for ci, c := range cols {
		if err := fillColumn(rows, c, rec.Column(ci)); err != nil {
			return nil, err
		}
	}
	return rows.Interface().([]T), nil
}
