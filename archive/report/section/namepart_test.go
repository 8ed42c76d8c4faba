package section

import (
	"strings"
	"testing"
)

// Issue 43, bug 4: a chart named after a ladder step of rate 1e300 had a file name
// too long to write, and the run died with what it had measured. A name from an
// archive is bounded wherever it becomes a file name or an anchor.
func TestNamePart(t *testing.T) {
	long := "l@" + strings.Repeat("1", 301)
	for _, tc := range []struct{ in, want string }{
		{"closed-1:10", "closed-1_10"},
		{"get 95% / 1:19", "get_95_1_19"},
		{strings.Repeat("a", maxNamePart), strings.Repeat("a", maxNamePart)},
	} {
		if got := NamePart(tc.in); got != tc.want {
			t.Errorf("NamePart(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	a, b := NamePart(long), NamePart(long+"2")
	if len(a) > maxNamePart || len(b) > maxNamePart || a == b || !strings.HasPrefix(a, "l_111") {
		t.Errorf("long names: %q and %q", a, b)
	}
}
