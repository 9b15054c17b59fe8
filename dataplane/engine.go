package dataplane

// The engine's loop, one pass:
//
//  1. receive a batch on every port and hand each frame to the Handler,
//     which rewrites it in place and names its egress port (or a drop reason);
//  2. admit it to that port's egress (buffer and frame-pool limits) or drop it;
//  3. reclaim transmitted frames and top up every fill ring;
//  4. move frames from each egress through its shaper (and delay line) onto
//     the TX ring, and kick;
//  5. if nothing moved, sleep in ppoll until a port has frames or the next
//     shaper/delay deadline, so an idle daemon uses no CPU.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/xdp"
)

// PortIO is one port's rings as the engine drives them. *xdp.Socket
// implements it; Pipe gives an in-memory pair for tests without root.
type PortIO interface {
	Receive(descs []xdp.Desc) int
	Transmit(descs []xdp.Desc) int
	Kick() error
	Complete(addrs []uint64) int
	Fill(addrs []uint64) int
	FillFree() int
	TxFree() int
}

// Handler decides what happens to each received frame. It runs on the
// engine goroutine. It may rewrite the frame in place and move its start or
// change its length within the frame's chunk by updating d. It returns the
// egress port, or a negative port and the reason to drop.
type Handler interface {
	Handle(in int, d *xdp.Desc) (out int, why DropReason)
}

// FrameWriter transmits one frame by copy (PacketTX: the capture path).
type FrameWriter interface {
	WriteFrame(b []byte) error
}

// PortSpec describes one port of an engine.
type PortSpec struct {
	Name string
	IO   PortIO
	// Tap, if set, carries the port's transmissions while SetTapped is on.
	Tap         FrameWriter
	RateBps     uint64 // 0: unshaped
	Delay       time.Duration
	BufferBytes int
}

// Memory is the frame memory shared by an engine's ports.
type Memory struct {
	Bytes     []byte
	FrameSize int
	NumFrames int
	// RingSize is the size of every fill and TX ring; the engine keeps
	// enough frames back to refill them all.
	RingSize int
}

const (
	batch = 64
	// shaperBurst is how far ahead of real time a shaped port may run, and
	// how much lost time a late, backlogged port may make up: the time
	// granularity of the emulated links. It bounds wake-ups to about one
	// per 3/4 burst per busy port and absorbs the scheduling jitter of many
	// daemons on few cores, without changing the average rate.
	shaperBurst = 100 * time.Microsecond
	// shaperCatchup bounds the link time a backlogged port that was served
	// late may make up for: many daemons share few cores, and a daemon
	// descheduled for a while must not turn that into lost link capacity.
	shaperCatchup = time.Millisecond
	// retryWait is how soon to retry a port whose TX the kernel refused.
	retryWait = 20 * time.Microsecond
)

type port struct {
	spec    PortSpec
	io      PortIO
	egress  *queues.FIFO
	shaper  queues.Shaper
	wire    *queues.DelayLine // nil without delay
	limit   int
	c       portCounters
	stalled bool // the kernel did not take every TX descriptor
	tapped  atomic.Bool

	// Per-pass counts, published to c once per pass.
	rxp, rxb, txp, txb uint64
	drops              [numDropReasons]uint64
	maxQ               int
}

// Engine runs the datapath of one daemon.
type Engine struct {
	mem       Memory
	frameMask uint64
	ports     []*port
	h         Handler
	wait      Waiter

	free      []uint64 // frame addresses not in any ring or queue
	queued    int      // frames held in egress queues and delay lines
	maxQueued int

	rx    [batch]xdp.Desc
	tx    [batch]xdp.Desc
	addrs [batch]uint64

	// coalesce is the receive moderation window: after a wake-up the
	// engine polls its ports again no sooner than this (like a NIC's
	// rx-usecs), so a stream of frames costs one wake-up per window, not
	// one per frame. Shaper and delay deadlines are not held back.
	coalesce int64
	lastWake int64

	started time.Time
	ready   chan struct{}
	stop    atomic.Bool
	freeN   atomic.Int64
	passes  atomic.Uint64
}

