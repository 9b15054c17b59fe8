package fcplus

import (
	"fmt"

	"github.com/bcfab/bcfab/fabric/topo"
)

// Routing is a way of choosing the paths between two ToRs.
type Routing string

const (
	// KSP is plain K shortest paths, blind to the layering: the
	// baseline whose channel dependencies can close a cycle.
	KSP Routing = "ksp"
	// FC is Flattened Clos routing: up-down paths (no down-up turn),
	// edge-disjoint, each the shortest left once the previous ones'
	// cables are taken out.
	FC Routing = "fc"
	// DFKSP1 and DFKSP2 are deadlock-free K shortest paths with one and
	// two lossless priorities: paths in order of length, kept while
	// their down-up turns number at most N_lp - 1.
	DFKSP1 Routing = "dfksp1"
	DFKSP2 Routing = "dfksp2"
)

// Routings lists every routing.
var Routings = []Routing{DFKSP1, DFKSP2, FC, KSP}

// ParseRouting reads a routing's name.
func ParseRouting(s string) (Routing, error) {
	for _, x := range Routings {
		if string(x) == s {
			return x, nil
		}
	}
	return "", fmt.Errorf("routing %q: want one of %v", s, Routings)
}

// Lossless is the number of lossless priorities the routing's paths need
// to be deadlock-free, or 0 when no number suffices (KSP).
func (s Routing) Lossless() int {
	switch s {
	case DFKSP2:
		return 2
	case KSP:
		return 0
	}
	return 1
}

// RouteOptions shape a route set.
type RouteOptions struct {
	// K is the number of paths per ToR pair (FC's may be fewer: it runs
	// out of disjoint up-down paths).
	K int
	// Slack bounds paths to the pair's shortest distance plus Slack
	// hops (0: topo.DefaultSlack).
	Slack int
	// Seed breaks ties among paths of equal length.
	Seed uint64
	// Workers computing pairs at once (0: one per CPU).
	Workers int
}

// turner is what prices a routing's steps: the fabric's down-up turns,
// or nothing for plain KSP.
func (f *Fabric) turner(s Routing) topo.Turner {
	if s == KSP {
		return nil
	}
	return f
}

// Finder returns a path finder for the routing's searches.
func (f *Fabric) Finder(s Routing) *topo.PathFinder { return topo.NewPathFinder(f.Graph, f.turner(s)) }

// Paths chooses the routing's paths from ToR node src to ToR node dst
// with a finder from Finder(s).
func (f *Fabric) Paths(pf *topo.PathFinder, s Routing, src, dst int, o RouteOptions) []topo.Path {
	q := topo.PathOptions{K: o.K, Slack: o.Slack, Seed: o.Seed}
	switch s {
	case KSP:
	case DFKSP1, DFKSP2:
		q.Budget = s.Lossless() - 1
	case FC:
		return f.edgeDisjointUpDown(pf, src, dst, q)
	default:
		return nil
	}
	return pf.Find(src, dst, q)
}

// edgeDisjointUpDown takes the shortest up-down path, removes its cables,
// and repeats until K paths or none is left.
func (f *Fabric) edgeDisjointUpDown(pf *topo.PathFinder, src, dst int, q topo.PathOptions) []topo.Path {
	used := map[int]bool{}
	q.Budget = 0
	q.Avoid = func(a topo.Arc) bool { return used[a.Link()] }
	k := q.K
	q.K = 1
	var out []topo.Path
	for len(out) < k {
		p := pf.Find(src, dst, q)
		if len(p) == 0 {
			break
		}
		out = append(out, p[0])
		for _, a := range p[0] {
			used[a.Link()] = true
		}
		q.Seed++ // a fresh draw among the next path's ties
	}
	return out
}

// Routes computes the routing's paths between every ordered pair of ToRs.
func (f *Fabric) Routes(s Routing, o RouteOptions) (*topo.Routes, error) {
	if _, err := ParseRouting(string(s)); err != nil {
		return nil, err
	}
	if o.K < 1 {
		return nil, fmt.Errorf("routes: K = %d, need at least 1 path per pair", o.K)
	}
	return topo.NewRoutes(f.Graph, f.ToRs(), o.Workers, f.turner(s), func(pf *topo.PathFinder, src, dst int) []topo.Path {
		return f.Paths(pf, s, src, dst, o)
	}), nil
}
