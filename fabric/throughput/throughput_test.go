package throughput

import (
	"math"
	"testing"

	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/fabric/topo"
)

// line is a--b--c (switches), each cable of capacity 1, plus a second
// cable a--c of capacity 2.
func line(t *testing.T) (*topo.Graph, topo.Path, topo.Path, topo.Path) {
	b := topo.NewBuilder("line")
	a := b.Node("a", topo.Switch, 2)
	m := b.Node("b", topo.Switch, 2)
	c := b.Node("c", topo.Switch, 2)
	b.Cable(topo.End{Node: a, Port: 0}, topo.End{Node: m, Port: 0}, 1)
	b.Cable(topo.End{Node: m, Port: 1}, topo.End{Node: c, Port: 0}, 1)
	b.Cable(topo.End{Node: a, Port: 1}, topo.End{Node: c, Port: 1}, 2)
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	ab, bc, ac := g.Out(a, 0), g.Out(m, 1), g.Out(a, 1)
	return g, topo.Path{ab}, topo.Path{ab, bc}, topo.Path{ac}
}

func TestSmallInstances(t *testing.T) {
	g, ab, abc, ac := line(t)
	for _, c := range []struct {
		name string
		cs   []Commodity
		want float64
	}{
		{"one arc", []Commodity{{Demand: 1, Paths: []topo.Path{ab}}}, 1},
		{"two share an arc", []Commodity{{Demand: 1, Paths: []topo.Path{ab}}, {Demand: 1, Paths: []topo.Path{abc}}}, 0.5},
		{"two paths", []Commodity{{Demand: 1, Paths: []topo.Path{abc, ac}}}, 3},
		{"unequal demands", []Commodity{{Demand: 2, Paths: []topo.Path{abc, ac}}, {Demand: 1, Paths: []topo.Path{ab}}}, 1},
		{"zero demand ignored", []Commodity{{Demand: 1, Paths: []topo.Path{ac}}, {Demand: 0}}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			ex, err := Exact(g, c.cs)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(ex.Lambda-c.want) > 1e-9 {
				t.Errorf("exact λ = %v, want %v", ex.Lambda, c.want)
			}
			ap, err := MaxConcurrentFlow(g, c.cs, 0.01)
			if err != nil {
				t.Fatal(err)
			}
			if ap.Lambda > c.want*(1+1e-9) || ap.Lambda < 0.99*c.want || ap.Upper < c.want*(1-1e-9) {
				t.Errorf("approximate λ = %v (bound %v), want about %v", ap.Lambda, ap.Upper, c.want)
			}
			checkFeasible(t, g, c.cs, ap)
			checkFeasible(t, g, c.cs, ex)
		})
	}
	r, err := MaxConcurrentFlow(g, []Commodity{{Demand: 1}}, 0.1)
	if err != nil || r.Lambda != 0 || r.Unroutable != 1 {
		t.Errorf("a commodity without a path: %+v, %v", r, err)
	}
	if _, err := MaxConcurrentFlow(g, []Commodity{{Demand: 0, Paths: []topo.Path{ab}}}, 0.1); err != ErrNoDemand {
		t.Errorf("no demand: %v", err)
	}
}

// checkFeasible fails unless r.Flow gives every commodity λ × its demand
// within every capacity.
func checkFeasible(t *testing.T, g *topo.Graph, cs []Commodity, r Result) {
	t.Helper()
	load := make([]float64, g.Arcs())
	for i, c := range cs {
		sum := 0.0
		for p, f := range r.Flow[i] {
			if f < -1e-9 {
				t.Fatalf("commodity %d: flow %v on path %d", i, f, p)
			}
			sum += f
			for _, a := range c.Paths[p] {
				load[a] += f
			}
		}
		if sum < r.Lambda*c.Demand*(1-1e-6) {
			t.Errorf("commodity %d gets %v, λ·demand is %v", i, sum, r.Lambda*c.Demand)
		}
	}
	for a, x := range load {
		if c := g.Capacity(topo.Arc(a)); x > c*(1+1e-6) {
			t.Errorf("arc %s carries %v of %v", g.ArcString(topo.Arc(a)), x, c)
		}
	}
}

