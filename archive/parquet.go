package archive

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The archive's Parquet tables are slices of structs whose fields carry a
// `parquet:"column"` tag (`parquet:"column,optional"` for a column added later, which
// older tables lack): string, int, int64, float64, bool, *bool, *int64 and
// *float64 (nullable), []byte, and time.Time (a Parquet timestamp in nanoseconds, UTC, for
// analysis tools; nullable: the zero time is null); embedded structs contribute
// their columns in place. One codec writes and reads them all, so that the writer,
// the reader and the CSV export cannot drift apart.

type column struct {
	name     string
	index    []int // field path, for reflect.Value.FieldByIndex
	typ      arrow.DataType
	nullable bool
	// optional columns were added to format version 1 after its first archives:
	// a table without them reads as zero values.
	optional bool
}

var (
	boolPtr  = reflect.TypeOf((*bool)(nil))
	intPtr   = reflect.TypeOf((*int64)(nil))
	floatPtr = reflect.TypeOf((*float64)(nil))
	bytesT   = reflect.TypeOf([]byte(nil))
	timeT    = reflect.TypeOf(time.Time{})
)

// timestampNs is the type of time.Time columns: timestamp[ns, tz=UTC], which the
// Parquet file holds as TIMESTAMP(NANOS, isAdjustedToUTC=true).
var timestampNs = arrow.FixedWidthTypes.Timestamp_ns

func columns(t reflect.Type) ([]column, error) {
	var cols []column
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			inner, err := columns(f.Type)
			if err != nil {
				return nil, err
			}
			for _, c := range inner {
				c.index = append([]int{i}, c.index...)
				cols = append(cols, c)
			}
			continue
		}
		tag := f.Tag.Get("parquet")
		if tag == "" {
			continue
		}
		name, opt, _ := strings.Cut(tag, ",")
		c := column{name: name, index: []int{i}, optional: opt == "optional"}
		switch {
		case f.Type == boolPtr:
			c.typ, c.nullable = arrow.FixedWidthTypes.Boolean, true
		case f.Type == intPtr:
			c.typ, c.nullable = arrow.PrimitiveTypes.Int64, true
		case f.Type == floatPtr:
			c.typ, c.nullable = arrow.PrimitiveTypes.Float64, true
		case f.Type == bytesT:
			c.typ = arrow.BinaryTypes.Binary
		case f.Type == timeT:
			c.typ, c.nullable = timestampNs, true
		default:
			switch f.Type.Kind() {
			case reflect.String:
				c.typ = arrow.BinaryTypes.String
			case reflect.Int, reflect.Int64:
				c.typ = arrow.PrimitiveTypes.Int64
			case reflect.Float64:
				c.typ = arrow.PrimitiveTypes.Float64
			case reflect.Bool:
				c.typ = arrow.FixedWidthTypes.Boolean
			default:
				return nil, fmt.Errorf("%s.%s: type %s has no Parquet column type", t.Name(), f.Name, f.Type)
			}
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// deriver is a row type with columns derived from others (a timestamp from its
// nanoseconds): derive fills them where they are zero, for rows read from a spool,
// which does not hold them, or from a table written before they were added.
type deriver interface {
	derive()
}

// tableWriter writes a table in batches, so that a table of any size is written
// with the memory of one batch.
type tableWriter struct {
	f    *os.File
	fw   *pqarrow.FileWriter
	cols []column
	b    *array.RecordBuilder
	meta map[string]string
}

// createTable starts a table of rows of type T (a tagged struct) at path.
func createTable[T any](path string, meta map[string]string) (*tableWriter, error) {
	var zero T
	cols, err := columns(reflect.TypeOf(zero))
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: c.nullable}
	}
	schema := arrow.NewSchema(fields, nil)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	props := parquet.NewWriterProperties(
		// zstd's fastest level: the default keeps two 16 MB windows per table
		// being written, which doubled the host's peak memory when finishing
		// a long run, for tables a quarter smaller.
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithMaxRowGroupLength(1<<16),
		parquet.WithCreatedBy("cmpbench"),
	)
	// The Parquet writer closes what it writes to; hide Close so that the file can
	// still be synced.
	fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{f}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &tableWriter{f: f, fw: fw, cols: cols, b: array.NewRecordBuilder(memory.DefaultAllocator, schema), meta: meta}, nil
}

