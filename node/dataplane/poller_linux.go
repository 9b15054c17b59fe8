//go:build linux

package dataplane

import (
	"fmt"
	"time"

	"github.com/bcfab/bcfab/xdp"
	"golang.org/x/sys/unix"
)

func newKernelPoller() (kernelPoller, error) { return xdp.NewPoller(256) }

// workerTimerSlack is how late the kernel may end the worker's sleeps. The
// worker chooses its wake-up times itself (WorkerOptions.Slack), so the
// kernel should keep them: a thread's default slack is 50 us.
const workerTimerSlack = time.Microsecond

// prepareThread sets the calling thread's timer slack and returns its id.
func prepareThread() (int, error) {
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(workerTimerSlack.Nanoseconds()), 0, 0, 0); err != nil {
		return 0, fmt.Errorf("dataplane: set timer slack: %w", err)
	}
	return unix.Gettid(), nil
}

// threadClass is the scheduling class of the calling thread as the
// kernel first gave it: what a worker's thread goes back to when it
// yields its real-time priority, and when Run returns.
type threadClass struct{ attr *unix.SchedAttr }

func currentClass() (threadClass, error) {
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return threadClass{}, fmt.Errorf("dataplane: read the thread's scheduling class: %w", err)
	}
	return threadClass{attr}, nil
}

// setRealtime makes the calling thread SCHED_FIFO at prio. Threads it
// creates start as ordinary threads (SCHED_FLAG_RESET_ON_FORK).
func setRealtime(prio int) error {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(prio),
		Flags: unix.SCHED_FLAG_RESET_ON_FORK}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return fmt.Errorf("dataplane: SCHED_FIFO priority %d: %w", prio, err)
	}
	return nil
}

// restore gives the calling thread its first class back.
func (c threadClass) restore() error {
	if c.attr == nil {
		return nil
	}
	attr := *c.attr
	attr.Size = unix.SizeofSchedAttr
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return fmt.Errorf("dataplane: restore the thread's scheduling class: %w", err)
	}
	return nil
}
