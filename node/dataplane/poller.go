package dataplane

import (
	"fmt"
	"slices"
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
	k kernelPoller
	// peeks are the file-descriptor ports whose receive rings the worker
	// can look at in memory: a look that does not block reads them
	// instead of asking the kernel (a system call per round of a busy
	// worker). unpeeked counts the file-descriptor ports that cannot be
	// read so; while there are any, such looks ask the kernel too.
	peeks    []peek
	unpeeked int
	lastPeek int64 // worker time of the last look at the rings (look)
	// disarmed is set while the peekable ports are out of the kernel
	// poller: the worker has not slept for DisarmAfter (awake is when it
	// last woke, valid with woke) and reads their rings in memory anyway.
	// It arms them again before it sleeps. disarms counts the times.
	disarmed bool
	woke     bool
	awake    int64
	disarms  uint64
	// fdHit is set when a look or a wait found a file-descriptor port
	// readable; the worker clears it (kernelTraffic).
	fdHit   bool
	mu      sync.Mutex
	pending []int32
	has     atomic.Bool
	// sleeping is set while the worker may block in the kernel poller.
	// With has it forms a Dekker pair: mark sets has then reads
	// sleeping, wait sets sleeping then reads has, so one of them sees
	// the other and no arrival is slept through.
	sleeping atomic.Bool
	// arrivals are the frames held ports received (heldPort), each
	// kick's first: the worker's own thread adds and takes them, with no
	// lock, since a cable's kicks run only there.
	arrivals []heldArrival
}

// heldArrival is a kick that reached the held port token names: stamp is
// its first frame's (HeldIO).
type heldArrival struct {
	token int32
	stamp uint32
}

// heldPort is a notifyPort that also says when a kick's frames are due
// (a HeldIO's notification, node/patch).
type heldPort interface{ SetNotifyAt(func(first uint32)) }

// fdPort is a PortIO the kernel signals through a file descriptor.
type fdPort interface{ FD() int }

// peekPort is a port whose receive ring can be read in memory (an AF_XDP
// socket's: the kernel's producer index), by the worker's thread only.
type peekPort interface{ RxPending() bool }

type peek struct {
	io    peekPort
	fd    int
	token int32
}

// notifyPort is a PortIO that calls back when frames arrive at it.
type notifyPort interface{ SetNotify(func()) }

// watch watches io for arrivals; token names its engine's slot and port.
// A port that holds its frames (held: the engine's HeldIO) reports when
// they are due rather than that they came.
func (p *poller) watch(io PortIO, token int32, held bool) error {
	if h, ok := io.(heldPort); ok && held {
		h.SetNotifyAt(func(s uint32) { p.arrivals = append(p.arrivals, heldArrival{token, s}) })
		return nil
	}
	switch x := io.(type) {
	case fdPort:
		pk, peekable := io.(peekPort)
		if !peekable || !p.disarmed {
			if err := p.k.Add(x.FD(), token); err != nil {
				return err
			}
		}
		if peekable {
			p.peeks = append(p.peeks, peek{pk, x.FD(), token})
		} else {
			p.unpeeked++
		}
		return nil
	case notifyPort:
		x.SetNotify(func() { p.mark(token) })
		return nil
	}
	return fmt.Errorf("dataplane: port %T has neither a file descriptor nor a notification", io)
}

func (p *poller) unwatch(io PortIO) error {
	switch x := io.(type) {
	case fdPort:
		if pk, ok := io.(peekPort); ok {
			p.peeks = slices.DeleteFunc(p.peeks, func(e peek) bool { return e.io == pk })
		} else {
			p.unpeeked--
		}
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

// PeekEvery is how often a busy worker looks at the receive rings of its
// file-descriptor ports: a server's kernel interface, cables between
// workers. Frames there wait at most this long for a worker that is busy
// with other ports (a busy round is shorter; an idle worker sleeps in the
// kernel and wakes at once).
const PeekEvery = 5 * time.Microsecond

// DisarmAfter is how long a worker must have gone without sleeping before
// its poller takes the ports whose rings it reads in memory out of the
// kernel's epoll set (and puts them back before the next sleep). While an
// AF_XDP socket is in an epoll set, the kernel calls epoll back, under a
// lock with interrupts off, for every frame it completes on the socket's
// transmit ring (the socket becomes writable again) and for every batch
// it delivers to its receive ring: on a busy worker that is a tenth of
// its time for nothing, since it looks at the rings itself. The wait
// keeps a worker that alternates work and sleep from paying the two
// system calls per port of each change.
const DisarmAfter = 5 * time.Millisecond

// look is a wait that does not block, at worker time now: the rings are
// read only if PeekEvery has passed since they were last read; the list
// of notifying ports always.
func (p *poller) look(now int64, ready []int32) ([]int32, error) {
	switch {
	case !p.woke:
		p.woke, p.awake = true, now
	case !p.disarmed && len(p.peeks) > 0 && now-p.awake >= int64(DisarmAfter):
		if err := p.disarm(); err != nil {
			return ready, err
		}
	}
	if p.unpeeked == 0 && now-p.lastPeek < int64(PeekEvery) {
		return p.takePending(ready), nil
	}
	p.lastPeek = now
	return p.wait(0, ready)
}

// kernelTraffic reports whether a file-descriptor port was found
// readable since the last call, and clears it.
func (p *poller) kernelTraffic() bool {
	hit := p.fdHit
	p.fdHit = false
	return hit || p.unpeeked > 0
}

func (p *poller) takePending(ready []int32) []int32 {
	if p.has.Load() {
		p.mu.Lock()
		ready = append(ready, p.pending...)
		p.pending = p.pending[:0]
		p.has.Store(false)
		p.mu.Unlock()
	}
	return ready
}

// wait blocks for at most timeout (0: not at all; negative: no limit)
// and appends the tokens of ports that may have frames to ready.
//
// A look that does not block reads the receive rings it can in memory
// and asks the kernel only for the ports it cannot; the kernel is asked
// before every sleep, so nothing is slept through.
func (p *poller) wait(timeout time.Duration, ready []int32) ([]int32, error) {
	blocking := timeout != 0
	var err error
	if blocking {
		if p.disarmed {
			if err := p.arm(); err != nil {
				return ready, err
			}
		}
		p.woke = false
		p.sleeping.Store(true)
		if p.has.Load() {
			timeout = 0
		}
		n := len(ready)
		ready, err = p.k.Wait(timeout, ready)
		p.fdHit = p.fdHit || len(ready) > n
		p.sleeping.Store(false)
	} else {
		n := len(ready)
		for _, e := range p.peeks {
			if e.io.RxPending() {
				ready = append(ready, e.token)
			}
		}
		if p.unpeeked > 0 {
			ready, err = p.k.Wait(0, ready)
		}
		p.fdHit = p.fdHit || len(ready) > n
	}
	return p.takePending(ready), err
}

// disarm takes the peekable ports out of the kernel poller (see
// DisarmAfter).
func (p *poller) disarm() error {
	p.disarmed = true
	p.disarms++
	for _, e := range p.peeks {
		if err := p.k.Remove(e.fd); err != nil {
			return err
		}
	}
	return nil
}

// arm puts the peekable ports back into the kernel poller. A port whose
// ring holds frames is readable at once, so none is slept through.
func (p *poller) arm() error {
	p.disarmed = false
	for _, e := range p.peeks {
		if err := p.k.Add(e.fd, e.token); err != nil {
			return err
		}
	}
	return nil
}
