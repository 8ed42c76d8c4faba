package plugins

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cmpbench/cmpbench/core"
)

func TestErrorsCrossTheBoundaryBothWays(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		otherwise codes.Code
		code      codes.Code
		is        error // what errors.Is finds on the host side; nil for none
	}{
		{"refusal", core.Refused(errors.New("WRONGPASS")), codes.Unavailable, codes.PermissionDenied, core.ErrRefused},
		{"wrapped refusal", fmt.Errorf("open: %w", core.Refused(errors.New("bad cert"))), codes.Unavailable, codes.PermissionDenied, core.ErrRefused},
		{"unsupported", fmt.Errorf("no flush: %w", core.ErrUnsupported), codes.Unknown, codes.Unimplemented, core.ErrUnsupported},
		{"cancelled", fmt.Errorf("stopped: %w", context.Canceled), codes.Unknown, codes.Canceled, context.Canceled},
		{"deadline", fmt.Errorf("slow: %w", context.DeadlineExceeded), codes.Unknown, codes.DeadlineExceeded, context.DeadlineExceeded},
		{"other at open", errors.New("connection refused"), codes.Unavailable, codes.Unavailable, nil},
		{"other", errors.New("INFO failed"), codes.Unknown, codes.Unknown, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := ToStatus(tc.err, tc.otherwise)
			if got := status.Code(st); got != tc.code {
				t.Fatalf("code %s, want %s", got, tc.code)
			}
			back := FromStatus(st)
			if back.Error() != tc.err.Error() {
				t.Errorf("message %q, want the adapter's own %q", back, tc.err)
			}
			for _, e := range []error{core.ErrRefused, core.ErrUnsupported, context.Canceled, context.DeadlineExceeded} {
				if errors.Is(back, e) != (e == tc.is) {
					t.Errorf("errors.Is(%v) = %v", e, errors.Is(back, e))
				}
			}
		})
	}
	if ToStatus(nil, codes.Unknown) != nil || FromStatus(nil) != nil {
		t.Error("nil is not nil across the boundary")
	}
	plain := errors.New("not a status")
	if FromStatus(plain) != plain {
		t.Error("a plain error changed")
	}
}
