package lab

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// A graph fabric's plan is its graph: a namespace per node, a veth per
// cable named by Graph.PortName with the fabric's MACs, each cable at its
// capacity x the rate, servers at 198.18.0.0 + i, and every node's config
// valid with its share of the tables.
func TestGraphPlan(t *testing.T) {
	for _, c := range []struct {
		fab                      FabricSpec
		servers, switches, links int
		fast                     int // cables faster than the rate
	}{
		{FabricSpec{Kind: TopologyLeafSpine, Leaves: 4, Spines: 2, Hosts: 4}, 16, 6, 16 + 8, 8},
		{FabricSpec{Kind: TopologyFatTree, K: 4}, 16, 20, 48, 0},
		{FabricSpec{Kind: TopologyExpander, ToRs: 8, Degree: 3, Hosts: 2, Seed: 1}, 16, 8, 16 + 12, 0},
		{FabricSpec{Kind: TopologyExpander, ToRs: 8, Degree: 3, Hosts: 2, Seed: 1, Routing: RoutingKSP, Paths: 3}, 16, 8, 16 + 12, 0},
	} {
		t.Run(c.fab.String(), func(t *testing.T) {
			p, err := NewPlan(Spec{Name: "fb", Fabric: &c.fab, RateBps: 100_000_000, RunRoot: "/run/x", BinDir: "/opt/bin", FC: scheme.NamePFC})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Nodes) != c.servers+c.switches || len(p.AppLinks) != c.servers || len(p.Links) != c.links {
				t.Fatalf("%d nodes, %d app links, %d links; want %d, %d, %d", len(p.Nodes), len(p.AppLinks), len(p.Links),
					c.servers+c.switches, c.servers, c.links)
			}
			g := p.Graph
			for i, n := range p.Nodes {
				if n.Name != g.Nodes[i].Name || n.Namespace != "fb-"+n.Name || (i < c.servers) != (n.Kind == KindServer) {
					t.Fatalf("node %d: %s %s %s", i, n.Name, n.Namespace, n.Kind)
				}
				_, node, err := n.Config.Validate()
				if err != nil {
					t.Fatalf("%s: %v", n.Name, err)
				}
				if _, err := scheme.New(&n.Config, scheme.Place{Node: node}); err != nil {
					t.Fatalf("%s: %v", n.Name, err)
				}
				f := n.Config.Fabric
				if f == nil || f.Index != i || f.Servers != c.servers || len(f.Ports) != len(g.Nodes[i].Ports) {
					t.Fatalf("%s: fabric %+v", n.Name, f)
				}
				if n.Kind == KindSwitch && (len(f.ECMP) != c.servers || (c.fab.Routing == RoutingKSP) != (f.Routing == config.RoutingPaths)) {
					t.Fatalf("%s: routing %s with %d ECMP rows", n.Name, f.Routing, len(f.ECMP))
				}
			}
			fast := 0
			for i, l := range p.Links {
				gl := g.Links[i]
				a, b := g.Nodes[gl.A.Node].Name, g.Nodes[gl.B.Node].Name
				if l.A.Node != a || l.B.Node != b || l.A.Ifname != g.PortName(gl.A.Node, gl.A.Port) || l.B.Ifname != g.PortName(gl.B.Node, gl.B.Port) {
					t.Fatalf("link %d: %s, graph %s-%s", i, l, a, b)
				}
				if l.A.MAC.String() != config.FabricMAC(g, gl.A.Node, gl.A.Port).String() {
					t.Fatalf("link %s: MAC %v", l, l.A.MAC)
				}
				na, _ := p.Node(a)
				nb, _ := p.Node(b)
				ra, rb := na.Config.PortRate(l.A.Ifname), nb.Config.PortRate(l.B.Ifname)
				if want := uint64(gl.Capacity * 100_000_000); ra != want || rb != want {
					t.Fatalf("link %s: rates %d and %d, want capacity %g x 100M", l, ra, rb, gl.Capacity)
				}
				if ra > 100_000_000 {
					fast++
				}
			}
			if fast != c.fast {
				t.Errorf("%d cables faster than the rate, want %d", fast, c.fast)
			}
			for i, a := range p.AppLinks {
				if a.A.Addr.Addr() != bcube.ServerIP(i) || a.A.Node != g.Nodes[i].Name {
					t.Fatalf("server %d: %s at %v", i, a.A.Node, a.A.Addr)
				}
			}
		})
	}
}

