package fluid

import (
	"errors"
	"math"
	"math/cmplx"
)

// Stability is the fixed point's local stability: the roots of the
// characteristic equation of the model linearized there. The paper's
// §3.2 and Appendix A linearize with first-order Taylor series of the
// (1-p)^x terms and read a phase margin off the characteristic equation
// of R_C; this package differentiates the terms as they are (central
// differences) and counts the roots right of the imaginary axis, which
// needs no assumption about the open loop.
//
// Two modes decouple. In the queue mode every flow moves alike and the
// queue with them: the 4 x 4 system of δq, δα, δR_T, δR_C with δp(t-τ*)
// = K δq(t-τ*), K = P_max / (K_max - K_min). In the fairness mode flows
// move apart with their sum fixed, so the queue and p stay put: the 3 x
// 3 system of one flow with δp = 0, which sets how fast shares equalise.
type Stability struct {
	Queue, Fairness Mode
}

// Mode is one mode's roots.
type Mode struct {
	// Roots counts the roots with a positive real part: the mode is
	// locally stable when there are none.
	Roots int
	// Abscissa is the greatest real part of a root (1/s), and Frequency
	// that root's imaginary part (rad/s, >= 0): a small deviation grows
	// (or, negative, decays) as e^(Abscissa t) and oscillates with period
	// 2π / Frequency. -Inf when no root lies right of -1/τ* (a mode that
	// settles within a few loop delays), and for the fairness mode of one
	// flow.
	Abscissa, Frequency float64
}

// Stable reports whether the fixed point is locally stable.
func (s Stability) Stable() bool { return s.Queue.Roots == 0 && s.Fairness.Roots == 0 }

// ErrNotLinear is LinearStability's error for a fixed point outside
// RED's slope (p* above P_max: the queue sits on K_max's step, where no
// linearization holds).
var ErrNotLinear = errors.New("fluid: the fixed point is above K_max, where RED marking has no slope")

// LinearStability linearizes d at its fixed point and finds the roots of
// both modes' characteristic equations det(sI - A0 - A1 e^(-sτ*)) = 0
// in the right half plane by the argument principle, on a rectangle that
// bounds every root there, and the rightmost root by bisecting on its
// real part. The partial derivatives are central differences.
func LinearStability(d DCQCN) (Stability, error) {
	f, err := FixedPoint(d)
	if err != nil {
		return Stability{}, err
	}
	if f.AboveKmax {
		return Stability{}, ErrNotLinear
	}
	s := d.sys()
	if s.kmax == s.kmin {
		return Stability{}, ErrNotLinear
	}
	lin := s.linearize(f)
	q := lin.queue()
	st := Stability{Queue: q.mode(), Fairness: Mode{Abscissa: math.Inf(-1)}}
	if s.n > 1 {
		f := lin.fairness()
		st.Fairness = f.mode()
	}
	return st, nil
}

// mode counts m's roots right of the imaginary axis and finds its
// rightmost.
func (m *charEq) mode() Mode {
	bound := m.bound()
	md := Mode{Roots: m.count(0, bound)}
	md.Abscissa, md.Frequency = m.rightmost(bound)
	return md
}

// linear is the model's Jacobian at the fixed point, in packets, packets
// per second and seconds.
type linear struct {
	s                  *sys
	q, al, rt, rc, gap float64 // the fixed point; gap = R_T* - R_C*
	x                  rates   // the terms at the fixed point
	// The terms' partial derivatives in p and in R_C.
	dp, dr rates
	k      float64 // dp/dq
}

func (s *sys) linearize(f Fixed) linear {
	w := s.wireBytes * 8
	l := linear{s: s, q: f.QueueBytes / s.queueBytes, al: f.Alpha, rt: f.TargetBps / w, rc: f.RateBps / w}
	l.gap = l.rt - l.rc
	l.k = s.pmax / (s.kmax - s.kmin)
	at := func(p, r float64) rates {
		sh := s.shared(p)
		return s.rates(&sh, r)
	}
	l.x = at(f.P, l.rc)
	diff := func(a, b rates, h float64) rates {
		return rates{cut: (a.cut - b.cut) / h, marked: (a.marked - b.marked) / h, inc: (a.inc - b.inc) / h, ai: (a.ai - b.ai) / h}
	}
	hp, hr := f.P*1e-5, l.rc*1e-6
	l.dp = diff(at(f.P+hp, l.rc), at(f.P-hp, l.rc), 2*hp)
	l.dr = diff(at(f.P, l.rc+hr), at(f.P, l.rc-hr), 2*hr)
	return l
}

