package core

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// classifyNetError recognises timeouts and broken connections in errors from the
// standard library, whatever client library wrapped them.
func classifyNetError(err error) ErrorClass {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ErrClassTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return ErrClassConnection
	}
	var ne net.Error
	if errors.As(err, &ne) {
		if ne.Timeout() {
			return ErrClassTimeout
		}
		return ErrClassConnection
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return ErrClassConnection
	}
	return ErrClassOther
}
