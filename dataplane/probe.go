package dataplane

// The fidelity monitor's timing probes. Every fabric port that knows its
// cable's MACs (PortSpec.MAC, PeerMAC) sends a probe to its peer every
// Options.ProbeEvery, in its strict high-priority queue:
//
//  1. The probe's send time is written when it leaves the egress: the
//     time its last bit leaves the emulated link (the shaper's schedule),
//     on the machine's monotonic clock, which every node shares.
//  2. The peer's engine takes it off its receive ring before the node's
//     handler, measures the forward one-way delay (its receive time less
//     the send time), and answers with an Echo carrying that delay, sent
//     the same way.
//  3. The prober, receiving the Echo, adds the two one-way delays: one
//     sample of the one-hop round trip the link achieved, propagation
//     only (neither frame's queueing nor serialisation counts), into the
//     port's histogram (api.RTT).
//
// A lab compares those round trips with its model's (the target's x D):
// they include everything the emulator adds to a hop (the delay line's
// lateness, the kernel's transmit, the peer's wake-up).

import (
	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/xdp"
)

// rttHist is a port's histogram of probe round trips (api.RTT's buckets).
type rttHist struct {
	count, sum uint64
	min, max   int64
	b          [api.RTTBuckets]uint32
}

func (h *rttHist) add(ns int64) {
	ns = max(ns, 0)
	if h.count == 0 || ns < h.min {
		h.min = ns
	}
	h.max = max(h.max, ns)
	h.count++
	h.sum += uint64(ns)
	h.b[api.RTTBucketOf(ns)]++
}

// export is h as the stats give it; nil when h is empty.
func (h *rttHist) export() *api.RTT {
	if h.count == 0 {
		return nil
	}
	r := &api.RTT{Count: h.count, SumNs: h.sum, MinNs: h.min, MaxNs: h.max}
	for i, n := range h.b {
		if n > 0 {
			r.Buckets = append(r.Buckets, api.RTTBucket{Index: i, Count: uint64(n)})
		}
	}
	return r
}

// sendProbes queues a probe on every port that probes its link.
func (e *Engine) sendProbes() {
	for i, p := range e.ports {
		if !p.probe {
			continue
		}
		p.probeSeq++
		n := signaling.PutProbe(e.probeBuf[:], p.spec.PeerMAC, p.spec.MAC, signaling.TypeProbe, p.probeSeq, 0)
		e.Emit(i, e.probeBuf[:n])
	}
}

// probeIn consumes the probe frame d received on port in: it answers a
// Probe with an Echo, and adds an Echo's round trip to the port's
// histogram.
func (e *Engine) probeIn(in int, p *port, d *xdp.Desc) {
	b := e.mem.Bytes[d.Addr : d.Addr+uint64(d.Len)]
	sig, err := signaling.ParseSignal(b)
	switch {
	case err != nil:
		p.drops[DropMalformed]++
	case !p.probe:
		p.drops[DropUnsupported]++
	case sig.Type() == signaling.TypeProbe:
		if sig.ProbeSent() == 0 {
			break // never stamped: sent by something that is not a node
		}
		fwd := e.monoBase + e.Now() - sig.ProbeSent()
		n := signaling.PutProbe(b[:signaling.FrameLen], p.spec.PeerMAC, p.spec.MAC, signaling.TypeEcho, sig.Seq(), fwd)
		d.Len = uint32(n)
		hq := max(p.egress.HQ(), 0)
		if e.admit(in, hq, d, 0, 0, true) {
			return // the frame is the Echo now
		}
	default: // TypeEcho
		if sent := sig.ProbeSent(); sent != 0 {
			p.rtt.add(sig.ProbeForward() + e.monoBase + e.Now() - sent)
		}
	}
	e.release(d.Addr)
}

// stampProbe writes the send time into a probe frame leaving port p's
// egress, whose last bit leaves the link at end (engine time).
func (e *Engine) stampProbe(pk *xdp.Desc, end int64) {
	b := e.mem.Bytes[pk.Addr : pk.Addr+uint64(pk.Len)]
	if signaling.IsProbe(b) {
		signaling.SetProbeSent(b, e.monoBase+end)
	}
}

// SetLinkDelay sets how long every shaped port holds a frame after its
// last bit before it reaches the peer (the model's link delay less the
// emulator's own latency), and clears the probes' histograms, whose
// round trips were measured with the old delay. Safe from any goroutine.
func (e *Engine) SetLinkDelay(ns int64) {
	e.Call(func() {
		for _, p := range e.ports {
			if p.wire != nil && p.spec.RateBps > 0 {
				p.delayNs = max(ns, 0)
			}
			p.rtt = rttHist{}
		}
	})
}
