//go:build linux

package swd

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
)

// A switch's DRR weights reach every port's queues as quanta, in queue
// order, the HQ skipped: PortFC's A0..A2 and B at a BCube switch, the
// priorities at a graph fabric's; weights its layout cannot take are
// refused before any port is made. It needs no root: NewNode only plans
// the node.
func TestNewNodeDRRWeights(t *testing.T) {
	const d = queues.DefaultQuantum
	g, err := topo.LeafSpine{Leaves: 2, Spines: 1, HostsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := g.Lookup("leaf0")
	graph := config.NewFabric(g, routesOf(t, g, config.RoutingECMP), leaf)
	for _, c := range []struct {
		name    string
		cfg     config.Node
		ports   int
		want    []int  // every port's quanta
		wantErr string // in part
	}{
		{"bcube portfc", config.Node{Node: "s0.1", N: 4, K: 1, FC: "portfc", DRRWeights: []int{1, 1, 2, 3}}, 4,
			[]int{d, d, 2 * d, 3 * d, d}, ""},
		{"bcube none, a short list", config.Node{Node: "s1.3", N: 4, K: 1, DRRWeights: []int{5}}, 4,
			[]int{5 * d, d, d, d, d}, ""},
		{"bcube no weights", config.Node{Node: "s0.0", N: 4, K: 1, FC: "portfc"}, 4, nil, ""},
		{"graph pfc, P7 last", config.Node{Node: "leaf0", FC: "pfc", Fabric: graph, DRRWeights: []int{1, 1, 1, 4, 1, 1, 2}}, len(graph.Ports),
			[]int{d, d, d, 4 * d, d, d, d, 2 * d}, ""},
		{"bcube, too many", config.Node{Node: "s0.1", N: 4, K: 1, FC: "portfc", DRRWeights: []int{1, 1, 1, 1, 3}}, 0,
			nil, "5 weights for 4 data queues"},
		{"graph, too many", config.Node{Node: "leaf0", FC: "pfc", Fabric: graph, DRRWeights: []int{1, 1, 1, 1, 1, 1, 1, 1}}, 0,
			nil, "8 weights for 7 data queues; under fc pfc a switch port's data queues are P0, P1, P2, P3, P4, P5, P7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Control, cfg.RateBps = "/x.sock", 1e9
			cfg.SetDefaults()
			tp, n, err := cfg.Validate()
			if err != nil {
				t.Fatal(err)
			}
			spec, err := NewNode(&cfg, tp, n, slog.New(slog.DiscardHandler))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(spec.Ports) != c.ports {
				t.Fatalf("%d ports, want %d", len(spec.Ports), c.ports)
			}
			for _, p := range spec.Ports {
				if !slices.Equal(p.Queues.Quantum, c.want) {
					t.Errorf("port %s: quanta %v, want %v", p.Ifname, p.Queues.Quantum, c.want)
				}
				if _, err := queues.NewEgress(withPool(p.Queues)); err != nil {
					t.Errorf("port %s: %v", p.Ifname, err)
				}
			}
		})
	}
}

// withPool is c with queues of its own, as an engine would give it a
// pool.
func withPool(c queues.EgressConfig) queues.EgressConfig {
	c.Capacity = 64
	return c
}
