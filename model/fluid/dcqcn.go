package fluid

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bcfab/bcfab/model/scale"
)

// A packet's bytes beside its payload: on the wire, as the shaper and
// DCQCN's byte counter count them (transport.DefaultWireOverhead:
// Ethernet, 802.1Q, IPv4, UDP, BTH and ICRC headers, preamble, FCS and
// gap), and the preamble, FCS and gap a queue does not hold
// (queues.WireOverhead). Package model may not import wire or queues
// (internal/deps), so the values are repeated here; a test holds them to
// the originals.
const (
	wireOverhead = 86
	wireOnly     = 24
)

// DCQCN are the parameters of the fluid model: N flows of DCQCN's paper
// variant through one bottleneck, every value in the target network's
// units (a lab's results compare after Model.TargetTime and
// Model.TargetRate). The paper's symbol follows each field's name.
type DCQCN struct {
	// N flows share the bottleneck.
	N int
	// CapacityBps (C) is the bottleneck's rate on the wire, and
	// LineRateBps each sender's: its starting rate and the ceiling of
	// R_C and R_T (0: CapacityBps). MinRateBps is the floor a cut stops
	// at, as the reaction point's; the paper's equations have no floor.
	CapacityBps, LineRateBps, MinRateBps int64
	// LoopDelay (τ*) is the control loop's delay: from a queue's length
	// to the rate change its marks cause. The model adds no queueing
	// delay to it (the paper's switches mark on dequeue; see
	// WithQueueingDelay).
	LoopDelay time.Duration

	// RED marking on the queue's bytes: none up to KminBytes, rising
	// linearly to Pmax at KmaxBytes, every packet above.
	KminBytes, KmaxBytes int64
	Pmax                 float64

	// G (g) is alpha's gain; CNPInterval (τ) the least time between two
	// CNPs of a flow, and so between two cuts; AlphaPeriod (τ') alpha's
	// timer.
	G                        float64
	CNPInterval, AlphaPeriod time.Duration
	// IncreasePeriod (T) and ByteCounter (B, bytes on the wire) drive the
	// increase events; the first F events of either since a cut are fast
	// recovery, later ones add AIRateBps (R_AI) to the target rate.
	IncreasePeriod time.Duration
	ByteCounter    int64
	F              int
	AIRateBps      int64
	// HAIRateBps (R_HAI) is hyper increase's step. The paper's model, and
	// so this one, has no hyper increase: it needs both counters past F,
	// and the byte counter's F·B bytes without a mark (50 MB at the
	// defaults) is all but never reached at the fixed point ((1-p*)^(F·B)
	// is below 2e-7 for the defaults at N >= 2). It is carried so that a
	// comparison states every constant of the sender.
	HAIRateBps int64

	// WireBytes is a packet on the wire (payload, headers, preamble, FCS
	// and gap): what turns the rates and B into packets, as the shaper,
	// the pacer and the byte counter count. QueueBytes is the same packet
	// as a switch's queue counts it (no preamble, FCS or gap): what turns
	// K_min, K_max and the queue into packets.
	WireBytes, QueueBytes int
}

