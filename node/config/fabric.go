package config

import (
	"errors"
	"fmt"
	"net"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/fabric/topo"
)

// Routing modes of a switch in a fabric given as a graph (Fabric.Routing).
const (
	// RoutingECMP forwards by equal-cost next hops over shortest paths,
	// one chosen per flow by its hash (topo.ECMP).
	RoutingECMP = "ecmp"
	// RoutingPaths forwards along a route set's paths between the ToRs
	// the servers hang off (topo.Routes), one path per flow by its hash.
	RoutingPaths = "paths"
)

// Fabric describes a node of a fabric given as a graph (package topo:
// leaf-spine, fat-tree, expander) rather than by BCube's digits: its
// fabric ports, cabled as the graph says, and, for a switch, its share
// of the routing tables lab computed from the graph at bring-up. Servers
// are single-homed, h0..h<Servers-1> at bcube.ServerIP(i), and never
// relay: a server sees the fabric as bcube.Star(Servers).
type Fabric struct {
	// Topology names the fabric (topo.Graph.Name), for logs.
	Topology string `json:"topology"`
	// Servers is how many servers the fabric has.
	Servers int `json:"servers"`
	// Switch says the node is a switch (else a server).
	Switch bool `json:"switch,omitempty"`
	// Index is the node's index in the graph: ECMP mixes it into a
	// flow's hash (topo.PickPort), so tiers do not all choose alike.
	Index int `json:"index"`
	// Ports are the node's fabric ports in engine order (port p is
	// Ports[p]): interface name, own MAC, and the cable's other end.
	Ports []FabricPort `json:"ports"`

	// Routing is a switch's mode: RoutingECMP or RoutingPaths.
	Routing string `json:"routing,omitempty"`
	// ECMP is a switch's next hops toward each server (index i: server
	// h<i>), the node's rows of topo.ECMP. Every mode delivers by it to
	// the servers of its own rack.
	ECMP [][]uint16 `json:"ecmp,omitempty"`
	// Ends, under RoutingPaths, are the graph node of each server's ToR
	// (index i: server h<i>), and Paths the switch's topo.Table: for
	// each pair of ToRs whose paths cross it, the port of each path.
	Ends  []int             `json:"ends,omitempty"`
	Paths []topo.TableEntry `json:"paths,omitempty"`

	// Lossless is how many lossless priorities data may use (0: one,
	// 802.1Q priority 3). With 2, a switch moves a frame from the first
	// (3) to the second (4) where it takes one of the (in port, out
	// port) steps of Rewrites: FC+'s down-up turns, so each priority's
	// channel dependencies stay acyclic on DF-KSP's paths.
	Lossless int      `json:"lossless,omitempty"`
	Rewrites [][2]int `json:"rewrites,omitempty"`
}

// FabricPort is one fabric port of a node of a graph fabric.
type FabricPort struct {
	Name    string `json:"name"`
	MAC     string `json:"mac"`
	PeerMAC string `json:"peer_mac"`
	// Peer is the other end, node:port.
	Peer string `json:"peer"`
}

// MACs are the port's own MAC and its peer's, parsed (Validate checked
// them).
func (p FabricPort) MACs() (own, peer net.HardwareAddr) {
	own, _ = net.ParseMAC(p.MAC)
	peer, _ = net.ParseMAC(p.PeerMAC)
	return own, peer
}

// PortNames are the fabric's ports' names, in engine order.
func (f *Fabric) PortNames() []string {
	out := make([]string, len(f.Ports))
	for i, p := range f.Ports {
		out[i] = p.Name
	}
	return out
}

