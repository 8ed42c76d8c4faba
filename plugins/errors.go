package plugins

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cmpbench/cmpbench/core"
)

// Errors cross the plugin boundary as gRPC statuses. This file is the one place
// that maps them, both ways: the plugin side (sdk) turns an adapter's error into a
// status with ToStatus, the host side turns a status back into an error with
// FromStatus, so that what the adapter meant — a refusal, a feature it lacks, a
// cancelled context — reaches the runner as the error it can test for.
//
//	core.ErrRefused              PermissionDenied   (Open is not retried)
//	core.ErrUnsupported          Unimplemented      (an optional feature)
//	context.Canceled             Canceled
//	context.DeadlineExceeded     DeadlineExceeded
//	anything else                the caller's code  (Unknown; Unavailable for Open)

// ToStatus turns an adapter's error into a status for the host; otherwise is the
// code of an error that is none of the mapped ones. A status already is one.
func ToStatus(err error, otherwise codes.Code) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	code := otherwise
	switch {
	case errors.Is(err, core.ErrRefused):
		code = codes.PermissionDenied
	case errors.Is(err, core.ErrUnsupported):
		code = codes.Unimplemented
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}

// Unsupported is the status of an optional feature the adapter lacks.
func Unsupported(what string) error {
	return status.Error(codes.Unimplemented, what)
}

// FromStatus turns a status from the plugin back into an error: the plugin's own
// message, without gRPC's framing, wrapping what the code means (core.ErrRefused,
// core.ErrUnsupported, the context errors) so that errors.Is finds it.
func FromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	var kind error
	switch st.Code() {
	case codes.PermissionDenied:
		kind = core.ErrRefused
	case codes.Unimplemented:
		kind = core.ErrUnsupported
	case codes.Canceled:
		kind = context.Canceled
	case codes.DeadlineExceeded:
		kind = context.DeadlineExceeded
	}
	return &BoundaryError{Code: st.Code(), Msg: st.Message(), kind: kind}
}

// BoundaryError is an error that crossed the plugin boundary: the plugin's
// message and the status code it came with.
type BoundaryError struct {
	Code codes.Code
	Msg  string
	kind error
}

func (e *BoundaryError) Error() string { return e.Msg }

// Unwrap gives what the code means, when it means one of the mapped errors.
func (e *BoundaryError) Unwrap() error { return e.kind }
