package dataplane

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// kernelPoller waits on file descriptors (xdp.Poller on Linux).
type kernelPoller interface {
	Add(fd int, token int32) error
	Remove(fd int) error
	Wait(timeout time.Duration, ready []int32) ([]int32, error)
	Wake()
	Close() error
}

// poller tells a worker which of its engines may have received frames:
// ports with a file descriptor (AF_XDP sockets) through the kernel's
// readiness, ports that call back when frames arrive (in-memory pipes in
// tests, patch cables between engines of one worker) through a list of
// tokens. Each engine's ports report the engine's slot as their token.
//
// A port that calls back wakes the worker only if it sleeps: a patch
// cable's frames arrive during another engine's step on the worker's own
// thread, which looks at the list before it sleeps, and a wake-up there
// would be a syscall per kick for nothing.
type poller struct {
	k       kernelPoller
	mu      sync.Mutex
	pending []int32
	has     atomic.Bool
	// sleeping is set while the worker may block in the kernel poller.
	// With has it forms a Dekker pair: mark sets has then reads
	// sleeping, wait sets sleeping then reads has, so one of them sees
	// the other and no arrival is slept through.
	sleeping atomic.Bool
}

// fdPort is a PortIO the kernel signals through a file descriptor.
type fdPort interface{ FD() int }

// notifyPort is a PortIO that calls back when frames arrive at it.
type notifyPort interface{ SetNotify(func()) }

func (p *poller) watch(io PortIO, token int32) error {
	switch x := io.(type) {
	case fdPort:
		return p.k.Add(x.FD(), token)
	case notifyPort:
		x.SetNotify(func() { p.mark(token) })
		return nil
	}
	return fmt.Errorf("dataplane: port %T has neither a file descriptor nor a notification", io)
}

func (p *poller) unwatch(io PortIO) error {
	switch x := io.(type) {
	case fdPort:
		return p.k.Remove(x.FD())
	case notifyPort:
		x.SetNotify(nil)
	}
	return nil
}

func (p *poller) mark(token int32) {
	p.mu.Lock()
	p.pending = append(p.pending, token)
	p.has.Store(true)
	p.mu.Unlock()
	if p.sleeping.Load() {
		p.k.Wake()
	}
}

// wait blocks for at most timeout (0: not at all; negative: no limit)
// and appends the tokens of ports that may have frames to ready.
func (p *poller) wait(timeout time.Duration, ready []int32) ([]int32, error) {
	blocking := timeout != 0
	if blocking {
		p.sleeping.Store(true)
	}
	if p.has.Load() {
		timeout = 0
	}
	ready, err := p.k.Wait(timeout, ready)
	if blocking {
		p.sleeping.Store(false)
	}
	if p.has.Load() {
		p.mu.Lock()
		ready = append(ready, p.pending...)
		p.pending = p.pending[:0]
		p.has.Store(false)
		p.mu.Unlock()
	}
	return ready, err
}
