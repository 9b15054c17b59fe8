//go:build linux

package api

import "golang.org/x/sys/unix"

// MonotonicNs is CLOCK_MONOTONIC in ns: the clock every process of the
// machine shares and a step of the wall clock does not move, so a time
// on it (a probe's send time, RDMARequest.AtMonoNs) means the same to
// every daemon of a lab.
func MonotonicNs() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
