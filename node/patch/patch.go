// Package patch is a cable in memory between two ports whose nodes one
// worker thread runs, as Open vSwitch's patch ports, DPDK's ring PMD and
// VPP's memif join datapaths: no syscall, no skb, one copy. Each End is
// the port's I/O (dataplane.PortIO) and behaves as an AF_XDP socket in
// copy mode on a veth whose XDP program impairs what it receives.
//
// A frame from end A to end B:
//
//  1. A's engine puts its descriptor on A's TX ring (Transmit) as its
//     last bit leaves A's shaper, its Options the time it arrives in the
//     model, and kicks;
//  2. the kick does what B's veth, XDP program and socket would: count
//     the frame received (RX), drop it if B's link is down (Down) or by
//     B's injected loss (Loss), count it redirected (Redirect), then
//     copy it into a frame from B's fill ring (the one filled last),
//     Headroom bytes in, and put it on B's receive ring; a full receive
//     ring (RxRingFull) or no fill frame (RxDropped, RxFillRingEmpty)
//     drops it, as the kernel's socket does;
//  3. A's frame completes at once, and B's worker is told when B's new
//     frames are due; the descriptor's Options, the time the frame
//     arrives in the model (dataplane.TimedIO), go with the frame, and
//     it is due at B that long before it (A's lead, SetLead: the link's
//     hold is served at B, dataplane.HeldIO), when B's engine takes it
//     (ReceiveBy);
//  4. while A's port or B's is captured, A also writes a copy through
//     its veth (SetMirror), where the packet taps of both ends see it:
//     every frame when A is captured, those B received when only B is.
//     On a panel's cables the kick only queues the copy, and the panel's
//     Copier writes it on a thread of its own (copier.go), so a capture
//     costs the worker a memcpy a frame, not a system call.
//
// The two ends of a cable are driven by one worker thread: a kick writes
// into the peer's memory, so an end may be released (and its memory
// freed) only once its engine has left that worker, which SetNotify(nil)
// tells the end. Each ring has one producer and one consumer; counters
// and settings are safe to read and change from any goroutine.
package patch

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcfab/bcfab/xdp"
)

// Headroom is where a received frame starts in its chunk: where
// copy-mode AF_XDP puts it (XDP_PACKET_HEADROOM), so a handler finds the
// same room in front of a frame on either kind of link.
const Headroom = 256

// MaxLossPPM is the loss that drops every frame.
const MaxLossPPM = 1_000_000

// FrameWriter writes one frame by copy (a packet socket on the port's
// veth). A Copier calls it on its own thread; b is valid only during
// the call.
type FrameWriter interface {
	WriteFrame(b []byte) error
}

// Counters are what an end counted of the frames that reached it, with
// the meaning of the XDP program's counters (RX, Redirect, Loss, Down)
// and of its socket's (RxDropped, RxRingFull, RxFillRingEmpty), and of
// what it sent: frames lost because no peer was there (NoPeer), copies
// written for captures (Mirrored), those the writer refused
// (MirrorErrors) and those dropped because the panel's copier had no room
// for them (MirrorDropped).
type Counters struct {
	RX, Redirect, Loss, Down                      uint64
	RxDropped, RxRingFull, RxFillRingEmpty        uint64
	NoPeer, Mirrored, MirrorErrors, MirrorDropped uint64
}

// Cable joins two ends.
type Cable struct {
	name string
	ends [2]atomic.Pointer[End]
}

// End is one end of a cable: one port's I/O. Not safe for concurrent
// use, except as the package says.
type End struct {
	panel *Panel // nil: a Pair's
	cable *Cable
	side  int
	mem   []byte
	chunk uint64

	// The receive side: the owner's engine produces fill and consumes
	// rx; the peer's kick consumes fill, from its top (take), and
	// produces rx.
	fill ring[uint64]
	rx   ring[rxDesc]
	rng  uint64 // the peer's kick only

	// The transmit side, the owner's only: descriptors waiting for the
	// kick, and completed frames not yet reclaimed.
	tx       []xdp.Desc
	comp     []uint64
	compHead int
	compLen  int

	// lead is how long before its Options a frame e sends is due at the
	// peer (SetLead).
	lead atomic.Int64

	live   atomic.Bool // its engine reads its rings: the peer may write
	notify atomic.Pointer[func(first uint32)]
	mirror FrameWriter
	copier *Copier // nil: copies are written in the kick (a Pair's)

	lossPPM atomic.Uint32
	down    atomic.Bool
	tapped  atomic.Bool
	tapMu   sync.Mutex // serialises SetTapped

	rxc, redirect, loss, downc                atomic.Uint64
	rxDropped, ringFull, fillEmpty            atomic.Uint64
	noPeer, mirrored, mirrorErrs, mirrorDrops atomic.Uint64
}

