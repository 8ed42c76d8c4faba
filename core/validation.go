package core

// SampleCheck is one sampled record read back for validation.
type SampleCheck struct {
	Record int64  `json:"record"` // record number
	Key    string `json:"key"`
	Fields int    `json:"fields"`
	// SHA256 is the hash of the record's fields in order: name, value, name, value...
	SHA256 string `json:"sha256"`
	// Problem says what is wrong with the record, naming the field; empty when its
	// contents are exactly what the load wrote.
	Problem string `json:"problem,omitempty"`
}

// Validation is one check of a loaded system.
type Validation struct {
	System string `json:"system"`
	// Point is when it was taken: "after load", "after restart".
	Point string `json:"point"`
	// Expected is the number of successful inserts of the load; Counted is what the
	// server reports (DBSIZE, namespace objects); -1 when it cannot count.
	Expected   int64         `json:"expected"`
	Counted    int64         `json:"counted"`
	CountError string        `json:"count_error,omitempty"`
	Samples    []SampleCheck `json:"samples"`
	// Problems is every mismatch found; empty means the check passed.
	Problems []string `json:"problems"`
	// Note explains what followed, e.g. a system that is not restart-durable.
	Note string `json:"note,omitempty"`
}

// OK reports whether the check found nothing wrong.
func (v Validation) OK() bool { return len(v.Problems) == 0 }

// SampleRecords are the record numbers a validation reads back: those of the
// published comparison (0, 1, 17, 999, 99,999, 1,234,567, 50,000,000, 99,999,999 of
// 100,000,000), the large ones scaled into a smaller data set.
func SampleRecords(records int64) []int64 {
	const published = 100_000_000
	var out []int64
	seen := map[int64]bool{}
	for _, n := range []int64{0, 1, 17, 999, 99_999, 1_234_567, 50_000_000, 99_999_999} {
		if n >= records {
			n = n * (records - 1) / (published - 1)
		}
		if n >= 0 && n < records && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
