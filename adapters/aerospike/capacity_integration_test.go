package aerospike

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aerospike/aerospike-client-go/v8/types"

	"github.com/cmpbench/cmpbench/adapters/aerospike/asdtest"
	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/workloads/ycsb"
)

// TestCapacityErrorsIntegration fills asd, started from the built-in system
// aerospike with one setting changed, until it refuses writes, and checks what
// it answers and the class the adapter gives it: always oom, but by two result
// codes. A namespace at stop-writes and a full storage file answer 8 (the
// server's AS_ERR_OUT_OF_SPACE, the client's SERVER_MEM_ERROR) to every write; a
// set at its stop-writes-count answers 22 (FAIL_FORBIDDEN) to new records only.
// Reads go on.
func TestCapacityErrorsIntegration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(conf string) string
		// fill records are written first and accepted; 0: write until refused.
		fill int
		// stopWrites: wait for the namespace's stop_writes flag, which asd
		// evaluates every 10 s, before the refused write.
		stopWrites bool
		code       types.ResultCode
		// updates: an update of an existing record is refused too.
		updates bool
	}{
		{
			name: "namespace at stop-writes",
			edit: func(c string) string {
				return asdtest.Set(c, "storage-engine device {", "stop-writes-used-pct", "1") // of 1 GiB
			},
			fill: 120, stopWrites: true, code: types.SERVER_MEM_ERROR, updates: true,
		},
		{
			name: "set at its stop-writes-count",
			edit: func(c string) string {
				return strings.Replace(c, "namespace ycsb {\n", "namespace ycsb {\n  set usertable {\n    stop-writes-count 100\n  }\n", 1)
			},
			fill: 100, code: types.FAIL_FORBIDDEN, updates: false,
		},
		{
			name: "storage file full",
			edit: func(c string) string {
				return asdtest.Set(c, "storage-engine device {", "filesize", "128M") // the smallest asd 8.1 takes
			},
			code: types.SERVER_MEM_ERROR, updates: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := asdtest.Start(t, asdtest.Single, tc.edit)
			sc := srv.Config()
			sc.Concurrency = 1
			tg := srv.Open(t, Adapter{}, sc)
			c, err := tg.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			value := [][]byte{make([]byte, 100<<10)}
			field := [][]byte{ycsb.FieldName(0)}
			key := func(i int) []byte { return []byte(fmt.Sprintf("fill%d", i)) }
			insert := func(i int) error {
				return c.Do(context.Background(), &core.Op{Kind: core.OpInsert, Key: key(i), Fields: field, Values: value})
			}
			n := 0
			for ; n < tc.fill; n++ {
				if err := insert(n); err != nil {
					t.Fatalf("insert %d of %d: %v", n, tc.fill, err)
				}
			}
			if tc.stopWrites {
				deadline := time.Now().Add(30 * time.Second)
				for stats(t, tg)["namespace.stop_writes"] != "true" {
					if time.Now().After(deadline) {
						t.Fatalf("no stop-writes 30 s after %d records of 100 KiB", n)
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
			err = insert(n)
			// 1,280 records of 100 KiB would fill a file of 128 MiB: asd refuses
			// sooner, as it keeps free blocks for defragmentation.
			for tc.fill == 0 && err == nil && n < 1280 {
				n++
				err = insert(n)
			}
			t.Logf("refused after %d records of 100 KiB: %v", n, err)
			check := func(what string, err error, code types.ResultCode) {
				t.Helper()
				if code == types.OK {
					if err != nil {
						t.Errorf("%s: %v", what, err)
					}
					return
				}
				if got := commandCode(err); got != code || core.ClassOf(err) != core.ErrClassOOM {
					t.Errorf("%s: %v (code %d, class %s); want code %d, class oom", what, err, got, core.ClassOf(err), code)
				}
			}
			check("a new record", err, tc.code)
			update := c.Do(context.Background(), &core.Op{Kind: core.OpUpdate, WholeRecord: true, Key: key(0), Fields: field, Values: [][]byte{[]byte("smaller")}})
			if tc.updates {
				check("an update", update, tc.code)
			} else {
				check("an update", update, types.OK)
			}
			check("a read", c.Do(context.Background(), &core.Op{Kind: core.OpRead, Key: key(1), Fields: field}), types.OK)
		})
	}
}
