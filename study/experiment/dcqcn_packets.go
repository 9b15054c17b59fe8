package experiment

import (
	"fmt"
	"math"
	"time"

	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/model/fluid"
	"github.com/bcfab/bcfab/model/prng"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/wire/transport"
)

// The dcqcn case as a packet model, between the fluid model and a lab:
// the transport's reaction point (transport.DCQCN) of every flow and
// the notification point's rule (transport.Receiver: a CNP for a marked
// packet when the flow has sent none for CNPInterval), paced packets
// into one FIFO drained at the link's rate, each packet marked on RED's
// line at the queue it joins, as a lab's egress marks. No fabric and no
// datapath: the fluid model's bottleneck with packets and a draw per
// packet in place of the expected marks. Its ways put back one of the
// fluid model's assumptions each (docs/VALIDATION.md, the dcqcn case).
// It runs the target's parameters (D = 1), the case's window and
// samples (DCQCNFrom, DCQCNTo, DCQCNSample), every flow starting at the
// line rate at 0 as the lab's and the fluid model's do, with no
// window: the flows are long and paced, as the case's are.

// PacketWay is what the packet model keeps of the fluid model's
// assumptions.
type PacketWay int

const (
	// PacketsIndependent: every packet's mark is its own draw, and a mark
	// reaches its sender after the path's propagation (four links) and
	// serialization and the queue ahead of its packet.
	PacketsIndependent PacketWay = iota
	// PacketsFixedLoop: the same, every mark after the fluid model's τ*
	// (DCQCNModel's: the propagation, the serialization and q*'s delay),
	// whatever the queue.
	PacketsFixedLoop
	// PacketsIdentical: as PacketsFixedLoop, but one flow's rate machine
	// drives all N, each of its packets joined in the queue by N-1
	// others and its marks theirs: the fluid model's N identical flows,
	// marked packet by packet.
	PacketsIdentical
)

func (w PacketWay) String() string {
	switch w {
	case PacketsIndependent:
		return "independent"
	case PacketsFixedLoop:
		return "fixed-loop"
	case PacketsIdentical:
		return "identical"
	}
	return fmt.Sprintf("PacketWay(%d)", int(w))
}

// PacketRun is what one run of the packet model measured over the
// case's window at its samples: the queue's mean, least and greatest
// (bytes, as a switch's queue counts them), the mean over pairs of
// flows of the correlation of their R_C (1 for PacketsIdentical), and
// each flow's mean rate over the window, its bytes on the wire sent in
// it (bit/s; one for PacketsIdentical). Converged and ConvergedAt are
// the fluid model's convergence time (fluid.Summary) at the samples
// from 0 to the window's end: the first sample from which every flow's
// R_C stays within fluid.ConvergenceBand of C/N.
type PacketRun struct {
	MeanQueueBytes, MinQueueBytes, MaxQueueBytes float64
	RateCorrelation                              float64
	RateBps                                      []float64
	Converged                                    bool
	ConvergedAt                                  time.Duration
}

// DCQCNPacketDraws is how many draws of the marks the dcqcn check runs
// the packet model with.
const DCQCNPacketDraws = 5

