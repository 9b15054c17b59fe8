package fcplus

import (
	"slices"
	"testing"

	"github.com/bcfab/bcfab/fabric/topo"
)

// The loop scenario: its flows are what plain KSP routes them on, their
// channel dependencies close a cycle through all four, and DF-KSP on the
// same fabric is acyclic and reaches every pair.
func TestLoopScenario(t *testing.T) {
	s, err := LookupScenario("fcplus-loop")
	if err != nil {
		t.Fatal(err)
	}
	f := mustFabric(t, s.Params)
	g := f.Graph
	paths, err := s.Paths(f)
	if err != nil {
		t.Fatal(err)
	}
	ksp, _ := f.Routes(KSP, s.Routing)
	c := NewCDG()
	for i, fl := range s.Flows {
		src, _ := g.Lookup(fl.Src)
		dst, _ := g.Lookup(fl.Dst)
		a, _ := g.Attachment(src)
		b, _ := g.Attachment(dst)
		if g.Nodes[a.Node].Name != fl.Via[0] || g.Nodes[b.Node].Name != fl.Via[len(fl.Via)-1] {
			t.Fatalf("flow %s->%s: servers on %s and %s, path %v", fl.Src, fl.Dst, g.Nodes[a.Node].Name, g.Nodes[b.Node].Name, fl.Via)
		}
		got := ksp.Between(a.Node, b.Node)
		if len(got) != 1 || !slices.Equal(got[0], paths[i]) {
			t.Fatalf("flow %s->%s: KSP routes %v, scenario says %v", fl.Src, fl.Dst, pathStrings(g, got), fl.Via)
		}
		c.Add(f.Hops(paths[i], 1))
	}
	cyc := c.Cycle()
	if len(cyc) != len(s.Flows) {
		t.Fatalf("flows' dependencies: cycle %s, want one through all %d flows", f.CycleString(cyc), len(s.Flows))
	}
	t.Logf("KSP cycle: %s", f.CycleString(cyc))
	for _, sch := range []Routing{DFKSP1, DFKSP2} {
		r, _ := f.Routes(sch, RouteOptions{K: 4, Seed: 1})
		if cyc := f.CDG(r, sch.Lossless()).Cycle(); cyc != nil {
			t.Errorf("%s: cycle %s", sch, f.CycleString(cyc))
		}
		r.Pairs(func(a, b int, ps []topo.Path) {
			if len(ps) == 0 {
				t.Errorf("%s: no path %s-%s", sch, g.Nodes[a].Name, g.Nodes[b].Name)
			}
		})
	}
}

func pathStrings(g *topo.Graph, ps []topo.Path) []string {
	var s []string
	for _, p := range ps {
		s = append(s, g.PathString(p))
	}
	return s
}