// write appends rows, a slice of the table's row type.
func (t *tableWriter) write(rows any) error {
	if reflect.ValueOf(rows).Len() == 0 {
		return nil
	}
	rec := t.record(rows)
	defer rec.Release()
	return t.fw.Write(rec) // a row group per batch: callers size their batches
}

// record lays rows, a slice of the table's row type, out as a record batch.
func (t *tableWriter) record(rows any) arrow.RecordBatch {
	rv := reflect.ValueOf(rows)
	for r := range rv.Len() {
		row := rv.Index(r)
		for i, c := range t.cols {
			v := row.FieldByIndex(c.index)
			switch fb := t.b.Field(i).(type) {
			case *array.StringBuilder:
				fb.Append(v.String())
			case *array.Int64Builder:
				switch {
				case !c.nullable:
					fb.Append(v.Int())
				case v.IsNil():
					fb.AppendNull()
				default:
					fb.Append(v.Elem().Int())
				}
			case *array.Float64Builder:
				switch {
				case !c.nullable:
					fb.Append(v.Float())
				case v.IsNil():
					fb.AppendNull()
				default:
					fb.Append(v.Elem().Float())
				}
			case *array.BinaryBuilder:
				fb.Append(v.Bytes())
			case *array.TimestampBuilder:
				if t := v.Interface().(time.Time); t.IsZero() {
					fb.AppendNull()
				} else {
					fb.Append(arrow.Timestamp(t.UnixNano()))
				}
			case *array.BooleanBuilder:
				if c.nullable {
					if v.IsNil() {
						fb.AppendNull()
					} else {
						fb.Append(v.Elem().Bool())
					}
				} else {
					fb.Append(v.Bool())
				}
			}
		}
	}
	return t.b.NewRecordBatch()
}

