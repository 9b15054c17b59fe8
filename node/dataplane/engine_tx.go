package dataplane

// An engine's egress side (engine.go): admitting frames to the egress
// queues against the shared buffer and the frame pool, the pool itself,
// and moving frames through the shaper and delay line onto the TX rings.

import (
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/xdp"
)

// Emit copies the frame b into a free frame and queues it in port's HQ
// (its only queue if it has none); it reports false when no frame could be
// spared. For flow-control signals built on the engine goroutine.
func (e *Engine) Emit(port int, b []byte) bool {
	addr, ok := e.AllocControl()
	if !ok || len(b) > e.mem.FrameSize {
		if ok {
			e.release(addr)
		}
		e.lost++
		return false
	}
	copy(e.mem.Bytes[addr:], b)
	q := e.ports[port].egress.HQ()
	if q < 0 {
		q = 0
	}
	d := xdp.Desc{Addr: addr, Len: uint32(len(b))}
	if !e.admit(port, q, &d, 0, 0, true) {
		e.lost++ // refused by the buffer: counted there too, by reason
		return false
	}
	e.emitted++
	return true
}

// Send admits the frame d (in this engine's memory) to queue q of port
// out with meta (queues.Packet.Meta), or drops and counts it, and reports
// which; l3 is the offset of its IPv4 header for ECN marking (0: none).
// Sources and flow-control hooks use it for frames they build on the
// engine goroutine.
//
// A frame for a port's HQ is control (ACK, NAK, CNP, flow-control
// signals): it may use the whole frame pool and buffer, while data stops
// short of a reserve, and no port cap applies to it. So control is never
// dropped for lack of buffer when data has filled it: a lossless scheme's
// signals, and the ACKs that end its flows, still get through.
func (e *Engine) Send(out, q int, d *xdp.Desc, l3 int, meta uint64) bool {
	return e.admit(out, q, d, l3, meta, q == e.ports[out].egress.HQ())
}

// SendAt is Send of a frame the node's source made late: at is when it
// was due in the model (a paced flow's slot), and an idle link starts it
// from then, as it starts a frame that arrived late over a timed port
// (queues.Shaper.RestartAt, within the catch-up bound), never before
// the port's last pause was lifted. So the worker's lateness in making
// a paced flow's packets costs the flow no link time. A time ahead of
// now is treated as a frame that arrived early (RestartAt); 0 is Send.
func (e *Engine) SendAt(out, q int, d *xdp.Desc, l3 int, meta uint64, at int64) bool {
	if at <= 0 || e.arrived != 0 {
		return e.Send(out, q, d, l3, meta)
	}
	e.arrived = max(at, e.ports[out].egress.LastLift())
	ok := e.Send(out, q, d, l3, meta)
	e.arrived = 0
	return ok
}

// AdmitsOwn reports whether a source — a NIC making its own flows'
// frames — may queue a frame of n bytes into queue q of port out now. A
// source asks before it makes one, so that it waits for room rather than
// losing its own packet, and it may fill only half of the node's data
// buffer (bytes and frames): the other half stays for the frames the
// node relays, which, under PortFC, ride a queue that is never paused and
// must not find the buffer taken by the NIC's own flows. (A server's own
// data waits in host memory, not in its NIC's buffer.)
func (e *Engine) AdmitsOwn(out, q, n int) bool {
	p := e.ports[out]
	switch {
	case p.wdDrop&(1<<q) != 0, e.queued >= e.dataFrames/2, e.buffered+n > e.dataBytes/2:
		return false
	case p.spec.CapBytes > 0 && p.egress.Bytes()+n > p.spec.CapBytes:
		return false
	}
	return true
}

// CountInjected counts a frame the node's own source dropped on purpose
// instead of sending it by port out: an injected loss at the sender (a
// server NIC's RDMA packet its flow's request named, RDMARequest.Lose).
// The frame was never queued; the count is the port's InjectedTx.
func (e *Engine) CountInjected(out int) { e.ports[out].injectedTx++ }

// admit is Send; ctl says the frame is control.
func (e *Engine) admit(out, q int, d *xdp.Desc, l3 int, meta uint64, ctl bool) bool {
	p := e.ports[out]
	eg := p.egress
	frames, bytes := e.dataFrames, e.dataBytes
	if ctl {
		frames, bytes = e.maxQueued, e.opts.BufferBytes
	}
	switch {
	case p.wdDrop&(1<<q) != 0:
		eg.CountDrop(q, int(DropWatchdog))
	case e.queued >= frames:
		eg.CountDrop(q, int(DropNoFrames))
	case e.buffered+int(d.Len) > bytes,
		!ctl && p.spec.CapBytes > 0 && eg.Bytes()+int(d.Len) > p.spec.CapBytes:
		eg.CountDrop(q, int(DropBufferFull))
	default:
		now := e.Now()
		t := now
		if e.arrived != 0 {
			t = e.arrived
		}
		if eg.Len() == 0 {
			p.shaper.RestartAt(t, now)
		} else if p.idle {
			p.shaper.Quiet(t)
		}
		ok, mark := eg.Enqueue(q, queues.Packet{Addr: d.Addr, Len: d.Len, Meta: meta, At: t}, now)
		if !ok {
			eg.CountDrop(q, int(DropBufferFull))
			break
		}
		if mark && l3 > 0 && header.IPv4(e.mem.Bytes[d.Addr+uint64(l3):d.Addr+uint64(d.Len)]).SetCE() {
			eg.CountMark(q)
		}
		e.queued++
		e.buffered += int(d.Len)
		if b := eg.Bytes(); b > p.maxBytes {
			p.maxBytes = b
		}
		return true
	}
	e.release(d.Addr)
	return false
}

