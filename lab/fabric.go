package lab

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// Fabrics given as a graph (package topo) rather than by BCube's digits:
// switches cabled to each other, single-homed servers that never relay.
// A lab of one is planned from its topo.Graph: a namespace per node, a
// veth per cable, interfaces named by Graph.PortName, each cable's rate
// its capacity x the lab's rate, servers h<i> at 198.18.0.0 + i as in
// BCube, and each switch's share of the routing tables computed here,
// once, and written into its config (config.Fabric).

// Topology kinds given as a graph.
const (
	TopologyLeafSpine = "leafspine"
	TopologyFatTree   = "fattree"
	TopologyExpander  = "expander"
	// TopologyFCPlus is an FC+ fabric (package fcplus): ToRs split into
	// virtual switches in layers, wired layer to layer.
	TopologyFCPlus = "fcplus"
)

// GraphKinds are the topology kinds given as a graph, in the order help
// lists them.
var GraphKinds = []string{TopologyLeafSpine, TopologyFatTree, TopologyExpander, TopologyFCPlus}

// Routing modes of a graph fabric's switches (FabricSpec.Routing).
const (
	// RoutingECMP: equal-cost next hops over shortest paths, one per flow
	// by its hash (the default).
	RoutingECMP = "ecmp"
	// RoutingKSP: the K shortest paths between every pair of ToRs (the
	// switches the servers hang off), one per flow by its hash.
	RoutingKSP = "ksp"
	// DefaultPaths is K under RoutingKSP unless told otherwise.
	DefaultPaths = 4
	// An FC+ fabric's routings (package fcplus): DF-KSP with one or two
	// lossless priorities, FC's edge-disjoint up-down paths; ksp there is
	// fcplus's plain KSP.
	RoutingDFKSP1 = string(fcplus.DFKSP1)
	RoutingDFKSP2 = string(fcplus.DFKSP2)
	RoutingFC     = string(fcplus.FC)
)