// FromTarget is the model of n flows of the target network t sharing one
// of its links, with a control loop of loopDelay (τ*): the target's ECN
// marking, DCQCN constants and packet of t.MTU bytes of payload with the
// transport's headers. These are the values every lab derives its own
// from (scale.Model.Transport, scale.Model.ECN); a lab that overrides
// ECN (lab.Spec's ECNKminBytes, ECNKmaxBytes and ECNPmax, the same bytes
// in the lab and the target) sets those fields after.
//
// The loop delay of n senders on one switch and their receiver is the
// propagation of four links, data out and CNPs back (2 x
// t.OneHopRTT()), plus what a lab adds (the package documentation says
// what).
func FromTarget(t scale.Target, n int, loopDelay time.Duration) DCQCN {
	d := t.DCQCN
	return DCQCN{
		N:              n,
		CapacityBps:    t.LinkRateBps,
		LineRateBps:    t.LinkRateBps,
		MinRateBps:     d.MinRateBps,
		LoopDelay:      loopDelay,
		KminBytes:      t.ECNKminBytes,
		KmaxBytes:      t.ECNKmaxBytes,
		Pmax:           t.ECNPmax,
		G:              d.G,
		CNPInterval:    d.CNPInterval.D(),
		AlphaPeriod:    d.AlphaPeriod.D(),
		IncreasePeriod: d.IncreasePeriod.D(),
		ByteCounter:    d.ByteCounter,
		F:              d.F,
		AIRateBps:      d.AIRateBps,
		HAIRateBps:     d.HAIRateBps,
		WireBytes:      t.MTU + wireOverhead,
		QueueBytes:     t.MTU + wireOverhead - wireOnly,
	}
}

// Validate reports parameters the model cannot run with.
func (d DCQCN) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("fluid: "+format, a...)) }
	line := d.lineRate()
	switch {
	case d.N < 1:
		bad("%d flows, want >= 1", d.N)
	case d.CapacityBps <= 0 || line <= 0:
		bad("capacity %d and line rate %d bit/s, want > 0", d.CapacityBps, line)
	case d.MinRateBps <= 0 || d.MinRateBps > line:
		bad("minimum rate %d bit/s outside (0, line rate %d]", d.MinRateBps, line)
	}
	if d.LoopDelay <= 0 {
		bad("loop delay %v, want > 0", d.LoopDelay)
	}
	if d.KminBytes < 0 || d.KminBytes > d.KmaxBytes || !(d.Pmax > 0 && d.Pmax <= 1) {
		bad("ecn: want 0 <= kmin (%d) <= kmax (%d) and 0 < pmax (%g) <= 1", d.KminBytes, d.KmaxBytes, d.Pmax)
	}
	if !(d.G > 0 && d.G < 1) {
		bad("g %g outside (0, 1)", d.G)
	}
	if d.CNPInterval <= 0 || d.AlphaPeriod <= 0 || d.IncreasePeriod <= 0 {
		bad("times must be positive (cnp interval %v, alpha period %v, increase period %v)", d.CNPInterval, d.AlphaPeriod, d.IncreasePeriod)
	}
	if d.ByteCounter <= 0 || d.F < 0 || d.AIRateBps < 0 || d.HAIRateBps < 0 {
		bad("byte counter %d, f %d, ai %d, hai %d: want > 0, >= 0, >= 0, >= 0", d.ByteCounter, d.F, d.AIRateBps, d.HAIRateBps)
	}
	if d.WireBytes <= 0 || d.QueueBytes <= 0 {
		bad("packet of %d bytes on the wire, %d in a queue: want > 0", d.WireBytes, d.QueueBytes)
	}
	return errors.Join(errs...)
}

func (d DCQCN) lineRate() int64 {
	if d.LineRateBps == 0 {
		return d.CapacityBps
	}
	return d.LineRateBps
}

// FairShareBps is C/N, the rate of every flow at the fixed point.
func (d DCQCN) FairShareBps() float64 { return float64(d.CapacityBps) / float64(d.N) }

// sys is a DCQCN in the units the equations are written in: seconds,
// packets and packets per second.
type sys struct {
	n                     int
	c, line, min, rai     float64 // packets/s
	tauStar               float64 // τ*, s
	kmin, kmax, pmax      float64 // packets
	g, tau, tauP, timer   float64 // g; τ, τ', T in s
	b                     float64 // B, packets
	f                     int
	wireBytes, queueBytes float64
}

