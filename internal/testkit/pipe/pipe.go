// Package pipe is an in-memory cable for tests without privileges: two
// ends that behave like AF_XDP sockets in copy mode on a veth pair, so a
// dataplane engine (or a whole fabric of them) runs over it unchanged.
package pipe

import (
	"sync"

	"github.com/bcfab/bcfab/xdp"
)

// Pipe is a cable: two ends (dataplane.PortIO) that behave like AF_XDP
// sockets in copy mode on a veth pair. A kick on one end copies each frame
// into a fill buffer of the other end's memory (at the same 256-byte offset
// the kernel uses), completes it at once and notifies the other end; no
// fill buffer or a full RX ring drops the frame and counts it.
type Pipe struct {
	mu   sync.Mutex
	ends [2]pipeEnd
	// Lose, if set, is asked about every frame on the cable; true loses
	// it (counted as a drop of the receiving end), as a faulty link would.
	Lose func(frame []byte) bool
	// Timed carries each frame's descriptor Options, its arrival time in
	// the model, to the peer (dataplane.TimedIO), as the lab's cables in
	// memory do; a veth (false, the default) carries none.
	Timed bool
}

type pipeEnd struct {
	mem    []byte
	ring   int
	fill   []uint64
	rx     []xdp.Desc
	tx     []xdp.Desc
	comp   []uint64
	notify func()
	drops  uint64
	lost   uint64
}

// Pipe returns the cable this end belongs to.
func (e *End) Pipe() *Pipe { return e.p }

// End is one end of a Pipe.
type End struct {
	p    *Pipe
	side int
}

// headroom matches where copy-mode AF_XDP puts received data.
const headroom = 256

// New connects memory a and b with rings of ringSize.
func New(a, b []byte, ringSize int) (*End, *End) {
	p := &Pipe{}
	p.ends[0] = pipeEnd{mem: a, ring: ringSize}
	p.ends[1] = pipeEnd{mem: b, ring: ringSize}
	return &End{p, 0}, &End{p, 1}
}

// SetNotify names the function to call when frames arrive at this end
// (a dataplane worker's poller sets it).
func (e *End) SetNotify(f func()) {
	e.p.mu.Lock()
	e.p.ends[e.side].notify = f
	e.p.mu.Unlock()
}

// Drops is the number of frames lost arriving at this end because its
// receive ring was full or its fill ring empty: the receiver did not keep
// up. Frames Lose took are counted apart (Lost).
func (e *End) Drops() uint64 {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	return e.p.ends[e.side].drops
}

// Lost is the number of frames Lose took on their way to this end.
func (e *End) Lost() uint64 {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	return e.p.ends[e.side].lost
}

func (e *End) me() *pipeEnd { return &e.p.ends[e.side] }

// CarriesTime reports whether the pipe carries each frame's time in the
// model (Pipe.Timed; dataplane.TimedIO).
func (e *End) CarriesTime() bool { return e.p.Timed }

func (e *End) Receive(descs []xdp.Desc) int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	n := copy(descs, m.rx)
	m.rx = m.rx[:copy(m.rx, m.rx[n:])]
	return n
}

func (e *End) Transmit(descs []xdp.Desc) int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	n := min(len(descs), m.ring-len(m.tx)-len(m.comp))
	m.tx = append(m.tx, descs[:n]...)
	return n
}

func (e *End) Kick() error {
	e.p.mu.Lock()
	m, peer := e.me(), &e.p.ends[1-e.side]
	for _, d := range m.tx {
		frame := m.mem[d.Addr : d.Addr+uint64(d.Len)]
		switch {
		case e.p.Lose != nil && e.p.Lose(frame):
			peer.lost++
		case len(peer.fill) == 0 || len(peer.rx) >= peer.ring:
			peer.drops++
		default:
			a := peer.fill[len(peer.fill)-1]
			peer.fill = peer.fill[:len(peer.fill)-1]
			copy(peer.mem[a+headroom:], frame)
			nd := xdp.Desc{Addr: a + headroom, Len: d.Len}
			if e.p.Timed {
				nd.Options = d.Options
			}
			peer.rx = append(peer.rx, nd)
		}
		m.comp = append(m.comp, d.Addr)
	}
	sent := len(m.tx) > 0
	m.tx = m.tx[:0]
	notify := peer.notify
	e.p.mu.Unlock()
	if sent && notify != nil {
		notify()
	}
	return nil
}

func (e *End) Complete(addrs []uint64) int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	n := copy(addrs, m.comp)
	m.comp = m.comp[:copy(m.comp, m.comp[n:])]
	return n
}

func (e *End) Fill(addrs []uint64) int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	n := min(len(addrs), m.ring-len(m.fill))
	m.fill = append(m.fill, addrs[:n]...)
	return n
}

func (e *End) FillFree() int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	return m.ring - len(m.fill)
}

func (e *End) TxFree() int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	m := e.me()
	return m.ring - len(m.tx) - len(m.comp)
}
