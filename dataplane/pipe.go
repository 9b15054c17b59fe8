package dataplane

import (
	"sync"
	"time"

	"github.com/bcfab/bcfab/xdp"
)

// Pipe is an in-memory cable for tests without privileges: two PortIO ends
// that behave like AF_XDP sockets in copy mode on a veth pair. A kick on one
// end copies each frame into a fill buffer of the other end's memory (at
// the same 256-byte offset the kernel uses) and completes it at once; no
// fill buffer or a full RX ring drops the frame and counts it.
type Pipe struct {
	mu   sync.Mutex
	ends [2]pipeEnd
	// Lose, if set, is asked about every frame on the cable; true loses
	// it (counted as a drop of the receiving end), as a faulty link would.
	Lose func(frame []byte) bool
}

type pipeEnd struct {
	mem   []byte
	ring  int
	fill  []uint64
	rx    []xdp.Desc
	tx    []xdp.Desc
	comp  []uint64
	wake  Waiter
	drops uint64
}

// Pipe returns the cable this end belongs to.
func (e *PipeEnd) Pipe() *Pipe { return e.p }

// PipeEnd is one end of a Pipe.
type PipeEnd struct {
	p    *Pipe
	side int
}

// pipeHeadroom matches where copy-mode AF_XDP puts received data.
const pipeHeadroom = 256

// NewPipe connects memory a and b with rings of ringSize.
func NewPipe(a, b []byte, ringSize int) (*PipeEnd, *PipeEnd) {
	p := &Pipe{}
	p.ends[0] = pipeEnd{mem: a, ring: ringSize}
	p.ends[1] = pipeEnd{mem: b, ring: ringSize}
	return &PipeEnd{p, 0}, &PipeEnd{p, 1}
}

// SetWaiter names the waiter to wake when frames arrive at this end.
func (e *PipeEnd) SetWaiter(w Waiter) {
	e.p.mu.Lock()
	e.p.ends[e.side].wake = w
	e.p.mu.Unlock()
}

// Drops is the number of frames lost arriving at this end.
func (e *PipeEnd) Drops() uint64 {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	return e.p.ends[e.side].drops
}

func (e *PipeEnd) me() *pipeEnd { return &e.p.ends[e.side] }

func (e *PipeEnd) Receive(descs []xdp.Desc) int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	n := copy(descs, m.rx)
	m.rx = m.rx[:copy(m.rx, m.rx[n:])]
	return n
}

func (e *PipeEnd) Transmit(descs []xdp.Desc) int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	n := min(len(descs), m.ring-len(m.tx)-len(m.comp))
	m.tx = append(m.tx, descs[:n]...)
	return n
}

func (e *PipeEnd) Kick() error {
	e.p.mu.Lock()
	m, peer := e.me(), &e.p.ends[1-e.side]
	for _, d := range m.tx {
		frame := m.mem[d.Addr : d.Addr+uint64(d.Len)]
		if len(peer.fill) == 0 || len(peer.rx) >= peer.ring || (e.p.Lose != nil && e.p.Lose(frame)) {
			peer.drops++
		} else {
			a := peer.fill[len(peer.fill)-1]
			peer.fill = peer.fill[:len(peer.fill)-1]
			copy(peer.mem[a+pipeHeadroom:], frame)
			peer.rx = append(peer.rx, xdp.Desc{Addr: a + pipeHeadroom, Len: d.Len})
		}
		m.comp = append(m.comp, d.Addr)
	}
	sent := len(m.tx) > 0
	m.tx = m.tx[:0]
	w := peer.wake
	e.p.mu.Unlock()
	if sent && w != nil {
		w.Wake()
	}
	return nil
}

func (e *PipeEnd) Complete(addrs []uint64) int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	n := copy(addrs, m.comp)
	m.comp = m.comp[:copy(m.comp, m.comp[n:])]
	return n
}

func (e *PipeEnd) Fill(addrs []uint64) int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	n := min(len(addrs), m.ring-len(m.fill))
	m.fill = append(m.fill, addrs[:n]...)
	return n
}

func (e *PipeEnd) FillFree() int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	return m.ring - len(m.fill)
}

func (e *PipeEnd) TxFree() int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	return m.ring - len(m.tx) - len(m.comp)
}

// ChanWaiter is a Waiter for engines whose ports are Pipes.
type ChanWaiter struct{ ch chan struct{} }

func NewChanWaiter() *ChanWaiter { return &ChanWaiter{ch: make(chan struct{}, 1)} }

func (w *ChanWaiter) Prepare() error { return nil }

func (w *ChanWaiter) Wait(timeout time.Duration) error {
	if timeout < 0 {
		<-w.ch
		return nil
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.ch:
	case <-t.C:
	}
	return nil
}

func (w *ChanWaiter) Sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ch:
	case <-t.C:
	}
}

func (w *ChanWaiter) Wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}
