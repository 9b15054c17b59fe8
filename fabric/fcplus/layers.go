package fcplus

import (
	"fmt"
	"slices"

	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/model/prng"
)

// Params describe an FC+ fabric: ToRs switches, each with Ports fabric
// ports (s) split into Virtual virtual switches (v), and Hosts servers.
//
// The virtual multi-layer topology has k = (s-2)/2 + 2 layers. Virtual
// switch S^1 of every ToR sits in layer 1 with one port, going up;
// S^v sits in layer k with one port, going down. The middle layers
// 2..k-1 form v-2 groups of L = (s-2)/(2(v-2)) consecutive layers, and
// the ToR's virtual switch S^(g+1) sits in one layer of group g with L
// ports down and L up. The ToRs are spread evenly over a group's layers
// (a seeded draw says which ToR goes where), so every pair of adjacent
// layers is joined by exactly ToRs cables. With v = s/2+1 every group is
// one layer and the layering is FC's uniform one.
type Params struct {
	ToRs, Ports, Virtual, Hosts int
	Seed                        uint64
}

// FCParams describe an FC fabric (Flattened Clos): the uniform layering,
// Layers virtual layers with one virtual switch of every ToR in each; the
// bottom one has u = Ports/(2(Layers-1)) ports up, the top one u down,
// and each middle one u down and u up.
type FCParams struct {
	ToRs, Ports, Layers, Hosts int
	Seed                       uint64
}

// VirtualSwitch is one virtual switch of a ToR: its layer and the ToR
// ports (as topo numbers them) that go down to the layer below and up to
// the layer above.
type VirtualSwitch struct {
	Layer    int
	Down, Up []int
}

// Fabric is a built FC or FC+ fabric: the physical graph and the virtual
// layering it was drawn from.
type Fabric struct {
	Graph  *topo.Graph
	Layout topo.ToRLayout
	// Layers is k; layers are numbered 1..k.
	Layers int
	// Virtual[t] are ToR t's virtual switches, S^1 first.
	Virtual [][]VirtualSwitch
	// level[l] is cable l's level: the lower of the two layers it joins
	// (1..k-1), 0 for a server's cable; upward[a] says arc a goes from
	// the lower layer to the upper (from a server, for a server's cable).
	level   []int
	upward  []bool
	planned string
}

// String names the fabric as it was planned.
func (f *Fabric) String() string { return f.planned }

// ToRs lists the ToR nodes.
func (f *Fabric) ToRs() []int {
	n := make([]int, f.Layout.ToRs)
	for t := range n {
		n[t] = f.Layout.ToR(t)
	}
	return n
}

const paramsTopology = "fcplus"

// Groups is L, the layers of one group of middle virtual switches.
func (p Params) Groups() int { return (p.Ports - 2) / (2 * (p.Virtual - 2)) }

// Layers is k.
func (p Params) Layers() int { return (p.Ports-2)/2 + 2 }

// Validate checks that the layering exists and can be cabled.
func (p Params) Validate() error {
	e := func(param string, v any, format string, a ...any) error {
		return &topo.ParamError{Topology: paramsTopology, Param: param, Value: v, Need: fmt.Sprintf(format, a...)}
	}
	switch {
	case p.Ports < 4 || p.Ports%2 != 0:
		return e("ports", p.Ports, "need an even number of fabric ports, at least 4 (one up in layer 1, one down in layer k, pairs between)")
	case p.Virtual < 3:
		return e("virtual", p.Virtual, "need at least 3 virtual switches (layer 1, layer k and a middle one)")
	case (p.Ports-2)%(2*(p.Virtual-2)) != 0:
		return e("virtual", p.Virtual, "(ports-2)/(2(virtual-2)) must be a whole number of layers per group; with %d ports virtual may be %s", p.Ports, validVirtual(p.Ports))
	case p.ToRs < 2*p.Groups():
		return e("tors", p.ToRs, "need at least 2 ToRs per layer of a group (2 × %d)", p.Groups())
	case p.ToRs%p.Groups() != 0:
		return e("tors", p.ToRs, "need a multiple of the %d layers per group, so that every layer holds as many ToRs", p.Groups())
	case p.Hosts < 0:
		return e("hosts", p.Hosts, "need 0 or more servers per ToR")
	}
	return nil
}

// validVirtual lists the v that fit s ports.
func validVirtual(s int) string {
	var out []string
	for v := 3; v-2 <= (s-2)/2; v++ {
		if (s-2)%(2*(v-2)) == 0 {
			out = append(out, fmt.Sprint(v))
		}
	}
	return fmt.Sprint(out)
}