// close writes the file metadata and footer and syncs the file.
func (t *tableWriter) close() error {
	defer t.b.Release()
	var err error
	for _, k := range sortedKeys(t.meta) {
		if err = t.fw.AppendKeyValueMetadata(k, t.meta[k]); err != nil {
			break
		}
	}
	if cerr := t.fw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = t.f.Sync()
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// abort gives up on the table.
func (t *tableWriter) abort() {
	t.b.Release()
	_ = t.fw.Close()
	_ = t.f.Close()
}

// readParquet reads a table into out (a pointer to a slice of tagged structs) and
// returns the file's key/value metadata. Columns the struct does not know are ignored;
// columns it needs and the file lacks are an error (optional ones are left zero).
func readParquet(path string, out any) (map[string]string, error) {
	sv := reflect.ValueOf(out).Elem()
	return eachParquetBatch(path, sv.Type().Elem(), func(batch reflect.Value) error {
		sv.Set(reflect.AppendSlice(sv, batch))
		return nil
	})
}

// eachParquetRow calls fn with every row of a table in order, reading it a batch
// at a time: a table of any size is read with the memory of one batch.
func eachParquetRow[T any](path string, fn func(*T) error) (map[string]string, error) {
	var zero T
	return eachParquetBatch(path, reflect.TypeOf(zero), func(batch reflect.Value) error {
		rows := batch.Interface().([]T)
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// readBatchSize is how many rows a streaming read holds at once: interval rows
// carry three encoded histograms of several KB each.
const readBatchSize = 1024

// eachParquetBatch reads a table in batches of rows of type rowType and calls fn
// with each batch, a []rowType, and returns the file's metadata.
//
// A damaged file must be an error, never a crash of whatever reads the archive:
// the Parquet library trusts the lengths it reads and can panic on a damaged file,
// so every call into it is guarded (fn, ours, is not), and the Arrow schema the
// writer stores in the file's metadata is not decoded (the columns' Parquet types
// give the same Arrow types; decoding a damaged one can ask for any amount of
// memory).
func eachParquetBatch(path string, rowType reflect.Type, fn func(batch reflect.Value) error) (map[string]string, error) {
	cols, err := columns(rowType)
	if err != nil {
		return nil, err
	}
	if err := regular(path); err != nil {
		return nil, err
	}
	var pf *file.Reader
	if err := guarded("open", func() (err error) { pf, err = file.OpenParquetFile(path, false); return err }); err != nil {
		return nil, err
	}
	defer guarded("close", pf.Close)
	meta, fr, schema, err := arrowReader(pf)
	if err != nil {
		return nil, err
	}
	src, err := sourceColumns(cols, schema)
	if err != nil {
		return nil, err
	}
	var rr pqarrow.RecordReader
	if err := guarded("read", func() (err error) { rr, err = fr.GetRecordReader(context.Background(), nil, nil); return err }); err != nil {
		return nil, err
	}
	defer guarded("release", func() error { rr.Release(); return nil })
	for {
		rows, more, err := readBatch(rr, rowType, cols, src)
		if err != nil {
			return nil, err
		}
		if !more {
			return meta, nil
		}
		if err := fn(rows); err != nil {
			return nil, err
		}
	}
}

// arrowReader reads a Parquet file's metadata, all but the Arrow schema (not
// decoded: see eachParquetBatch), and opens it as Arrow record batches.
func arrowReader(pf *file.Reader) (meta map[string]string, fr *pqarrow.FileReader, schema *arrow.Schema, err error) {
	meta = map[string]string{}
	err = guarded("schema", func() error {
		for _, kv := range pf.MetaData().KeyValueMetadata() {
			if kv.Key == arrowSchemaKey {
				kv.Key = "" // not decoded: see above
				continue
			}
			if kv.Value != nil {
				meta[kv.Key] = *kv.Value
			}
		}
		var err error
		if fr, err = pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatchSize}, memory.DefaultAllocator); err != nil {
			return err
		}
		schema, err = fr.Schema()
		return err
	})
	return meta, fr, schema, err
}

// sourceColumns says which column of the file each field reads, or -1 for an
// optional column the file does not have; a missing required column, or one of
// another type, is an error.
func sourceColumns(cols []column, schema *arrow.Schema) ([]int, error) {
	src := make([]int, len(cols))
	for i, c := range cols {
		idx := schema.FieldIndices(c.name)
		switch {
		case len(idx) > 0:
			src[i] = idx[0]
			if t := schema.Field(idx[0]).Type; !arrow.TypeEqual(t, c.typ) {
				return nil, fmt.Errorf("column %q is of type %s, not %s", c.name, t, c.typ)
			}
		case c.optional:
			src[i] = -1
		default:
			return nil, fmt.Errorf("column %q is missing", c.name)
		}
	}
	return src, nil
}

// readBatch reads the next record batch into a []rowType, or says there is none
// (more false); the rows' derived fields are filled in.
func readBatch(rr pqarrow.RecordReader, rowType reflect.Type, cols []column, src []int) (rows reflect.Value, more bool, err error) {
	err = guarded("read", func() error {
		if more = rr.Next(); !more {
			if err := rr.Err(); err != nil && err != io.EOF {
				return err
			}
			return nil
		}
		rec := rr.RecordBatch()
		n := int(rec.NumRows())
		rows = reflect.MakeSlice(reflect.SliceOf(rowType), n, n)
		for ci, c := range cols {
			if src[ci] < 0 {
				continue
			}
			if err := fillColumn(rows, c, rec.Column(src[ci])); err != nil {
				return err
			}
		}
		if _, ok := reflect.New(rowType).Interface().(deriver); ok {
			for i := range n {
				rows.Index(i).Addr().Interface().(deriver).derive()
			}
		}
		return nil
	})
	return rows, more, err
}

// arrowSchemaKey is where pqarrow stores a table's Arrow schema in its metadata.
const arrowSchemaKey = "ARROW:schema"

// guarded runs a call into the Parquet library, turning a panic, which a damaged
// file can cause, into an error.
func guarded(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("damaged Parquet file (%s: %v)", what, r)
		}
	}()
	return f()
}

