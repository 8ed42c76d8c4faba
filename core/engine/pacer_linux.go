package engine

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// pacer sleeps until an absolute CLOCK_MONOTONIC time with a timerfd read through the
// Go netpoller. Go's own timers are only as fine as the netpoller's millisecond
// timeout when the process is idle (measured here: 1 ms late for a 20 µs sleep), which
// would add up to a millisecond of client delay to open-loop response times; a timerfd
// wakes the netpoller on time (about 40 µs late) without blocking an OS thread.
type pacer struct {
	fd   int
	file *os.File
	spec unix.ItimerSpec
	buf  [8]byte
}

func monotonicNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func (p *pacer) sleepUntil(mono int64) {
	if p.file == nil {
		fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
		if err != nil {
			p.fallback(mono)
			return
		}
		p.fd, p.file = fd, os.NewFile(uintptr(fd), "pacer-timerfd")
	}
	p.spec.Value = unix.NsecToTimespec(mono)
	if err := unix.TimerfdSettime(p.fd, unix.TFD_TIMER_ABSTIME, &p.spec, nil); err != nil {
		p.fallback(mono)
		return
	}
	if _, err := p.file.Read(p.buf[:]); err != nil {
		p.fallback(mono)
	}
}

func (p *pacer) fallback(mono int64) {
	if d := mono - monotonicNow(); d > 0 {
		time.Sleep(time.Duration(d))
	}
}

func (p *pacer) close() {
	if p.file != nil {
		_ = p.file.Close()
		p.file = nil
	}
}