// commodities routes demands between a fabric's ToRs over a route set.
func commodities(f *fcplus.Fabric, r *topo.Routes, ds []Demand) []Commodity {
	tors := f.ToRs()
	cs := make([]Commodity, len(ds))
	for i, d := range ds {
		cs[i] = Commodity{Src: tors[d.Src], Dst: tors[d.Dst], Demand: d.Amount, Paths: r.Between(tors[d.Src], tors[d.Dst])}
	}
	return cs
}

// The approximation agrees with the LP on small fabrics, every routing and
// traffic pattern: its λ is feasible, at least (1-ε) of the optimum, and
// its bound is at least the optimum.
func TestApproximationAgainstLP(t *testing.T) {
	const eps = 0.05
	for _, p := range []fcplus.Params{
		{ToRs: 8, Ports: 4, Virtual: 3, Hosts: 1, Seed: 2},
		{ToRs: 12, Ports: 6, Virtual: 3, Hosts: 1, Seed: 1},
	} {
		f, err := p.Build()
		if err != nil {
			t.Fatal(err)
		}
		n := len(f.ToRs())
		worst, err := LongestMatching(torDistances(f))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range fcplus.Routings {
			r, _ := f.Routes(s, fcplus.RouteOptions{K: 4, Seed: 1})
			for name, ds := range map[string][]Demand{
				"all-to-all":  AllToAll(n, 1),
				"permutation": Permutation(RandomDerangement(n, 5), 1),
				"near-worst":  Permutation(worst, 1),
			} {
				cs := commodities(f, r, ds)
				ex, err := Exact(f.Graph, cs)
				if err != nil {
					t.Fatalf("%s %s %s: %v", f, s, name, err)
				}
				ap, err := MaxConcurrentFlow(f.Graph, cs, eps)
				if err != nil {
					t.Fatal(err)
				}
				checkFeasible(t, f.Graph, cs, ap)
				checkFeasible(t, f.Graph, cs, ex)
				if ap.Lambda > ex.Lambda*(1+1e-6) || ap.Lambda < (1-eps)*ex.Lambda || ap.Upper < ex.Lambda*(1-1e-6) {
					t.Errorf("%s %s %s: approximate %.4f (bound %.4f), LP %.4f", f, s, name, ap.Lambda, ap.Upper, ex.Lambda)
				}
				t.Logf("%s %-6s %-11s LP %.4f approx %.4f bound %.4f phases %d", f, s, name, ex.Lambda, ap.Lambda, ap.Upper, ap.Phases)
			}
		}
	}
}

func torDistances(f *fcplus.Fabric) [][]int {
	tors := f.ToRs()
	d := make([][]int, len(tors))
	for i, u := range tors {
		all := f.Graph.Distances(u)
		d[i] = make([]int, len(tors))
		for j, v := range tors {
			d[i][j] = all[v]
		}
	}
	return d
}

// The Hungarian solution is as long as the best of all derangements.
func TestLongestMatchingBruteForce(t *testing.T) {
	for seed := range uint64(20) {
		n := 3 + int(seed%5)
		dist := make([][]int, n)
		x := seed*2654435761 + 1
		for i := range dist {
			dist[i] = make([]int, n)
			for j := range dist[i] {
				if i != j {
					x = x*6364136223846793005 + 1442695040888963407
					dist[i][j] = 1 + int(x>>60)
				}
			}
		}
		p, err := LongestMatching(dist)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for i, j := range p {
			if i == j {
				t.Fatalf("fixed point %d in %v", i, p)
			}
			got += dist[i][j]
		}
		if best := bestDerangement(dist); got != best {
			t.Errorf("n=%d: matching weighs %d, best derangement %d", n, got, best)
		}
	}
}

func bestDerangement(dist [][]int) int {
	n := len(dist)
	best := -1
	perm := make([]int, n)
	used := make([]bool, n)
	var rec func(i, w int)
	rec = func(i, w int) {
		if i == n {
			best = max(best, w)
			return
		}
		for j := range n {
			if !used[j] && j != i {
				used[j] = true
				perm[i] = j
				rec(i+1, w+dist[i][j])
				used[j] = false
			}
		}
	}
	rec(0, 0)
	return best
}

func TestRandomDerangement(t *testing.T) {
	a := RandomDerangement(50, 1)
	b := RandomDerangement(50, 1)
	seen := make([]bool, 50)
	for i, j := range a {
		if i == j || seen[j] || b[i] != j {
			t.Fatalf("not a reproducible derangement: %v", a)
		}
		seen[j] = true
	}
}
