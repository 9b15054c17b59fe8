package topo

import "fmt"

// FatTree is the k-ary fat-tree: k pods of k/2 edge and k/2 aggregation
// switches, (k/2)² core switches and k³/4 servers, every switch with k
// ports and every cable of capacity 1.
//
// Numbering, with h = k/2:
//   - edge<p>.<i> has ports 0..h-1 to its servers and port h+j to
//     agg<p>.<j>; server h<p·h²+i·h+x> is on its port x;
//   - agg<p>.<j> has port i to edge<p>.<i> and port h+m to core<j·h+m>;
//   - core<c> has port p to agg<p>.<c/h>.
type FatTree struct{ K int }

// Validate checks the parameters.
func (c FatTree) Validate() error {
	switch {
	case c.K < 2 || c.K%2 != 0:
		return paramErr("fattree", "k", c.K, "need an even number of ports, at least 2")
	case c.K*c.K*c.K/4 > maxServers:
		return paramErr("fattree", "k", c.K, "at most %d servers (k³/4)", maxServers)
	}
	return nil
}

// Build lays out the graph.
func (c FatTree) Build() (*Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	k, h := c.K, c.K/2
	b := NewBuilder(fmt.Sprintf("fattree(k=%d)", k))
	for i := range k * h * h {
		b.Node(fmt.Sprintf("h%d", i), Server, 1)
	}
	edge := make([][]int, k)
	agg := make([][]int, k)
	for p := range k {
		edge[p] = make([]int, h)
		for i := range h {
			edge[p][i] = b.Node(fmt.Sprintf("edge%d.%d", p, i), Switch, k)
		}
	}
	for p := range k {
		agg[p] = make([]int, h)
		for j := range h {
			agg[p][j] = b.Node(fmt.Sprintf("agg%d.%d", p, j), Switch, k)
		}
	}
	core := make([]int, h*h)
	for c := range core {
		core[c] = b.Node(fmt.Sprintf("core%d", c), Switch, k)
	}
	for p := range k {
		for i := range h {
			for x := range h {
				b.Cable(End{p*h*h + i*h + x, 0}, End{edge[p][i], x}, 1)
			}
			for j := range h {
				b.Cable(End{edge[p][i], h + j}, End{agg[p][j], i}, 1)
			}
		}
		for j := range h {
			for m := range h {
				b.Cable(End{agg[p][j], h + m}, End{core[j*h+m], p}, 1)
			}
		}
	}
	return b.Graph()
}
