package ycsb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/cmpbench/cmpbench/core"
)

// VerifySamples reads back the sample records of a load (core.SampleRecords) and
// compares every field with what the load wrote; each problem names the record's key
// and the field.
func VerifySamples(ctx context.Context, r core.RecordReader, spec Spec, seed uint64) ([]core.SampleCheck, []string) {
	var checks []core.SampleCheck
	var problems []string
	want := make([]byte, spec.FieldLength)
	for _, n := range core.SampleRecords(spec.RecordCount) {
		key := Key(nil, &spec, n)
		c := core.SampleCheck{Record: n, Key: string(key)}
		fields, err := r.ReadRecord(ctx, key)
		if err != nil {
			c.Problem = fmt.Sprintf("record %s (number %d): %v", key, n, err)
		} else {
			c.Fields = len(fields)
			c.SHA256 = digest(fields)
			c.Problem = compare(fields, key, n, spec, seed, want)
		}
		if c.Problem != "" {
			problems = append(problems, c.Problem)
		}
		checks = append(checks, c)
	}
	return checks, problems
}

func compare(fields map[string][]byte, key []byte, n int64, spec Spec, seed uint64, want []byte) string {
	if len(fields) == 0 {
		return fmt.Sprintf("record %s (number %d) is missing", key, n)
	}
	for i := range spec.FieldCount {
		name := string(FieldName(i))
		got, ok := fields[name]
		if !ok {
			return fmt.Sprintf("record %s (number %d): field %s is missing", key, n, name)
		}
		LoadValue(want, seed, n, i)
		if !bytes.Equal(got, want) {
			return fmt.Sprintf("record %s (number %d): field %s differs from what the load wrote (%d bytes, sha256 %s; want %d bytes, sha256 %s)",
				key, n, name, len(got), shortHash(got), len(want), shortHash(want))
		}
	}
	if len(fields) > spec.FieldCount {
		return fmt.Sprintf("record %s (number %d) has %d fields, the load wrote %d", key, n, len(fields), spec.FieldCount)
	}
	return ""
}

// digest hashes a record's fields in name order: name, value, name, value ...
func digest(fields map[string][]byte) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, k := range names {
		fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(fields[k]))
		h.Write(fields[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func shortHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:6])
}