// Take removes every frame port's egress would send, as a transmission
// does (hooks, counters, the buffer's accounting), hands each frame's
// queue and bytes to fn and frees the frame. It is for harnesses that
// carry a node's frames themselves instead of an XSK ring (in-process
// tests of a node's logic); it ignores the shaper. Call it on the
// engine's goroutine.
func (e *Engine) Take(port int, fn func(q int, b []byte)) int {
	eg := e.ports[port].egress
	n := 0
	for {
		pk, q, ok := eg.Dequeue(e.Now())
		if !ok {
			return n
		}
		e.queued--
		e.buffered -= int(pk.Len)
		e.markLeaving(eg, q, pk)
		fn(q, e.mem.Bytes[pk.Addr:pk.Addr+uint64(pk.Len)])
		e.release(pk.Addr)
		n++
	}
}

// Alloc takes a free frame for a handler or source to build a data frame
// in; ok is false when none may be spared (the frames left are the
// control reserve).
func (e *Engine) Alloc() (addr uint64, ok bool) { return e.alloc(e.dataFrames) }

// AllocControl takes a free frame for a control frame (one for a port's
// HQ), which may use the control reserve.
func (e *Engine) AllocControl() (addr uint64, ok bool) { return e.alloc(e.maxQueued) }

func (e *Engine) alloc(limit int) (addr uint64, ok bool) {
	if e.queued >= limit || len(e.free) == 0 {
		return 0, false
	}
	addr = e.free[len(e.free)-1]
	e.free = e.free[:len(e.free)-1]
	return addr, true
}

func (e *Engine) release(addr uint64) { e.free = append(e.free, addr&e.frameMask) }

func (e *Engine) reclaim(p *port) {
	for {
		n := p.io.Complete(e.addrs[:])
		for _, a := range e.addrs[:n] {
			e.release(a)
		}
		p.inflight -= n
		if n < batch {
			if p.inflight < 0 {
				p.inflight = 0
			}
			return
		}
	}
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
			pk, at, ok := e.next(p, now)
			if !ok {
				break
			}
			e.tx[n] = xdp.Desc{Addr: pk.Addr, Len: pk.Len}
			if p.timed {
				e.tx[n].Options = uint32(at)
			}
			p.txPackets++
			p.txBytes += uint64(pk.Len)
			n++
		}
		if n > 0 {
			// TxFree was checked: the ring takes all n.
			p.io.Transmit(e.tx[:n])
			p.inflight += n
			e.queued -= n
			total += n
		}
		if n > 0 || p.stalled {
			if err := p.io.Kick(); err != nil {
				p.kickErrors++
			}
			p.kicks++
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
		pk, _, ok := e.next(p, now)
		if !ok {
			break
		}
		e.queued--
		if err := p.spec.Tap.WriteFrame(e.mem.Bytes[pk.Addr : pk.Addr+uint64(pk.Len)]); err != nil {
			p.drops[DropTxError]++
		} else {
			p.txPackets++
			p.txBytes += uint64(pk.Len)
		}
		e.release(pk.Addr)
	}
	return n
}