// charEq is a mode's linear system x' = A0 x(t) + A1 x(t-τ*).
type charEq struct {
	n      int
	a0, a1 [4][4]float64
	delay  float64
}

// queue is the queue mode: x = (δq, δα, δR_T, δR_C) of one flow, every
// flow alike.
func (l linear) queue() charEq {
	s := l.s
	m := charEq{n: 4, delay: s.tauStar}
	ga := s.g / s.tauP
	x, dp, dr := l.x, l.dp, l.dr
	// δq' = N δR_C.
	m.a0[0][3] = float64(s.n)
	// δα' = g/τ' (δM - δα).
	m.a0[1][1] = -ga
	m.a1[1][0] = ga * dp.marked * l.k
	m.a1[1][3] = ga * dr.marked
	// δR_T' = -(δR_T - δR_C) A/τ - gap δA/τ + R_AI δV.
	m.a0[2][2] = -x.cut / s.tau
	m.a0[2][3] = x.cut / s.tau
	m.a1[2][0] = (-l.gap*dp.cut/s.tau + s.rai*dp.ai) * l.k
	m.a1[2][3] = -l.gap*dr.cut/s.tau + s.rai*dr.ai
	// δR_C' = -(α A δR_C + R_C A δα + R_C α δA)/(2τ) + (δR_T - δR_C) U/2
	//         + gap δU/2.
	m.a0[3][1] = -l.rc * x.cut / (2 * s.tau)
	m.a0[3][2] = x.inc / 2
	m.a0[3][3] = -l.al*x.cut/(2*s.tau) - x.inc/2
	m.a1[3][0] = (-l.rc*l.al*dp.cut/(2*s.tau) + l.gap*dp.inc/2) * l.k
	m.a1[3][3] = -l.rc*l.al*dr.cut/(2*s.tau) + l.gap*dr.inc/2
	return m
}

// fairness is the difference mode: the queue mode's flow rows without
// the queue, x = (δα, δR_T, δR_C).
func (l linear) fairness() charEq {
	q := l.queue()
	m := charEq{n: 3, delay: q.delay}
	for i := range 3 {
		for j := range 3 {
			m.a0[i][j] = q.a0[i+1][j+1]
			m.a1[i][j] = q.a1[i+1][j+1]
		}
	}
	return m
}

