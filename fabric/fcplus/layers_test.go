package fcplus

import (
	"errors"
	"slices"
	"testing"

	"github.com/bcfab/bcfab/fabric/topo"
)

func mustFabric(t *testing.T, b interface{ Build() (*Fabric, error) }) *Fabric {
	t.Helper()
	f, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The paper's worked example (its Fig. 2): 6 ToRs of s = 10 fabric ports,
// split into v = 4 or v = 6 virtual switches. Both have k = (10-2)/2 + 2 =
// 6 layers and 6 cables between every pair of adjacent layers (30 in
// all); v = 4 puts the middle virtual switches in 2 groups of 2 layers
// (4 ports each, half the ToRs in each layer of a group), v = 6 in 4
// groups of 1 layer (2 ports each, every ToR in every layer).
func TestFig2Counts(t *testing.T) {
	for _, c := range []struct {
		v             int
		layers, group int
		perLayer      []int // virtual switches in layers 1..k
		ports         []int // ports of S^1..S^v
		perLevel      []int // cables between layers i and i+1
	}{
		{v: 4, layers: 6, group: 2, perLayer: []int{6, 3, 3, 3, 3, 6}, ports: []int{1, 4, 4, 1}, perLevel: []int{6, 6, 6, 6, 6}},
		{v: 6, layers: 6, group: 1, perLayer: []int{6, 6, 6, 6, 6, 6}, ports: []int{1, 2, 2, 2, 2, 1}, perLevel: []int{6, 6, 6, 6, 6}},
	} {
		p := Params{ToRs: 6, Ports: 10, Virtual: c.v, Hosts: 1, Seed: 1}
		t.Run(p.plan().name, func(t *testing.T) {
			if p.Layers() != c.layers || p.Groups() != c.group {
				t.Fatalf("k = %d, %d layers per group; want %d, %d", p.Layers(), p.Groups(), c.layers, c.group)
			}
			f := mustFabric(t, p)
			perLayer := make([]int, f.Layers)
			for tor, vss := range f.Virtual {
				if len(vss) != c.v {
					t.Fatalf("ToR %d has %d virtual switches", tor, len(vss))
				}
				for j, vs := range vss {
					perLayer[vs.Layer-1]++
					if n := len(vs.Down) + len(vs.Up); n != c.ports[j] || len(vs.Down) != len(vs.Up) && j != 0 && j != c.v-1 {
						t.Errorf("ToR %d S^%d: %d down %d up, want %d ports", tor, j+1, len(vs.Down), len(vs.Up), c.ports[j])
					}
				}
			}
			if !slices.Equal(perLayer, c.perLayer) {
				t.Errorf("virtual switches per layer %v, want %v", perLayer, c.perLayer)
			}
			perLevel := make([]int, f.Layers-1)
			for l := range f.Graph.Links {
				if lv := f.Level(topo.Arc(2 * l)); lv > 0 {
					perLevel[lv-1]++
				}
			}
			if !slices.Equal(perLevel, c.perLevel) {
				t.Errorf("cables per level %v, want %v", perLevel, c.perLevel)
			}
		})
	}
}

// Every cable joins an up port of layer i to a down port of layer i+1 on
// another ToR; every ToR uses all its ports; the graph is connected and
// the seed names it.
func TestConstruction(t *testing.T) {
	for _, b := range []interface{ Build() (*Fabric, error) }{
		Params{ToRs: 6, Ports: 10, Virtual: 4, Hosts: 2, Seed: 3},
		Params{ToRs: 32, Ports: 10, Virtual: 3, Hosts: 1, Seed: 1},
		Params{ToRs: 30, Ports: 14, Virtual: 5, Hosts: 1, Seed: 2},
		Params{ToRs: 64, Ports: 18, Virtual: 6, Hosts: 1, Seed: 7},
		FCParams{ToRs: 20, Ports: 12, Layers: 4, Hosts: 1, Seed: 1},
		FCParams{ToRs: 20, Ports: 10, Layers: 6, Hosts: 1, Seed: 1},
	} {
		f := mustFabric(t, b)
		t.Run(f.String(), func(t *testing.T) {
			g := f.Graph
			if !g.Connected() {
				t.Fatal("not connected")
			}
			layerOf := map[topo.End]int{}
			isUp := map[topo.End]bool{}
			for tor, vss := range f.Virtual {
				u := f.Layout.ToR(tor)
				n := 0
				for _, vs := range vss {
					for _, p := range vs.Down {
						layerOf[topo.End{Node: u, Port: p}] = vs.Layer
					}
					for _, p := range vs.Up {
						layerOf[topo.End{Node: u, Port: p}] = vs.Layer
						isUp[topo.End{Node: u, Port: p}] = true
					}
					n += len(vs.Down) + len(vs.Up)
				}
				if n != f.Layout.FabricPorts {
					t.Errorf("ToR %d: %d ports in virtual switches, has %d", tor, n, f.Layout.FabricPorts)
				}
			}
			for l, lk := range g.Links {
				if g.Nodes[lk.A.Node].Kind == topo.Server {
					continue
				}
				a := topo.Arc(2 * l)
				la, lb := layerOf[lk.A], layerOf[lk.B]
				if !isUp[lk.A] || isUp[lk.B] || lb != la+1 || f.Level(a) != la || !f.Up(a) || f.Up(a.Reverse()) {
					t.Errorf("%s: layers %d (up %v) to %d (up %v), level %d", g.ArcString(a), la, isUp[lk.A], lb, isUp[lk.B], f.Level(a))
				}
				if lk.A.Node == lk.B.Node {
					t.Errorf("%s: a ToR cabled to itself", g.ArcString(a))
				}
			}
			again := mustFabric(t, b)
			if !slices.Equal(g.Links, again.Graph.Links) {
				t.Errorf("one seed, two fabrics")
			}
		})
	}
}

// With 6 ToRs of 10 ports parallel cables cannot be helped (5 peers); with
// 32 ToRs the draw avoids them.
func TestFewParallelCables(t *testing.T) {
	f := mustFabric(t, Params{ToRs: 32, Ports: 10, Virtual: 4, Hosts: 1, Seed: 1})
	seen := map[[2]int]bool{}
	for _, lk := range f.Graph.Links {
		k := [2]int{min(lk.A.Node, lk.B.Node), max(lk.A.Node, lk.B.Node)}
		if seen[k] {
			t.Errorf("two cables between %s and %s", f.Graph.Nodes[k[0]].Name, f.Graph.Nodes[k[1]].Name)
		}
		seen[k] = true
	}
}

func TestRejects(t *testing.T) {
	for _, c := range []struct {
		b     interface{ Build() (*Fabric, error) }
		param string
	}{
		{Params{ToRs: 6, Ports: 9, Virtual: 4}, "ports"},
		{Params{ToRs: 6, Ports: 2, Virtual: 3}, "ports"},
		{Params{ToRs: 6, Ports: 10, Virtual: 2}, "virtual"},
		{Params{ToRs: 6, Ports: 10, Virtual: 5}, "virtual"},
		{Params{ToRs: 7, Ports: 10, Virtual: 4}, "tors"},
		{Params{ToRs: 2, Ports: 10, Virtual: 4}, "tors"},
		{Params{ToRs: 6, Ports: 10, Virtual: 4, Hosts: -1}, "hosts"},
		{FCParams{ToRs: 6, Ports: 10, Layers: 1}, "layers"},
		{FCParams{ToRs: 6, Ports: 10, Layers: 3}, "ports"},
		{FCParams{ToRs: 1, Ports: 12, Layers: 3}, "tors"},
	} {
		_, err := c.b.Build()
		var pe *topo.ParamError
		if !errors.Is(err, topo.ErrInvalid) || !errors.As(err, &pe) || pe.Param != c.param {
			t.Errorf("%+v: %v, want an invalid %q", c.b, err, c.param)
			continue
		}
		t.Log(err)
	}
}