// Bad parameters of a graph fabric are one error each, naming what is
// wrong, before anything is planned.
func TestGraphPlanBad(t *testing.T) {
	base := func(f FabricSpec) Spec {
		return Spec{Name: "fb", Fabric: &f, RateBps: 100_000_000, RunRoot: "/run/x", BinDir: "/opt/bin"}
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{base(FabricSpec{Kind: TopologyExpander, ToRs: 7, Degree: 3, Hosts: 2}), "tors × degree must be even"},
		{base(FabricSpec{Kind: TopologyLeafSpine, Leaves: 1, Spines: 2, Hosts: 4}), "leafspine leaves = 1"},
		{base(FabricSpec{Kind: TopologyFatTree, K: 3}), "fattree k = 3"},
		{base(FabricSpec{Kind: TopologyFatTree, K: 4, Hosts: 2}), "fattree takes --k, not --hosts"},
		{base(FabricSpec{Kind: TopologyLeafSpine, Leaves: 4, Spines: 2, Hosts: 4, Routing: "spf"}), `routing "spf"`},
		{base(FabricSpec{Kind: TopologyLeafSpine, Leaves: 4, Spines: 2, Hosts: 4, Paths: 2}), "paths 2: only routing by paths (ksp) takes"},
		{base(FabricSpec{Kind: TopologyFatTree, K: 12}), "is too large: 432 servers + 180 switches"},
		{func() Spec { s := base(FabricSpec{Kind: TopologyFatTree, K: 4}); s.FC = scheme.NamePortFC; return s }(), "fc portfc: its queues follow BCube's relays; on fattree want none, pfc, bfc, ici, ci, ideal-fq or sfq"},
		{func() Spec { s := base(FabricSpec{Kind: TopologyFatTree, K: 4}); s.LevelOrder = "ate"; return s }(), "level-order ate: a level order is BCube's"},
		{func() Spec {
			s := base(FabricSpec{Kind: TopologyFatTree, K: 4})
			s.Rates = []uint64{1e8, 2e8}
			return s
		}(), "rates: per-level rates are BCube's"},
		{func() Spec { s := base(FabricSpec{Kind: TopologyFatTree, K: 4}); s.N = 4; return s }(), "n and k are BCube's"},
		{base(FabricSpec{Kind: "torus"}), `topology "torus"`},
	} {
		_, err := NewPlan(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%s: %v, want one line with %q", c.spec.Fabric, err, c.want)
		}
		if c.spec.Fabric.Kind == TopologyExpander && !errors.Is(err, topo.ErrInvalid) {
			t.Errorf("%s: %v does not wrap topo.ErrInvalid", c.spec.Fabric, err)
		}
	}
}

// The peers of a graph fabric's ports, as status and captures name them.
func TestGraphPeers(t *testing.T) {
	s := Spec{Fabric: &FabricSpec{Kind: TopologyLeafSpine, Leaves: 4, Spines: 2, Hosts: 4}}
	peer, err := s.PeerFunc()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][4]string{{"h5", "eth0", "leaf1", "p1"}, {"leaf1", "p5", "spine1", "p1"}, {"spine0", "p3", "leaf3", "p4"}} {
		if p, pp, ok := peer(c[0], c[1]); !ok || p != c[2] || pp != c[3] {
			t.Errorf("%s:%s -> %s:%s %v, want %s:%s", c[0], c[1], p, pp, ok, c[2], c[3])
		}
	}
	if _, _, ok := peer("leaf1", "p6"); ok {
		t.Error("leaf1:p6 has a peer")
	}
	if got := strings.Join(s.NodePorts("leaf0"), ","); got != "p0,p1,p2,p3,p4,p5" {
		t.Errorf("leaf0's ports %s", got)
	}
	if s.Servers() != 16 || s.TopologyText() != "leafspine --leaves 4 --spines 2 --hosts 4" {
		t.Errorf("%d servers, %q", s.Servers(), s.TopologyText())
	}
}

