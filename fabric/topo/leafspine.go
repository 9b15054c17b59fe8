package topo

import "fmt"

// LeafSpine is a two-tier Clos: Leaves leaf switches with HostsPerLeaf
// servers each, every leaf cabled once to each of Spines spine switches.
// Oversubscription is a leaf's host capacity over its uplink capacity
// (1, the default when zero, is non-blocking); the uplinks' capacity is
// set to match, HostsPerLeaf / (Spines × Oversubscription).
//
// Leaf i (leaf<i>) has ports 0..HostsPerLeaf-1 to its servers and port
// HostsPerLeaf+j to spine j; spine j (spine<j>) has port i to leaf i.
// Server h<i·HostsPerLeaf+x> is on leaf i's port x.
type LeafSpine struct {
	Leaves, Spines, HostsPerLeaf int
	Oversubscription             float64
}

// Validate checks the parameters.
func (c LeafSpine) Validate() error {
	switch {
	case c.Leaves < 2:
		return paramErr("leafspine", "leaves", c.Leaves, "need at least 2")
	case c.Spines < 1:
		return paramErr("leafspine", "spines", c.Spines, "need at least 1")
	case c.HostsPerLeaf < 1:
		return paramErr("leafspine", "hosts", c.HostsPerLeaf, "need at least 1 server per leaf")
	case c.Oversubscription < 0:
		return paramErr("leafspine", "oversubscription", c.Oversubscription, "need a positive ratio (0 for 1)")
	case c.Leaves*c.HostsPerLeaf > maxServers:
		return paramErr("leafspine", "leaves", c.Leaves, "at most %d servers in all", maxServers)
	}
	return nil
}

// maxServers bounds every generator, as package bcube bounds BCube.
const maxServers = 1 << 16

// Build lays out the graph.
func (c LeafSpine) Build() (*Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	over := c.Oversubscription
	if over == 0 {
		over = 1
	}
	b := NewBuilder(fmt.Sprintf("leafspine(%d leaves, %d spines, %d hosts/leaf, %g:1)", c.Leaves, c.Spines, c.HostsPerLeaf, over))
	for i := range c.Leaves * c.HostsPerLeaf {
		b.Node(fmt.Sprintf("h%d", i), Server, 1)
	}
	leaf := make([]int, c.Leaves)
	for i := range leaf {
		leaf[i] = b.Node(fmt.Sprintf("leaf%d", i), Switch, c.HostsPerLeaf+c.Spines)
	}
	spine := make([]int, c.Spines)
	for j := range spine {
		spine[j] = b.Node(fmt.Sprintf("spine%d", j), Switch, c.Leaves)
	}
	up := float64(c.HostsPerLeaf) / (float64(c.Spines) * over)
	for i := range c.Leaves {
		for x := range c.HostsPerLeaf {
			b.Cable(End{i*c.HostsPerLeaf + x, 0}, End{leaf[i], x}, 1)
		}
		for j := range c.Spines {
			b.Cable(End{leaf[i], c.HostsPerLeaf + j}, End{spine[j], i}, up)
		}
	}
	return b.Graph()
}