// dequeue takes the next frame from p's egress if the shaper lets it go.
func (e *Engine) dequeue(p *port, now int64) (queues.Packet, bool) {
	if !p.shaper.Ready(now) {
		if !p.idle && !p.egress.Eligible(now) {
			// The link is still busy with its last frame, but nothing
			// may follow it (the frames left are paused): it goes idle
			// when that frame ends. The worker may not look at the port
			// again until a pause is lifted, so say so now, or the whole
			// pause would count as link time lost to lateness.
			p.idle = true
		}
		return queues.Packet{}, false
	}
	var pk queues.Packet
	var q int
	var ok bool
	if p.spec.RateBps > 0 {
		// What waits for the link competes as it would have when the
		// link got free in the model, the frames that had arrived by
		// then (queues.Egress.DequeueBy): a late worker catching up
		// serves them in the model's order, and a frame that arrives
		// ahead of now waits for its time.
		pk, q, ok = p.egress.DequeueBy(now, p.shaper.Free())
	} else {
		pk, q, ok = p.egress.Dequeue(now)
	}
	if !ok {
		// Nothing eligible: the link is idle and earns no catch-up credit
		// for it. Frames that wait for a pause's end start no earlier than
		// now. An empty port's next frame starts from its own time (admit:
		// RestartAt), not from now: a worker that came late to an idle
		// port would otherwise put off a frame that arrived in the model
		// since, whose lateness is the emulator's.
		if p.egress.Len() > 0 {
			p.shaper.Restart(now)
		}
		p.idle = true
		return pk, false
	}
	if p.idle {
		// The link had nothing to send until a frame arrived (Send marks
		// that) or a pause was lifted: time before that is not lost to
		// the daemon's lateness. Only the accounting changes: the shaper
		// lets the port catch up as before.
		p.shaper.Quiet(p.egress.LastLift())
		p.idle = false
	}
	if l := p.egress.LiftedAt(q); l > 0 {
		// Catching up, a frame starts no earlier than its queue's last
		// pause ended: a worker that served the lift late would
		// otherwise send frames the pause still held in the model.
		p.shaper.Restart(min(l, now))
	}
	if pk.At > 0 && pk.At > p.shaper.Free() {
		// A frame starts no earlier than it arrived: the link was idle
		// until then in the model. (A frame the emulator delivered ahead
		// of its time, or its source timed ahead of now, starts at that
		// time in the link's schedule, as on an idle port: admit.)
		p.shaper.Restart(pk.At)
	}
	start := p.shaper.Send(now, int(pk.Len))
	if q != p.egress.HQ() {
		// The frame's wait in its queue in the model: from its arrival
		// (or the time its source gave it) to its first bit on the link.
		p.waits.Add(start - pk.At)
	}
	e.buffered -= int(pk.Len)
	e.markLeaving(p.egress, q, pk)
	if e.opts.INT {
		e.stampINT(p, pk, now)
	}
	if hq := p.egress.HQ(); p.probe && (q == hq || hq < 0) { // probes leave by the HQ (or a port's only queue)
		end := now
		if p.spec.RateBps > 0 {
			end = p.shaper.Free()
		}
		e.stampProbe(&xdp.Desc{Addr: pk.Addr, Len: pk.Len}, end)
	}
	return pk, true
}

// markLeaving sets CE on pk, which just left queue q of eg, if eg marks
// at dequeue and decides to (queues.ECNConfig.AtDequeue) and pk is an
// ECN-capable IPv4 packet.
func (e *Engine) markLeaving(eg *queues.Egress, q int, pk queues.Packet) {
	if !eg.MarksAtDequeue() || !eg.MarkLeaving(q) {
		return
	}
	b := e.mem.Bytes[pk.Addr : pk.Addr+uint64(pk.Len)]
	if l3 := header.IPv4Offset(b); l3 > 0 && header.IPv4(b[l3:]).SetCE() {
		eg.CountMark(q)
	}
}

// stampINT writes p's INT record into the frame pk if it carries a shim
// (roce.StampINT), as pk leaves p's egress queue at now.
func (e *Engine) stampINT(p *port, pk queues.Packet, now int64) {
	p.intTx += pk.Len
	end := now
	if p.spec.RateBps > 0 {
		end = p.shaper.Free()
	}
	r := roce.INTRecord{TS: uint32(end), TxBytes: p.intTx, QLen: uint32(p.egress.Bytes()), RateKbps: uint32(min(p.spec.RateBps/1000, 1<<32-1))}
	if roce.StampINT(e.mem.Bytes[pk.Addr:pk.Addr+uint64(pk.Len)], r) {
		p.intStamped++
	}
}

// next returns the frame p may put on the TX ring now, if any, and when
// it reaches the peer in the model. A shaped port's frames wait in its
// delay line until their link delivers them: the end of their
// serialisation (the shaper's schedule) plus the hold, the model's link
// delay less the emulator's own latency (probe.go); they arrive in the
// model at the end of their serialisation plus the model's delay. A
// held port's frames go at the end of their serialisation: the peer
// holds them (HeldIO).
func (e *Engine) next(p *port, now int64) (queues.Packet, int64, bool) {
	if p.held != nil {
		// The peer holds the frame until it arrives (HeldIO).
		pk, ok := e.dequeue(p, now)
		if !ok {
			return pk, 0, false
		}
		due := now
		if p.spec.RateBps > 0 {
			due = p.shaper.Free()
		}
		return pk, due + p.linkNs, true
	}
	if p.wire != nil {
		for !p.wire.Full() {
			pk, ok := e.dequeue(p, now)
			if !ok {
				break
			}
			due := now
			if p.spec.RateBps > 0 {
				due = p.shaper.Free()
			}
			p.wire.PutAt(due+p.delayNs, due+p.linkNs, pk)
		}
		return p.wire.TakeAt(now)
	}
	pk, ok := e.dequeue(p, now)
	return pk, now, ok
}