// An FC+ fabric's plan: DF-KSP with two priorities under PFC gives every
// node two lossless priorities and each ToR its down-up turns to rewrite
// at; plain KSP one priority and none; DF-KSP with one priority on the
// loop scenario leaves no pair unrouted.
func TestGraphPlanFCPlus(t *testing.T) {
	for _, c := range []struct {
		routing  string
		lossless int
	}{{RoutingKSP, 0}, {RoutingDFKSP1, 0}, {RoutingDFKSP2, 2}, {RoutingFC, 0}} {
		f := FabricSpec{Kind: TopologyFCPlus, Scenario: "fcplus-loop", Routing: c.routing}
		p, err := NewPlan(Spec{Name: "fb", Fabric: &f, RateBps: 100_000_000, RunRoot: "/run/x", BinDir: "/opt/bin", FC: scheme.NamePFC})
		if err != nil {
			t.Fatalf("%s: %v", c.routing, err)
		}
		rewrites := 0
		for _, n := range p.Nodes {
			if n.Config.Fabric.Lossless != c.lossless {
				t.Fatalf("%s: %s has %d lossless priorities, want %d", c.routing, n.Name, n.Config.Fabric.Lossless, c.lossless)
			}
			rewrites += len(n.Config.Fabric.Rewrites)
			if _, _, err := n.Config.Validate(); err != nil {
				t.Fatal(err)
			}
		}
		if (rewrites > 0) != (c.lossless == 2) {
			t.Errorf("%s: %d rewrites", c.routing, rewrites)
		}
		if th := scheme.PFCThresholds(&p.Nodes[len(p.AppLinks)].Config, false); (th.Lossless == 0b11000) != (c.lossless == 2) || th.Lossless&(1<<3) == 0 {
			t.Errorf("%s: lossless priorities %08b", c.routing, th.Lossless)
		}
	}
	f := FabricSpec{Kind: TopologyFCPlus, Scenario: "fcplus-loop", Routing: RoutingDFKSP1, Hosts: 3}
	if _, err := NewPlan(Spec{Name: "fb", Fabric: &f, RunRoot: "/run/x", BinDir: "/opt/bin"}); err == nil || !strings.Contains(err.Error(), "fcplus takes --scenario") {
		t.Errorf("a scenario with --hosts: %v", err)
	}
}

