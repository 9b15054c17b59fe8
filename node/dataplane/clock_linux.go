//go:build linux

package dataplane

import "golang.org/x/sys/unix"

// monotonicNs is CLOCK_MONOTONIC in ns: the clock every process of the
// machine shares, so a probe's send time means the same to its receiver.
func monotonicNs() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
