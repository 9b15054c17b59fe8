package topo

import (
	"slices"
	"strings"

	"github.com/bcfab/bcfab/model/prng"
)

// Path is a route as the arcs it takes, from its source's first hop to
// its destination's last.
type Path []Arc

// Nodes are the nodes a path visits, source and destination included.
func (g *Graph) PathNodes(p Path) []int {
	if len(p) == 0 {
		return nil
	}
	n := []int{g.Tail(p[0]).Node}
	for _, a := range p {
		n = append(n, g.Head(a).Node)
	}
	return n
}

// PathString names a path by its nodes: tor0-tor3-tor5.
func (g *Graph) PathString(p Path) string {
	var b strings.Builder
	for i, u := range g.PathNodes(p) {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(g.Nodes[u].Name)
	}
	return b.String()
}

// PathOptions shapes a path search.
type PathOptions struct {
	// K is how many paths to return (at least 1).
	K int
	// Slack bounds the paths considered to the shortest length plus
	// Slack hops; 0 means DefaultSlack.
	Slack int
	// Budget is what a path's steps may cost in all, as the finder's
	// Turner prices them (no limit without a Turner).
	Budget int
	// Avoid, when set, refuses arcs (edge-disjoint searches).
	Avoid func(Arc) bool
	// Seed breaks ties: when more paths of the longest length kept are
	// found than are wanted, a seeded draw (per seed, source and
	// destination) picks which.
	Seed uint64
	// MaxCandidates caps the paths of one length collected before the
	// draw; 0 means DefaultMaxCandidates. Past the cap the draw is among
	// the first found (depth first, in port order).
	MaxCandidates int
}

// Defaults of PathOptions.
const (
	DefaultSlack         = 4
	DefaultMaxCandidates = 4096
)

// Turner prices the steps of a path, from the arc it arrived on to the
// arc it leaves on. It lets a caller count turns of a kind (FC+'s
// down-up turns) without this package knowing what they are.
type Turner interface {
	Turn(in, out Arc) int
}

// PathFinder enumerates simple paths in order of length. It caches a
// distance table per destination (and, with a Turner, per destination
// and budget); it is not safe for concurrent use (give each goroutine
// its own).
type PathFinder struct {
	g       *Graph
	turns   Turner
	dist    map[int][]int
	bound   map[[2]int][]int32
	visited []bool
	stack   Path
}

// NewPathFinder returns a finder over g whose paths' steps turns prices
// (nil: every step is free).
func NewPathFinder(g *Graph, turns Turner) *PathFinder {
	return &PathFinder{g: g, turns: turns, dist: map[int][]int{}, bound: map[[2]int][]int32{}, visited: make([]bool, len(g.Nodes))}
}

func (f *PathFinder) distTo(dst int) []int {
	d, ok := f.dist[dst]
	if !ok {
		d = f.g.Distances(dst) // cables are full duplex: distance to = distance from
		f.dist[dst] = d
	}
	return d
}

// Forget drops what the finder cached about paths to dst.
func (f *PathFinder) Forget(dst int) {
	delete(f.dist, dst)
	for k := range f.bound {
		if k[0] == dst {
			delete(f.bound, k)
		}
	}
}

// unreachable marks a state of boundTo that cannot reach the destination.
const unreachable = int32(1 << 30)

