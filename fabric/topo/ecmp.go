package topo

// ECMP is every node's set of next hops toward every server over shortest
// paths (in hops): the ports whose neighbour is one hop nearer the
// server. A flow takes one of them by its hash (Port). Servers with
// several ports (BCube's) get tables too, since they relay.
type ECMP struct {
	col   []int32  // node -> destination column, -1 for a switch
	cols  int      // number of servers
	off   []int32  // (node·cols + column) -> start of its ports; one past the end last
	ports []uint16 // next-hop ports, by node and column
}

// NewECMP computes the tables with one breadth-first search per server.
func NewECMP(g *Graph) *ECMP {
	servers := g.Servers()
	e := &ECMP{col: make([]int32, len(g.Nodes)), cols: len(servers)}
	for i := range e.col {
		e.col[i] = -1
	}
	for c, s := range servers {
		e.col[s] = int32(c)
	}
	// Column-major while computing (one search per destination), then
	// laid out node-major so that a node's table is contiguous.
	hops := make([][][]uint16, len(servers))
	for c, t := range servers {
		d := g.Distances(t)
		hops[c] = make([][]uint16, len(g.Nodes))
		for u := range g.Nodes {
			if u == t || d[u] < 0 {
				continue
			}
			for p := range g.Nodes[u].Ports {
				if v := g.Head(g.Out(u, p)).Node; d[v] == d[u]-1 {
					hops[c][u] = append(hops[c][u], uint16(p))
				}
			}
		}
	}
	e.off = make([]int32, 0, len(g.Nodes)*len(servers)+1)
	for u := range g.Nodes {
		for c := range servers {
			e.off = append(e.off, int32(len(e.ports)))
			e.ports = append(e.ports, hops[c][u]...)
		}
	}
	e.off = append(e.off, int32(len(e.ports)))
	return e
}

// NextHops are node's ports on shortest paths to server dst (empty when
// node is dst, dst is not a server, or dst is unreachable).
func (e *ECMP) NextHops(node, dst int) []uint16 {
	c := e.col[dst]
	if c < 0 {
		return nil
	}
	i := node*e.cols + int(c)
	return e.ports[e.off[i]:e.off[i+1]]
}

// Port is the next hop a flow with the given hash takes at node toward
// server dst, or -1 when there is none. The node's index is mixed into
// the hash so that consecutive tiers do not all make the same choice
// (ECMP polarisation).
func (e *ECMP) Port(node, dst int, hash uint32) int {
	return PickPort(node, e.NextHops(node, dst), hash)
}

// PickPort is the next hop of hops (node's next hops toward one server,
// NextHops) a flow with the given hash takes, or -1 when hops is empty.
// A switch that holds only its own rows of the tables (a lab's, written
// at bring-up) chooses with it exactly as Port does.
func PickPort(node int, hops []uint16, hash uint32) int {
	if len(hops) == 0 {
		return -1
	}
	return int(hops[PathIndex(mix32(hash^uint32(node)*0x9e3779b9), len(hops))])
}

// PathIndex maps a flow hash onto 0..n-1 (multiply and shift: no modulo
// bias, the same on every node).
func PathIndex(hash uint32, n int) int {
	return int(uint64(hash) * uint64(n) >> 32)
}

// mix32 is murmur3's finaliser.
func mix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
