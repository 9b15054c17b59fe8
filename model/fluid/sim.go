package fluid

import (
	"fmt"
	"math"
	"time"
)

// DefaultStep is the integration step when none is given: a sixteenth
// of the papers' 4 µs loop, a two-hundredth of the 50 µs CNP interval;
// 50 ms of the target is 200,000 steps. The steady state of the papers'
// network moves by less than a byte of queue between steps of 25 ns and
// 1 µs.
const DefaultStep = 250 * time.Nanosecond

// ConvergenceBand is how near C/N every flow must stay for Summary's
// convergence time: ±10%.
const ConvergenceBand = 0.10

// MaxSamples bounds a Trajectory's samples.
const MaxSamples = 4000

// Integrator steps the model's delay-differential equations (4) to (7)
// with a fixed step by Heun's method (explicit trapezoid, second order).
// The delayed terms come from a ring of the past: at every step it keeps
// what each flow hears (the four rates of its equations, functions of
// p and R_C) and interpolates linearly at t-τ*; before time 0 the past
// is the initial state. Step allocates nothing. Not safe for concurrent
// use.
type Integrator struct {
	s    sys
	h    float64 // step, s
	lag  float64 // τ* in steps, >= 1
	k    int64   // steps taken
	q    float64 // queue, packets
	rc   []float64
	rt   []float64
	al   []float64
	past []rates // ring rows of len(rc) terms: a row per step
	ring int64

	// Scratch of a step, by flow.
	d1, d2        []rates // delayed terms at t and t+h
	k1, k2        []deriv
	prc, prt, pal []float64 // the predictor's state
}

// deriv is a flow's right-hand side.
type deriv struct{ rc, rt, al float64 }

// NewIntegrator starts d's flows at the rates start (bit/s; nil: all at
// the line rate), their target rates at the line rate, alpha at 1 and
// the queue empty, as DCQCN starts a flow. The step is at most the loop
// delay, so that the past the next step reads is known.
func NewIntegrator(d DCQCN, step time.Duration, start []float64) (*Integrator, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if step <= 0 {
		step = DefaultStep
	}
	if start != nil && len(start) != d.N {
		return nil, fmt.Errorf("fluid: %d start rates for %d flows", len(start), d.N)
	}
	s := d.sys()
	step = min(step, d.LoopDelay)
	n := s.n
	in := &Integrator{
		s: s, h: step.Seconds(), lag: s.tauStar / step.Seconds(),
		rc: make([]float64, n), rt: make([]float64, n), al: make([]float64, n),
		d1: make([]rates, n), d2: make([]rates, n), k1: make([]deriv, n), k2: make([]deriv, n),
		prc: make([]float64, n), prt: make([]float64, n), pal: make([]float64, n),
	}
	for i := range n {
		in.rc[i], in.rt[i], in.al[i] = s.line, s.line, 1
		if start != nil {
			in.rc[i] = min(max(start[i]/8/s.wireBytes, s.min), s.line)
		}
	}
	// The ring holds the steps back to t-τ*-h and the one being written.
	in.ring = int64(math.Ceil(in.lag)) + 2
	in.past = make([]rates, int(in.ring)*n)
	sh := s.shared(s.mark(in.q))
	for j := range in.ring {
		row := in.past[j*int64(n) : (j+1)*int64(n)]
		for i := range row {
			row[i] = s.rates(&sh, in.rc[i])
		}
	}
	return in, nil
}

// Time is the model time of the state.
func (in *Integrator) Time() time.Duration {
	return time.Duration(math.Round(float64(in.k) * in.h * 1e9))
}

// QueueBytes is q(t) in bytes, as a switch's queue counts them.
func (in *Integrator) QueueBytes() float64 { return in.q * in.s.queueBytes }

// Marking is p(t), the marking probability of the queue now.
func (in *Integrator) Marking() float64 { return in.s.mark(in.q) }