func (d DCQCN) sys() sys {
	w, q := float64(d.WireBytes), float64(d.QueueBytes)
	pps := func(bps int64) float64 { return float64(bps) / 8 / w }
	return sys{
		n: d.N, c: pps(d.CapacityBps), line: pps(d.lineRate()), min: pps(d.MinRateBps), rai: pps(d.AIRateBps),
		tauStar: d.LoopDelay.Seconds(),
		kmin:    float64(d.KminBytes) / q, kmax: float64(d.KmaxBytes) / q, pmax: d.Pmax,
		g: d.G, tau: d.CNPInterval.Seconds(), tauP: d.AlphaPeriod.Seconds(), timer: d.IncreasePeriod.Seconds(),
		b: float64(d.ByteCounter) / w, f: d.F,
		wireBytes: w, queueBytes: q,
	}
}

// mark is the RED marking probability of a queue of q packets, eq. (3).
func (s *sys) mark(q float64) float64 {
	switch {
	case q <= s.kmin:
		return 0
	case q <= s.kmax && s.kmax > s.kmin:
		return (q - s.kmin) / (s.kmax - s.kmin) * s.pmax
	}
	return 1
}

// queueOf is the queue in packets at which RED marks with probability p
// (below Pmax; eq. (9)).
func (s *sys) queueOf(p float64) float64 {
	if s.kmax == s.kmin {
		return s.kmin
	}
	return s.kmin + p/s.pmax*(s.kmax-s.kmin)
}

// rates are what a flow of rate r (packets/s) hears at marking
// probability p: the four terms its equations take from the delayed
// values p(t-τ*) and R_C(t-τ*).
type rates struct {
	// cut is 1-(1-p)^(τ R_C): the chance of a CNP in a CNP interval, so a
	// cut comes at cut/τ per second (eqs. (6), (7)).
	cut float64
	// marked is 1-(1-p)^(τ' R_C): the chance of a mark in an alpha
	// period, what alpha tends to (eq. (5)).
	marked float64
	// inc is the rate of increase events per second, of the byte counter
	// and the timer together (eq. (7)); ai the rate of those past fast
	// recovery, that add R_AI to the target rate (eq. (6)).
	inc, ai float64
}

// shared is what the rates of every flow have in common at one p: the
// byte counter's terms, which do not depend on the flow's rate.
type shared struct {
	p, l float64 // p and ln(1-p)
	// byteEv is p/((1-p)^-B - 1), byte-counter events per packet sent;
	// byteAI the same times (1-p)^(F·B), those past fast recovery.
	byteEv, byteAI float64
}

func (s *sys) shared(p float64) shared {
	sh := shared{p: p, l: math.Log1p(-p)}
	switch {
	case p <= 0:
		sh.byteEv, sh.byteAI = 1/s.b, 1/s.b
	case p < 1:
		// expm1 keeps (1-p)^-B - 1 exact for the small p of the fixed
		// point; for large p it overflows to +Inf and the rate to 0.
		sh.byteEv = p / math.Expm1(-s.b*sh.l)
		sh.byteAI = sh.byteEv * math.Exp(float64(s.f)*s.b*sh.l)
	}
	return sh
}

// rates of a flow of rate r at sh.
func (s *sys) rates(sh *shared, r float64) rates {
	switch {
	case sh.p <= 0:
		ev := r*sh.byteEv + 1/s.timer
		return rates{inc: ev, ai: ev}
	case sh.p >= 1:
		return rates{cut: 1, marked: 1}
	}
	// e is (1-p)^-(T R_C) - 1; (1-p)^(T R_C) is 1/(1+e), and the share of
	// timer events past fast recovery its F-th power.
	e := math.Expm1(-s.timer * r * sh.l)
	timerEv := r * sh.p / e
	past := 1.0
	for range s.f {
		past /= 1 + e
	}
	return rates{
		cut:    -math.Expm1(s.tau * r * sh.l),
		marked: -math.Expm1(s.tauP * r * sh.l),
		inc:    r*sh.byteEv + timerEv,
		ai:     r*sh.byteAI + timerEv*past,
	}
}
