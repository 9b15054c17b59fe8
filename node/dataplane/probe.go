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
//
// Steering. What the emulator adds to a hop depends on its load: an idle
// engine sleeps and pays a wake-up per frame, a busy one does not, and a
// large lab's pass over its nodes takes longer than a small one's. So the
// per-hop latency measured when the lab came up (the delay lines' first
// compensation) is only a start: with Options.ModelRTT, every shaped port
// takes the median of its last steerWindow round trips and moves its
// delay line's hold by a quarter of the median's error against the
// model's (each end of the cable corrects its own direction, so together
// they take half the error off per window), between 0 and the model's
// whole link delay. The median tracks the model while the emulator's
// latency stays below the link delay; the spread around it (the p99) is
// the emulator's jitter, which steering cannot remove and the run's
// health reports.

import (
	"errors"
	"fmt"
	"time"

	"github.com/bcfab/bcfab/node/api"
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

// StartProbes starts the ports' probes (with Options.ProbeEvery), the
// first a fraction of an interval from now, different for every engine so
// the nodes of a lab do not probe in step. A lab starts them once every
// node runs: a probe to a peer whose engine has not begun would find no
// frame to be received into and count as a ring drop. Safe from any
// goroutine.
func (e *Engine) StartProbes() {
	if e.probeEvery <= 0 {
		return
	}
	e.Call(func() {
		if e.probing {
			return
		}
		e.probing = true
		now := e.Now()
		e.nextProbe = now + e.probeEvery/2 + int64(uint64(api.MonotonicNs())%uint64(max(e.probeEvery/2, 1)))
		e.poke()
	})
}

// ProbeBurst has the ports send their next n probes every apart, the
// first within every from now (a fraction different for every engine),
// then every Options.ProbeEvery again; it starts the probes if they had
// not started. A lab calibrating its delay lines gathers its round trips
// in a tenth of the time this way. every must be positive and at most
// Options.ProbeEvery. Safe from any goroutine.
func (e *Engine) ProbeBurst(every time.Duration, n int) error {
	if e.probeEvery <= 0 {
		return errors.New("probe burst: the engine does not probe")
	}
	if every <= 0 || every.Nanoseconds() > e.probeEvery || n < 1 || n > maxProbeBurst {
		return fmt.Errorf("probe burst of %d every %v: want 1..%d probes at most %v apart", n, every, maxProbeBurst, time.Duration(e.probeEvery))
	}
	e.Call(func() {
		e.probing = true
		e.burstLeft, e.burstEvery = n, every.Nanoseconds()
		e.nextProbe = e.Now() + int64(uint64(api.MonotonicNs())%uint64(e.burstEvery))
		e.poke()
	})
	return nil
}

// maxProbeBurst is the most probes a ProbeBurst sends at its interval.
const maxProbeBurst = 1000

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

// A node stamps its probes on the machine's monotonic clock, which every
// node shares, so a probe's one-way delay is never much below zero (a
// frame reaches its peer after its last bit, which a shaper's burst may
// put a little ahead of the clock) and never longer than a stalled
// daemon's pause (hundreds of milliseconds on a loaded machine). A frame
// whose delay lies outside these bounds is no node's, and is dropped as
// malformed rather than taken into the histogram and the delay line's
// steering.
const (
	minProbeDelay = -int64(time.Second)
	maxProbeDelay = 10 * int64(time.Second)
)

func plausibleDelay(ns int64) bool { return ns > minProbeDelay && ns < maxProbeDelay }

// probeIn consumes the probe frame d received on port in: it answers a
// Probe with an Echo, and adds an Echo's round trip to the port's
// histogram.
func (e *Engine) probeIn(in int, p *port, d *xdp.Desc) {
	b := e.mem.Bytes[d.Addr : d.Addr+uint64(d.Len)]
	sig, err := signaling.ParseSignal(b)
	now := e.monoBase + e.Now()
	switch {
	case err != nil:
		p.drops[DropMalformed]++
	case !p.probe:
		p.drops[DropUnsupported]++
	case sig.Type() == signaling.TypeProbe:
		fwd := now - sig.ProbeSent()
		if sig.ProbeSent() == 0 || !plausibleDelay(fwd) {
			p.drops[DropMalformed]++ // never stamped, or not by a node
			break
		}
		p.rxConsumed++
		n := signaling.PutProbe(b[:signaling.FrameLen], p.spec.PeerMAC, p.spec.MAC, signaling.TypeEcho, sig.Seq(), fwd)
		d.Len = uint32(n)
		hq := max(p.egress.HQ(), 0)
		if e.admit(in, hq, d, 0, 0, true) {
			return // the frame is the Echo now
		}
	default: // TypeEcho
		fwd, back := sig.ProbeForward(), now-sig.ProbeSent()
		if sig.ProbeSent() == 0 || !plausibleDelay(fwd) || !plausibleDelay(back) {
			p.drops[DropMalformed]++
			break
		}
		p.rxConsumed++
		rtt := fwd + back
		p.rtt.add(rtt)
		if e.modelRTT > 0 && p.spec.RateBps > 0 {
			p.setDelay(p.steer.sample(rtt, e.modelRTT, p.delayNs, p.linkNs))
		}
	}
	e.release(d.Addr)
}

// steerWindow is how many round trips a steering step takes the median
// of: at the default 100 ms probes, a step every 0.8 s, so a run of a
// few seconds is steered within its first second or two.
const steerWindow = 8

// steering is a port's delay-line steering state (see the top of the
// file).
type steering struct {
	win  [steerWindow]int64
	n    int
	sort [steerWindow]int64
}

// sample takes one round trip and returns the delay line's hold: delay,
// or at the end of a window, delay less a quarter of the window median's
// error against model, within [0, link] (link: the model's link delay).
func (s *steering) sample(rtt, model, delay, link int64) int64 {
	s.win[s.n] = rtt
	s.n++
	if s.n < steerWindow {
		return delay
	}
	s.n = 0
	s.sort = s.win
	for i := 1; i < steerWindow; i++ { // insertion sort: 16 values, no allocation
		for j := i; j > 0 && s.sort[j] < s.sort[j-1]; j-- {
			s.sort[j], s.sort[j-1] = s.sort[j-1], s.sort[j]
		}
	}
	median := (s.sort[steerWindow/2-1] + s.sort[steerWindow/2]) / 2
	return min(max(delay-(median-model)/4, 0), link)
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
// emulator's own latency), and clears the probes' histograms and
// steering windows, whose round trips were measured with the old delay.
// Safe from any goroutine.
func (e *Engine) SetLinkDelay(ns int64) {
	e.Call(func() {
		for _, p := range e.ports {
			if p.spec.RateBps > 0 {
				p.setDelay(max(ns, 0))
			}
			p.rtt = rttHist{}
			p.steer.n = 0
		}
	})
}