// NewEngine builds an engine over mem and ports. All frames start free.
func NewEngine(mem Memory, ports []PortSpec, h Handler, w Waiter) (*Engine, error) {
	if mem.FrameSize <= 0 || mem.FrameSize&(mem.FrameSize-1) != 0 {
		return nil, fmt.Errorf("dataplane: frame size %d is not a power of two", mem.FrameSize)
	}
	if len(mem.Bytes) < mem.FrameSize*mem.NumFrames {
		return nil, fmt.Errorf("dataplane: memory of %d bytes holds fewer than %d frames", len(mem.Bytes), mem.NumFrames)
	}
	e := &Engine{mem: mem, frameMask: ^uint64(mem.FrameSize - 1), h: h, wait: w, ready: make(chan struct{})}
	e.maxQueued = mem.NumFrames - len(ports)*2*mem.RingSize
	if e.maxQueued < 64 {
		return nil, fmt.Errorf("dataplane: %d frames leave %d for queues after %d ports' rings of %d", mem.NumFrames, e.maxQueued, len(ports), mem.RingSize)
	}
	qcap := 1
	for qcap < e.maxQueued {
		qcap <<= 1
	}
	for _, s := range ports {
		p := &port{spec: s, io: s.IO, shaper: queues.NewShaper(s.RateBps, shaperBurst, shaperCatchup), limit: s.BufferBytes}
		var err error
		if p.egress, err = queues.NewFIFO(qcap); err != nil {
			return nil, err
		}
		if s.Delay > 0 {
			if p.wire, err = queues.NewDelayLine(qcap, s.Delay); err != nil {
				return nil, err
			}
		}
		e.ports = append(e.ports, p)
	}
	e.free = make([]uint64, 0, mem.NumFrames)
	for i := mem.NumFrames - 1; i >= 0; i-- {
		e.free = append(e.free, uint64(i*mem.FrameSize))
	}
	return e, nil
}

// Frame returns the bytes of the frame d describes.
func (e *Engine) Frame(d *xdp.Desc) []byte {
	return e.mem.Bytes[d.Addr : d.Addr+uint64(d.Len)]
}

// Chunk returns the whole chunk holding addr and addr's offset in it, so a
// handler can grow a frame into its headroom.
func (e *Engine) Chunk(addr uint64) ([]byte, int) {
	base := addr & e.frameMask
	return e.mem.Bytes[base : base+uint64(e.mem.FrameSize)], int(addr - base)
}

// SetTapped switches port i's transmissions to its Tap (when it has one)
// so packet captures see them, or back to its TX ring. Safe from any
// goroutine.
func (e *Engine) SetTapped(i int, on bool) {
	p := e.ports[i]
	if p.spec.Tap == nil || p.tapped.Load() == on {
		return
	}
	p.tapped.Store(on)
	e.wait.Wake()
}

// Ready is closed once Run has given every port its receive frames: from
// then on frames arriving at a port are received, not dropped.
func (e *Engine) Ready() <-chan struct{} { return e.ready }

// Stop asks Run to return.
func (e *Engine) Stop() {
	e.stop.Store(true)
	e.wait.Wake()
}

// Run drives the datapath until ctx is done or Stop is called. It locks
// its goroutine to one OS thread.
func (e *Engine) Run(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := e.wait.Prepare(); err != nil {
		return err
	}
	stopCtx := context.AfterFunc(ctx, e.Stop)
	defer stopCtx()
	e.begin()
	for !e.stop.Load() {
		moved := e.pass()
		if moved > 0 {
			continue
		}
		now := e.now()
		timeout := e.timeout(now)
		if hold := e.lastWake + e.coalesce - now; hold > 0 && (timeout < 0 || timeout > time.Duration(hold)) {
			e.wait.Sleep(time.Duration(hold))
			continue
		}
		if err := e.wait.Wait(timeout); err != nil {
			return fmt.Errorf("dataplane: wait: %w", err)
		}
		e.lastWake = e.now()
	}
	return nil
}

// begin starts the clock and gives every port its receive frames.
func (e *Engine) begin() {
	e.started = time.Now()
	for _, p := range e.ports {
		e.refill(p)
	}
	close(e.ready)
}