// FabricSpec is a fabric given as a graph: its kind and the parameters
// of that kind's generator, and how its switches route.
type FabricSpec struct {
	Kind string `json:"kind"`
	// leafspine: Leaves leaf switches of Hosts servers each, each cabled
	// to every one of Spines spines, uplinks of Hosts / (Spines x
	// Oversubscription) times the lab's rate (Oversubscription 0: 1).
	Leaves           int     `json:"leaves,omitempty"`
	Spines           int     `json:"spines,omitempty"`
	Oversubscription float64 `json:"oversubscription,omitempty"`
	// fattree: the k-ary fat-tree (k even: k^3/4 servers, 5k^2/4 switches).
	K int `json:"k,omitempty"`
	// expander: ToRs top-of-rack switches of Hosts servers each, cabled
	// as a random Degree-regular graph drawn from Seed.
	ToRs   int    `json:"tors,omitempty"`
	Degree int    `json:"degree,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
	// fcplus: ToRs of Ports fabric ports, each split into Virtual
	// virtual switches, Hosts servers each, wired from Seed; or Scenario,
	// a named one (fcplus.LookupScenario: its fabric and its paths' K
	// and seed).
	Ports    int    `json:"ports,omitempty"`
	Virtual  int    `json:"virtual,omitempty"`
	Scenario string `json:"scenario,omitempty"`
	// Hosts is the servers per leaf (leafspine) or per ToR (expander,
	// fcplus).
	Hosts int `json:"hosts,omitempty"`

	// Routing is RoutingECMP ("": the default) or RoutingKSP, with Paths
	// paths per pair of ToRs (0: DefaultPaths; ties among paths of one
	// length drawn from Seed).
	Routing string `json:"routing,omitempty"`
	Paths   int    `json:"paths,omitempty"`
}

// Graph builds the fabric's graph; a bad parameter is one
// *topo.ParamError naming it as lab up's flag does.
func (f FabricSpec) Graph() (*topo.Graph, error) {
	switch f.Kind {
	case TopologyLeafSpine:
		return topo.LeafSpine{Leaves: f.Leaves, Spines: f.Spines, HostsPerLeaf: f.Hosts, Oversubscription: f.Oversubscription}.Build()
	case TopologyFatTree:
		return topo.FatTree{K: f.K}.Build()
	case TopologyExpander:
		return topo.Expander{ToRs: f.ToRs, Degree: f.Degree, Hosts: f.Hosts, Seed: f.Seed}.Build()
	case TopologyFCPlus:
		fab, _, err := f.fcplus()
		if err != nil {
			return nil, err
		}
		return fab.Graph, nil
	}
	return nil, &ChoiceError{Key: "topology", Value: f.Kind, Want: GraphKinds}
}

// fcplus builds an FC+ fabric and says how to route it.
func (f FabricSpec) fcplus() (*fcplus.Fabric, fcplus.RouteOptions, error) {
	p := fcplus.Params{ToRs: f.ToRs, Ports: f.Ports, Virtual: f.Virtual, Hosts: f.Hosts, Seed: f.Seed}
	ro := fcplus.RouteOptions{K: f.paths(), Seed: f.Seed, Workers: 1}
	if f.Scenario != "" {
		sc, err := fcplus.LookupScenario(f.Scenario)
		if err != nil {
			return nil, ro, err
		}
		p, ro = sc.Params, sc.Routing
		ro.Workers = 1
		if f.Paths != 0 {
			ro.K = f.Paths
		}
	}
	fab, err := p.Build()
	return fab, ro, err
}

// params are the parameters the kind reads, by flag name, and those it
// does not: a parameter set that its kind ignores is an error.
func (f FabricSpec) params() (used, unused []string) {
	all := []struct {
		name  string
		set   bool
		kinds []string
	}{
		{"leaves", f.Leaves != 0, []string{TopologyLeafSpine}},
		{"spines", f.Spines != 0, []string{TopologyLeafSpine}},
		{"oversubscription", f.Oversubscription != 0, []string{TopologyLeafSpine}},
		{"k", f.K != 0, []string{TopologyFatTree}},
		{"tors", f.ToRs != 0, fcKinds(f, TopologyExpander)},
		{"degree", f.Degree != 0, []string{TopologyExpander}},
		{"ports", f.Ports != 0, fcKinds(f)},
		{"virtual", f.Virtual != 0, fcKinds(f)},
		{"seed", f.Seed != 0, seedKinds(f)},
		{"hosts", f.Hosts != 0, fcKinds(f, TopologyLeafSpine, TopologyExpander)},
		{"scenario", f.Scenario != "", []string{TopologyFCPlus}},
	}
	for _, p := range all {
		switch {
		case slices.Contains(p.kinds, f.Kind):
			used = append(used, p.name)
		case p.set:
			unused = append(unused, p.name)
		}
	}
	return used, unused
}

// seedKinds are the kinds that read a seed: the expander's and FC+'s
// cabling (not a named scenario's), and any kind's ksp ties.
func seedKinds(f FabricSpec) []string {
	if f.routing() == RoutingKSP && f.Scenario == "" {
		return GraphKinds
	}
	return fcKinds(f, TopologyExpander)
}

// fcKinds are kinds and fcplus, unless f is a named scenario, which
// fixes FC+'s parameters.
func fcKinds(f FabricSpec, kinds ...string) []string {
	if f.Scenario == "" {
		kinds = append(kinds, TopologyFCPlus)
	}
	return kinds
}

// String is the fabric as lab up names it: "leafspine --leaves 4
// --spines 2 --hosts 4".
func (f FabricSpec) String() string {
	parts := []string{f.Kind}
	used, _ := f.params()
	for _, p := range used {
		var v string
		switch p {
		case "leaves":
			v = fmt.Sprint(f.Leaves)
		case "spines":
			v = fmt.Sprint(f.Spines)
		case "oversubscription":
			if f.Oversubscription == 0 || f.Oversubscription == 1 {
				continue
			}
			v = fmt.Sprint(f.Oversubscription)
		case "k":
			v = fmt.Sprint(f.K)
		case "tors":
			v = fmt.Sprint(f.ToRs)
		case "degree":
			v = fmt.Sprint(f.Degree)
		case "seed":
			v = fmt.Sprint(f.Seed)
		case "hosts":
			v = fmt.Sprint(f.Hosts)
		case "ports":
			v = fmt.Sprint(f.Ports)
		case "virtual":
			v = fmt.Sprint(f.Virtual)
		case "scenario":
			if f.Scenario == "" {
				continue
			}
			v = f.Scenario
		}
		parts = append(parts, "--"+p+" "+v)
	}
	if r := f.routing(); r != RoutingECMP {
		parts = append(parts, "--routing "+r)
		if f.Paths != 0 || f.Scenario == "" {
			parts = append(parts, fmt.Sprintf("--paths %d", f.paths()))
		}
	}
	return strings.Join(parts, " ")
}

func (f FabricSpec) routing() string {
	if f.Routing == "" {
		return RoutingECMP
	}
	return f.Routing
}

func (f FabricSpec) paths() int {
	if f.Paths == 0 {
		return DefaultPaths
	}
	return f.Paths
}

// check checks what the graph's generator does not: a parameter its
// kind ignores, the routing.
func (f FabricSpec) check() error {
	if !slices.Contains(GraphKinds, f.Kind) {
		return &ChoiceError{Key: "topology", Value: f.Kind, Want: append([]string{TopologyBCube, TopologyRailOnly}, GraphKinds...)}
	}
	if _, unused := f.params(); len(unused) > 0 {
		used, _ := f.params()
		return fmt.Errorf("%s takes %s, not %s", f.Kind, flagList(used), flagList(unused))
	}
	routings := []string{RoutingECMP, RoutingKSP}
	if f.Kind == TopologyFCPlus {
		routings = append(routings, RoutingDFKSP1, RoutingDFKSP2, RoutingFC)
	}
	switch r := f.routing(); {
	case !slices.Contains(routings, r):
		return &ChoiceError{Key: "routing", Value: f.Routing, Want: routings}
	case r == RoutingECMP && f.Paths != 0:
		return fmt.Errorf("paths %d: only routing by paths (%s) takes a number of paths", f.Paths, orList(routings[1:]))
	case f.Paths < 0 || f.Paths > 64:
		return fmt.Errorf("paths %d: want 1..64 paths per pair of ToRs", f.Paths)
	}
	return nil
}

// flagList is "--a, --b or --c".
func flagList(names []string) string {
	var out []string
	for _, n := range names {
		out = append(out, "--"+n)
	}
	return orList(out)
}

// Graph is the lab's fabric as a graph: a fabric given as one, or BCube
// laid out by package bcube's numbering (topo.BCube; Rates give its
// levels their capacities relative to the slowest).
func (s Spec) Graph() (*topo.Graph, error) {
	if s.Fabric != nil {
		return s.Fabric.Graph()
	}
	return topo.BCube{N: s.N, K: s.K}.Build()
}

// TopologyText names the lab's fabric: BCube(4,1), or a graph fabric as
// lab up takes it.
func (s Spec) TopologyText() string {
	if s.Fabric != nil {
		return s.Fabric.String()
	}
	return fmt.Sprintf("BCube(%d,%d)", s.N, s.K)
}

// Servers is how many servers the lab's fabric has (0 when its spec
// does not build).
func (s Spec) Servers() int {
	if s.Fabric != nil {
		g, err := s.Fabric.Graph()
		if err != nil {
			return 0
		}
		return len(g.Servers())
	}
	v, _, _ := nodeCount(s.N, s.K)
	return v
}

// checkGraph validates a spec of a graph fabric (defaults applied) and
// returns its graph.
func (s Spec) checkGraph() (*topo.Graph, error) {
	if err := checkName(s.Name); err != nil {
		return nil, err
	}
	f := s.Fabric
	var errs []error
	if err := f.check(); err != nil {
		return nil, err
	}
	if s.N != 0 || s.K != 0 {
		return nil, fmt.Errorf("%s: n and k are BCube's (fattree's k is the fabric's)", f.Kind)
	}
	if s.MaxNodes < 0 {
		return nil, fmt.Errorf("max nodes %d is negative", s.MaxNodes)
	}
	g, err := f.Graph()
	if err != nil {
		return nil, err
	}
	limit := s.MaxNodes
	if s.Workers == PerNode {
		limit = min(limit, PerNodeMaxNodes)
	}
	if len(g.Nodes) > limit {
		return nil, fmt.Errorf("%s is too large: %d servers + %d switches = %d nodes, the limit is %d (--max-nodes raises it; a daemon process per node is limited to %d)",
			f, len(g.Servers()), len(g.Nodes)-len(g.Servers()), len(g.Nodes), limit, PerNodeMaxNodes)
	}
	if len(s.Rates) > 0 {
		errs = append(errs, fmt.Errorf("rates: per-level rates are BCube's; a %s's cables run at their capacity x --rate", f.Kind))
	}
	if s.LevelOrder != "hash" || s.ATEP != 0 || s.ATECapBytes != 0 {
		errs = append(errs, fmt.Errorf("level-order %s: a level order is BCube's (servers that relay); %s's servers have one port", s.LevelOrder, f.Kind))
	}
	if !slices.Contains(scheme.GraphNames(), or(s.FC, scheme.Default)) {
		errs = append(errs, fmt.Errorf("fc %s: its queues follow BCube's relays; on %s want %s", s.FC, f.Kind, orList(scheme.GraphNames())))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := s.checkLinksBy(func(l LinkSpec) (Endpoint, Endpoint, error) { return graphCable(g, l) }); err != nil {
		return nil, err
	}
	longest := ""
	for _, n := range g.Nodes {
		if len(n.Name) > len(longest) {
			longest = n.Name
		}
	}
	if err := s.checkRun(longest); err != nil {
		return nil, err
	}
	return g, nil
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// graphRoutes computes what the switches of g forward by: ECMP tables,
// and under ksp the K shortest paths between every pair of the ToRs the
// servers hang off.
func (s Spec) graphRoutes(g *topo.Graph) (*config.Routes, error) {
	r := &config.Routes{Mode: config.RoutingECMP, ECMP: topo.NewECMP(g)}
	if s.Fabric.routing() == RoutingECMP {
		return r, nil
	}
	r.Mode = config.RoutingPaths
	var tors []int
	for _, srv := range g.Servers() {
		at, ok := g.Attachment(srv)
		if !ok {
			return nil, fmt.Errorf("%s: server %s is not single-homed", s.Fabric.Kind, g.Nodes[srv].Name)
		}
		r.Ends = append(r.Ends, at.Node)
		if !slices.Contains(tors, at.Node) {
			tors = append(tors, at.Node)
		}
	}
	var rs *topo.Routes
	if s.Fabric.Kind == TopologyFCPlus {
		fab, ro, err := s.Fabric.fcplus()
		if err != nil {
			return nil, err
		}
		routing := fcplus.Routing(s.Fabric.routing())
		if rs, err = fab.Routes(routing, ro); err != nil {
			return nil, err
		}
		if lp := routing.Lossless(); lp > 1 && s.FC == scheme.NamePFC {
			r.Lossless = lp
			for _, pairs := range fab.Rewrites() {
				var rw [][2]int
				for _, pp := range pairs {
					rw = append(rw, [2]int{pp.In, pp.Out})
				}
				r.Rewrites = append(r.Rewrites, rw)
			}
		}
		var missing []string
		rs.Pairs(func(a, b int, p []topo.Path) {
			if len(p) == 0 && len(missing) < 3 {
				missing = append(missing, g.Nodes[a].Name+"->"+g.Nodes[b].Name)
			}
		})
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s: routing %s leaves pairs of ToRs without a path (%s): more --paths, two priorities (dfksp2) or another seed", s.Fabric, routing, strings.Join(missing, ", "))
		}
	} else {
		k, seed := s.Fabric.paths(), s.Fabric.Seed
		rs = topo.NewRoutes(g, tors, 0, nil, func(f *topo.PathFinder, src, dst int) []topo.Path {
			return f.Find(src, dst, topo.PathOptions{K: k, Seed: seed})
		})
	}
	var err error
	if r.Tables, err = rs.Tables(g); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Fabric.Kind, err)
	}
	return r, nil
}

// cableRate is the rate of a cable of capacity c: c x the lab's rate (0:
// unshaped).
func (s Spec) cableRate(c float64) uint64 {
	return uint64(math.Round(c * float64(s.RateBps)))
}

// newGraphPlan resolves a spec of a graph fabric (defaults applied) into
// the plan Up carries out, as NewPlan does for BCube.
func newGraphPlan(s Spec) (*Plan, error) {
	g, err := s.checkGraph()
	if err != nil {
		return nil, err
	}
	if s.FramesPerPort == 0 && len(g.Nodes) > BigFabric {
		s.FramesPerPort = BigFramesPerPort
	}
	routes, err := s.graphRoutes(g)
	if err != nil {
		return nil, err
	}
	run := filepath.Join(s.RunRoot, s.Name)
	p := &Plan{Spec: s, Graph: g, RunDir: run, StatePath: filepath.Join(run, "state.json"), LogDir: filepath.Join(run, "logs")}
	for u, n := range g.Nodes {
		kind := KindSwitch
		if n.Kind == topo.Server {
			kind = KindServer
		}
		c := s.graphConfig(g, routes, u, filepath.Join(run, n.Name+".sock"))
		if u == 0 || u == len(g.Servers()) { // a server and a switch: the others differ only in their tables
			if err := checkConfig(&c); err != nil {
				return nil, err
			}
		}
		ns := Namespace(s.Name, n.Name)
		log := filepath.Join(p.LogDir, n.Name+".log")
		c.Netns = filepath.Join(netnsDir, ns)
		if s.Workers != PerNode {
			c.Log = log
		}
		p.Nodes = append(p.Nodes, NodePlan{Name: n.Name, Kind: kind, Namespace: ns,
			Binary: filepath.Join(s.BinDir, kind), ConfigPath: filepath.Join(run, n.Name+".json"), LogPath: log, Worker: -1, Config: c})
	}
	end := func(e topo.End) Endpoint {
		n := g.Nodes[e.Node].Name
		return Endpoint{Node: n, Namespace: Namespace(s.Name, n), Ifname: g.PortName(e.Node, e.Port), MAC: config.FabricMAC(g, e.Node, e.Port)}
	}
	for _, l := range g.Links {
		p.Links = append(p.Links, Link{A: end(l.A), B: end(l.B)})
	}
	for _, i := range g.Servers() {
		h := g.Nodes[i].Name
		p.AppLinks = append(p.AppLinks, Link{
			A: Endpoint{Node: h, Namespace: Namespace(s.Name, h), Ifname: bcube.AppIf, MAC: bcube.AppMAC(i),
				Addr: netip.PrefixFrom(bcube.ServerIP(i), bcube.Prefix.Bits())},
			B: Endpoint{Node: h, Namespace: Namespace(s.Name, h), Ifname: bcube.AppPeerIf, MAC: bcube.AppNICMAC(i)},
		})
	}
	p.assignWorkers()
	p.patchCables()
	return p, nil
}

// graphConfig is the config of node u of graph fabric g.
func (s Spec) graphConfig(g *topo.Graph, r *config.Routes, u int, control string) config.Node {
	return s.nodeConfig(g.Nodes[u].Name, control, func(c *config.Node) {
		c.Fabric = config.NewFabric(g, r, u)
		c.RateBps = s.RateBps
		name := g.Nodes[u].Name
		for p := range g.Nodes[u].Ports {
			port := g.PortName(u, p)
			pc := config.PortConfig{Name: port}
			if cap := g.Capacity(g.Out(u, p)); cap != 1 {
				pc.RateBps = s.cableRate(cap)
			}
			for _, l := range s.Links { // a lab file's cables that differ (checkGraph checked them)
				a, b, err := graphCable(g, l)
				if err != nil || !(a.Node == name && a.Ifname == port || b.Node == name && b.Ifname == port) {
					continue
				}
				if l.RateBps != 0 {
					pc.RateBps = l.RateBps
				}
				pc.LossPPM, pc.Down = l.LossPPM, l.Down
			}
			if pc.RateBps != 0 || pc.LossPPM != nil || pc.Down {
				c.Ports = append(c.Ports, pc)
			}
		}
	})
}

// graphCable resolves a cable override's endpoints in graph fabric g.
func graphCable(g *topo.Graph, l LinkSpec) (a, b Endpoint, err error) {
	return l.ends(func(node, port string) (string, string, bool) { return graphPeer(g, node, port) },
		g.Name+", such as h0:eth0 or "+g.Nodes[len(g.Servers())].Name+":p0")
}

// graphPeer is the other end of node's port in a graph fabric.
func graphPeer(g *topo.Graph, node, port string) (peer, peerPort string, ok bool) {
	u, ok := g.Lookup(node)
	if !ok {
		return "", "", false
	}
	for p := range g.Nodes[u].Ports {
		if g.PortName(u, p) == port {
			e := g.Head(g.Out(u, p))
			return g.Nodes[e.Node].Name, g.PortName(e.Node, e.Port), true
		}
	}
	return "", "", false
}

// NodePorts are the fabric ports of node in the lab's fabric (nil for a
// node it does not have).
func (s Spec) NodePorts(node string) []string {
	var out []string
	if s.Fabric != nil {
		g, err := s.Fabric.Graph()
		if err != nil {
			return nil
		}
		u, ok := g.Lookup(node)
		if !ok {
			return nil
		}
		for p := range g.Nodes[u].Ports {
			out = append(out, g.PortName(u, p))
		}
		return out
	}
	t, err := bcube.New(s.N, s.K)
	if err != nil {
		return nil
	}
	nd, err := t.ParseNode(node)
	if err != nil {
		return nil
	}
	if nd.Switch {
		for p := range t.N() {
			out = append(out, bcube.SwitchPort(p))
		}
		return out
	}
	for l := range t.Levels() {
		out = append(out, bcube.HostPort(l))
	}
	return out
}

// ServerTopology is the fabric as its servers route in it: BCube(n,k),
// or for a graph fabric bcube.Star of its servers (one port each,
// nothing relayed).
func (s Spec) ServerTopology() (bcube.Topology, error) {
	if s.Fabric != nil {
		return bcube.Star(s.Servers())
	}
	return bcube.New(s.N, s.K)
}
