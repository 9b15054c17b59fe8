package topo

import (
	"errors"
	"testing"
)

type builder interface{ Build() (*Graph, error) }

func mustBuild(t *testing.T, b builder) *Graph {
	t.Helper()
	g, err := b.Build()
	if err != nil {
		t.Fatalf("%+v: %v", b, err)
	}
	return g
}

// Counts every generator promises.
func TestCounts(t *testing.T) {
	for _, c := range []struct {
		name                     string
		b                        builder
		servers, switches, links int
	}{
		{"bcube(4,1)", BCube{N: 4, K: 1}, 16, 8, 32},
		{"bcube(3,2)", BCube{N: 3, K: 2}, 27, 27, 81},
		{"railonly(4)", RailOnly{N: 4}, 16, 8, 32},
		{"leafspine", LeafSpine{Leaves: 4, Spines: 2, HostsPerLeaf: 3}, 12, 6, 12 + 8},
		{"fattree k=4", FatTree{K: 4}, 16, 20, 16 + 16 + 16},
		{"fattree k=8", FatTree{K: 8}, 128, 80, 3 * 128},
		{"expander", Expander{ToRs: 8, Degree: 3, Hosts: 2, Seed: 1}, 16, 8, 16 + 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := mustBuild(t, c.b)
			if len(g.Servers()) != c.servers || len(g.Nodes)-c.servers != c.switches || len(g.Links) != c.links {
				t.Errorf("%d servers %d switches %d links, want %d %d %d",
					len(g.Servers()), len(g.Nodes)-len(g.Servers()), len(g.Links), c.servers, c.switches, c.links)
			}
			for i, s := range g.Servers() {
				if s != i {
					t.Fatalf("server %d is node %d: servers come first", i, s)
				}
			}
			if !g.Connected() {
				t.Errorf("not connected")
			}
		})
	}
}

// Every bad parameter is one error that wraps ErrInvalid and names the
// parameter.
func TestRejects(t *testing.T) {
	for _, c := range []struct {
		b     builder
		param string
	}{
		{BCube{N: 1, K: 1}, "n"},
		{BCube{N: 4, K: 0}, "k"},
		{BCube{N: 4, K: 1, LevelCapacity: []float64{1}}, "capacities"},
		{RailOnly{N: 1}, "n"},
		{RailOnly{N: 4, Rail: -1}, "rail"},
		{LeafSpine{Leaves: 1, Spines: 2, HostsPerLeaf: 2}, "leaves"},
		{LeafSpine{Leaves: 4, Spines: 0, HostsPerLeaf: 2}, "spines"},
		{LeafSpine{Leaves: 4, Spines: 2, HostsPerLeaf: 0}, "hosts"},
		{LeafSpine{Leaves: 4, Spines: 2, HostsPerLeaf: 2, Oversubscription: -3}, "oversubscription"},
		{FatTree{K: 5}, "k"},
		{FatTree{K: 0}, "k"},
		{FatTree{K: 100}, "k"},
		{Expander{ToRs: 1, Degree: 1, Hosts: 1}, "tors"},
		{Expander{ToRs: 8, Degree: 0, Hosts: 1}, "degree"},
		{Expander{ToRs: 8, Degree: 8, Hosts: 1}, "degree"},
		{Expander{ToRs: 7, Degree: 3, Hosts: 1}, "degree"},
		{Expander{ToRs: 6, Degree: 1, Hosts: 1}, "degree"},
		{Expander{ToRs: 8, Degree: 3, Hosts: 0}, "hosts"},
	} {
		_, err := c.b.Build()
		var pe *ParamError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &pe) || pe.Param != c.param {
			t.Errorf("%+v: %v, want an invalid %q", c.b, err, c.param)
			continue
		}
		t.Logf("%v", err)
	}
}