// Validate checks that the uniform layering exists and can be cabled.
func (p FCParams) Validate() error {
	e := func(param string, v any, format string, a ...any) error {
		return &topo.ParamError{Topology: "fc", Param: param, Value: v, Need: fmt.Sprintf(format, a...)}
	}
	switch {
	case p.Layers < 2:
		return e("layers", p.Layers, "need at least 2")
	case p.Ports < 2 || p.Ports%(2*(p.Layers-1)) != 0:
		return e("ports", p.Ports, "need a multiple of 2(layers-1) = %d, so that every virtual switch has as many ports down as up", 2*(p.Layers-1))
	case p.ToRs < 2:
		return e("tors", p.ToRs, "need at least 2")
	case p.Hosts < 0:
		return e("hosts", p.Hosts, "need 0 or more servers per ToR")
	}
	return nil
}

// plan is the virtual switches of every ToR before cabling: layer and
// port counts.
type plan struct {
	name   string
	tors   int
	ports  int
	layers int
	vs     [][]vsPlan
}

type vsPlan struct{ layer, down, up int }

func (p Params) plan() plan {
	l := p.Groups()
	k := p.Layers()
	pl := plan{name: fmt.Sprintf("FC+(%d ToRs, s=%d, v=%d, seed %d)", p.ToRs, p.Ports, p.Virtual, p.Seed),
		tors: p.ToRs, ports: p.Ports, layers: k, vs: make([][]vsPlan, p.ToRs)}
	for t := range pl.vs {
		pl.vs[t] = append(pl.vs[t], vsPlan{layer: 1, up: 1})
	}
	r := prng.New(p.Seed, 2)
	for g := range p.Virtual - 2 {
		// ToRs spread evenly over the group's layers, in a drawn order.
		order := r.Perm(p.ToRs)
		slot := make([]int, p.ToRs)
		for i, t := range order {
			slot[t] = i % l
		}
		for t := range pl.vs {
			pl.vs[t] = append(pl.vs[t], vsPlan{layer: 2 + g*l + slot[t], down: l, up: l})
		}
	}
	for t := range pl.vs {
		pl.vs[t] = append(pl.vs[t], vsPlan{layer: k, down: 1})
	}
	return pl
}

func (p FCParams) plan() plan {
	u := p.Ports / (2 * (p.Layers - 1))
	pl := plan{name: fmt.Sprintf("FC(%d ToRs, s=%d, %d layers, seed %d)", p.ToRs, p.Ports, p.Layers, p.Seed),
		tors: p.ToRs, ports: p.Ports, layers: p.Layers, vs: make([][]vsPlan, p.ToRs)}
	for t := range pl.vs {
		for layer := 1; layer <= p.Layers; layer++ {
			v := vsPlan{layer: layer, down: u, up: u}
			if layer == 1 {
				v.down = 0
			}
			if layer == p.Layers {
				v.up = 0
			}
			pl.vs[t] = append(pl.vs[t], v)
		}
	}
	return pl
}

// Build draws the FC+ fabric.
func (p Params) Build() (*Fabric, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p.plan().build(p.Hosts, p.Seed)
}

// Build draws the FC fabric.
func (p FCParams) Build() (*Fabric, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p.plan().build(p.Hosts, p.Seed)
}

// Attempts bound the draws: a level's greedy pairing is redrawn when it
// strands a ToR's up port with only its own down ports left, and the
// whole cabling when it comes out disconnected.
const (
	levelAttempts  = 100
	fabricAttempts = 50
)

