package archive

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite testdata/schema.golden from the code")

// TestArchiveSchemaIsPinned pins the archive format's names: every key of
// manifest.json and validation.json, and every column of every Parquet table, with
// its type. A change to any of them shows here; archives are read for years, so a
// name is changed on purpose or not at all (go test ./archive -update-schema
// rewrites the golden file after a deliberate change within the format version's
// rules: added, optional, never renamed).
func TestArchiveSchemaIsPinned(t *testing.T) {
	var b strings.Builder
	jsonSchema(&b, ManifestFile, reflect.TypeOf(Manifest{}), map[reflect.Type]bool{})
	jsonSchema(&b, ValidationFile+"[]", reflect.TypeOf(core.Validation{}), map[reflect.Type]bool{})
	jsonSchema(&b, SystemsDir+"/<name>/"+FactsFile, reflect.TypeOf(core.Facts{}), map[reflect.Type]bool{})
	for _, tbl := range []struct {
		file string
		row  any
	}{{SummaryFile, SummaryRow{}}, {IntervalsFile, IntervalRow{}}, {ProbeFile, ProbeRow{}}, {ServerStats, ServerStatRow{}}, {ClientStats, ClientStatRow{}}} {
		cols, err := columns(reflect.TypeOf(tbl.row))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			opt := ""
			if c.optional {
				opt = " optional"
			}
			if c.nullable {
				opt += " nullable"
			}
			fmt.Fprintf(&b, "%s %s %s%s\n", tbl.file, c.name, c.typ, opt)
		}
	}
	golden := filepath.Join("testdata", "schema.golden")
	if *updateSchema {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("the archive schema changed (go test ./archive -run TestArchiveSchemaIsPinned -update-schema after a deliberate change):\n%s", lineDiff(string(want), got))
	}
}

var timeType = reflect.TypeOf(time.Time{})

// jsonSchema writes one line per JSON key under prefix: its path and type. A
// struct field without a JSON name fails the test's golden comparison by
// appearing under its Go name.
var workloadType = reflect.TypeFor[core.Workload]()

func jsonSchema(b *strings.Builder, prefix string, t reflect.Type, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		fmt.Fprintf(b, "%s time\n", prefix)
		return
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		jsonSchema(b, prefix+"[]", t.Elem(), seen)
		return
	case t.Kind() == reflect.Map:
		fmt.Fprintf(b, "%s map[%s]%s\n", prefix, t.Key().Kind(), t.Elem().Kind())
		return
	case t.Kind() != reflect.Struct:
		kind := t.Kind().String()
		if t.Implements(reflect.TypeOf((*interface{ MarshalText() ([]byte, error) })(nil)).Elem()) {
			kind = "text"
		}
		fmt.Fprintf(b, "%s %s\n", prefix, kind)
		return
	}
	if seen[t] {
		fmt.Fprintf(b, "%s (%s, above)\n", prefix, t.Name())
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type == workloadType {
			// Archived under its kind's key (PhaseInfo.MarshalJSON): every
			// registered kind's fields.
			for _, kind := range core.WorkloadKinds() {
				w, err := core.DecodeWorkload(kind, []byte("{}"), false)
				if err != nil {
					panic(err)
				}
				jsonSchema(b, prefix+"."+kind+"?", reflect.TypeOf(w), seen)
			}
			continue
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = "UNNAMED:" + f.Name
		}
		if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
			name += "?"
		}
		jsonSchema(b, prefix+"."+name, f.Type, seen)
	}
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	in := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, s := range l {
			m[s] = true
		}
		return m
	}
	wm, gm := in(w), in(g)
	var out []string
	for _, s := range w {
		if !gm[s] {
			out = append(out, "- "+s)
		}
	}
	for _, s := range g {
		if !wm[s] {
			out = append(out, "+ "+s)
		}
	}
	return strings.Join(out, "\n")
}