// DCQCNPackets runs n flows of target t under cc (the paper's DCQCN or
// Mellanox's, transport.CCDCQCN or CCDCQCNMlx) the way w, the marks
// drawn from seed.
func DCQCNPackets(t scale.Target, cc transport.CC, n int, w PacketWay, seed uint64) (PacketRun, error) {
	if n < 1 || w < PacketsIndependent || w > PacketsIdentical || (cc != transport.CCDCQCN && cc != transport.CCDCQCNMlx) {
		return PacketRun{}, fmt.Errorf("packet model: %d flows of %v the way %v", n, cc, w)
	}
	m := scale.Model{Target: t, D: 1}
	p := hostd.TransportParams(m, 0)
	p.SetCC(cc)
	ecn := m.ECN(0)
	d, err := DCQCNModel(t, transport.DefaultWireOverhead, n)
	if err != nil {
		return PacketRun{}, fmt.Errorf("packet model: %w", err)
	}
	wire := float64(t.MTU + transport.DefaultWireOverhead)
	held := (wire - queues.WireOverhead) / wire // a queue's bytes of a wire byte
	nsPerByte := 8e9 / float64(p.LineRateBps)   // the bottleneck's rate is every sender's
	prop := float64(t.LinkDelay.D())
	ser := wire * nsPerByte
	loop := float64(d.LoopDelay)
	cnpEvery := float64(p.CNPEvery())
	kmin, kmax := float64(ecn.KminBytes), float64(ecn.KmaxBytes)
	rng := prng.New(seed, uint64(n)<<8|uint64(w))

	machines := n
	if w == PacketsIdentical {
		machines = 1
	}
	rp := make([]*transport.DCQCN, machines)
	slot := make([]float64, machines) // each machine's last send, ns
	sent := make([]bool, machines)
	lastCNP := make([]float64, machines)
	for i := range rp {
		rp[i] = transport.NewDCQCN(p.DCQCN, p.LineRateBps)
		slot[i] = math.Inf(-1)
	}
	type cnp struct {
		at   float64
		flow int
	}
	// CNPs in the order they arrive: the FIFO's order of the packets
	// they answer, or one delay for all.
	var cnps []cnp
	head := 0

	var backlog, drained float64 // wire bytes queued, as of drained (ns)
	drain := func(at float64) {
		backlog = max(0, backlog-(at-drained)/nsPerByte)
		drained = at
	}
	mark := func(qb float64) bool {
		switch {
		case qb < kmin:
			return false
		case qb >= kmax:
			return true
		}
		return rng.Float64() < ecn.Pmax*(qb-kmin)/(kmax-kmin)
	}
	nextSend := func(i int) float64 {
		if math.IsInf(slot[i], -1) {
			return 0
		}
		return slot[i] + wire*8e9/rp[i].Rate()
	}

	from, to, every := float64(DCQCNFrom), float64(DCQCNTo), float64(DCQCNSample)
	sample := 0.0
	fair, band := float64(t.LinkRateBps)/float64(n), fluid.ConvergenceBand*float64(t.LinkRateBps)/float64(n)
	lastOut := math.Inf(-1) // the last sample some flow was outside the band
	r := PacketRun{MinQueueBytes: math.Inf(1), RateBps: make([]float64, machines)}
	k := 0
	rates := make([][]float64, machines)
	const (
		evSample = iota
		evCNP
		evTimer
		evSend
	)
	for {
		at, ev, who := sample, evSample, 0
		if head < len(cnps) && cnps[head].at < at {
			at, ev = cnps[head].at, evCNP
		}
		for i := range rp {
			if nt := rp[i].NextTimer(); nt >= 0 && float64(nt) < at {
				at, ev, who = float64(nt), evTimer, i
			}
			if ns := nextSend(i); ns < at {
				at, ev, who = ns, evSend, i
			}
		}
		switch ev {
		case evSample:
			if at > to {
				r.MeanQueueBytes /= float64(k)
				r.RateCorrelation = MeanCorrelation(rates)
				for i := range r.RateBps {
					r.RateBps[i] *= 8e9 / (to - from)
				}
				r.Converged = lastOut < at-every
				if r.Converged {
					r.ConvergedAt = time.Duration(math.Round(max(lastOut+every, 0)))
				}
				return r, nil
			}
			for i := range rp {
				if math.Abs(rp[i].Rate()-fair) > band {
					lastOut = at
					break
				}
			}
			sample += every
			if at < from {
				continue
			}
			drain(at)
			qb := backlog * held
			r.MeanQueueBytes += qb
			r.MinQueueBytes, r.MaxQueueBytes = min(r.MinQueueBytes, qb), max(r.MaxQueueBytes, qb)
			k++
			for i := range rp {
				rates[i] = append(rates[i], rp[i].Rate())
			}
		case evCNP:
			rp[cnps[head].flow].OnCNP(int64(at))
			head++
		case evTimer:
			rp[who].OnTimer(int64(at))
		case evSend:
			drain(at)
			marked := mark(backlog * held)
			if w == PacketsIdentical {
				backlog += float64(n) * wire
			} else {
				backlog += wire
			}
			rp[who].OnSent(int(wire), int64(at))
			slot[who] = at
			if at >= from && at < to {
				r.RateBps[who] += wire
			}
			if !marked {
				continue
			}
			// When the receiver has the packet, and when its CNP, sent
			// ahead of data, is back at the sender.
			recv := at + ser + prop + backlog*nsPerByte + prop
			if w != PacketsIndependent {
				recv = at + loop - 2*prop
			}
			if !sent[who] || recv-lastCNP[who] >= cnpEvery {
				sent[who], lastCNP[who] = true, recv
				cnps = append(cnps, cnp{at: recv + 2*prop, flow: who})
			}
		}
	}
}

// PacketDraws is the packet model over several draws of the marks: the
// mean of the runs' mean queues (bytes) and the least and greatest of
// them, the mean of their rate correlations, and each run's greatest
// distance of a flow's mean rate from C/N (a fraction of C/N) and the
// greatest of those.
type PacketDraws struct {
	MeanQueueBytes, MinQueueBytes, MaxQueueBytes float64
	RateCorrelation                              float64
	RateErrors                                   []float64
	MaxRateError                                 float64
	// Converged counts the draws whose flows converged (PacketRun),
	// ConvergedAt their convergence times.
	Converged   int
	ConvergedAt []time.Duration
}

// RatesWithin is how many draws had every flow's mean rate within bound
// of C/N.
func (p PacketDraws) RatesWithin(bound float64) int {
	k := 0
	for _, e := range p.RateErrors {
		if e <= bound {
			k++
		}
	}
	return k
}

// DCQCNPacketsDraws is DCQCNPackets over draws 1..draws.
func DCQCNPacketsDraws(t scale.Target, cc transport.CC, n int, w PacketWay, draws int) (PacketDraws, error) {
	out := PacketDraws{MinQueueBytes: math.Inf(1), MaxQueueBytes: math.Inf(-1)}
	fair := float64(t.LinkRateBps) / float64(n)
	for s := range draws {
		r, err := DCQCNPackets(t, cc, n, w, uint64(s+1))
		if err != nil {
			return PacketDraws{}, err
		}
		out.MeanQueueBytes += r.MeanQueueBytes / float64(draws)
		out.RateCorrelation += r.RateCorrelation / float64(draws)
		out.MinQueueBytes = min(out.MinQueueBytes, r.MeanQueueBytes)
		out.MaxQueueBytes = max(out.MaxQueueBytes, r.MeanQueueBytes)
		e := 0.0
		for _, x := range r.RateBps {
			e = max(e, math.Abs(x/fair-1))
		}
		out.RateErrors = append(out.RateErrors, e)
		if r.Converged {
			out.Converged++
			out.ConvergedAt = append(out.ConvergedAt, r.ConvergedAt)
		}
		out.MaxRateError = max(out.MaxRateError, e)
	}
	return out, nil
}

// MeanCorrelation is the mean over pairs of series of their Pearson
// correlation (1 with one series).
func MeanCorrelation(x [][]float64) float64 {
	if len(x) < 2 {
		return 1
	}
	var sum float64
	pairs := 0
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			sum += pearson(x[i], x[j])
			pairs++
		}
	}
	return sum / float64(pairs)
}

// pearson is the correlation of x and y, samples of one length; 0 when
// either is constant.
func pearson(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
