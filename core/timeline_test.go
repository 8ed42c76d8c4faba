package core

import (
	"strings"
	"testing"
)

func TestTimelineKeys(t *testing.T) {
	for value, want := range map[string]string{
		"":                   "",
		"memory.used_memory": "memory.used_memory",
		" memory.used_memory, ,rocksdb.a,memory.used_memory": "memory.used_memory|rocksdb.a",
	} {
		if got := strings.Join(TimelineKeys(value), "|"); got != want {
			t.Errorf("TimelineKeys(%q) = %q, want %q", value, got, want)
		}
	}
}
