package topo

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// Routes are the paths allowed between every ordered pair of ends: the
// ToRs of a fabric whose servers hang off one switch each, or the
// servers themselves in a server-centric fabric (BCube). A flow takes
// path PathIndex(hash, n) of its pair's n paths, and every node on the
// way computes the same index from the same hash, so a frame carries no
// route (as BCube's level order needs none).
type Routes struct {
	Ends  []int
	index []int // node -> position in Ends, -1 if not an end
	paths [][]Path
}

// NewRoutes computes the paths between every ordered pair of distinct
// ends with find, on workers goroutines (0: one per CPU), each with a
// PathFinder of its own over turns. find must depend only on its pair
// (PathFinder's seeded draws do), so the result does not depend on
// workers.
func NewRoutes(g *Graph, ends []int, workers int, turns Turner, find func(f *PathFinder, src, dst int) []Path) *Routes {
	r := &Routes{Ends: ends, index: make([]int, len(g.Nodes)), paths: make([][]Path, len(ends)*len(ends))}
	for i := range r.index {
		r.index[i] = -1
	}
	for i, e := range ends {
		r.index[e] = i
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Work by destination: a finder caches its distances per destination.
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(ends)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := NewPathFinder(g, turns)
			for j := range next {
				for i, s := range ends {
					if i != j {
						r.paths[i*len(ends)+j] = find(f, s, ends[j])
					}
				}
				f.Forget(ends[j])
			}
		}()
	}
	for j := range ends {
		next <- j
	}
	close(next)
	wg.Wait()
	return r
}

// Between are the paths from end node src to end node dst.
func (r *Routes) Between(src, dst int) []Path {
	i, j := r.index[src], r.index[dst]
	if i < 0 || j < 0 {
		return nil
	}
	return r.paths[i*len(r.Ends)+j]
}

// Pairs calls fn for every ordered pair of ends with its paths.
func (r *Routes) Pairs(fn func(src, dst int, paths []Path)) {
	for i, s := range r.Ends {
		for j, d := range r.Ends {
			if i != j {
				fn(s, d, r.paths[i*len(r.Ends)+j])
			}
		}
	}
}

// Table is one node's share of a route set: for each ordered pair of
// ends whose paths pass the node, the port each path leaves by (-1 for a
// path that does not pass).
type Table struct {
	next map[[2]int32][]int16
}

// Port is where a flow between ends src and dst with the given hash
// leaves this node; ok is false when its path does not pass here.
func (t Table) Port(src, dst int, hash uint32) (port int, ok bool) {
	ports := t.next[[2]int32{int32(src), int32(dst)}]
	if len(ports) == 0 {
		return -1, false
	}
	p := ports[PathIndex(hash, len(ports))]
	return int(p), p >= 0
}

// TableEntry is one pair of a Table: the ends (node indices) and the
// port each of the pair's paths leaves the node by (-1: the path does
// not pass).
type TableEntry struct {
	Src   int     `json:"src"`
	Dst   int     `json:"dst"`
	Ports []int16 `json:"ports"`
}

// Entries lists the table's pairs, ordered by source and destination,
// for a node that is given its table rather than the route set.
func (t Table) Entries() []TableEntry {
	out := make([]TableEntry, 0, len(t.next))
	for k, p := range t.next {
		out = append(out, TableEntry{Src: int(k[0]), Dst: int(k[1]), Ports: append([]int16(nil), p...)})
	}
	slices.SortFunc(out, func(a, b TableEntry) int {
		if a.Src != b.Src {
			return a.Src - b.Src
		}
		return a.Dst - b.Dst
	})
	return out
}

// NewTable is the table of entries (Entries' inverse). A pair given
// twice, or with no paths, is an error.
func NewTable(entries []TableEntry) (Table, error) {
	t := Table{next: make(map[[2]int32][]int16, len(entries))}
	for _, e := range entries {
		key := [2]int32{int32(e.Src), int32(e.Dst)}
		switch {
		case len(e.Ports) == 0:
			return Table{}, fmt.Errorf("table entry %d->%d has no paths", e.Src, e.Dst)
		case t.next[key] != nil:
			return Table{}, fmt.Errorf("table entry %d->%d given twice", e.Src, e.Dst)
		}
		t.next[key] = append([]int16(nil), e.Ports...)
	}
	return t, nil
}

// Len is the number of pairs the table holds.
func (t Table) Len() int { return len(t.next) }

// Tables splits the route set into a table per node of g.
func (r *Routes) Tables(g *Graph) ([]Table, error) {
	t := make([]Table, len(g.Nodes))
	for i := range t {
		t[i].next = map[[2]int32][]int16{}
	}
	var err error
	r.Pairs(func(s, d int, paths []Path) {
		key := [2]int32{int32(s), int32(d)}
		for x, p := range paths {
			for _, a := range p {
				tail := g.Tail(a)
				ports := t[tail.Node].next[key]
				if ports == nil {
					ports = make([]int16, len(paths))
					for y := range ports {
						ports[y] = -1
					}
					t[tail.Node].next[key] = ports
				}
				if ports[x] >= 0 && err == nil {
					err = fmt.Errorf("path %d from %s to %s visits %s twice", x, g.Nodes[s].Name, g.Nodes[d].Name, g.Nodes[tail.Node].Name)
				}
				ports[x] = int16(tail.Port)
			}
		}
	})
	return t, err
}