// pass is one round of the loop's stages 1-4; it returns how many frames
// it received or transmitted.
func (e *Engine) pass() int {
	moved := 0
	for i, p := range e.ports {
		moved += e.receive(i, p)
	}
	for _, p := range e.ports {
		e.reclaim(p)
		e.refill(p)
	}
	now := e.now()
	for _, p := range e.ports {
		moved += e.transmit(p, now)
	}
	e.publish()
	return moved
}

// SetCoalesce sets the receive moderation window (0: off). Call before Run.
func (e *Engine) SetCoalesce(d time.Duration) { e.coalesce = int64(d) }

func (e *Engine) now() int64 { return int64(time.Since(e.started)) }

func (e *Engine) receive(in int, p *port) int {
	n := p.io.Receive(e.rx[:])
	for j := 0; j < n; j++ {
		d := &e.rx[j]
		p.rxp++
		p.rxb += uint64(d.Len)
		out, why := e.h.Handle(in, d)
		if out < 0 {
			p.drops[why]++
			e.release(d.Addr)
			continue
		}
		e.admit(e.ports[out], d)
	}
	return n
}

// admit queues d at egress q or drops it with the reason.
func (e *Engine) admit(q *port, d *xdp.Desc) {
	switch {
	case e.queued >= e.maxQueued:
		q.drops[DropNoFrames]++
	case q.egress.Bytes()+int(d.Len) > q.limit || q.egress.Full():
		q.drops[DropBufferFull]++
	default:
		if q.egress.Len() == 0 {
			q.shaper.Restart(e.now())
		}
		q.egress.Push(queues.Packet{Addr: d.Addr, Len: d.Len})
		e.queued++
		if b := q.egress.Bytes(); b > q.maxQ {
			q.maxQ = b
		}
		return
	}
	e.release(d.Addr)
}

func (e *Engine) release(addr uint64) { e.free = append(e.free, addr&e.frameMask) }

func (e *Engine) reclaim(p *port) {
	for {
		n := p.io.Complete(e.addrs[:])
		for _, a := range e.addrs[:n] {
			e.release(a)
		}
		if n < batch {
			return
		}
	}
}

func (e *Engine) refill(p *port) {
	want := p.io.FillFree()
	if want > len(e.free) {
		want = len(e.free)
	}
	if want == 0 {
		return
	}
	n := p.io.Fill(e.free[len(e.free)-want:])
	e.free = e.free[:len(e.free)-n]
}

// transmit moves what the shaper and delay line allow onto p's TX ring.
func (e *Engine) transmit(p *port, now int64) int {
	if p.tapped.Load() {
		return e.transmitTapped(p, now)
	}
	total := 0
	for {
		room := p.io.TxFree()
		if room > batch {
			room = batch
		}
		n := 0
		for n < room {
			pk, ok := e.next(p, now)
			if !ok {
				break
			}
			e.tx[n] = xdp.Desc{Addr: pk.Addr, Len: pk.Len}
			p.txp++
			p.txb += uint64(pk.Len)
			n++
		}
		if n > 0 {
			// TxFree was checked: the ring takes all n.
			p.io.Transmit(e.tx[:n])
			e.queued -= n
			total += n
		}
		if n > 0 || p.stalled {
			if err := p.io.Kick(); err != nil {
				p.c.kickErrors.Add(1)
			}
			p.c.kicks.Add(1)
			e.reclaim(p)
			p.stalled = p.io.TxFree() < e.mem.RingSize
		}
		if n < batch || p.stalled {
			return total
		}
	}
}

// transmitTapped sends by copy through the port's packet socket, where
// the kernel's taps see it.
func (e *Engine) transmitTapped(p *port, now int64) int {
	n := 0
	for ; n < batch; n++ {
		pk, ok := e.next(p, now)
		if !ok {
			break
		}
		e.queued--
		if err := p.spec.Tap.WriteFrame(e.mem.Bytes[pk.Addr : pk.Addr+uint64(pk.Len)]); err != nil {
			p.drops[DropTxError]++
		} else {
			p.txp++
			p.txb += uint64(pk.Len)
		}
		e.release(pk.Addr)
	}
	return n
}

