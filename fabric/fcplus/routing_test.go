package fcplus

import (
	"testing"

	"github.com/bcfab/bcfab/fabric/topo"
)

// Seeded FC+ fabrics the routing tests run on.
var expanders = []Params{
	{ToRs: 16, Ports: 6, Virtual: 3, Hosts: 1, Seed: 1},
	{ToRs: 24, Ports: 10, Virtual: 4, Hosts: 1, Seed: 2},
	{ToRs: 32, Ports: 10, Virtual: 6, Hosts: 1, Seed: 3},
	{ToRs: 36, Ports: 14, Virtual: 5, Hosts: 1, Seed: 4},
	{ToRs: 48, Ports: 14, Virtual: 4, Hosts: 1, Seed: 5},
}

// Every DF-KSP path keeps T_du <= N_lp - 1, the paths of a pair come
// shortest first, and no pair gets more than K.
func TestDFKSPTurns(t *testing.T) {
	for _, p := range expanders {
		f := mustFabric(t, p)
		for _, s := range []Routing{DFKSP1, DFKSP2, FC} {
			r, err := f.Routes(s, RouteOptions{K: 8, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			empty := 0
			r.Pairs(func(a, b int, ps []topo.Path) {
				if len(ps) == 0 {
					empty++
				}
				if len(ps) > 8 {
					t.Errorf("%s %s: %d paths", f, s, len(ps))
				}
				for i, q := range ps {
					if n := f.Turns(q); n > s.Lossless()-1 {
						t.Errorf("%s %s: path %s has %d down-up turns", f, s, f.Graph.PathString(q), n)
					}
					if i > 0 && len(q) < len(ps[i-1]) {
						t.Errorf("%s %s: paths of %s-%s out of order", f, s, f.Graph.Nodes[a].Name, f.Graph.Nodes[b].Name)
					}
				}
			})
			t.Logf("%s %s: %d of %d pairs without a path", f, s, empty, len(f.ToRs())*(len(f.ToRs())-1))
		}
	}
}

// FC's paths of one pair share no cable.
func TestFCEdgeDisjoint(t *testing.T) {
	f := mustFabric(t, expanders[1])
	r, _ := f.Routes(FC, RouteOptions{K: 8, Seed: 1})
	r.Pairs(func(a, b int, ps []topo.Path) {
		used := map[int]bool{}
		for _, q := range ps {
			for _, x := range q {
				if used[x.Link()] {
					t.Fatalf("%s-%s: two paths share cable %s", f.Graph.Nodes[a].Name, f.Graph.Nodes[b].Name, f.Graph.ArcString(x))
				}
				used[x.Link()] = true
			}
		}
	})
}

// Each priority's channel dependency graph is acyclic for DF-KSP with one
// and two lossless priorities and for FC; plain KSP needs more than one
// priority's worth of turns on these fabrics.
func TestCDGAcyclic(t *testing.T) {
	for _, p := range expanders {
		f := mustFabric(t, p)
		for _, s := range []Routing{DFKSP1, DFKSP2, FC} {
			r, _ := f.Routes(s, RouteOptions{K: 8, Seed: 1})
			c := f.CDG(r, s.Lossless())
			if cyc := c.Cycle(); cyc != nil {
				t.Errorf("%s %s: cycle %s", f, s, f.CycleString(cyc))
			}
			for _, prio := range []int{1, 2} {
				if s.Lossless() < prio {
					continue
				}
				if cyc := priorityCDG(f, r, s.Lossless(), prio).Cycle(); cyc != nil {
					t.Errorf("%s %s priority %d: cycle %s", f, s, prio, f.CycleString(cyc))
				}
			}
		}
		r, _ := f.Routes(KSP, RouteOptions{K: 8, Seed: 1})
		if cyc := f.CDG(r, 1).Cycle(); cyc == nil {
			t.Logf("%s: KSP's dependencies happen to be acyclic", f)
		}
	}
}

// priorityCDG is one priority's graph alone: only the stretches of paths
// at that priority.
func priorityCDG(f *Fabric, r *topo.Routes, lossless, prio int) *CDG {
	c := NewCDG()
	r.Pairs(func(_, _ int, ps []topo.Path) {
		for _, q := range ps {
			var run []Channel
			for _, ch := range f.Hops(q, lossless) {
				if ch.Prio == prio {
					run = append(run, ch)
				} else if len(run) > 0 {
					c.Add(run)
					run = nil
				}
			}
			c.Add(run)
		}
	})
	return c
}

// The rewrite table, applied hop by hop, gives every DF-KSP 2L path the
// priorities Priorities assigns, and no path meets a rewrite once at
// priority 2.
func TestRewrites(t *testing.T) {
	for _, p := range expanders[:3] {
		f := mustFabric(t, p)
		rw := f.Rewrites()
		turnAt := map[[3]int]bool{}
		for u, pairs := range rw {
			for _, pp := range pairs {
				turnAt[[3]int{u, pp.In, pp.Out}] = true
			}
		}
		r, _ := f.Routes(DFKSP2, RouteOptions{K: 8, Seed: 1})
		g := f.Graph
		r.Pairs(func(_, _ int, ps []topo.Path) {
			for _, q := range ps {
				want := f.Priorities(q, 2)
				prio := 1
				for i := range q {
					if i > 0 {
						u := g.Tail(q[i]).Node
						if turnAt[[3]int{u, g.Head(q[i-1]).Port, g.Tail(q[i]).Port}] {
							if prio == 2 {
								t.Fatalf("%s: a second turn at %s", g.PathString(q), g.Nodes[u].Name)
							}
							prio = 2
						}
					}
					if prio != want[i] {
						t.Fatalf("%s: hop %d at priority %d by the table, %d by the path", g.PathString(q), i, prio, want[i])
					}
				}
			}
		})
		// Server ports never rewrite.
		for u, pairs := range rw {
			for _, pp := range pairs {
				if pp.In < f.Layout.Hosts || pp.Out < f.Layout.Hosts {
					t.Errorf("%s rewrites %v, a server port", g.Nodes[u].Name, pp)
				}
			}
		}
	}
}

func TestCycleFinder(t *testing.T) {
	ch := func(a int) Channel { return Channel{topo.Arc(a), 1} }
	c := NewCDG()
	c.Add([]Channel{ch(0), ch(2), ch(4)})
	c.Add([]Channel{ch(4), ch(6)})
	if cyc := c.Cycle(); cyc != nil {
		t.Fatalf("acyclic graph: cycle %v", cyc)
	}
	c.Add([]Channel{ch(6), ch(2)})
	cyc := c.Cycle()
	if len(cyc) != 3 {
		t.Fatalf("cycle %v, want 2 -> 4 -> 6", cyc)
	}
	for i := range cyc {
		next := cyc[(i+1)%len(cyc)]
		if _, ok := c.succ[c.id[cyc[i]]][c.id[next]]; !ok {
			t.Fatalf("cycle %v: no edge %v -> %v", cyc, cyc[i], next)
		}
	}
	// Another priority is another vertex: no cycle through it.
	d := NewCDG()
	d.Add([]Channel{ch(0), {2, 1}})
	d.Add([]Channel{{2, 2}, ch(0)})
	if cyc := d.Cycle(); cyc != nil {
		t.Fatalf("cycle across priorities %v", cyc)
	}
}

func TestParseRouting(t *testing.T) {
	for _, s := range Routings {
		if got, err := ParseRouting(string(s)); err != nil || got != s {
			t.Errorf("ParseRouting(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseRouting("updown"); err == nil {
		t.Errorf("ParseRouting accepted updown")
	}
}
