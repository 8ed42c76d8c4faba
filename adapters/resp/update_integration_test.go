package resp

import (
	"context"
	"testing"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision/provisiontest"
)

// hreplace stands in for LAVIK.HREPLACE on redis-server: it replaces an existing
// record and answers nil when there is none.
const hreplace = `name: hreplace
commands:
  update: [EVAL, "if redis.call('EXISTS', KEYS[1]) == 0 then return nil end redis.call('DEL', KEYS[1]) return redis.call('HSET', KEYS[1], unpack(ARGV))", "1"]
  update_not_found: nil
`

// An UPDATE that finds no record is not_found on both data paths, whether the
// reply is nil (a replacing command) or HSET's count of fields it created.
func TestUpdateOfAMissingRecordIntegration(t *testing.T) {
	srv := provisiontest.Redis(t)
	ctx := context.Background()
	fields := [][]byte{[]byte("field0"), []byte("field1")}
	values := [][]byte{[]byte("a"), []byte("b")}
	for _, driver := range []string{"raw", "rueidis"} {
		for _, profile := range []string{"name: redis\n", hreplace} {
			sys := sysAt(srv.Endpoint())
			sys.Profile, sys.ProfileData = "custom", []byte(profile)
			if driver == "rueidis" {
				sys.Options["driver"] = "rueidis"
			}
			tg, err := (Adapter{}).Open(ctx, sys)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(ctx)
			c, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, raw := c.(*rawConn); raw != (driver == "raw") {
				t.Fatalf("%s asked for, got a %T", driver, c)
			}
			name := driver + " " + tg.(*target).profile.Name
			if err := tg.(core.Flusher).Flush(ctx); err != nil {
				t.Fatal(err)
			}
			for _, whole := range []bool{true, false} {
				op := &core.Op{Kind: core.OpUpdate, Key: []byte("user1"), Fields: fields, Values: values, WholeRecord: whole}
				if !whole {
					op.Fields, op.Values = fields[1:], values[1:]
				}
				if err := c.Do(ctx, op); core.ClassOf(err) != core.ErrClassNotFound || err == core.ErrMiss {
					t.Errorf("%s: UPDATE (whole %v) of a missing record: %v (class %s)", name, whole, err, core.ClassOf(err))
				}
				if err := c.Do(ctx, &core.Op{Kind: core.OpInsert, Key: []byte("user1"), Fields: fields, Values: values}); err != nil {
					t.Fatalf("%s: INSERT: %v", name, err)
				}
				if err := c.Do(ctx, op); err != nil {
					t.Errorf("%s: UPDATE (whole %v) of an existing record: %v", name, whole, err)
				}
				if err := tg.(core.Flusher).Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
		}
	}
}
