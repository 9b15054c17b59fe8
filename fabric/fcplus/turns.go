package fcplus

import "github.com/bcfab/bcfab/fabric/topo"

// Rank orders the arcs of a fabric so that a path whose arcs' ranks rise
// at every step is an up-down path of the virtual layering: up arcs
// first, by rising level (1..k-1), then down arcs by falling level
// (k..2k-2 for levels k-1..1). A server's uplink ranks 0 and its
// downlink 2k-1, below and above every fabric arc.
//
// A step whose rank does not rise is a down-up turn. Besides the plain
// one (arrive going down, leave going up) this counts the steps that
// move inside a ToR from a higher virtual switch to a lower one (arrive
// going up into layer 5, leave going up from layer 2): the packet went
// down inside the switch and up again. With no such step, every channel
// dependency a path creates goes from a lower rank to a higher one, so
// no set of such paths can close a cycle.
func (f *Fabric) Rank(a topo.Arc) int {
	l := f.level[a.Link()]
	up := f.upward[a]
	switch {
	case l == 0 && up:
		return 0
	case l == 0:
		return 2*f.Layers - 1
	case up:
		return l
	}
	return 2*f.Layers - 1 - l
}

// Up says whether an arc goes up the virtual layers (from a server, for
// a server's uplink).
func (f *Fabric) Up(a topo.Arc) bool { return f.upward[a] }

// Level is the lower of the two layers an arc's cable joins, 0 for a
// server's cable.
func (f *Fabric) Level(a topo.Arc) int { return f.level[a.Link()] }

// Turn is 1 when the step from arc in to arc out is a down-up turn, 0
// otherwise: a Fabric is the topo.Turner of its DF-KSP and FC searches.
func (f *Fabric) Turn(in, out topo.Arc) int {
	if f.Rank(out) <= f.Rank(in) {
		return 1
	}
	return 0
}

// Turns is a path's down-up turn count, T_du.
func (f *Fabric) Turns(p topo.Path) int {
	n := 0
	for i := 1; i < len(p); i++ {
		n += f.Turn(p[i-1], p[i])
	}
	return n
}

// Priorities are the lossless priorities (1..lossless) a packet on p
// holds on each arc: it starts at 1 and rises by one at each down-up
// turn, staying at the top one once there (a path DF-KSP chose for
// lossless priorities never needs more).
func (f *Fabric) Priorities(p topo.Path, lossless int) []int {
	pr := make([]int, len(p))
	cur := 1
	for i := range p {
		if i > 0 && f.Turn(p[i-1], p[i]) == 1 && cur < lossless {
			cur++
		}
		pr[i] = cur
	}
	return pr
}

// PortPair is a step through a switch, by its in and out ports.
type PortPair struct{ In, Out int }

// Rewrites are, per node, the steps through it that are down-up turns:
// where a packet with two lossless priorities moves from priority 1 to
// 2. A ToR matches (in port, out port) against its list; servers have
// none. The list depends on the layering alone, not on the paths chosen,
// so one table serves every route set of the fabric.
func (f *Fabric) Rewrites() [][]PortPair {
	g := f.Graph
	rw := make([][]PortPair, len(g.Nodes))
	for _, u := range f.ToRs() {
		ports := len(g.Nodes[u].Ports)
		for in := range ports {
			arrive := g.Out(u, in).Reverse()
			for out := range ports {
				if out != in && f.Turn(arrive, g.Out(u, out)) == 1 {
					rw[u] = append(rw[u], PortPair{in, out})
				}
			}
		}
	}
	return rw
}
