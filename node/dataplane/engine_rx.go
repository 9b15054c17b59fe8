package dataplane

// An engine's receive side (engine.go): taking frames off the ports' RX
// rings in turn, handing each to the Handler, and topping up the fill
// rings; and the helpers handlers use for flow-control frames.

import "github.com/bcfab/bcfab/signaling"

// readable marks port i as maybe holding received frames (its worker's
// poller said so).
func (e *Engine) readable(i int) {
	if i >= 0 && i < len(e.ports) {
		e.ports[i].rxReady = true
	}
}

// rxPending reports whether a port may hold received frames its last
// receive left (it stopped at a full batch) or its worker reported since.
func (e *Engine) rxPending() bool {
	for _, p := range e.ports {
		if p.rxReady {
			return true
		}
	}
	return false
}

// readableAll marks every port as maybe holding received frames.
func (e *Engine) readableAll() {
	for _, p := range e.ports {
		p.rxReady = true
	}
}

// receiveAll receives on every port that may have frames, rxChunk frames
// from each port in turn, starting one port further each pass, up to a
// batch per port: what arrived on several ports since the last pass
// reaches the egresses interleaved, as frames arriving side by side on a
// real switch do, and no input port's frames always find the queues
// longer (ECN marks, thresholds) than another's.
func (e *Engine) receiveAll() int {
	all := e.w == nil
	np := len(e.ports)
	e.rxStart++
	if e.rxStart >= np {
		e.rxStart = 0
	}
	moved := 0
	for _, p := range e.ports {
		p.rxTaken = 0
		p.rxMore = all || p.rxReady || p.held != nil // a held frame may have come due
	}
	for more := true; more; {
		more = false
		for k := 0; k < np; k++ {
			i := e.rxStart + k
			if i >= np {
				i -= np
			}
			p := e.ports[i]
			if !p.rxMore {
				continue
			}
			want := min(rxChunk, batch-p.rxTaken)
			n := e.receive(i, p, want)
			p.rxTaken += n
			moved += n
			if n > 0 {
				p.needFill = true
			}
			// A full chunk may leave more; a full batch leaves the rest
			// for the next pass.
			p.rxMore = n == want && p.rxTaken < batch
			more = more || p.rxMore
		}
	}
	for _, p := range e.ports {
		p.rxReady = p.rxTaken == batch // more may wait
	}
	return moved
}

// rxChunk is how many frames receiveAll takes from a port in one turn.
const rxChunk = 8

func (e *Engine) receive(in int, p *port, max int) int {
	var now int64
	if p.timed {
		now = e.Now()
	}
	var n int
	if p.held != nil {
		n = p.held.ReceiveBy(e.rx[:max], uint32(now))
	} else {
		n = p.io.Receive(e.rx[:max])
	}
	// Touch each frame's first bytes before handling any: the kernel wrote
	// them on another CPU, so each first touch misses the cache, and the
	// misses of independent loads overlap where the handler's, one frame
	// after another, would not.
	var touch byte
	for j := 0; j < n; j++ {
		touch ^= e.mem.Bytes[e.rx[j].Addr]
	}
	e.touched = touch
	v := &e.v
	for j := 0; j < n; j++ {
		d := &e.rx[j]
		if p.timed {
			e.arrived = arrivedAt(d.Options, now, p.linkNs)
		}
		p.rxPackets++
		p.rxBytes += uint64(d.Len)
		if signaling.IsProbe(e.mem.Bytes[d.Addr : d.Addr+uint64(d.Len)]) {
			// A probe measures the emulator's lateness on each hop: its
			// echo leaves when the worker got to it, not when it
			// arrived, or the echo's one-way delay would count the
			// probe's lateness a second time.
			e.arrived = 0
			e.probeIn(in, p, d)
			continue
		}
		*v = Verdict{}
		e.h.Handle(in, d, v)
		if v.Port < 0 {
			if v.Drop != DropNone {
				p.drops[v.Drop]++
			} else {
				p.rxConsumed++
			}
			e.release(d.Addr)
			continue
		}
		p.rxForwarded++
		e.Send(v.Port, v.Queue, d, v.L3, v.Meta)
	}
	e.arrived = 0
	return n
}

// arrivedAt is the engine time a frame received at now arrived in the
// model, from the low 32 bits of it its timed port carried (TimedIO):
// before now when the emulator delivered it late, whose lateness is then
// made up; after now when it delivered it early (a hold the probes
// shortened releases a frame up to the link's delay early), which what
// the frame causes then waits for (its forwarding starts in the shaper's
// schedule at that time, a flow's end is recorded at it). 0 (unknown)
// when the bits are 0, or put the arrival more than the link's delay
// ahead of now or more than 2^31 ns behind. How far behind it may count
// is the shaper's to bound (queues.Shaper.RestartAt).
func arrivedAt(stamp uint32, now, linkNs int64) int64 {
	if stamp == 0 {
		return 0
	}
	d := int64(int32(stamp - uint32(now)))
	if d > linkNs {
		return 0
	}
	return max(now+d, 1)
}

// heldDue is the engine time near now of a held frame's due time s
// (HeldIO): -1 for 0, a frame due at once.
func heldDue(s uint32, now int64) int64 {
	if s == 0 {
		return -1
	}
	return now + int64(int32(s-uint32(now)))
}

// setDelay sets the port's hold after a frame's last bit: in its delay
// line, or at the peer of a held port, which takes the frame that long
// before it arrives in the model (HeldIO).
func (p *port) setDelay(ns int64) {
	p.delayNs = ns
	if p.held != nil {
		p.held.SetLead(p.linkNs - ns)
	}
}

// refill tops up p's fill ring from the free frames; the port still needs
// filling when there were too few.
func (e *Engine) refill(p *port) {
	room := p.io.FillFree()
	want := min(room, len(e.free))
	p.needFill = want < room
	if want == 0 {
		return
	}
	n := p.io.Fill(e.free[len(e.free)-want:])
	e.free = e.free[:len(e.free)-n]
}

// SignalReceiver is a node's flow control as it takes PortFC and BFC
// signal frames: OnSignal reports false when it takes none.
type SignalReceiver interface {
	OnSignal(in int, sig signaling.Signal) bool
}

// ConsumeSignal settles v for a flow-control frame b that arrived on port
// in: parsed and handed to r (consumed), or dropped as malformed, or as
// unsupported when the node's flow control takes no such frame.
func ConsumeSignal(in int, b []byte, r SignalReceiver, v *Verdict) {
	v.Port = -1
	sig, err := signaling.ParseSignal(b)
	switch {
	case err != nil:
		v.Drop = DropMalformed
	case !r.OnSignal(in, sig):
		v.Drop = DropUnsupported
	}
}

// PFCReceiver is a node's flow control as it takes 802.1Qbb frames:
// OnPFC reports false when it takes none.
type PFCReceiver interface {
	OnPFC(in int, f signaling.PFCFrame) bool
}

// ConsumePFC settles v for a MAC control frame b that arrived on port in:
// an 802.1Qbb frame is handed to r (consumed); a malformed one, or any
// when the node's flow control takes none, is dropped and counted.
func ConsumePFC(in int, b []byte, r PFCReceiver, v *Verdict) {
	v.Port = -1
	f, err := signaling.ParsePFC(b)
	switch {
	case err != nil:
		v.Drop = DropMalformed
	case !r.OnPFC(in, f):
		v.Drop = DropUnsupported
	}
}