func newEnd(c *Cable, side int, mem []byte, chunk, ringSize int) (*End, error) {
	switch {
	case ringSize <= 0 || ringSize&(ringSize-1) != 0:
		return nil, fmt.Errorf("patch: ring size %d is not a power of two", ringSize)
	case chunk <= Headroom || chunk&(chunk-1) != 0:
		return nil, fmt.Errorf("patch: frame size %d is not a power of two above %d", chunk, Headroom)
	}
	return &End{cable: c, side: side, mem: mem, chunk: uint64(chunk),
		fill: newRing[uint64](ringSize), rx: newRing[rxDesc](ringSize),
		tx: make([]xdp.Desc, 0, ringSize), comp: make([]uint64, ringSize),
		rng: uint64(side)*0x9e3779b97f4a7c15 + 0x2545f4914f6cdd1d}, nil
}

// Pair returns the two ends of a new cable over memories a and b (frames
// of chunk bytes, rings of ringSize), both receiving at once: for tests
// and in-process fabrics.
func Pair(a, b []byte, chunk, ringSize int) (*End, *End, error) {
	c := &Cable{name: "pair"}
	ea, err := newEnd(c, 0, a, chunk, ringSize)
	if err != nil {
		return nil, nil, err
	}
	eb, _ := newEnd(c, 1, b, chunk, ringSize)
	ea.live.Store(true)
	eb.live.Store(true)
	c.ends[0].Store(ea)
	c.ends[1].Store(eb)
	return ea, eb, nil
}

// Panel pairs the ends of a process's cables by name, and its Copier
// writes their capture copies. Its ends must be driven by one worker
// thread (the copier's only producer). Safe for concurrent use.
type Panel struct {
	mu     sync.Mutex
	cables map[string]*Cable
	copier *Copier
}

// NewPanel returns an empty panel.
func NewPanel() *Panel { return &Panel{cables: map[string]*Cable{}, copier: NewCopier()} }

// Copier is the writer of the panel's capture copies.
func (p *Panel) Copier() *Copier { return p.copier }

// Close stops the panel's copier once it wrote every queued copy. Call it
// once every end is unplugged.
func (p *Panel) Close() { p.copier.Close() }

// ErrCableFull is returned when a cable already has two ends.
var ErrCableFull = errors.New("patch: cable has two ends already")

// Plug returns a new end of cable name over mem (frames of chunk bytes,
// rings of ringSize). It receives nothing until its engine joins a worker
// (SetNotify); until the other end is plugged in, what it sends is lost.
func (p *Panel) Plug(name string, mem []byte, chunk, ringSize int) (*End, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.cables[name]
	if c == nil {
		c = &Cable{name: name}
	}
	side := 0
	if c.ends[0].Load() != nil {
		side = 1
		if c.ends[1].Load() != nil {
			return nil, fmt.Errorf("patch: plug %s: %w", name, ErrCableFull)
		}
	}
	e, err := newEnd(c, side, mem, chunk, ringSize)
	if err != nil {
		return nil, fmt.Errorf("patch: plug %s: %w", name, err)
	}
	c.ends[side].Store(e)
	p.cables[name] = c
	e.panel, e.copier = p, p.copier
	return e, nil
}

