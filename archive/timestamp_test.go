package archive

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

type timedRow struct {
	At time.Time `parquet:"at"`
	N  int64     `parquet:"n"`
}

// A time.Time field is a Parquet timestamp in nanoseconds, adjusted to UTC, that
// reads back as the same instant in UTC; the zero time is null and reads back as
// zero; CSV says RFC 3339 in UTC.
func TestTimeColumns(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	at := time.Date(2026, 12, 3, 11, 4, 47, 129434703, berlin)
	rows := []timedRow{{At: at, N: 1}, {N: 2}}
	path := filepath.Join(t.TempDir(), "t.parquet")
	tw, err := createTable[timedRow](path, map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.write(rows); err != nil {
		t.Fatal(err)
	}
	if err := tw.close(); err != nil {
		t.Fatal(err)
	}

	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	lt, ok := pf.MetaData().Schema.Column(0).LogicalType().(schema.TimestampLogicalType)
	if !ok || !lt.IsAdjustedToUTC() || lt.TimeUnit() != schema.TimeUnitNanos {
		t.Errorf("column at is %v, want TIMESTAMP(NANOS, adjusted to UTC)", pf.MetaData().Schema.Column(0).LogicalType())
	}
	pf.Close()

	var back []timedRow
	if _, err := readParquet(path, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || !back[0].At.Equal(at) || back[0].At.Location() != time.UTC || !back[1].At.IsZero() || back[1].N != 2 {
		t.Fatalf("read back %+v", back)
	}
	var csv bytes.Buffer
	if err := writeCSV(&csv, rows); err != nil {
		t.Fatal(err)
	}
	if want := "at,n\n2026-12-03T10:04:47.129434703Z,1\n,2\n"; csv.String() != want {
		t.Errorf("CSV\n%s\nwant\n%s", csv.String(), want)
	}
}

// The spools hold a sample's time once (t_unix_ns); t is made from it when the
// spool is read, as when a table written before t was is read.
func TestSpooledStatsGetTheirTimestamp(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 4, 47, 129434703, time.UTC)
	path := filepath.Join(t.TempDir(), spoolServerStats)
	s, err := openSpool(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := addRows(s, []ServerStatRow{{TimeUnixNs: at.UnixNano(), Time: at, System: "s", Key: "k"}}); err != nil {
		t.Fatal(err)
	}
	s.close()
	var got []ServerStatRow
	if err := readSpoolFrom(path, 0, func(r *ServerStatRow) error { got = append(got, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Time.Equal(at) {
		t.Fatalf("read back %+v", got)
	}
	b, _ := readRegular(path)
	if bytes.Contains(b, []byte(`"Time"`)) {
		t.Errorf("the spool holds the time twice: %s", b)
	}
}
