//go:build !linux

package engine

import (
	"context"
	"errors"
)

// loopsAvailable says this platform has the event-loop executor: only Linux does.
const loopsAvailable = false

type loop struct{}

func newLoops(*execution, *collector, []*stream, int, bool) ([]*loop, error) {
	return nil, errors.New("the event-loop executor needs Linux")
}

func (*loop) run(context.Context)             {}
func (*loop) lastEnd() int64                  { return 0 }
func (*loop) counts() (int64, int64, *errLog) { return 0, 0, &errLog{} }
