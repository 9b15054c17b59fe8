//go:build !linux

package dataplane

import (
	"errors"
	"fmt"
	"time"
)

// chanPoller serves ports that notify (in-memory pipes) where there is no
// epoll.
type chanPoller struct{ ch chan struct{} }

func newKernelPoller() (kernelPoller, error) { return &chanPoller{ch: make(chan struct{}, 1)}, nil }

func (c *chanPoller) Add(fd int, token int32) error {
	return errors.New("dataplane: polling file descriptors needs Linux")
}

func (c *chanPoller) Remove(fd int) error { return nil }

func (c *chanPoller) Wait(timeout time.Duration, ready []int32) ([]int32, error) {
	switch {
	case timeout == 0:
		select {
		case <-c.ch:
		default:
		}
	case timeout < 0:
		<-c.ch
	default:
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-c.ch:
		case <-t.C:
		}
	}
	return ready, nil
}

func (c *chanPoller) Wake() {
	select {
	case c.ch <- struct{}{}:
	default:
	}
}

func (c *chanPoller) Close() error { return nil }

func prepareThread() (int, error) { return 0, nil }

type threadClass struct{}

func currentClass() (threadClass, error) { return threadClass{}, nil }

func setRealtime(prio int) error {
	return fmt.Errorf("dataplane: SCHED_FIFO priority %d: %w", prio, errors.ErrUnsupported)
}

func (threadClass) restore() error { return nil }
