package fcplus

import (
	"fmt"
	"strings"

	"github.com/bcfab/bcfab/fabric/topo"
)

// Channel is one lossless queue of the fabric: an arc (a directed cable,
// whose egress queue it is) at a priority.
type Channel struct {
	Arc  topo.Arc
	Prio int
}

// CDG is a channel dependency graph: a vertex per channel some path
// uses, and an edge from each channel of a path to the next one (a
// packet holding a buffer of the first waits for one of the second). A
// cycle is a deadlock that PFC can fall into; none, and no pause can wait
// on itself.
//
// An edge from one priority to another (a packet moving up a priority at
// its down-up turn) is kept too; priorities only rise along a path, so
// such edges cannot close a cycle, and a cycle lies within one
// priority's CDG.
type CDG struct {
	id    map[Channel]int32
	chans []Channel
	succ  []map[int32]struct{}
	edges int
}

// NewCDG returns an empty graph.
func NewCDG() *CDG { return &CDG{id: map[Channel]int32{}} }

func (c *CDG) vertex(ch Channel) int32 {
	if v, ok := c.id[ch]; ok {
		return v
	}
	v := int32(len(c.chans))
	c.id[ch] = v
	c.chans = append(c.chans, ch)
	c.succ = append(c.succ, map[int32]struct{}{})
	return v
}

// Add adds the dependencies of one path, given as the channels it holds
// hop by hop.
func (c *CDG) Add(path []Channel) {
	for i := range path {
		v := c.vertex(path[i])
		if i == 0 {
			continue
		}
		u := c.id[path[i-1]]
		if _, ok := c.succ[u][v]; !ok {
			c.succ[u][v] = struct{}{}
			c.edges++
		}
	}
}

// Channels and Edges count the graph.
func (c *CDG) Channels() int { return len(c.chans) }
func (c *CDG) Edges() int    { return c.edges }

// Cycle returns the channels of one cycle in dependency order, or nil
// when the graph is acyclic (iterative depth-first search: a cycle is an
// edge back to a vertex still on the stack).
func (c *CDG) Cycle() []Channel {
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(c.chans))
	parent := make([]int32, len(c.chans))
	type frame struct {
		v    int32
		next []int32
	}
	for root := range c.chans {
		if color[root] != white {
			continue
		}
		color[root] = grey
		parent[root] = -1
		stack := []frame{{int32(root), keys(c.succ[root])}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.next) == 0 {
				color[top.v] = black
				stack = stack[:len(stack)-1]
				continue
			}
			w := top.next[0]
			top.next = top.next[1:]
			switch color[w] {
			case grey:
				// top.v -> w closes a cycle: walk back from top.v to w.
				cyc := []Channel{c.chans[w]}
				var back []Channel
				for u := top.v; u != w; u = parent[u] {
					back = append(back, c.chans[u])
				}
				for i := len(back) - 1; i >= 0; i-- {
					cyc = append(cyc, back[i])
				}
				return cyc
			case white:
				color[w] = grey
				parent[w] = top.v
				stack = append(stack, frame{w, keys(c.succ[w])})
			}
		}
	}
	return nil
}

func keys(m map[int32]struct{}) []int32 {
	k := make([]int32, 0, len(m))
	for v := range m {
		k = append(k, v)
	}
	// Map order is random; sorted successors make the cycle found the
	// same on every run.
	for i := 1; i < len(k); i++ {
		for j := i; j > 0 && k[j] < k[j-1]; j-- {
			k[j], k[j-1] = k[j-1], k[j]
		}
	}
	return k
}

// Hops are the channels a packet on p holds with lossless priorities
// (see Priorities); lossless 1 puts every hop in priority 1.
func (f *Fabric) Hops(p topo.Path, lossless int) []Channel {
	pr := f.Priorities(p, lossless)
	ch := make([]Channel, len(p))
	for i, a := range p {
		ch[i] = Channel{a, pr[i]}
	}
	return ch
}

// CDG builds the channel dependency graph of a route set with the given
// number of lossless priorities. Paths between ToRs leave the servers'
// cables out: a server's uplink has no channel before it and its
// downlink none after, so neither can lie on a cycle.
func (f *Fabric) CDG(r *topo.Routes, lossless int) *CDG {
	c := NewCDG()
	r.Pairs(func(_, _ int, paths []topo.Path) {
		for _, p := range paths {
			c.Add(f.Hops(p, lossless))
		}
	})
	return c
}

// CycleString names a cycle's channels: tor0:p3->tor4:p5@1 ...
func (f *Fabric) CycleString(cyc []Channel) string {
	parts := make([]string, len(cyc))
	for i, ch := range cyc {
		parts[i] = fmt.Sprintf("%s@%d", f.Graph.ArcString(ch.Arc), ch.Prio)
	}
	return strings.Join(parts, " ")
}
