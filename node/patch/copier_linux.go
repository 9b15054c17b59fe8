package patch

import "golang.org/x/sys/unix"

// lowerPriority gives the calling thread the lowest CPU priority (on
// Linux, setpriority names a thread).
func lowerPriority() { _ = unix.Setpriority(unix.PRIO_PROCESS, 0, 19) }
