//go:build !linux

package dataplane

import "time"

// monotonicNs is a clock every process of the machine shares: the wall
// clock where no monotonic one is at hand.
func monotonicNs() int64 { return time.Now().UnixNano() }