// fillColumn sets field c of every row from one column of a batch.
func fillColumn(rows reflect.Value, c column, col arrow.Array) error {
	if col.Len() != rows.Len() {
		return fmt.Errorf("column %q has %d values in a batch of %d rows", c.name, col.Len(), rows.Len())
	}
	for i := range col.Len() {
		v := rows.Index(i).FieldByIndex(c.index)
		switch a := col.(type) {
		case *array.String:
			v.SetString(a.Value(i))
		case *array.Int64:
			if !c.nullable {
				v.SetInt(a.Value(i))
			} else if !a.IsNull(i) {
				n := a.Value(i)
				v.Set(reflect.ValueOf(&n))
			}
		case *array.Float64:
			if !c.nullable {
				v.SetFloat(a.Value(i))
			} else if !a.IsNull(i) {
				f := a.Value(i)
				v.Set(reflect.ValueOf(&f))
			}
		case *array.Binary:
			v.SetBytes(append([]byte(nil), a.Value(i)...))
		case *array.Timestamp:
			if !a.IsNull(i) {
				v.Set(reflect.ValueOf(time.Unix(0, int64(a.Value(i))).UTC()))
			}
		case *array.Boolean:
			if c.nullable {
				if !a.IsNull(i) {
					b := a.Value(i)
					v.Set(reflect.ValueOf(&b))
				}
			} else {
				v.SetBool(a.Value(i))
			}
		default:
			return fmt.Errorf("column %q has unexpected type %s", c.name, col.DataType())
		}
	}
	return nil
}

// writeCSV writes rows (a slice of tagged structs) as CSV with the Parquet column
// names; binary columns (histograms) are left out.
func writeCSV(w io.Writer, rows any) error {
	rv := reflect.ValueOf(rows)
	all, err := columns(rv.Type().Elem())
	if err != nil {
		return err
	}
	var cols []column
	var header []string
	for _, c := range all {
		if c.typ != arrow.BinaryTypes.Binary {
			cols = append(cols, c)
			header = append(header, c.name)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(cols))
	for r := range rv.Len() {
		row := rv.Index(r)
		for i, c := range cols {
			v := row.FieldByIndex(c.index)
			switch v.Kind() {
			case reflect.String:
				rec[i] = v.String()
			case reflect.Int, reflect.Int64:
				rec[i] = strconv.FormatInt(v.Int(), 10)
			case reflect.Float64:
				rec[i] = strconv.FormatFloat(v.Float(), 'f', -1, 64)
			case reflect.Bool:
				rec[i] = strconv.FormatBool(v.Bool())
			case reflect.Struct: // time.Time
				rec[i] = ""
				if t := v.Interface().(time.Time); !t.IsZero() {
					rec[i] = t.UTC().Format(time.RFC3339Nano)
				}
			case reflect.Pointer:
				rec[i] = ""
				switch {
				case v.IsNil():
				case v.Elem().Kind() == reflect.Bool:
					rec[i] = strconv.FormatBool(v.Elem().Bool())
				case v.Elem().Kind() == reflect.Int64:
					rec[i] = strconv.FormatInt(v.Elem().Int(), 10)
				default:
					rec[i] = strconv.FormatFloat(v.Elem().Float(), 'f', -1, 64)
				}
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
