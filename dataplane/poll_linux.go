package dataplane

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// PollWaiter sleeps in ppoll(2) on the ports' AF_XDP sockets (readable
// when their RX ring has frames) and an eventfd for Wake. ppoll takes a
// timespec, so sub-millisecond shaper deadlines are honoured; the thread's
// timer slack bounds how late the kernel may wake it.
type PollWaiter struct {
	fds   []unix.PollFd
	event int
	slack time.Duration
}

// DefaultTimerSlack lets the kernel coalesce the engine's wake-ups by at
// most this much (the default for a thread is 50 us).
const DefaultTimerSlack = 10 * time.Microsecond

// NewPollWaiter waits on fds.
func NewPollWaiter(fds []int, slack time.Duration) (*PollWaiter, error) {
	ev, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("dataplane: eventfd: %w", err)
	}
	w := &PollWaiter{event: ev, slack: slack}
	for _, fd := range fds {
		w.fds = append(w.fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	w.fds = append(w.fds, unix.PollFd{Fd: int32(ev), Events: unix.POLLIN})
	return w, nil
}

// Prepare sets the calling thread's timer slack.
func (w *PollWaiter) Prepare() error {
	if w.slack > 0 {
		if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(w.slack.Nanoseconds()), 0, 0, 0); err != nil {
			return fmt.Errorf("dataplane: set timer slack: %w", err)
		}
	}
	return nil
}

// Wait implements Waiter.
func (w *PollWaiter) Wait(timeout time.Duration) error {
	var ts *unix.Timespec
	if timeout >= 0 {
		t := unix.NsecToTimespec(timeout.Nanoseconds())
		ts = &t
	}
	for i := range w.fds {
		w.fds[i].Revents = 0
	}
	_, err := unix.Ppoll(w.fds, ts, nil)
	if err != nil && !errors.Is(err, unix.EINTR) {
		return err
	}
	if w.fds[len(w.fds)-1].Revents != 0 {
		var buf [8]byte
		_, _ = unix.Read(w.event, buf[:])
	}
	return nil
}

// Sleep implements Waiter: ppoll on the eventfd alone.
func (w *PollWaiter) Sleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	ev := w.fds[len(w.fds)-1:]
	ev[0].Revents = 0
	_, _ = unix.Ppoll(ev, &ts, nil)
	if ev[0].Revents != 0 {
		var buf [8]byte
		_, _ = unix.Read(w.event, buf[:])
	}
}

// Wake implements Waiter.
func (w *PollWaiter) Wake() {
	one := [8]byte{1}
	_, _ = unix.Write(w.event, one[:])
}

// Close releases the eventfd.
func (w *PollWaiter) Close() error { return unix.Close(w.event) }
