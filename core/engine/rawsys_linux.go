package engine

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loops' system calls on their sockets and epoll sets never block:
// the sockets are non-blocking and the epoll waits have a zero timeout (a loop
// parks through the netpoller instead). They are made without telling the Go
// scheduler (RawSyscall). Announced, each one lets sysmon take the loop's P away
// whenever the call runs past a sysmon tick (20 µs): a loopback write runs the
// receiver's side in the sender's call, and under CPU contention the kernel
// preempts threads inside calls, so the runtime handed Ps from thread to thread
// thousands of times a second and its sysmon thread woke as often.

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return errnoResult(n, e)
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return errnoResult(n, e)
}

// rawPoll takes the ready events of epfd without waiting (epoll_pwait with no
// signal mask is epoll_wait, and exists on every Linux architecture).
func rawPoll(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(events))), uintptr(len(events)), 0, 0, 0)
	return errnoResult(n, e)
}

func errnoResult(n uintptr, e unix.Errno) (int, error) {
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}