// build numbers every virtual switch's ports (ToR by ToR, S^1 first,
// down ports before up ports) and cables adjacent layers: each up port
// of layer i to a down port of layer i+1 on another ToR, drawn at random
// among those whose ToR the up port's ToR has fewest cables to so far,
// then trades ends between cables of a level to undo what parallel
// cables remain (untangle), so the physical graph has as few as the
// draw allows: none once a ToR has more peers than ports.
func (pl plan) build(hosts int, seed uint64) (*Fabric, error) {
	lay := topo.ToRLayout{ToRs: pl.tors, Hosts: hosts, FabricPorts: pl.ports}
	f := &Fabric{Layout: lay, Layers: pl.layers, Virtual: make([][]VirtualSwitch, pl.tors), planned: pl.name}
	type stub struct{ tor, port int } // port: fabric index
	ups := make([][]stub, pl.layers+1)
	downs := make([][]stub, pl.layers+1)
	for t, vss := range pl.vs {
		next := 0
		for _, v := range vss {
			vs := VirtualSwitch{Layer: v.layer}
			for range v.down {
				vs.Down = append(vs.Down, lay.Port(next))
				downs[v.layer] = append(downs[v.layer], stub{t, next})
				next++
			}
			for range v.up {
				vs.Up = append(vs.Up, lay.Port(next))
				ups[v.layer] = append(ups[v.layer], stub{t, next})
				next++
			}
			f.Virtual[t] = append(f.Virtual[t], vs)
		}
		if next != pl.ports {
			return nil, fmt.Errorf("%s: ToR %d plans %d ports, has %d", pl.name, t, next, pl.ports)
		}
	}
	for i := 1; i < pl.layers; i++ {
		if len(ups[i]) != len(downs[i+1]) {
			return nil, fmt.Errorf("%s: layer %d has %d ports up, layer %d %d down", pl.name, i, len(ups[i]), i+1, len(downs[i+1]))
		}
	}
	r := prng.New(seed, 1)
	for range fabricAttempts {
		mult := make([]int, pl.tors*pl.tors)
		var cables []topo.ToRCable
		var levels []int
		ok := true
		for i := 1; i < pl.layers && ok; i++ {
			ok = false
			for range levelAttempts {
				c, done := pairLevel(r, len(ups[i]), func(x int) (int, int) { return ups[i][x].tor, ups[i][x].port },
					func(y int) (int, int) { return downs[i+1][y].tor, downs[i+1][y].port }, mult, pl.tors)
				if done {
					cables = append(cables, c...)
					for range c {
						levels = append(levels, i)
					}
					ok = true
					break
				}
			}
		}
		if !ok {
			continue
		}
		untangle(r, cables, levels, mult, pl.tors)
		g, err := lay.Build(pl.name, cables)
		if err != nil {
			return nil, err
		}
		if !g.Connected() {
			continue
		}
		f.Graph = g
		// Server cables come first in the graph (ToRLayout builds them
		// before the fabric's), in order.
		servers := pl.tors * hosts
		f.level = make([]int, len(g.Links))
		f.upward = make([]bool, g.Arcs())
		for l := range g.Links {
			if l < servers {
				f.upward[2*l] = true // server (A) to ToR (B)
				continue
			}
			f.level[l] = levels[l-servers]
			f.upward[2*l] = true // A is the up port's ToR: the lower layer
		}
		return f, nil
	}
	return nil, fmt.Errorf("%s: no connected cabling in %d draws", pl.name, fabricAttempts)
}

// untangle removes parallel cables the greedy pairing could not avoid: a
// second cable between ToRs a and b trades its lower end with another
// cable of the same level, (a,b) and (c,d) becoming (a,d) and (c,b),
// when neither new pair is cabled yet. Trading ends within a level keeps
// every cable between the layers it joined.
func untangle(r *prng.Rand, cables []topo.ToRCable, levels []int, mult []int, tors int) {
	for i := range cables {
		a, b := cables[i].A, cables[i].B
		if mult[a*tors+b] < 2 {
			continue
		}
		for _, j := range r.Perm(len(cables)) {
			c, d := cables[j].A, cables[j].B
			if levels[j] != levels[i] || a == d || c == b || mult[a*tors+d] > 0 || mult[c*tors+b] > 0 {
				continue
			}
			for _, x := range [][3]int{{a, b, -1}, {c, d, -1}, {a, d, 1}, {c, b, 1}} {
				mult[x[0]*tors+x[1]] += x[2]
				mult[x[1]*tors+x[0]] += x[2]
			}
			cables[i].B, cables[j].B = d, b
			cables[i].BPort, cables[j].BPort = cables[j].BPort, cables[i].BPort
			break
		}
	}
}

// pairLevel cables the n up ports of one level to its n down ports. It
// updates mult (cables per ToR pair) and reports false when it strands an
// up port with only its own ToR's down ports left.
func pairLevel(r *prng.Rand, n int, up, down func(int) (tor, port int), mult []int, tors int) ([]topo.ToRCable, bool) {
	order := r.Perm(n)
	free := make([]int, n)
	for i := range free {
		free[i] = i
	}
	var cables []topo.ToRCable
	var best []int
	added := make([]int, 0, n)
	undo := func() {
		for _, m := range added {
			mult[m]--
		}
	}
	for _, x := range order {
		a, ap := up(x)
		best = best[:0]
		low := -1
		for i, y := range free {
			b, _ := down(y)
			if b == a {
				continue
			}
			m := mult[a*tors+b]
			if low < 0 || m < low {
				low = m
				best = best[:0]
			}
			if m == low {
				best = append(best, i)
			}
		}
		if len(best) == 0 {
			undo()
			return nil, false
		}
		i := best[r.IntN(len(best))]
		y := free[i]
		free = slices.Delete(free, i, i+1)
		b, bp := down(y)
		mult[a*tors+b]++
		mult[b*tors+a]++
		added = append(added, a*tors+b, b*tors+a)
		cables = append(cables, topo.ToRCable{A: a, APort: ap, B: b, BPort: bp})
	}
	return cables, true
}
