//go:build linux

package xdp

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// epollPwait2 is epoll_pwait2(2) without a signal mask: a timeout in
// nanoseconds where epoll_wait takes milliseconds (negative: none).
func epollPwait2(epfd int, events []unix.EpollEvent, timeout time.Duration) (int, error) {
	var (
		n     uintptr
		errno unix.Errno
	)
	if timeout < 0 {
		n, _, errno = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
			uintptr(len(events)), 0, 0, 0)
	} else if timeout == 0 {
		// A look that never blocks: no scheduler bookkeeping.
		var ts unix.Timespec
		n, _, errno = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
			uintptr(len(events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
	} else {
		ts := unix.NsecToTimespec(timeout.Nanoseconds())
		n, _, errno = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
			uintptr(len(events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
