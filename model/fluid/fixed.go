package fluid

import (
	"math"
	"time"
)

// Fixed is the model's fixed point (the paper's Theorem 1, eqs. (8) to
// (13)): every flow at C/N, the queue where RED marks with p*.
type Fixed struct {
	// P is p*, the marking probability.
	P float64
	// QueueBytes is q*, eq. (9): where RED marks with P. When P is above
	// Pmax no queue marks with it (RED jumps from Pmax to 1 at K_max);
	// QueueBytes is then K_max and AboveKmax is set: the queue would sit
	// at K_max, marking Pmax below it and every packet above.
	QueueBytes float64
	AboveKmax  bool
	// RateBps is R_C* = C/N; TargetBps R_T*, from eq. (7) at rest:
	// R_T* = R_C* + a α* / (τ (b + d)) (a, b, d of eq. (12)).
	RateBps, TargetBps float64
	// AboveLine is set when R_T* is above the line rate, the ceiling the
	// paper's equations do not have: the point is then none of the
	// bounded model's (one flow whose line rate is C rests at C with an
	// empty queue).
	AboveLine bool
	// Alpha is α*, eq. (10).
	Alpha float64
}

// FixedPoint solves the fixed point's equation (11),
//
//	a² α* / ((b + d)(c + e)) = τ² R_AI R_C*,  R_C* = C/N,
//
// for p* by bisection (the left side rises monotonically with p from 0
// to past the right side, so the root is unique; the paper's proof of
// Theorem 1). The loop delay plays no part: it moves no fixed point, only
// whether the flows reach it.
func FixedPoint(d DCQCN) (Fixed, error) {
	if err := d.Validate(); err != nil {
		return Fixed{}, err
	}
	s := d.sys()
	r := s.c / float64(s.n)
	// h(p) has the sign of LHS - RHS, written without the division so
	// that neither side overflows where the other vanishes.
	h := func(p float64) float64 {
		sh := s.shared(p)
		x := s.rates(&sh, r)
		// x.inc = r(b+d), x.ai = r(c+e), x.cut = a, x.marked = α*.
		return x.cut*x.cut*x.marked*r*r - s.tau*s.tau*s.rai*r*x.inc*x.ai
	}
	// Bisect on log p: p* spans decades (1e-6 to 1e-1 for plausible
	// parameters), and a relative precision is what q* needs.
	lo, hi := math.Log(1e-15), 0.0
	if h(math.Exp(lo)) >= 0 {
		hi = lo
	}
	for range 200 {
		mid := (lo + hi) / 2
		if h(math.Exp(mid)) < 0 {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-13 {
			break
		}
	}
	p := math.Exp((lo + hi) / 2)
	sh := s.shared(p)
	x := s.rates(&sh, r)
	f := Fixed{P: p, RateBps: r * 8 * s.wireBytes, Alpha: x.marked}
	f.TargetBps = (r + x.marked*x.cut*r/(s.tau*x.inc)) * 8 * s.wireBytes
	f.AboveLine = f.TargetBps > float64(d.lineRate())
	if p > s.pmax {
		f.QueueBytes, f.AboveKmax = s.kmax*s.queueBytes, true
	} else {
		f.QueueBytes = s.queueOf(p) * s.queueBytes
	}
	return f, nil
}

// WithQueueingDelay is d with the fixed point's queueing delay, q*
// drained at C, added to its loop delay: what a switch adds that marks a
// packet as it joins the queue, as bcfab's do (queues.Egress), since the
// mark reaches the receiver only after the queue ahead of it has
// drained. The paper's switches mark on dequeue, and its τ* is the
// propagation alone (§3.2).
func WithQueueingDelay(d DCQCN) (DCQCN, error) {
	f, err := FixedPoint(d)
	if err != nil {
		return DCQCN{}, err
	}
	bits := f.QueueBytes / float64(d.QueueBytes) * float64(d.WireBytes) * 8
	d.LoopDelay += time.Duration(math.Round(bits / float64(d.CapacityBps) * 1e9))
	return d, nil
}

// ApproxP is the paper's closed form of p* for small p, eq. (14): the
// first term of the Taylor series of eq. (11)'s left side,
//
//	p* ≈ ∛( R_AI N² / (τ' C²) · (1/B + N/(T C))² ),
//
// with the rates in packets per second and B in packets. Its error grows
// with p* τ C/N, the chance of a cut per CNP interval: it is about 20%
// above FixedPoint's at the defaults' N = 2 (p* τ C/N ≈ 0.1), and tends
// to it as p* τ C/N goes to 0.
func ApproxP(d DCQCN) float64 {
	s := d.sys()
	n := float64(s.n)
	k := 1/s.b + n/(s.timer*s.c)
	return math.Cbrt(s.rai * n * n / (s.tauP * s.c * s.c) * k * k)
}