// validate checks the fabric section of a node's config.
func (f *Fabric) validate() error {
	isSwitch := f.Switch
	var errs []error
	if f.Servers < 2 || f.Servers > bcube.MaxServers {
		errs = append(errs, fmt.Errorf("fabric servers %d: want 2..%d", f.Servers, bcube.MaxServers))
	}
	if len(f.Ports) == 0 {
		errs = append(errs, errors.New("fabric ports: none"))
	}
	seen := map[string]bool{}
	for _, p := range f.Ports {
		own, err1 := net.ParseMAC(p.MAC)
		peer, err2 := net.ParseMAC(p.PeerMAC)
		switch {
		case p.Name == "" || seen[p.Name]:
			errs = append(errs, fmt.Errorf("fabric port %q: empty or given twice", p.Name))
		case err1 != nil || len(own) != 6 || err2 != nil || len(peer) != 6:
			errs = append(errs, fmt.Errorf("fabric port %s: MACs %q, %q: want two Ethernet MACs", p.Name, p.MAC, p.PeerMAC))
		}
		seen[p.Name] = true
	}
	if f.Lossless < 0 || f.Lossless > 2 {
		errs = append(errs, fmt.Errorf("fabric lossless %d: want 1 or 2 priorities", f.Lossless))
	}
	for _, rw := range f.Rewrites {
		if f.Lossless < 2 || rw[0] < 0 || rw[1] < 0 || rw[0] >= len(f.Ports) || rw[1] >= len(f.Ports) || rw[0] == rw[1] {
			errs = append(errs, fmt.Errorf("fabric rewrite %v: want two distinct ports of %d, with 2 lossless priorities", rw, len(f.Ports)))
			break
		}
	}
	if !isSwitch {
		if len(f.Ports) != 1 {
			errs = append(errs, fmt.Errorf("fabric server with %d ports: a server of a graph fabric has one", len(f.Ports)))
		}
		if f.Routing != "" || f.ECMP != nil || f.Paths != nil {
			errs = append(errs, errors.New("fabric: a server has no routing tables (it never relays)"))
		}
		return errors.Join(errs...)
	}
	if len(f.ECMP) != f.Servers {
		errs = append(errs, fmt.Errorf("fabric ecmp: %d rows for %d servers", len(f.ECMP), f.Servers))
	}
	for d, hops := range f.ECMP {
		for _, p := range hops {
			if int(p) >= len(f.Ports) {
				errs = append(errs, fmt.Errorf("fabric ecmp: h%d by port %d of %d", d, p, len(f.Ports)))
				break
			}
		}
	}
	switch f.Routing {
	case RoutingECMP:
		if f.Ends != nil || f.Paths != nil {
			errs = append(errs, errors.New("fabric: ends and paths need routing paths"))
		}
	case RoutingPaths:
		if len(f.Ends) != f.Servers {
			errs = append(errs, fmt.Errorf("fabric ends: %d for %d servers", len(f.Ends), f.Servers))
		}
		if _, err := topo.NewTable(f.Paths); err != nil {
			errs = append(errs, fmt.Errorf("fabric paths: %w", err))
		}
		for _, e := range f.Paths {
			for _, p := range e.Ports {
				if int(p) >= len(f.Ports) {
					errs = append(errs, fmt.Errorf("fabric paths: %d->%d by port %d of %d", e.Src, e.Dst, p, len(f.Ports)))
					break
				}
			}
		}
	default:
		errs = append(errs, fmt.Errorf("fabric routing %q: want %s or %s", f.Routing, RoutingECMP, RoutingPaths))
	}
	return errors.Join(errs...)
}

// FabricMAC is the MAC of a port of a graph fabric's node: a server's
// port is its BCube MAC (bcube.HostPortMAC), a switch's port p
// 02:21:ss:ss:ss:pp with ss its node index. Locally administered, and
// apart from BCube switches' 02:20 block.
func FabricMAC(g *topo.Graph, node, port int) net.HardwareAddr {
	if g.Nodes[node].Kind == topo.Server {
		return bcube.HostPortMAC(node, port)
	}
	return net.HardwareAddr{0x02, 0x21, byte(node >> 16), byte(node >> 8), byte(node), byte(port)}
}

// Routes are what a graph fabric's switches forward by, computed once
// from the graph: the ECMP tables, and under RoutingPaths the route
// set's tables per node and each server's ToR.
type Routes struct {
	Mode   string
	ECMP   *topo.ECMP
	Tables []topo.Table // by node, RoutingPaths only
	Ends   []int        // by server, RoutingPaths only
	// Lossless priorities (0: one), and with 2 the (in port, out port)
	// steps of each node that move a frame to the second.
	Lossless int
	Rewrites [][][2]int // by node
}

// NewFabric is the fabric section of node's config in g, routed by r.
func NewFabric(g *topo.Graph, r *Routes, node int) *Fabric {
	n := &g.Nodes[node]
	f := &Fabric{Topology: g.Name, Servers: len(g.Servers()), Index: node, Switch: n.Kind == topo.Switch, Lossless: r.Lossless}
	for p := range n.Ports {
		peer := g.Head(g.Out(node, p))
		f.Ports = append(f.Ports, FabricPort{
			Name:    g.PortName(node, p),
			MAC:     FabricMAC(g, node, p).String(),
			PeerMAC: FabricMAC(g, peer.Node, peer.Port).String(),
			Peer:    g.Nodes[peer.Node].Name + ":" + g.PortName(peer.Node, peer.Port),
		})
	}
	if !f.Switch {
		return f
	}
	f.Routing = r.Mode
	for _, s := range g.Servers() {
		f.ECMP = append(f.ECMP, append([]uint16{}, r.ECMP.NextHops(node, s)...))
	}
	if r.Mode == RoutingPaths {
		f.Ends = append([]int(nil), r.Ends...)
		f.Paths = r.Tables[node].Entries()
	}
	if r.Lossless > 1 && node < len(r.Rewrites) {
		f.Rewrites = append([][2]int(nil), r.Rewrites[node]...)
	}
	return f
}
