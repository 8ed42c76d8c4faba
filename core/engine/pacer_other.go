//go:build !linux

package engine

import "time"

// pacer falls back to Go timers outside Linux; they can wake up to a millisecond late.
type pacer struct{}

var monoBase = time.Now()

func monotonicNow() int64 { return int64(time.Since(monoBase)) }

func (p *pacer) sleepUntil(mono int64) {
	if d := mono - monotonicNow(); d > 0 {
		time.Sleep(time.Duration(d))
	}
}

func (p *pacer) close() {}
