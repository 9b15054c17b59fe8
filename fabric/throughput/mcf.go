package throughput

import (
	"errors"
	"fmt"
	"math"

	"github.com/bcfab/bcfab/fabric/topo"
)

// Commodity is traffic between two ends with the paths it may take.
type Commodity struct {
	Src, Dst int // nodes, for reports
	Demand   float64
	Paths    []topo.Path
}

// Result is a concurrent flow.
type Result struct {
	// Lambda is feasible: every commodity can get Lambda × its demand
	// within every capacity (Flow shows how).
	Lambda float64
	// Upper bounds the optimum over the same paths: Lambda <= λ* <=
	// Upper.
	Upper float64
	// Flow[i][p] is commodity i's flow on its path p at Lambda.
	Flow [][]float64
	// Phases the approximation ran (0 for Exact).
	Phases int
	// Unroutable counts commodities with demand and no path; any makes
	// λ* = 0.
	Unroutable int
}

// Gap is the relative distance between the bound and the answer.
func (r Result) Gap() float64 {
	if r.Upper == 0 {
		return 0
	}
	return (r.Upper - r.Lambda) / r.Upper
}

// ErrNoDemand is returned for a problem with no demand at all.
var ErrNoDemand = errors.New("no demand")

// MaxConcurrentFlow approximates the maximum concurrent flow to within
// eps (0 < eps < 1): it returns once Lambda >= (1-eps)·Upper, or when the
// Garg-Könemann termination (total length >= 1) is reached, whose answer
// is within (1-eps)^3 of the optimum whatever the gap says.
//
// The stages:
//
//  1. Commodities with no path make λ* = 0: return at once.
//  2. A feasible start: each commodity split evenly over its paths; the
//     most loaded arc gives a lower bound λ0, and demands are scaled by
//     λ0 so that the optimum of the scaled problem is at least 1 (the
//     algorithm's assumption).
//  3. Lengths l_a = δ/c_a with δ = (m/(1-eps))^(-1/eps), m the arcs in
//     use (held relative to δ, renormalised as they grow).
//  4. Phases: every commodity routes its (scaled) demand, in steps of at
//     most the bottleneck capacity, on its shortest path under l; each
//     step multiplies the lengths of the arcs it used by 1 + eps·f/c_a.
//  5. After each phase: the flow so far, scaled by its most loaded arc,
//     is feasible (the lower bound); D(l)/α(l) is an upper bound, where
//     D = Σ l_a c_a and α = Σ_j d_j·(shortest allowed path of j under l).
//     Stop when they meet within eps.
//  6. Every 2⌈log_{1+eps}(1/δ)⌉ phases without stopping, double the
//     demands (the optimum was at least 2: the Garg-Könemann doubling).
func MaxConcurrentFlow(g *topo.Graph, cs []Commodity, eps float64) (Result, error) {
	if !(eps > 0 && eps < 1) {
		return Result{}, fmt.Errorf("max concurrent flow: eps = %v, need 0 < eps < 1", eps)
	}
	var res Result
	total := 0.0
	for _, c := range cs {
		if c.Demand < 0 || math.IsNaN(c.Demand) {
			return Result{}, fmt.Errorf("max concurrent flow: demand %v from %d to %d", c.Demand, c.Src, c.Dst)
		}
		if c.Demand > 0 && len(c.Paths) == 0 {
			res.Unroutable++
		}
		total += c.Demand
	}
	if total == 0 {
		return Result{}, ErrNoDemand
	}
	res.Flow = make([][]float64, len(cs))
	for i, c := range cs {
		res.Flow[i] = make([]float64, len(c.Paths))
	}
	if res.Unroutable > 0 {
		return res, nil
	}

	// 2. Even split.
	load := make([]float64, g.Arcs())
	for _, c := range cs {
		for _, p := range c.Paths {
			for _, a := range p {
				load[a] += c.Demand / float64(len(c.Paths))
			}
		}
	}
	used := 0
	util := 0.0
	for a, x := range load {
		if x > 0 {
			used++
			util = math.Max(util, x/g.Capacity(topo.Arc(a)))
		}
	}
	lambda0 := 1 / util
	demand := make([]float64, len(cs))
	for i, c := range cs {
		demand[i] = c.Demand * lambda0
	}

	// 3. Lengths, kept relative to δ (which underflows a float64 for
	// small eps): length[a]·δ·e^shift is the true length, and D >= 1 is
	// log(d) + shift >= log(1/δ).
	logInvDelta := math.Log(float64(used)/(1-eps)) / eps
	length := make([]float64, g.Arcs())
	d := 0.0
	shift := 0.0
	for a := range length {
		if load[a] > 0 {
			length[a] = 1 / g.Capacity(topo.Arc(a))
			d++
		}
	}
	done := func() bool { return math.Log(d)+shift >= logInvDelta }
	renorm := func() {
		if d < 1e100 {
			return
		}
		for a := range length {
			length[a] /= d
		}
		shift += math.Log(d)
		d = 1
	}
	pathLen := func(p topo.Path) float64 {
		s := 0.0
		for _, a := range p {
			s += length[a]
		}
		return s
	}
	shortest := func(c *Commodity) (int, float64) {
		best, bl := 0, math.Inf(1)
		for i, p := range c.Paths {
			if l := pathLen(p); l < bl {
				best, bl = i, l
			}
		}
		return best, bl
	}

	flow := make([][]float64, len(cs)) // flow on each path so far
	routed := make([]float64, len(cs)) // flow of each commodity so far
	for i, c := range cs {
		flow[i] = make([]float64, len(c.Paths))
	}
	for a := range load {
		load[a] = 0
	}
	res.Upper = math.Inf(1)
	scale := 1.0 // demands now = original × lambda0 × scale
	doubling := 2 * int(math.Ceil(logInvDelta/math.Log1p(eps)))
	sinceDouble := 0

	feasible := func() {
		worst := 0.0
		for a, x := range load {
			if x > 0 {
				worst = math.Max(worst, x/g.Capacity(topo.Arc(a)))
			}
		}
		if worst == 0 {
			return
		}
		lam := math.Inf(1)
		for i, c := range cs {
			if c.Demand > 0 {
				lam = math.Min(lam, routed[i]/c.Demand)
			}
		}
		if lam /= worst; lam > res.Lambda {
			res.Lambda = lam
			for i := range cs {
				for p := range flow[i] {
					res.Flow[i][p] = flow[i][p] / worst
				}
			}
		}
	}
	bound := func() {
		alpha := 0.0
		for i := range cs {
			if cs[i].Demand > 0 {
				_, l := shortest(&cs[i])
				alpha += cs[i].Demand * l
			}
		}
		res.Upper = math.Min(res.Upper, d/alpha)
	}

	for !done() {
		bound()
		if res.Lambda >= (1-eps)*res.Upper {
			break
		}
		// 4. One phase; a commodity's demand is routed in full unless D
		// reaches 1 first, in which case the phase does not count.
		complete := true
		for i := range cs {
			c := &cs[i]
			rem := demand[i] * scale
			for rem > 0 {
				if done() {
					complete = false
					break
				}
				p, _ := shortest(c)
				path := c.Paths[p]
				f := rem
				for _, a := range path {
					f = math.Min(f, g.Capacity(a))
				}
				flow[i][p] += f
				routed[i] += f
				rem -= f
				for _, a := range path {
					load[a] += f
					grow := length[a] * eps * f / g.Capacity(a)
					length[a] += grow
					d += grow * g.Capacity(a)
				}
				renorm()
			}
			if !complete {
				break
			}
		}
		if !complete {
			break
		}
		res.Phases++
		feasible()
		if sinceDouble++; sinceDouble >= doubling {
			scale *= 2
			sinceDouble = 0
		}
	}
	bound()
	feasible()
	return res, nil
}
