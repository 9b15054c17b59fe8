package lab

import (
	"math"
	"slices"
	"testing"

	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/fabric/throughput"
	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/lab/workload"
)

// TestPermutation checks the rack permutations of an FC+ fabric: servers
// of one rack go to servers of one other rack, in order; the near-worst
// pairs racks at least as far apart in all as a random permutation does.
func TestPermutation(t *testing.T) {
	f := FabricSpec{Kind: TopologyFCPlus, ToRs: 8, Ports: 4, Virtual: 3, Hosts: 2, Seed: 2}
	g, err := f.Graph()
	if err != nil {
		t.Fatal(err)
	}
	tor := func(srv int) int { at, _ := g.Attachment(srv); return at.Node }
	span := func(perm []int) int {
		sum := 0
		for src, dst := range perm {
			sum += g.Distances(tor(src))[tor(dst)]
		}
		return sum
	}
	if p, err := f.Permutation(workload.PairingUniform, 1); p != nil || err != nil {
		t.Errorf("uniform: %v, %v; want no permutation", p, err)
	}
	worst, err := f.Permutation(workload.PairingNearWorst, 1)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := f.Permutation(workload.PairingNearWorst, 9); !slices.Equal(worst, again) {
		t.Errorf("near-worst depends on the seed: %v, %v", worst, again)
	}
	for seed := uint64(1); seed <= 20; seed++ {
		rnd, err := f.Permutation(workload.PairingRandom, seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, perm := range [][]int{rnd, worst} {
			if len(perm) != len(g.Servers()) {
				t.Fatalf("seed %d: %d hosts in %v", seed, len(perm), perm)
			}
			for src := 0; src < len(perm); src += 2 {
				// Two servers a rack, numbered rack by rack.
				a, b := perm[src], perm[src+1]
				if tor(src) == tor(a) || tor(a) != tor(b) || b != a+1 {
					t.Fatalf("seed %d: rack of h%d, h%d goes to h%d, h%d: %v", seed, src, src+1, a, b, perm)
				}
			}
		}
		if span(rnd) > span(worst) {
			t.Errorf("seed %d: random permutation %v spans %d hops, near-worst %v only %d", seed, rnd, span(rnd), worst, span(worst))
		}
	}
	if _, err := (FabricSpec{Kind: TopologyLeafSpine, Leaves: 1, Spines: 1, Hosts: 4}).Permutation(workload.PairingRandom, 1); err == nil {
		t.Error("one leaf: a permutation of one rack")
	}
}

// TestPermutationThroughput solves, without packets, what the fabric of
// study/experiment/defs/fcplus.yaml carries of its two permutations (seed 1) under
// each routing, as the lab routes it (K = 8, ties from the fabric's
// seed): λ, every server's share of its line rate over the fabric alone
// with each pair's traffic split over its paths at best (exact LP,
// throughput.Exact), and the same share when each pair's traffic is
// split evenly over its paths, as flows hashed onto them are on average
// (the lab's switches pick a flow's path by its hash, whatever the
// path's length). docs/FIDELITY.md sets the experiment's throughputs
// beside these.
func TestPermutationThroughput(t *testing.T) {
	f := FabricSpec{Kind: TopologyFCPlus, ToRs: 8, Ports: 4, Virtual: 3, Hosts: 2, Seed: 2, Paths: 8}
	fab, ro, err := f.fcplus()
	if err != nil {
		t.Fatal(err)
	}
	g := fab.Graph
	want := map[workload.Pairing]map[fcplus.Routing]float64{
		workload.PairingRandom:    {fcplus.DFKSP1: 0.5, fcplus.DFKSP2: 1, fcplus.FC: 0.5, fcplus.KSP: 1.056},
		workload.PairingNearWorst: {fcplus.DFKSP1: 0.5, fcplus.DFKSP2: 0.833, fcplus.FC: 0.5, fcplus.KSP: 0.854},
	}
	wantEven := map[workload.Pairing]map[fcplus.Routing]float64{
		workload.PairingRandom:    {fcplus.DFKSP1: 0.333, fcplus.DFKSP2: 0.459, fcplus.FC: 0.333, fcplus.KSP: 0.4},
		workload.PairingNearWorst: {fcplus.DFKSP1: 0.5, fcplus.DFKSP2: 0.5, fcplus.FC: 0.5, fcplus.KSP: 0.571},
	}
	for pairing, byRouting := range want {
		perm, err := f.Permutation(pairing, 1)
		if err != nil {
			t.Fatal(err)
		}
		for s, lambda := range byRouting {
			rs, err := fab.Routes(s, ro)
			if err != nil {
				t.Fatal(err)
			}
			var cs []throughput.Commodity
			for src := 0; src < len(perm); src += f.Hosts { // a rack's servers go to one rack
				a, _ := g.Attachment(src)
				b, _ := g.Attachment(perm[src])
				cs = append(cs, throughput.Commodity{Src: a.Node, Dst: b.Node, Demand: float64(f.Hosts), Paths: rs.Between(a.Node, b.Node)})
			}
			res, err := throughput.Exact(g, cs)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(res.Lambda-lambda) > 0.001 {
				t.Errorf("%s, %s: λ = %.3f, want %.3f", pairing, s, res.Lambda, lambda)
			}
			load := map[topo.Arc]float64{} // each pair's demand split evenly over its paths
			for _, c := range cs {
				for _, p := range c.Paths {
					for _, arc := range p {
						load[arc] += c.Demand / float64(len(c.Paths))
					}
				}
			}
			most := 0.0
			for arc, l := range load {
				most = max(most, l/g.Capacity(arc))
			}
			if even := 1 / most; math.Abs(even-wantEven[pairing][s]) > 0.001 {
				t.Errorf("%s, %s: λ split evenly = %.3f, want %.3f", pairing, s, even, wantEven[pairing][s])
			}
		}
	}
}