// chi is det(sI - A0 - A1 e^(-sτ*)).
func (m *charEq) chi(s complex128) complex128 {
	e := cmplx.Exp(-s * complex(m.delay, 0))
	var a [4][4]complex128
	for i := range m.n {
		for j := range m.n {
			a[i][j] = -complex(m.a0[i][j], 0) - complex(m.a1[i][j], 0)*e
		}
		a[i][i] += s
	}
	// Gaussian elimination with partial pivoting.
	det := complex(1, 0)
	for c := range m.n {
		p := c
		for r := c + 1; r < m.n; r++ {
			if cmplx.Abs(a[r][c]) > cmplx.Abs(a[p][c]) {
				p = r
			}
		}
		if a[p][c] == 0 {
			return 0
		}
		if p != c {
			a[p], a[c] = a[c], a[p]
			det = -det
		}
		det *= a[c][c]
		for r := c + 1; r < m.n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < m.n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	return det
}

// bound is a radius no root with a nonnegative real part exceeds: there
// |e^(-sτ*)| <= 1, so |s| is at most the norm of D(|A0| + |A1|)D⁻¹ for
// any diagonal D; D balances that matrix (Osborne's iteration), since
// the variables' units are far apart (packets, rates, a ratio).
func (m *charEq) bound() float64 {
	var b [4][4]float64
	for i := range m.n {
		for j := range m.n {
			b[i][j] = math.Abs(m.a0[i][j]) + math.Abs(m.a1[i][j])
		}
	}
	for range 50 {
		for i := range m.n {
			var r, c float64
			for j := range m.n {
				if j != i {
					r += b[i][j]
					c += b[j][i]
				}
			}
			if r == 0 || c == 0 {
				continue
			}
			f := math.Sqrt(c / r)
			for j := range m.n {
				b[i][j] *= f
				b[j][i] /= f
			}
		}
	}
	norm := 0.0
	for i := range m.n {
		r := 0.0
		for j := range m.n {
			r += b[i][j]
		}
		norm = max(norm, r)
	}
	return 1.01*norm + 1
}

// count is the number of roots in the rectangle σ < Re s < bound,
// |Im s| < bound: the winding of chi around 0 along its edges. Left of
// the imaginary axis |e^(-sτ*)| exceeds 1 and the bound grows with it.
func (m *charEq) count(sigma, bound float64) int {
	if sigma < 0 {
		bound *= math.Exp(-sigma * m.delay)
	}
	corners := []complex128{complex(sigma, -bound), complex(bound, -bound), complex(bound, bound), complex(sigma, bound)}
	turn := 0.0
	for i, a := range corners {
		b := corners[(i+1)%len(corners)]
		// Start fine enough to follow e^(-sτ*)'s turns on the vertical
		// edges (one per 2π/τ* of Im s), then halve where the phase still
		// jumps.
		pieces := max(256, int(4*bound*m.delay))
		fa := m.chi(a)
		for k := 1; k <= pieces; k++ {
			z := a + (b-a)*complex(float64(k)/float64(pieces), 0)
			fz := m.chi(z)
			turn += m.phase(a+(b-a)*complex(float64(k-1)/float64(pieces), 0), z, fa, fz, 0)
			fa = fz
		}
	}
	return int(math.Round(turn / (2 * math.Pi)))
}

// phase is the change of chi's argument from a to b.
func (m *charEq) phase(a, b, fa, fb complex128, depth int) float64 {
	d := cmplx.Phase(fb / fa)
	if math.Abs(d) < 0.5 || depth > 30 {
		return d
	}
	mid := (a + b) / 2
	fm := m.chi(mid)
	return m.phase(a, mid, fa, fm, depth+1) + m.phase(mid, b, fm, fb, depth+1)
}

// rightmost is the root with the greatest real part, found by bisecting
// on the real part of the rectangle count sees roots in, then on Im s
// where |chi| is least along that line, refined by Newton's method.
func (m *charEq) rightmost(bound float64) (sigma, omega float64) {
	// A stable mode's rightmost root is left of the axis: widen the
	// rectangle leftward until it holds one, up to a decay of 1/τ*
	// (beyond, the bound grows as e^(-στ*) and the search is not worth
	// it: such a mode settles within a few loop delays).
	lo, hi := -1.0, bound
	for m.count(lo, bound) == 0 {
		if lo < -1/m.delay {
			return math.Inf(-1), 0
		}
		lo *= 4
	}
	for hi-lo > 1e-6*max(1, math.Abs(lo)) && hi-lo > 1e-3 {
		mid := (lo + hi) / 2
		if m.count(mid, bound) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	sigma = (lo + hi) / 2
	// The root's frequency: least |chi| on Re s = σ, then Newton.
	best, bestAbs := 0.0, math.Inf(1)
	steps := max(4096, int(8*bound*m.delay))
	for k := range steps + 1 {
		w := bound * float64(k) / float64(steps)
		if a := cmplx.Abs(m.chi(complex(sigma, w))); a < bestAbs {
			best, bestAbs = w, a
		}
	}
	z := complex(sigma, best)
	for range 50 {
		h := complex(1e-7*max(1, cmplx.Abs(z)), 0)
		dz := m.chi(z) / ((m.chi(z+h) - m.chi(z-h)) / (2 * h))
		z -= dz
		if cmplx.Abs(dz) < 1e-10*max(1, cmplx.Abs(z)) {
			break
		}
	}
	return real(z), math.Abs(imag(z))
}
