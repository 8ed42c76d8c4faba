package engine

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loop's system calls on its non-blocking descriptors, made without
// telling Go's scheduler (RawSyscall). All but one return at once: a socket,
// eventfd or timerfd opened O_NONBLOCK, and epoll_wait with a zero timeout;
// epollPwait2 waits at most a millisecond (the loop's yieldEvery), and a signal
// (Go's preemption) ends it sooner. Announced system calls (unix.Read and the
// like) cost the loop the scheduler's bookkeeping on both sides of every call,
// and they keep the runtime's monitor thread (sysmon) waking every 20 µs to look
// for a processor held in a system call; in a closed loop over loopback that was
// a tenth of the plugin's CPU (bench/README.md, issue 30). A loop that blocks still
// yields its P when it has waited long enough, so the runtime's other goroutines
// run.

// nbRead reads from the non-blocking descriptor fd.
func nbRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(bufPtr(p)), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// nbWrite writes to the non-blocking descriptor fd.
func nbWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(bufPtr(p)), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// nbEpollWait takes the ready events of epfd without waiting for any.
func nbEpollWait(epfd int, events []unix.EpollEvent) (int, error) {
	var p unsafe.Pointer
	if len(events) > 0 {
		p = unsafe.Pointer(&events[0])
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(p), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func bufPtr(p []byte) unsafe.Pointer {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Pointer(&p[0])
}

// kernelTimespec is the kernel's __kernel_timespec, which epoll_pwait2 reads:
// two 64-bit fields on every architecture (unix.Timespec has 32-bit ones on
// 32-bit platforms).
type kernelTimespec struct{ sec, nsec int64 }

// epollPwait2 waits up to timeout for events of epfd (epoll_pwait2, Linux 5.11).
// It blocks, unannounced to the scheduler: see the loop's block for why.
func epollPwait2(epfd int, events []unix.EpollEvent, timeout *kernelTimespec) (int, error) {
	var p unsafe.Pointer
	if len(events) > 0 {
		p = unsafe.Pointer(&events[0])
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(p), uintptr(len(events)), uintptr(unsafe.Pointer(timeout)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
