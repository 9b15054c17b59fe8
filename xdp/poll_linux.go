//go:build linux

package xdp

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Poller waits for many sockets at once: an epoll instance over their file
// descriptors (an AF_XDP socket is readable while its RX ring holds
// frames) and an eventfd that Wake writes. Wait reports the tokens of the
// descriptors that are ready, so a caller serving many sockets learns
// which ones to look at without polling them all. Timeouts have
// nanosecond precision (epoll_pwait2, Linux 5.11); the thread's timer
// slack bounds how late the kernel may wake it.
//
// Add, Remove and Wait belong to one goroutine; Wake is safe from any.
type Poller struct {
	epfd   int
	event  int
	events []unix.EpollEvent
	noPW2  bool // the kernel lacks epoll_pwait2: millisecond timeouts
}

// wakeToken marks the eventfd in the epoll set; Add refuses it.
const wakeToken = -1

// NewPoller returns a Poller that reports up to batch ready descriptors
// per Wait.
func NewPoller(batch int) (*Poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("xdp: epoll: %w", err)
	}
	ev, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("xdp: eventfd: %w", err)
	}
	p := &Poller{epfd: epfd, event: ev, events: make([]unix.EpollEvent, max(batch, 1)+1)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, ev, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeToken}); err != nil {
		p.Close()
		return nil, fmt.Errorf("xdp: epoll add eventfd: %w", err)
	}
	return p, nil
}

// Add watches fd for readability and reports token (>= 0) when it is
// readable.
func (p *Poller) Add(fd int, token int32) error {
	if token < 0 {
		return fmt.Errorf("xdp: poller token %d: want >= 0", token)
	}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: token}); err != nil {
		return fmt.Errorf("xdp: epoll add %d: %w", fd, err)
	}
	return nil
}

// Remove stops watching fd. Closing fd removes it too.
func (p *Poller) Remove(fd int) error {
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("xdp: epoll remove %d: %w", fd, err)
	}
	return nil
}

// Wait blocks until a watched descriptor is readable, Wake is called, or
// timeout passes (0: do not block; negative: no limit), and appends the
// ready descriptors' tokens to ready. A wake-up or timeout appends
// nothing. It does not allocate.
func (p *Poller) Wait(timeout time.Duration, ready []int32) ([]int32, error) {
	n, err := p.wait(timeout)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return ready, nil
		}
		return ready, fmt.Errorf("xdp: epoll wait: %w", err)
	}
	for _, ev := range p.events[:n] {
		if ev.Fd == wakeToken {
			var buf [8]byte
			_, _ = unix.Read(p.event, buf[:])
			continue
		}
		ready = append(ready, ev.Fd)
	}
	return ready, nil
}

func (p *Poller) wait(timeout time.Duration) (int, error) {
	if !p.noPW2 {
		n, err := epollPwait2(p.epfd, p.events, timeout)
		if !errors.Is(err, unix.ENOSYS) {
			return n, err
		}
		p.noPW2 = true
	}
	ms := -1
	if timeout >= 0 {
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	return unix.EpollWait(p.epfd, p.events, ms)
}

// Wake makes a blocked Wait, or the next one, return.
func (p *Poller) Wake() {
	one := [8]byte{1}
	_, _ = unix.Write(p.event, one[:])
}

// Close releases the epoll instance and the eventfd.
func (p *Poller) Close() error {
	return errors.Join(unix.Close(p.epfd), unix.Close(p.event))
}