func TestExpander(t *testing.T) {
	c := Expander{ToRs: 20, Degree: 5, Hosts: 3, Seed: 42}
	g := mustBuild(t, c)
	again := mustBuild(t, c)
	other := mustBuild(t, Expander{ToRs: 20, Degree: 5, Hosts: 3, Seed: 43})
	same, diff := true, false
	for i := range g.Links {
		same = same && g.Links[i] == again.Links[i]
		diff = diff || g.Links[i] != other.Links[i]
	}
	if !same {
		t.Errorf("one seed, two graphs")
	}
	if !diff {
		t.Errorf("seeds 42 and 43 give the same graph")
	}
	lay := ToRLayout{ToRs: 20, Hosts: 3, FabricPorts: 5}
	for tor := range 20 {
		u := lay.ToR(tor)
		seen := map[int]bool{}
		for p := range 5 {
			v := g.Head(g.Out(u, lay.Port(p))).Node
			if lay.ToRIndex(v) < 0 || v == u || seen[v] {
				t.Errorf("tor%d port %d goes to %s", tor, lay.Port(p), g.Nodes[v].Name)
			}
			seen[v] = true
		}
		for x := range 3 {
			if v := g.Head(g.Out(u, x)).Node; v != tor*3+x {
				t.Errorf("tor%d port %d goes to %s", tor, x, g.Nodes[v].Name)
			}
		}
	}
	// Degree 2 is a ring, connected by construction.
	ring := mustBuild(t, Expander{ToRs: 30, Degree: 2, Hosts: 1, Seed: 5})
	if !ring.Connected() {
		t.Errorf("ring not connected")
	}
}

func TestLeafSpineOversubscription(t *testing.T) {
	g := mustBuild(t, LeafSpine{Leaves: 4, Spines: 2, HostsPerLeaf: 6, Oversubscription: 3})
	leaf, _ := g.Lookup("leaf1")
	spine, _ := g.Lookup("spine1")
	a := g.Out(leaf, 6+1)
	if h := g.Head(a); h.Node != spine || h.Port != 1 {
		t.Fatalf("leaf1 port 7 goes to %v", h)
	}
	// 6 servers over 2 uplinks at 3:1: each uplink carries 1.
	if c := g.Capacity(a); c != 1 {
		t.Errorf("uplink capacity %v, want 1", c)
	}
}

func TestFatTreeNumbering(t *testing.T) {
	g := mustBuild(t, FatTree{K: 4})
	for _, c := range []struct {
		from string
		port int
		to   string
		at   int
	}{
		{"h5", 0, "edge1.0", 1},
		{"edge1.0", 2, "agg1.0", 0},
		{"edge1.1", 3, "agg1.1", 1},
		{"agg2.1", 3, "core3", 2},
		{"agg0.0", 2, "core0", 0},
	} {
		u, _ := g.Lookup(c.from)
		h := g.Head(g.Out(u, c.port))
		if g.Nodes[h.Node].Name != c.to || h.Port != c.at {
			t.Errorf("%s port %d goes to %s port %d, want %s port %d", c.from, c.port, g.Nodes[h.Node].Name, h.Port, c.to, c.at)
		}
	}
}

func TestBuilderRejects(t *testing.T) {
	b := NewBuilder("x")
	a := b.Node("a", Switch, 2)
	c := b.Node("c", Switch, 1)
	b.Cable(End{a, 0}, End{c, 0}, 1)
	if _, err := b.Graph(); err == nil {
		t.Errorf("a port left uncabled went unnoticed")
	}
	b = NewBuilder("y")
	a = b.Node("a", Switch, 2)
	c = b.Node("c", Switch, 2)
	b.Cable(End{a, 0}, End{c, 0}, 1)
	b.Cable(End{a, 0}, End{c, 1}, 1)
	if _, err := b.Graph(); err == nil {
		t.Errorf("a port cabled twice went unnoticed")
	}
	b = NewBuilder("z")
	b.Node("a", Switch, 1)
	b.Node("a", Switch, 1)
	if _, err := b.Graph(); err == nil {
		t.Errorf("a name used twice went unnoticed")
	}
}
