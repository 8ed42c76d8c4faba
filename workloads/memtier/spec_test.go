package memtier

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cmpbench/cmpbench/core"
)

func TestSpecReadsArchivesOfBothNamings(t *testing.T) {
	want := Spec{SetRatio: 1, GetRatio: 10, SetPattern: 'P', GetPattern: 'R', KeyMin: 1, KeyMax: 100, KeyPrefix: "kv_", ValueMin: 8, ValueMax: 8, MissFraction: 0.5}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		string(b),
		// As archives written before the fields had JSON names have it.
		`{"SetRatio":1,"GetRatio":10,"SetPattern":"P","GetPattern":"R","KeyMin":1,"KeyMax":100,"KeyPrefix":"kv_","GaussMedian":0,"GaussStddev":0,"ZipfExp":0,"ValueMin":8,"ValueMax":8,"MissFraction":0.5}`,
	} {
		var got Spec
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	if string(b) != `{"set_ratio":1,"get_ratio":10,"set_pattern":"P","get_pattern":"R","key_min":1,"key_max":100,"key_prefix":"kv_","gauss_median":0,"gauss_stddev":0,"zipf_exp":0,"value_min":8,"value_max":8,"miss_fraction":0.5}` {
		t.Errorf("archived as %s", b)
	}
}

func TestSpecRefusesFieldsItDoesNotKnow(t *testing.T) {
	for _, in := range []string{
		`{"set_ratio":1,"get_ratio":10,"key_max":100,"value_min":8,"value_max":8,"key_zipf":2}`,
		`{"SetRatio":1,"Bogus":2}`,
	} {
		if _, err := core.DecodeWorkload(Kind, []byte(in), true); err == nil || !strings.Contains(err.Error(), "unknown field") {
			t.Errorf("%s: %v, want an unknown field", in, err)
		}
	}
}
