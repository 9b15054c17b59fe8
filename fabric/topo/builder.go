package topo

import (
	"errors"
	"fmt"
	"math"
)

// Builder assembles a Graph node by node and cable by cable; the first
// mistake sticks and Graph returns it. Generators use it, and so can a
// caller with a hand-drawn fabric (a test scenario, a topology file).
type Builder struct {
	g   Graph
	err error
}

// NewBuilder starts an empty graph with a name for reports.
func NewBuilder(name string) *Builder {
	return &Builder{g: Graph{Name: name, byName: map[string]int{}}}
}

// Node adds a node with ports unconnected ports and returns its index.
func (b *Builder) Node(name string, kind Kind, ports int) int {
	i := len(b.g.Nodes)
	if b.err == nil {
		if _, dup := b.g.byName[name]; dup {
			b.err = fmt.Errorf("node %q: name used twice", name)
		} else if ports < 1 {
			b.err = fmt.Errorf("node %q: %d ports", name, ports)
		}
	}
	b.g.byName[name] = i
	pp := make([]int, max(ports, 0))
	for p := range pp {
		pp[p] = -1
	}
	b.g.Nodes = append(b.g.Nodes, Node{Name: name, Kind: kind, Ports: pp})
	return i
}

// Cable joins two free ports with a full-duplex link of the given
// capacity per direction.
func (b *Builder) Cable(x, y End, capacity float64) {
	if b.err != nil {
		return
	}
	for _, e := range []End{x, y} {
		if e.Node < 0 || e.Node >= len(b.g.Nodes) || e.Port < 0 || e.Port >= len(b.g.Nodes[e.Node].Ports) {
			b.err = fmt.Errorf("cable %v-%v: no such port %v", x, y, e)
			return
		}
		if l := b.g.Nodes[e.Node].Ports[e.Port]; l >= 0 {
			b.err = fmt.Errorf("cable %v-%v: port %d of %s already cabled", x, y, e.Port, b.g.Nodes[e.Node].Name)
			return
		}
	}
	switch {
	case x.Node == y.Node:
		b.err = fmt.Errorf("cable %v-%v: a node cabled to itself (%s)", x, y, b.g.Nodes[x.Node].Name)
		return
	case !(capacity > 0) || math.IsInf(capacity, 0):
		b.err = fmt.Errorf("cable %v-%v: capacity %v, need a positive number", x, y, capacity)
		return
	}
	l := len(b.g.Links)
	b.g.Links = append(b.g.Links, Link{A: x, B: y, Capacity: capacity})
	b.g.Nodes[x.Node].Ports[x.Port] = l
	b.g.Nodes[y.Node].Ports[y.Port] = l
}

// Graph checks that every port is cabled and returns the graph. The
// builder must not be used afterwards.
func (b *Builder) Graph() (*Graph, error) {
	if b.err != nil {
		return nil, fmt.Errorf("build %s: %w", b.g.Name, b.err)
	}
	var errs []error
	for i := range b.g.Nodes {
		n := &b.g.Nodes[i]
		for p, l := range n.Ports {
			if l < 0 {
				errs = append(errs, fmt.Errorf("%s port %d not cabled", n.Name, p))
			}
		}
		if n.Kind == Server {
			b.g.servers = append(b.g.servers, i)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("build %s: %w", b.g.Name, errors.Join(errs...))
	}
	g := b.g
	// Every search asks which arc leaves by a port: answer from a table.
	g.out = make([][]Arc, len(g.Nodes))
	for i, n := range g.Nodes {
		g.out[i] = make([]Arc, len(n.Ports))
		for p, l := range n.Ports {
			if g.Links[l].A == (End{i, p}) {
				g.out[i][p] = Arc(2 * l)
			} else {
				g.out[i][p] = Arc(2*l + 1)
			}
		}
	}
	return &g, nil
}
