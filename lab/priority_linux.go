package lab

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// lowestNice is the lowest CPU priority: a capture's tools (tcpdump, the
// reader that prints its frames) run at it, so that they take no CPU a
// daemon's worker thread wants and cost its ports no link time.
const lowestNice = 19

// lowerPriority gives process (or thread) pid the lowest CPU priority.
func lowerPriority(pid int) error { return unix.Setpriority(unix.PRIO_PROCESS, pid, lowestNice) }

// LowerOwnPriority gives every thread of this process the lowest CPU
// priority (on Linux, setpriority names one thread; threads started later
// inherit their creator's). For a command whose work should yield to the
// datapath, such as lab capture.
func LowerOwnPriority() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = lowerPriority(tid) // a thread that ended meanwhile
		}
	}
	return nil
}