// boundTo is, for every arc a and turns spent b <= budget, the fewest hops
// left to dst after taking a with b spent: b·arcs + a indexes it. It
// counts turns, not revisits, so it is a lower bound on a simple path's
// remainder, and the search prunes every prefix that cannot finish
// within its length under the budget (not only those too far in hops).
// A breadth-first search backwards from the arcs into dst over states
// (arc, spent).
func (f *PathFinder) boundTo(dst, budget int) []int32 {
	key := [2]int{dst, budget}
	if lb, ok := f.bound[key]; ok {
		return lb
	}
	g := f.g
	arcs := g.Arcs()
	lb := make([]int32, arcs*(budget+1))
	for i := range lb {
		lb[i] = unreachable
	}
	var q []int32
	for a := range arcs {
		if g.Head(Arc(a)).Node == dst {
			for b := 0; b <= budget; b++ {
				lb[b*arcs+a] = 0
				q = append(q, int32(b*arcs+a))
			}
		}
	}
	for len(q) > 0 {
		s := q[0]
		q = q[1:]
		next, b := Arc(int(s)%arcs), int(s)/arcs
		// Predecessors: an arc a into next's tail, spent b - Turn(a, next).
		u := g.Tail(next).Node
		if u == dst {
			continue // no path passes through its destination
		}
		for p := range g.Nodes[u].Ports {
			a := g.Out(u, p).Reverse()
			if a == next.Reverse() {
				continue
			}
			pb := b - f.turns.Turn(a, next)
			if pb < 0 {
				continue
			}
			if i := pb*arcs + int(a); lb[i] == unreachable {
				lb[i] = lb[s] + 1
				q = append(q, int32(i))
			}
		}
	}
	f.bound[key] = lb
	return lb
}

// Find returns up to o.K simple paths from src to dst, shortest first:
// every path of length L is taken before any of length L+1, and among
// the paths of the last length taken a seeded draw picks. A path may
// pass through a node only if the node has two ports or more; none
// passes through src or dst twice.
func (f *PathFinder) Find(src, dst int, o PathOptions) []Path {
	if o.K < 1 || src == dst {
		return nil
	}
	dist := f.distTo(dst)
	if dist[src] < 0 {
		return nil
	}
	slack := o.Slack
	if slack == 0 {
		slack = DefaultSlack
	}
	limit := o.MaxCandidates
	if limit == 0 {
		limit = DefaultMaxCandidates
	}
	var lb []int32
	if f.turns != nil {
		lb = f.boundTo(dst, o.Budget)
	}
	var kept []Path
	for l := dist[src]; l <= dist[src]+slack && len(kept) < o.K; l++ {
		var cands []Path
		f.collect(src, dst, l, dist, lb, &o, limit, &cands)
		if need := o.K - len(kept); len(cands) > need {
			r := prng.New(o.Seed, prng.Mix(uint64(src)<<32|uint64(dst))^uint64(l))
			r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
			cands = cands[:need]
		}
		kept = append(kept, cands...)
	}
	return kept
}

// collect appends to out every simple path of exactly length hops from
// src to dst that o admits, up to limit of them, depth first. A step is
// taken only if what is left of the length can still reach dst: by hop
// distance, and with a Turner by the turn-aware bound lb.
func (f *PathFinder) collect(src, dst, length int, dist []int, lb []int32, o *PathOptions, limit int, out *[]Path) {
	g := f.g
	arcs := g.Arcs()
	f.stack = f.stack[:0]
	var walk func(u, spent int)
	walk = func(u, spent int) {
		left := length - len(f.stack)
		if u == dst {
			if left == 0 {
				*out = append(*out, slices.Clone(f.stack))
			}
			return
		}
		if left == 0 || dist[u] > left || (u != src && len(g.Nodes[u].Ports) < 2) {
			return
		}
		f.visited[u] = true
		for p := range g.Nodes[u].Ports {
			if len(*out) >= limit {
				break
			}
			a := g.Out(u, p)
			v := g.Head(a).Node
			if f.visited[v] || dist[v] < 0 || dist[v] > left-1 || (o.Avoid != nil && o.Avoid(a)) {
				continue
			}
			cost := 0
			if f.turns != nil {
				if len(f.stack) > 0 {
					cost = f.turns.Turn(f.stack[len(f.stack)-1], a)
				}
				if spent+cost > o.Budget || int(lb[(spent+cost)*arcs+int(a)]) > left-1 {
					continue
				}
			}
			f.stack = append(f.stack, a)
			walk(v, spent+cost)
			f.stack = f.stack[:len(f.stack)-1]
		}
		f.visited[u] = false
	}
	walk(src, 0)
}
