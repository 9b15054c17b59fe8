package topo

import "fmt"

// ToRLayout is the layout of a fabric of top-of-rack switches cabled to
// each other (an expander, an FC+ fabric): servers h<i> first, then
// ToRs tor<t>. ToR t has ports 0..Hosts-1 to its servers
// h<t·Hosts+x>, and after them FabricPorts ports to other ToRs, which
// the cables name by their fabric index 0..FabricPorts-1.
type ToRLayout struct {
	ToRs, Hosts, FabricPorts int
}

// ToR is the node index of ToR t.
func (l ToRLayout) ToR(t int) int { return l.ToRs*l.Hosts + t }

// Port is the port number of ToR fabric port f.
func (l ToRLayout) Port(f int) int { return l.Hosts + f }

// ToRCable joins fabric port APort of ToR A to fabric port BPort of ToR B.
type ToRCable struct{ A, APort, B, BPort int }

// Build lays out the graph with the given ToR-to-ToR cables, each of
// capacity 1; every fabric port must be cabled once.
func (l ToRLayout) Build(name string, cables []ToRCable) (*Graph, error) {
	b := NewBuilder(name)
	for i := range l.ToRs * l.Hosts {
		b.Node(fmt.Sprintf("h%d", i), Server, 1)
	}
	for t := range l.ToRs {
		b.Node(fmt.Sprintf("tor%d", t), Switch, l.Hosts+l.FabricPorts)
	}
	for t := range l.ToRs {
		for x := range l.Hosts {
			b.Cable(End{t*l.Hosts + x, 0}, End{l.ToR(t), x}, 1)
		}
	}
	for _, c := range cables {
		b.Cable(End{l.ToR(c.A), l.Port(c.APort)}, End{l.ToR(c.B), l.Port(c.BPort)}, 1)
	}
	return b.Graph()
}

// ToRIndex is the ToR number of a node of a graph built by Build, or -1
// for a server.
func (l ToRLayout) ToRIndex(node int) int {
	if node < l.ToRs*l.Hosts {
		return -1
	}
	return node - l.ToRs*l.Hosts
}