// With several workers, a graph fabric's racks (a ToR and its servers)
// each go whole to one worker.
func TestGraphPlanWorkers(t *testing.T) {
	f := FabricSpec{Kind: TopologyFatTree, K: 4}
	p, err := NewPlan(Spec{Name: "fb", Fabric: &f, RateBps: 100_000_000, RunRoot: "/run/x", BinDir: "/opt/bin", Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Workers) != 3 {
		t.Fatalf("%d workers", len(p.Workers))
	}
	for _, s := range p.Graph.Servers() {
		at, _ := p.Graph.Attachment(s)
		if p.Nodes[s].Worker != p.Nodes[at.Node].Worker {
			t.Errorf("%s on worker %d, its %s on %d", p.Nodes[s].Name, p.Nodes[s].Worker, p.Nodes[at.Node].Name, p.Nodes[at.Node].Worker)
		}
	}
	for _, w := range p.Workers {
		if len(w.Nodes) < 8 || len(w.Nodes) > 16 {
			t.Errorf("%s hosts %d of 36 nodes", w.Name, len(w.Nodes))
		}
	}
}

// A graph fabric's cables take overrides as BCube's do (a lab file's
// links): both ends get the rate, loss and state; a bad endpoint or a
// cable overridden twice is one error.
func TestGraphLinkOverrides(t *testing.T) {
	loss := 10_000
	f := FabricSpec{Kind: TopologyLeafSpine, Leaves: 4, Spines: 2, Hosts: 4}
	s := Spec{Name: "fb", Fabric: &f, RateBps: 100_000_000, RunRoot: "/run/x", BinDir: "/opt/bin",
		Links: []LinkSpec{{Endpoints: []string{"leaf0:p4"}, LossPPM: &loss}, {Endpoints: []string{"spine1:p3", "leaf3:p5"}, Down: true, RateBps: 50_000_000}}}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		node, port string
		rate       uint64
		loss       int
		down       bool
	}{
		{"leaf0", "p4", 200_000_000, 10_000, false}, {"spine0", "p0", 200_000_000, 10_000, false},
		{"leaf3", "p5", 50_000_000, 0, true}, {"spine1", "p3", 50_000_000, 0, true},
		{"leaf0", "p5", 200_000_000, 0, false}, {"h0", "eth0", 100_000_000, 0, false},
	} {
		n, _ := p.Node(c.node)
		loss, down := n.Config.PortImpairment(c.port)
		if r := n.Config.PortRate(c.port); r != c.rate || loss != c.loss || down != c.down {
			t.Errorf("%s:%s: rate %d loss %d down %v, want %d %d %v", c.node, c.port, r, loss, down, c.rate, c.loss, c.down)
		}
	}
	for _, bad := range []struct {
		links []LinkSpec
		want  string
	}{
		{[]LinkSpec{{Endpoints: []string{"leaf0:p9"}}}, `link endpoint "leaf0:p9": want node:port of a fabric port of leafspine`},
		{[]LinkSpec{{Endpoints: []string{"leaf0:p4", "spine1:p0"}}}, "is cabled to spine0:p0, not to spine1:p0"},
		{[]LinkSpec{{Endpoints: []string{"leaf0:p4"}}, {Endpoints: []string{"spine0:p0"}}}, "is overridden twice"},
	} {
		s.Links = bad.links
		if _, err := NewPlan(s); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want %q", bad.links, err, bad.want)
		}
	}
}

// A graph fabric's ideal path: a shortest one, each cable at its rate.
func TestGraphIdealPath(t *testing.T) {
	f := FabricSpec{Kind: TopologyLeafSpine, Leaves: 4, Spines: 2, Hosts: 4, Oversubscription: 4}
	s := Spec{Fabric: &f, RateBps: 100_000_000}
	g, err := f.Graph()
	if err != nil {
		t.Fatal(err)
	}
	path := graphIdealPath(s, g)
	if got := path(0, 3); len(got) != 2 || got[0] != 100_000_000 || got[1] != 100_000_000 {
		t.Errorf("h0 -> h3 (one leaf): %v", got)
	}
	if got := path(0, 15); len(got) != 4 || got[1] != 50_000_000 || got[2] != 50_000_000 || got[3] != 100_000_000 {
		t.Errorf("h0 -> h15 (across the spines, uplinks 4/(2x4) = 0.5): %v", got)
	}
}

// Ideal-FQ's and SFQ's nodes have all of their UMEM as buffer, on a
// graph fabric and on BCube; other schemes keep the spec's buffer.
func TestUnboundedBuffer(t *testing.T) {
	fab := FabricSpec{Kind: TopologyLeafSpine, Leaves: 2, Spines: 1, Hosts: 4}
	for _, fc := range []string{scheme.NameIdealFQ, scheme.NameSFQ, scheme.NamePFC} {
		for _, s := range []Spec{
			{Name: "fb", Fabric: &fab, RateBps: 100_000_000, RunRoot: "/run/x", BinDir: "/opt/bin", FC: fc, BufferBytes: 1 << 20},
			{Name: "fb", N: 4, K: 1, RateBps: 100_000_000, RunRoot: "/run/x", BinDir: "/opt/bin", FC: fc, BufferBytes: 1 << 20},
		} {
			p, err := NewPlan(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range p.Nodes {
				c := n.Config
				want := 1 << 20
				if scheme.Unbounded(fc) {
					want = c.FramesPerPort * c.FrameSize * (len(c.FabricPorts()) + 1)
				}
				if c.BufferBytes != want || want < 1<<20 {
					t.Fatalf("%s %s: buffer %d, want %d", fc, n.Name, c.BufferBytes, want)
				}
			}
		}
	}
}