// next returns the frame p may put on the TX ring now, if any.
func (e *Engine) next(p *port, now int64) (queues.Packet, bool) {
	if p.wire != nil {
		for !p.wire.Full() && p.shaper.Ready(now) {
			pk, ok := p.egress.Pop()
			if !ok {
				break
			}
			p.shaper.Send(now, int(pk.Len))
			p.wire.Put(now, pk)
		}
		return p.wire.Take(now)
	}
	if !p.shaper.Ready(now) {
		return queues.Packet{}, false
	}
	pk, ok := p.egress.Pop()
	if ok {
		p.shaper.Send(now, int(pk.Len))
	}
	return pk, ok
}

// timeout is how long the loop may sleep: until the earliest shaper or
// delay deadline of a port with frames waiting, a short retry for a port
// the kernel refused, or forever.
func (e *Engine) timeout(now int64) time.Duration {
	next := int64(-1)
	consider := func(t int64) {
		if next < 0 || t < next {
			next = t
		}
	}
	for _, p := range e.ports {
		if p.stalled {
			consider(now + int64(retryWait))
		}
		if p.egress.Len() > 0 && (p.wire == nil || !p.wire.Full()) {
			consider(p.shaper.WakeAt())
		}
		if p.wire != nil {
			if due, ok := p.wire.NextDue(); ok {
				consider(due)
			}
		}
	}
	if next < 0 {
		return -1
	}
	if next <= now {
		return 0
	}
	return time.Duration(next - now)
}

func (e *Engine) publish() {
	for _, p := range e.ports {
		c := &p.c
		if p.rxp != 0 {
			c.rxPackets.Add(p.rxp)
			c.rxBytes.Add(p.rxb)
			p.rxp, p.rxb = 0, 0
		}
		if p.txp != 0 {
			c.txPackets.Add(p.txp)
			c.txBytes.Add(p.txb)
			p.txp, p.txb = 0, 0
		}
		for r, v := range p.drops {
			if v != 0 {
				c.drops[r].Add(v)
				p.drops[r] = 0
			}
		}
		c.queueBytes.Store(uint64(p.egress.Bytes()))
		c.queuePackets.Store(uint64(p.egress.Len()))
		if uint64(p.maxQ) > c.maxQueueBytes.Load() {
			c.maxQueueBytes.Store(uint64(p.maxQ))
		}
	}
	e.freeN.Store(int64(len(e.free)))
	e.passes.Add(1)
}

// PortStats returns the engine's view of every port (the daemon adds the
// kernel's XSK and XDP counters).
func (e *Engine) PortStats() []PortStats {
	out := make([]PortStats, len(e.ports))
	for i, p := range e.ports {
		c := &p.c
		ps := PortStats{
			Name:          p.spec.Name,
			RateBps:       p.spec.RateBps,
			RxPackets:     c.rxPackets.Load(),
			RxBytes:       c.rxBytes.Load(),
			TxPackets:     c.txPackets.Load(),
			TxBytes:       c.txBytes.Load(),
			QueueBytes:    c.queueBytes.Load(),
			QueuePackets:  c.queuePackets.Load(),
			MaxQueueBytes: c.maxQueueBytes.Load(),
			Captured:      p.tapped.Load(),
			Drops:         make(map[string]uint64, numDropReasons-1),
		}
		for r := DropReason(1); r < numDropReasons; r++ {
			ps.Drops[r.String()] = c.drops[r].Load()
		}
		out[i] = ps
	}
	return out
}

// FrameStats describes the frame pool.
func (e *Engine) FrameStats() FrameStats {
	return FrameStats{Total: e.mem.NumFrames, Free: int(e.freeN.Load()), Size: e.mem.FrameSize}
}

// Uptime is the time since Run started.
func (e *Engine) Uptime() time.Duration { return time.Since(e.started) }

// Waiter blocks the engine until a port may have work or a deadline passes.
type Waiter interface {
	// Prepare runs on the engine's locked thread before the loop.
	Prepare() error
	// Wait blocks for at most timeout (negative: no limit) until a port
	// may have frames.
	Wait(timeout time.Duration) error
	// Sleep blocks for d without watching the ports; Wake ends it early.
	Sleep(d time.Duration)
	// Wake makes a blocked or the next Wait return; safe from any goroutine.
	Wake()
}

// ErrClosed is returned by a Waiter used after Close.
var ErrClosed = errors.New("dataplane: closed")
