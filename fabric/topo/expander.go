package topo

import (
	"fmt"

	"github.com/bcfab/bcfab/model/prng"
)

// Expander is a random regular graph of ToRs: each of ToRs switches has
// Degree fabric ports cabled to other ToRs (no two cables between the
// same pair, none to itself) and Hosts servers. The same Seed builds the
// same graph whatever Go release builds the binary (package prng). The
// graph is connected: a draw that is not is thrown away and the next one
// taken, all from the same seeded stream.
//
// Layout is ToRLayout's: ToR t (tor<t>) has servers on ports
// 0..Hosts-1 and its fabric ports after them, numbered in the order its
// cables were drawn.
type Expander struct {
	ToRs, Degree, Hosts int
	Seed                uint64
}

// Validate checks that a connected simple Degree-regular graph on ToRs
// nodes exists.
func (c Expander) Validate() error {
	switch {
	case c.ToRs < 2:
		return paramErr("expander", "tors", c.ToRs, "need at least 2")
	case c.Degree < 1:
		return paramErr("expander", "degree", c.Degree, "need at least 1")
	case c.Degree >= c.ToRs:
		return paramErr("expander", "degree", c.Degree, "need at most tors-1 = %d (no two cables between one pair of ToRs)", c.ToRs-1)
	case c.ToRs*c.Degree%2 != 0:
		return paramErr("expander", "degree", c.Degree, "tors × degree must be even (every cable has two ends; %d ToRs)", c.ToRs)
	case c.Degree == 1 && c.ToRs > 2:
		return paramErr("expander", "degree", c.Degree, "need at least 2 to connect %d ToRs", c.ToRs)
	case c.Hosts < 1:
		return paramErr("expander", "hosts", c.Hosts, "need at least 1 server per ToR")
	case c.ToRs*c.Hosts > maxServers:
		return paramErr("expander", "tors", c.ToRs, "at most %d servers in all", maxServers)
	}
	return nil
}

// expanderAttempts bounds the draws; a draw fails only when its greedy
// pairing paints itself into a corner or comes out disconnected, both
// rare for degree 3 and above.
const expanderAttempts = 200

// Build draws the graph.
func (c Expander) Build() (*Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	r := prng.New(c.Seed, 0)
	lay := ToRLayout{ToRs: c.ToRs, Hosts: c.Hosts, FabricPorts: c.Degree}
	name := fmt.Sprintf("expander(%d ToRs, degree %d, %d hosts/ToR, seed %d)", c.ToRs, c.Degree, c.Hosts, c.Seed)
	for range expanderAttempts {
		edges, ok := randomRegular(c.ToRs, c.Degree, r)
		if !ok {
			continue
		}
		next := make([]int, c.ToRs)
		cables := make([]ToRCable, len(edges))
		for i, e := range edges {
			cables[i] = ToRCable{A: e[0], APort: next[e[0]], B: e[1], BPort: next[e[1]]}
			next[e[0]]++
			next[e[1]]++
		}
		g, err := lay.Build(name, cables)
		if err != nil {
			return nil, err
		}
		if g.Connected() {
			return g, nil
		}
	}
	return nil, fmt.Errorf("expander: no connected draw in %d attempts with seed %d", expanderAttempts, c.Seed)
}

// randomRegular draws a simple d-regular graph on n nodes by pairing
// cable ends ("stubs") at random, refusing a pair that would make a loop
// or a second cable between two nodes (the pairing model with the
// Steger-Wormald refinement, close to uniform for d small against n). It
// reports false when the remaining stubs admit no pair.
func randomRegular(n, d int, r *prng.Rand) ([][2]int, bool) {
	if d == 2 {
		// A connected 2-regular graph is a ring: draw its order.
		p := r.Perm(n)
		edges := make([][2]int, n)
		for i := range p {
			edges[i] = [2]int{p[i], p[(i+1)%n]}
		}
		return edges, true
	}
	stubs := make([]int, 0, n*d)
	for u := range n {
		for range d {
			stubs = append(stubs, u)
		}
	}
	adj := make([][]int, n)
	linked := func(u, v int) bool {
		for _, w := range adj[u] {
			if w == v {
				return true
			}
		}
		return false
	}
	edges := make([][2]int, 0, n*d/2)
	take := func(i, j int) {
		u, v := stubs[i], stubs[j]
		adj[u] = append(adj[u], v)
		adj[v] = append(adj[v], u)
		edges = append(edges, [2]int{u, v})
		if i < j {
			i, j = j, i
		}
		last := len(stubs) - 1
		stubs[i] = stubs[last]
		stubs = stubs[:last]
		last--
		stubs[j] = stubs[last]
		stubs = stubs[:last]
	}
	for len(stubs) > 0 {
		found := false
		for range 64 {
			i, j := r.IntN(len(stubs)), r.IntN(len(stubs))
			if u, v := stubs[i], stubs[j]; i != j && u != v && !linked(u, v) {
				take(i, j)
				found = true
				break
			}
		}
		if found {
			continue
		}
		// Few stubs left and most pairs refused: list the ones allowed.
		var ok [][2]int
		for i := range stubs {
			for j := i + 1; j < len(stubs); j++ {
				if u, v := stubs[i], stubs[j]; u != v && !linked(u, v) {
					ok = append(ok, [2]int{i, j})
				}
			}
		}
		if len(ok) == 0 {
			return nil, false
		}
		p := ok[r.IntN(len(ok))]
		take(p[0], p[1])
	}
	return edges, true
}
