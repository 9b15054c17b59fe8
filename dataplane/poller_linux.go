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
