package fcplus

import (
	"fmt"

	"github.com/bcfab/bcfab/fabric/topo"
)

// Flow is one flow of a scenario: its servers and the ToRs its path
// crosses, source ToR to destination ToR.
type Flow struct {
	Src, Dst string
	Via      []string
}

// Scenario is a small named FC+ fabric with flows chosen to show a
// deadlock: routed by plain KSP (Routing), the flows' paths close a
// cycle of channel dependencies; routed by DF-KSP they cannot.
type Scenario struct {
	Name    string
	About   string
	Params  Params
	Routing RouteOptions
	Flows   []Flow
}

// Loop is the expander counterpart of BCube's loop scenario: FC+ with 8
// ToRs of 4 fabric ports (v = 3, so k = 3 layers) and 2 servers each.
// Under plain shortest-path routing (K = 1) four two-hop flows chase each
// other around the ring tor6 -> tor4 -> tor5 -> tor2 -> tor6, each
// holding one cable of the ring while it waits for the next: with one
// lossless priority and the four flows congested, PFC can pause all four
// cables for ever. Every pair of ToRs keeps at least one path under
// DF-KSP with one priority, so the same fabric runs deadlock-free.
func Loop() Scenario {
	return Scenario{
		Name:    "fcplus-loop",
		About:   "FC+(8 ToRs, s=4, v=3): four 2-hop KSP flows around tor6-tor4-tor5-tor2",
		Params:  Params{ToRs: 8, Ports: 4, Virtual: 3, Hosts: 2, Seed: 2},
		Routing: RouteOptions{K: 1, Seed: 1},
		Flows: []Flow{
			{Src: "h4", Dst: "h8", Via: []string{"tor2", "tor6", "tor4"}},
			{Src: "h12", Dst: "h10", Via: []string{"tor6", "tor4", "tor5"}},
			{Src: "h8", Dst: "h4", Via: []string{"tor4", "tor5", "tor2"}},
			{Src: "h10", Dst: "h12", Via: []string{"tor5", "tor2", "tor6"}},
		},
	}
}

// Scenarios lists the named scenarios.
func Scenarios() []Scenario { return []Scenario{Loop()} }

// LookupScenario finds a scenario by name.
func LookupScenario(name string) (Scenario, error) {
	var names []string
	for _, s := range Scenarios() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Scenario{}, fmt.Errorf("scenario %q: want one of %v", name, names)
}

// Paths resolves the flows' ToR paths on the scenario's fabric, each hop
// by the first cable between its two ToRs (the scenario's ring has one
// cable per pair; TestLoopScenario checks these are KSP's arcs).
func (s Scenario) Paths(f *Fabric) ([]topo.Path, error) {
	g := f.Graph
	var out []topo.Path
	for _, fl := range s.Flows {
		var p topo.Path
		for i := 1; i < len(fl.Via); i++ {
			u, ok1 := g.Lookup(fl.Via[i-1])
			v, ok2 := g.Lookup(fl.Via[i])
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("%s: flow %s->%s: no ToR %s or %s", s.Name, fl.Src, fl.Dst, fl.Via[i-1], fl.Via[i])
			}
			a := topo.Arc(-1)
			for port := range g.Nodes[u].Ports {
				if o := g.Out(u, port); g.Head(o).Node == v {
					a = o
					break
				}
			}
			if a < 0 {
				return nil, fmt.Errorf("%s: flow %s->%s: no cable %s-%s", s.Name, fl.Src, fl.Dst, fl.Via[i-1], fl.Via[i])
			}
			p = append(p, a)
		}
		out = append(out, p)
	}
	return out, nil
}
