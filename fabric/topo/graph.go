package topo

import (
	"fmt"
	"strconv"
)

// Kind says whether a node is a server or a switch.
type Kind uint8

const (
	Server Kind = iota + 1
	Switch
)

func (k Kind) String() string {
	switch k {
	case Server:
		return "server"
	case Switch:
		return "switch"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Node is a server or a switch. Ports[p] is the cable on port p.
type Node struct {
	Name  string
	Kind  Kind
	Ports []int
}

// End is one end of a cable: a node and one of its ports.
type End struct{ Node, Port int }

// Link is a full-duplex cable between two ports. Capacity is per
// direction, in units of a standard link.
type Link struct {
	A, B     End
	Capacity float64
}

// Arc is one direction of a cable: 2·link for A to B, 2·link+1 for B to
// A. Arcs index per-direction state (loads, lengths, channel
// dependencies) in slices of length Graph.Arcs().
type Arc int32

// Link is the cable an arc runs on.
func (a Arc) Link() int { return int(a >> 1) }

// Reverse is the other direction of the same cable.
func (a Arc) Reverse() Arc { return a ^ 1 }

// Graph is a validated fabric. Build one with a generator or a Builder;
// it is immutable afterwards and safe for concurrent reads.
type Graph struct {
	Name    string
	Nodes   []Node
	Links   []Link
	servers []int
	byName  map[string]int
	out     [][]Arc // out[node][port], the arc leaving by that port
}

// Arcs is the number of arcs, 2·len(Links).
func (g *Graph) Arcs() int { return 2 * len(g.Links) }

// Tail is where an arc leaves from.
func (g *Graph) Tail(a Arc) End {
	l := &g.Links[a.Link()]
	if a&1 == 0 {
		return l.A
	}
	return l.B
}

// Head is where an arc arrives.
func (g *Graph) Head(a Arc) End {
	l := &g.Links[a.Link()]
	if a&1 == 0 {
		return l.B
	}
	return l.A
}

// Out is the arc leaving node through port.
func (g *Graph) Out(node, port int) Arc { return g.out[node][port] }

// Capacity is an arc's capacity.
func (g *Graph) Capacity(a Arc) float64 { return g.Links[a.Link()].Capacity }

// Servers lists the server nodes in index order.
func (g *Graph) Servers() []int { return g.servers }

// Lookup finds a node by name.
func (g *Graph) Lookup(name string) (int, bool) {
	i, ok := g.byName[name]
	return i, ok
}

// PortName is the interface name of a node's port: eth<j> on a server,
// p<p> on a switch.
func (g *Graph) PortName(node, port int) string {
	if g.Nodes[node].Kind == Server {
		return "eth" + strconv.Itoa(port)
	}
	return "p" + strconv.Itoa(port)
}

// Attachment is the switch and switch port a single-homed server hangs
// off; ok is false for a switch or a server with several ports.
func (g *Graph) Attachment(server int) (End, bool) {
	n := &g.Nodes[server]
	if n.Kind != Server || len(n.Ports) != 1 {
		return End{}, false
	}
	return g.Head(g.Out(server, 0)), true
}

// ArcString names an arc as tail:port->head:port.
func (g *Graph) ArcString(a Arc) string {
	t, h := g.Tail(a), g.Head(a)
	return fmt.Sprintf("%s:%s->%s:%s", g.Nodes[t.Node].Name, g.PortName(t.Node, t.Port),
		g.Nodes[h.Node].Name, g.PortName(h.Node, h.Port))
}

// Connected reports whether every node reaches every other.
func (g *Graph) Connected() bool {
	if len(g.Nodes) == 0 {
		return true
	}
	d := g.Distances(0)
	for _, x := range d {
		if x < 0 {
			return false
		}
	}
	return true
}

// Distances are the hop counts from node src to every node (-1 where
// unreachable), by breadth-first search.
func (g *Graph) Distances(src int) []int {
	d := make([]int, len(g.Nodes))
	for i := range d {
		d[i] = -1
	}
	d[src] = 0
	q := []int{src}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for p := range g.Nodes[u].Ports {
			v := g.Head(g.Out(u, p)).Node
			if d[v] < 0 {
				d[v] = d[u] + 1
				q = append(q, v)
			}
		}
	}
	return d
}