// Unplug takes e out of its cable; the peer's frames are lost from then
// on. Call it after e's engine left its worker; it returns once the
// copies e queued are written (its writer may close then), or after a
// second.
func (e *End) Unplug() {
	e.SetTapped(false)
	if e.copier != nil {
		e.copier.Flush(time.Second)
	}
	p := e.panel
	if p == nil {
		e.cable.ends[e.side].CompareAndSwap(e, nil)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := e.cable
	c.ends[e.side].CompareAndSwap(e, nil)
	if c.ends[0].Load() == nil && c.ends[1].Load() == nil {
		delete(p.cables, c.name)
	}
}

// Cable is the name of e's cable.
func (e *End) Cable() string { return e.cable.name }

// SetNotify names the function to call after frames arrived at e (a
// dataplane worker's poller sets it when e's engine joins the worker,
// and sets nil when it leaves). e receives only in between.
func (e *End) SetNotify(f func()) {
	if f == nil {
		e.SetNotifyAt(nil)
		return
	}
	e.SetNotifyAt(func(uint32) { f() })
}

// SetNotifyAt is SetNotify of a function that is also told when the
// first frame of the kick that arrived is due at e (Head).
func (e *End) SetNotifyAt(f func(first uint32)) {
	if f == nil {
		e.live.Store(false)
		e.notify.Store(nil)
		return
	}
	e.notify.Store(&f)
	e.live.Store(true)
}

// SetMirror names the writer of copies for captures.
func (e *End) SetMirror(w FrameWriter) { e.mirror = w }

// SetImpairment sets what e drops of the frames that reach it: lossPPM
// per million at random, or all while down.
func (e *End) SetImpairment(lossPPM uint32, down bool) {
	e.lossPPM.Store(min(lossPPM, MaxLossPPM))
	e.down.Store(down)
}

// SetTapped says whether a capture listens on e's port.
func (e *End) SetTapped(on bool) {
	e.tapMu.Lock()
	defer e.tapMu.Unlock()
	if e.tapped.Load() == on {
		return
	}
	if e.copier == nil {
		e.tapped.Store(on)
		return
	}
	// The copier's queue exists before a kick may queue a copy.
	if on {
		e.copier.capture(true)
		e.tapped.Store(true)
	} else {
		e.tapped.Store(false)
		e.copier.capture(false)
	}
}

// Tapped reports whether a capture listens on e's port.
func (e *End) Tapped() bool { return e.tapped.Load() }

// Counters returns e's counters.
func (e *End) Counters() Counters {
	return Counters{RX: e.rxc.Load(), Redirect: e.redirect.Load(), Loss: e.loss.Load(), Down: e.downc.Load(),
		RxDropped: e.rxDropped.Load(), RxRingFull: e.ringFull.Load(), RxFillRingEmpty: e.fillEmpty.Load(),
		NoPeer: e.noPeer.Load(), Mirrored: e.mirrored.Load(), MirrorErrors: e.mirrorErrs.Load(),
		MirrorDropped: e.mirrorDrops.Load()}
}

// rxDesc is a received frame and when it is due (HeldIO): its Options
// less the sender's lead, 0 when it carries no time.
type rxDesc struct {
	xdp.Desc
	due uint32
}

// Receive takes received frames (dataplane.PortIO).
func (e *End) Receive(descs []xdp.Desc) int { return e.receive(descs, 0, false) }

// SetLead says how long before its Options (its arrival in the model) a
// frame e sends is due at the peer: the model's link delay less the
// hold, the emulator's own latency the port's probes measured
// (dataplane.HeldIO). The owner's engine sets it.
func (e *End) SetLead(ns int64) { e.lead.Store(ns) }

// Head is when the first received frame not yet taken is due at e, as
// the low 32 bits of a time in ns (dataplane.HeldIO); ok is false when
// none waits. A frame that carries no time is due at 0, at once.
func (e *End) Head() (due uint32, ok bool) {
	c := e.rx.cons.Load()
	if e.rx.prod.Load() == c {
		return 0, false
	}
	return e.rx.entries[c&e.rx.mask].due, true
}

// ReceiveBy takes, in order, the received frames due by then, times of
// 2^32 ns that wrap (dataplane.HeldIO): it stops at the first frame due
// later.
func (e *End) ReceiveBy(descs []xdp.Desc, by uint32) int { return e.receive(descs, by, true) }

func (e *End) receive(descs []xdp.Desc, by uint32, held bool) int {
	c, p := e.rx.cons.Load(), e.rx.prod.Load()
	n := 0
	for n < len(descs) && c != p {
		d := &e.rx.entries[c&e.rx.mask]
		if held && d.due != 0 && int32(d.due-by) > 0 {
			break
		}
		descs[n] = d.Desc
		n++
		c++
	}
	e.rx.cons.Store(c)
	return n
}

// Fill gives frames to receive into (dataplane.PortIO).
func (e *End) Fill(addrs []uint64) int { return e.fill.push(addrs) }

// FillFree is the room on the fill ring (dataplane.PortIO).
func (e *End) FillFree() int { return e.fill.free() }

// CarriesTime reports that the cable carries each frame's Options, the
// time it arrives in the model, to the peer unchanged: both ends run on
// one worker and share its clock (dataplane.TimedIO).
func (e *End) CarriesTime() bool { return true }

// Transmit queues frames for the next kick (dataplane.PortIO).
func (e *End) Transmit(descs []xdp.Desc) int {
	n := min(len(descs), e.TxFree())
	e.tx = append(e.tx, descs[:n]...)
	return n
}

// TxFree is the room on the TX ring: what neither waits for a kick nor
// for reclaiming (dataplane.PortIO).
func (e *End) TxFree() int { return cap(e.tx) - len(e.tx) - e.compLen }

// Complete returns transmitted frames (dataplane.PortIO).
func (e *End) Complete(addrs []uint64) int {
	n := min(len(addrs), e.compLen)
	size := len(e.comp)
	for i := range n {
		addrs[i] = e.comp[(e.compHead+i)&(size-1)]
	}
	e.compHead = (e.compHead + n) & (size - 1)
	e.compLen -= n
	return n
}

// Kick moves the queued frames across the cable (dataplane.PortIO).
func (e *End) Kick() error {
	if len(e.tx) == 0 {
		return nil
	}
	peer := e.cable.ends[1-e.side].Load()
	if peer != nil && !peer.live.Load() {
		peer = nil
	}
	mirrorAll := e.mirror != nil && e.tapped.Load()
	var received FrameWriter
	if e.mirror != nil && !mirrorAll && peer != nil && peer.tapped.Load() {
		received = e.mirror
	}
	if mirrorAll {
		for _, d := range e.tx {
			e.writeMirror(e.mirror, e.mem[d.Addr:d.Addr+uint64(d.Len)])
		}
	}
	delivered, first := 0, uint32(0)
	if peer != nil {
		delivered, first = peer.take(e, received)
	} else {
		e.noPeer.Add(uint64(len(e.tx)))
	}
	size := len(e.comp)
	for _, d := range e.tx {
		e.comp[(e.compHead+e.compLen)&(size-1)] = d.Addr
		e.compLen++
	}
	e.tx = e.tx[:0]
	if delivered > 0 {
		if f := peer.notify.Load(); f != nil {
			(*f)(first)
		}
	}
	return nil
}

// writeMirror has the copier write a copy of b through w, or writes it
// now when e has no copier (or it was closed).
func (e *End) writeMirror(w FrameWriter, b []byte) {
	if c := e.copier; c != nil && c.running.Load() {
		if !c.put(w, e, b) {
			e.mirrorDrops.Add(1)
		}
		return
	}
	e.count(w.WriteFrame(b))
}

// count counts a copy written, or refused by its writer.
func (e *End) count(err error) {
	if err != nil {
		e.mirrorErrs.Add(1)
		return
	}
	e.mirrored.Add(1)
}

// take receives the frames src kicks: the work of the receiving veth's
// XDP program and socket (see the top of the file). received, if set,
// gets a copy of each frame that reached the ring. It returns how many
// did, and when the first is due.
func (e *End) take(src *End, received FrameWriter) (int, uint32) {
	down, lossPPM := e.down.Load(), e.lossPPM.Load()
	// The fill ring is taken from its top, the frame filled last first: a
	// frame the owner freed a moment ago, still in the CPU's cache, takes
	// the copy (a kernel socket takes them in order, and its copy lands in
	// a frame untouched for the ring's whole turn, which costs the worker
	// a cache miss per line). Both ends run on one thread, so lowering the
	// producer's index here races with nothing.
	fc, fp := e.fill.cons.Load(), e.fill.prod.Load()
	rp, rc := e.rx.prod.Load(), e.rx.cons.Load()
	size := uint32(len(e.rx.entries))
	lead := uint32(src.lead.Load())
	var rx, redirect, loss, downc, dropped, full, empty uint64
	for _, d := range src.tx {
		rx++
		if down {
			downc++
			continue
		}
		if lossPPM > 0 && e.rand()%MaxLossPPM < uint64(lossPPM) {
			loss++
			continue
		}
		redirect++
		if rp-rc >= size {
			full++
			continue
		}
		if fc == fp {
			dropped++
			empty++
			continue
		}
		if uint64(d.Len) > e.chunk-Headroom {
			dropped++
			continue
		}
		fp--
		a := e.fill.entries[fp&e.fill.mask]
		frame := src.mem[d.Addr : d.Addr+uint64(d.Len)]
		copy(e.mem[a+Headroom:a+e.chunk], frame)
		due := d.Options
		if due != 0 {
			due = max(due-lead, 1) // 0 stays "no time"
		}
		e.rx.entries[rp&e.rx.mask] = rxDesc{xdp.Desc{Addr: a + Headroom, Len: d.Len, Options: d.Options}, due}
		rp++
		if received != nil {
			src.writeMirror(received, frame)
		}
	}
	var first uint32
	if rp != e.rx.prod.Load() {
		first = e.rx.entries[e.rx.prod.Load()&e.rx.mask].due
	}
	e.fill.prod.Store(fp)
	e.rx.prod.Store(rp)
	e.rxc.Add(rx)
	for _, c := range [...]struct {
		v *atomic.Uint64
		n uint64
	}{{&e.redirect, redirect}, {&e.loss, loss}, {&e.downc, downc}, {&e.rxDropped, dropped}, {&e.ringFull, full}, {&e.fillEmpty, empty}} {
		if c.n > 0 {
			c.v.Add(c.n)
		}
	}
	return int(redirect - full - dropped), first
}

// rand is xorshift64*: the injected loss's draws, one per frame, need
// only be uniform and cheap.
func (e *End) rand() uint64 {
	x := e.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	e.rng = x
	return x * 0x2545f4914f6cdd1d
}
