package transport

import "math"

// HPCC's sender (Li et al., "HPCC: High Precision Congestion Control",
// SIGCOMM 2019, Algorithm 1), driven by the INT records ACKs echo: one
// per egress the data packet crossed (queue length, bytes sent, time,
// link rate; wire/roce's INT shim).
//
//   - Per ACK, per hop i, against the same hop's record of the ACK before:
//     txRate = (txBytes - txBytes') / (ts - ts'), and
//     u_i = min(qlen, qlen') / (B_i T) + txRate / B_i, with B_i the hop's
//     rate and T the base RTT. u is the largest u_i, and tau the time
//     between that hop's two records (at most T). U, the estimate of the
//     path's normalized inflight, moves as U = (1 - tau/T) U + (tau/T) u.
//   - The window: when U >= eta or incStage >= maxStage,
//     W = Wc / (U/eta) + W_AI (multiplicative, to reach eta utilization),
//     else W = Wc + W_AI (additive). Wc, the reference window, and
//     incStage change only once per RTT: on an ACK of a packet sent after
//     the last update (then Wc = W, incStage 0 after a multiplicative
//     step, +1 after an additive one); other ACKs set W from the same Wc.
//   - W stays within [one MTU, W_init], W_init = the line rate x T (the
//     NIC's BDP): the sender starts at the line rate. It keeps at most W
//     bytes outstanding and paces at R = W / T.
//   - The first ACK with records only keeps them (there is nothing to
//     compare them with); a change in the number of hops (another path)
//     does the same.
//
// Timestamps and byte counters are 32-bit and wrap; a difference is taken
// modulo 2^32, right as long as two records of a hop are less than 4.29 s
// (and 4 GB) apart.

// MaxINTHops is the most INT records an Echo holds.
const MaxINTHops = 8

// INTHop is one hop's INT record as an ACK echoes it.
type INTHop struct {
	TS       uint32 // ns, the hop's clock, mod 2^32
	TxBytes  uint32 // bytes it has sent, mod 2^32
	QLen     uint32 // bytes queued
	RateKbps uint32 // its link's rate; 0: unknown (the hop is skipped)
}

// HPCCCounters count what a window machine did.
type HPCCCounters struct {
	ACKs    uint64 // ACKs whose records were used
	Updates uint64 // reference window updates (once per RTT)
	Cuts    uint64 // of which with U >= eta
}

// HPCC is one sender's window machine. Not safe for concurrent use.
type HPCC struct {
	eta      float64
	maxStage int
	t        float64 // base RTT, ns
	wai      float64 // bytes
	mtu      float64
	winit    float64 // bytes
	line     float64 // bit/s

	w, wc    float64 // bytes
	u        float64
	incStage int
	lastSeq  int64 // the reference window is updated once una passes it
	prev     [MaxINTHops]INTHop
	prevHops int
	havePrev bool

	C HPCCCounters
}

// NewHPCC returns a window machine for packets of mtu payload bytes on a
// link of lineRateBps.
func NewHPCC(p HPCCParams, mtu int, lineRateBps int64) *HPCC {
	h := &HPCC{}
	h.init(p, mtu, lineRateBps)
	return h
}

func (h *HPCC) init(p HPCCParams, mtu int, lineRateBps int64) {
	t := float64(p.BaseRTT.Nanoseconds())
	winit := max(float64(lineRateBps)/8*t/1e9, float64(mtu))
	*h = HPCC{eta: p.Eta, maxStage: p.MaxStage, t: t, wai: p.WAIBytes, mtu: float64(mtu),
		winit: winit, line: float64(lineRateBps), w: winit, wc: winit}
}

// Window is W in bytes.
func (h *HPCC) Window() float64 { return h.w }

// Reference is Wc in bytes.
func (h *HPCC) Reference() float64 { return h.wc }

// U is the estimate of the path's normalized inflight.
func (h *HPCC) U() float64 { return h.u }

// Stage is incStage.
func (h *HPCC) Stage() int { return h.incStage }

// Rate is W / T in bit/s, at most the line rate.
func (h *HPCC) Rate() float64 { return min(h.line, h.w*8e9/h.t) }

// Packets is W in packets, rounded up: the sender sends while less than
// W is outstanding.
func (h *HPCC) Packets() int64 { return max(1, int64(math.Ceil(h.w/h.mtu))) }

// OnAck takes the records an ACK echoed; una is the oldest packet still
// unacknowledged after it and hi one past the highest sent.
func (h *HPCC) OnAck(hops []INTHop, una, hi int64) {
	n := min(len(hops), MaxINTHops)
	if n == 0 {
		return
	}
	if !h.havePrev || n != h.prevHops {
		h.keep(hops[:n])
		return
	}
	u, tau := 0.0, 0.0
	measured := false
	for i, r := range hops[:n] {
		p := h.prev[i]
		dt := float64(r.TS - p.TS)
		if r.RateKbps == 0 || dt == 0 {
			continue
		}
		b := float64(r.RateKbps) * 1000 / 8 / 1e9 // bytes per ns
		tx := float64(r.TxBytes-p.TxBytes) / dt   // bytes per ns
		ui := float64(min(r.QLen, p.QLen))/(b*h.t) + tx/b
		if !measured || ui > u {
			u, tau, measured = ui, dt, true
		}
	}
	h.keep(hops[:n])
	if !measured {
		return
	}
	tau = min(tau, h.t)
	h.u = (1-tau/h.t)*h.u + tau/h.t*u
	h.C.ACKs++
	update := una > h.lastSeq
	h.computeWind(update)
	if update {
		h.lastSeq = hi
	}
}

func (h *HPCC) keep(hops []INTHop) {
	copy(h.prev[:], hops)
	h.prevHops, h.havePrev = len(hops), true
}

// computeWind is the paper's ComputeWind: W from Wc and U, and with
// update Wc and incStage too.
func (h *HPCC) computeWind(update bool) {
	var w float64
	mi := h.u >= h.eta || h.incStage >= h.maxStage
	if mi {
		w = h.wc/(h.u/h.eta) + h.wai
	} else {
		w = h.wc + h.wai
	}
	h.w = min(max(w, h.mtu), h.winit)
	if !update {
		return
	}
	h.C.Updates++
	if h.u >= h.eta {
		h.C.Cuts++
	}
	if mi {
		h.incStage = 0
	} else {
		h.incStage++
	}
	h.wc = h.w
}