// RateBps is flow i's current rate R_C(t), TargetBps its target rate
// R_T(t), both on the wire.
func (in *Integrator) RateBps(i int) float64   { return in.rc[i] * 8 * in.s.wireBytes }
func (in *Integrator) TargetBps(i int) float64 { return in.rt[i] * 8 * in.s.wireBytes }

// Alpha is flow i's alpha(t).
func (in *Integrator) Alpha(i int) float64 { return in.al[i] }

// delayed fills out with the terms at step index x (fractional, <= k):
// linear between the two steps around it.
func (in *Integrator) delayed(x float64, out []rates) {
	j := math.Floor(x)
	w := x - j
	n := int64(len(out))
	a := in.row(int64(j), n)
	if w == 0 {
		// A whole number of steps back: step j+1 may not be written yet.
		copy(out, a)
		return
	}
	b := in.row(int64(j)+1, n)
	for i := range out {
		out[i] = rates{
			cut:    a[i].cut + w*(b[i].cut-a[i].cut),
			marked: a[i].marked + w*(b[i].marked-a[i].marked),
			inc:    a[i].inc + w*(b[i].inc-a[i].inc),
			ai:     a[i].ai + w*(b[i].ai-a[i].ai),
		}
	}
}

// row is the ring's terms of step j (the initial state's before 0).
func (in *Integrator) row(j, n int64) []rates {
	j %= in.ring
	if j < 0 {
		j += in.ring
	}
	return in.past[j*n : (j+1)*n]
}

// rhs is the right-hand side of eqs. (5) to (7) for every flow at state
// (rc, rt, al) with the delayed terms d, into out, and eq. (4)'s for a
// queue of q packets.
func (in *Integrator) rhs(q float64, rc, rt, al []float64, d []rates, out []deriv) (dq float64) {
	s := &in.s
	sum := 0.0
	for i := range out {
		x := &d[i]
		gap := rt[i] - rc[i]
		out[i] = deriv{
			al: s.g / s.tauP * (x.marked - al[i]),
			rt: -gap*x.cut/s.tau + s.rai*x.ai,
			rc: -rc[i]*al[i]*x.cut/(2*s.tau) + gap/2*x.inc,
		}
		sum += rc[i]
	}
	dq = sum - s.c
	if q <= 0 && dq < 0 {
		dq = 0
	}
	return dq
}

// clamp keeps a state where the protocol keeps it: the queue not
// negative, rates between the floor and the line rate, alpha in [0, 1].
func (in *Integrator) clamp(q *float64, rc, rt, al []float64) {
	*q = max(*q, 0)
	for i := range rc {
		rc[i] = min(max(rc[i], in.s.min), in.s.line)
		rt[i] = min(max(rt[i], in.s.min), in.s.line)
		al[i] = min(max(al[i], 0), 1)
	}
}

// Step advances the state by one step.
func (in *Integrator) Step() {
	h, k := in.h, float64(in.k)
	in.delayed(k-in.lag, in.d1)
	in.delayed(k+1-in.lag, in.d2)

	dq1 := in.rhs(in.q, in.rc, in.rt, in.al, in.d1, in.k1)
	pq := in.q + h*dq1
	for i, d := range in.k1 {
		in.prc[i] = in.rc[i] + h*d.rc
		in.prt[i] = in.rt[i] + h*d.rt
		in.pal[i] = in.al[i] + h*d.al
	}
	in.clamp(&pq, in.prc, in.prt, in.pal)
	dq2 := in.rhs(pq, in.prc, in.prt, in.pal, in.d2, in.k2)

	in.q += h / 2 * (dq1 + dq2)
	for i := range in.rc {
		a, b := in.k1[i], in.k2[i]
		in.rc[i] += h / 2 * (a.rc + b.rc)
		in.rt[i] += h / 2 * (a.rt + b.rt)
		in.al[i] += h / 2 * (a.al + b.al)
	}
	in.clamp(&in.q, in.rc, in.rt, in.al)
	in.k++

	sh := in.s.shared(in.s.mark(in.q))
	row := in.row(in.k, int64(len(in.rc)))
	for i := range row {
		row[i] = in.s.rates(&sh, in.rc[i])
	}
}
