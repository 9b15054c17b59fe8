package topo

import (
	"slices"
	"strings"
	"testing"
)

// complete is K_n as a graph of switches with one port per peer.
func complete(t *testing.T, n int) *Graph {
	b := NewBuilder("complete")
	for i := range n {
		b.Node(string(rune('a'+i)), Switch, n-1)
	}
	next := make([]int, n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			b.Cable(End{i, next[i]}, End{j, next[j]}, 1)
			next[i]++
			next[j]++
		}
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkPath fails unless p is a simple chain of arcs from src to dst.
func checkPath(t *testing.T, g *Graph, p Path, src, dst int) {
	t.Helper()
	nodes := g.PathNodes(p)
	if nodes[0] != src || nodes[len(nodes)-1] != dst {
		t.Fatalf("path %s does not join %d and %d", g.PathString(p), src, dst)
	}
	for i := 1; i < len(p); i++ {
		if g.Head(p[i-1]).Node != g.Tail(p[i]).Node {
			t.Fatalf("path %s is not a chain", g.PathString(p))
		}
	}
	s := slices.Clone(nodes)
	slices.Sort(s)
	if len(slices.Compact(s)) != len(nodes) {
		t.Fatalf("path %s is not simple", g.PathString(p))
	}
}

func TestFindOrderAndCount(t *testing.T) {
	// K4 has 5 simple paths between two nodes: 1 of 1 hop, 2 of 2, 2 of 3.
	g := complete(t, 4)
	f := NewPathFinder(g, nil)
	for k, want := range map[int][]int{1: {1}, 3: {1, 2, 2}, 5: {1, 2, 2, 3, 3}, 9: {1, 2, 2, 3, 3}} {
		ps := f.Find(0, 3, PathOptions{K: k})
		var lens []int
		for _, p := range ps {
			checkPath(t, g, p, 0, 3)
			lens = append(lens, len(p))
		}
		if !slices.Equal(lens, want) {
			t.Errorf("K=%d: lengths %v, want %v", k, lens, want)
		}
	}
	// Ties are broken by the seed, reproducibly.
	a := f.Find(0, 3, PathOptions{K: 2, Seed: 1})
	b := f.Find(0, 3, PathOptions{K: 2, Seed: 1})
	if g.PathString(a[1]) != g.PathString(b[1]) {
		t.Errorf("one seed, two draws")
	}
}

func TestFindTurnBudgetAndAvoid(t *testing.T) {
	g := complete(t, 5)
	f := NewPathFinder(g, everyStep{})
	// A turn cost of 1 per step: budget 1 admits paths of at most 2 hops.
	for _, p := range f.Find(0, 4, PathOptions{K: 20, Budget: 1}) {
		if len(p) > 2 {
			t.Errorf("path %s spends more than the budget", g.PathString(p))
		}
	}
	if n := len(f.Find(0, 4, PathOptions{K: 20, Budget: 1})); n != 4 {
		t.Errorf("%d paths of at most 2 hops in K5, want 4", n)
	}
	// Budget 3 admits every path of K5 up to 4 hops: 1 + 3 + 6 + 6.
	if n := len(f.Find(0, 4, PathOptions{K: 100, Budget: 3})); n != 16 {
		t.Errorf("%d paths of at most 4 hops in K5, want 16", n)
	}
	f = NewPathFinder(g, nil)
	direct := g.Out(0, 3) // a's port 3 goes to e
	if g.Head(direct).Node != 4 {
		t.Fatalf("a port 3 goes to %d", g.Head(direct).Node)
	}
	for _, p := range f.Find(0, 4, PathOptions{K: 20, Avoid: func(a Arc) bool { return a == direct }}) {
		if slices.Contains(p, direct) {
			t.Errorf("path %s takes an avoided arc", g.PathString(p))
		}
	}
}

// everyStep costs 1 per step.
type everyStep struct{}

func (everyStep) Turn(in, out Arc) int { return 1 }

func TestECMPFatTree(t *testing.T) {
	g := mustBuild(t, FatTree{K: 4})
	e := NewECMP(g)
	src, dst := 0, 15 // pods 0 and 3
	edge, _ := g.Lookup("edge0.0")
	if got := e.NextHops(edge, dst); !slices.Equal(got, []uint16{2, 3}) {
		t.Errorf("edge0.0 to h15: %v, want both uplinks", got)
	}
	// Following the tables from h0 reaches h15 in 6 hops for every hash,
	// and the hashes spread over all (k/2)² = 4 core paths.
	cores := map[string]bool{}
	for h := range uint32(64) {
		hash := h * 0x9e3779b9
		u, hops := src, 0
		for u != dst {
			p := e.Port(u, dst, hash)
			if p < 0 {
				t.Fatalf("hash %d: no next hop at %s", h, g.Nodes[u].Name)
			}
			u = g.Head(g.Out(u, p)).Node
			if strings.HasPrefix(g.Nodes[u].Name, "core") {
				cores[g.Nodes[u].Name] = true
			}
			hops++
		}
		if hops != 6 {
			t.Errorf("hash %d: %d hops", h, hops)
		}
	}
	if len(cores) != 4 {
		t.Errorf("flows crossed cores %v, want all 4", cores)
	}
}

func TestRouteTables(t *testing.T) {
	g := mustBuild(t, Expander{ToRs: 10, Degree: 4, Hosts: 1, Seed: 3})
	lay := ToRLayout{ToRs: 10, Hosts: 1, FabricPorts: 4}
	var tors []int
	for i := range 10 {
		tors = append(tors, lay.ToR(i))
	}
	r := NewRoutes(g, tors, 0, nil, func(f *PathFinder, s, d int) []Path { return f.Find(s, d, PathOptions{K: 4, Seed: 9}) })
	one := NewRoutes(g, tors, 1, nil, func(f *PathFinder, s, d int) []Path { return f.Find(s, d, PathOptions{K: 4, Seed: 9}) })
	r.Pairs(func(s, d int, paths []Path) {
		for i, p := range one.Between(s, d) {
			if !slices.Equal(p, paths[i]) {
				t.Fatalf("%s to %s: path %d differs between 1 worker and several", g.Nodes[s].Name, g.Nodes[d].Name, i)
			}
		}
	})
	tables, err := r.Tables(g)
	if err != nil {
		t.Fatal(err)
	}
	r.Pairs(func(s, d int, paths []Path) {
		if len(paths) != 4 {
			t.Errorf("%s to %s: %d paths", g.Nodes[s].Name, g.Nodes[d].Name, len(paths))
		}
		for _, p := range paths {
			checkPath(t, g, p, s, d)
		}
		for h := range uint32(16) {
			hash := h * 0x3c6ef372
			want := paths[PathIndex(hash, len(paths))]
			u, i := s, 0
			for u != d {
				port, ok := tables[u].Port(s, d, hash)
				if !ok || i >= len(want) || g.Out(u, port) != want[i] {
					t.Fatalf("%s to %s hash %x: table leaves %s by %d, path is %s", g.Nodes[s].Name, g.Nodes[d].Name, hash, g.Nodes[u].Name, port, g.PathString(want))
				}
				u = g.Head(want[i]).Node
				i++
			}
		}
	})
}

// A node given only its own rows (PickPort) or its table's entries
// (NewTable of Entries) chooses as the whole route set does.
func TestNodeTables(t *testing.T) {
	g := mustBuild(t, LeafSpine{Leaves: 4, Spines: 2, HostsPerLeaf: 4})
	e := NewECMP(g)
	for u := range g.Nodes {
		for _, d := range g.Servers() {
			rows := append([]uint16(nil), e.NextHops(u, d)...)
			for h := range uint32(32) {
				hash := h * 0x9e3779b9
				if got, want := PickPort(u, rows, hash), e.Port(u, d, hash); got != want {
					t.Fatalf("%s to h%d hash %x: PickPort %d, Port %d", g.Nodes[u].Name, d, hash, got, want)
				}
			}
		}
	}
	x := mustBuild(t, Expander{ToRs: 8, Degree: 3, Hosts: 2, Seed: 1})
	lay := ToRLayout{ToRs: 8, Hosts: 2, FabricPorts: 3}
	var tors []int
	for i := range 8 {
		tors = append(tors, lay.ToR(i))
	}
	r := NewRoutes(x, tors, 1, nil, func(f *PathFinder, s, d int) []Path { return f.Find(s, d, PathOptions{K: 3, Seed: 1}) })
	tables, err := r.Tables(x)
	if err != nil {
		t.Fatal(err)
	}
	for u, tb := range tables {
		back, err := NewTable(tb.Entries())
		if err != nil {
			t.Fatal(err)
		}
		if back.Len() != tb.Len() {
			t.Fatalf("%s: %d pairs back, %d given", x.Nodes[u].Name, back.Len(), tb.Len())
		}
		r.Pairs(func(s, d int, _ []Path) {
			for h := range uint32(8) {
				p1, ok1 := tb.Port(s, d, h*0x3c6ef372)
				p2, ok2 := back.Port(s, d, h*0x3c6ef372)
				if p1 != p2 || ok1 != ok2 {
					t.Fatalf("%s %d->%d: %d %v back, %d %v given", x.Nodes[u].Name, s, d, p2, ok2, p1, ok1)
				}
			}
		})
	}
	if _, err := NewTable([]TableEntry{{Src: 1, Dst: 2, Ports: []int16{0}}, {Src: 1, Dst: 2, Ports: []int16{1}}}); err == nil {
		t.Error("a pair given twice: no error")
	}
	if _, err := NewTable([]TableEntry{{Src: 1, Dst: 2}}); err == nil {
		t.Error("a pair without paths: no error")
	}
}
