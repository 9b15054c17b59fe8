package lab

import (
	"fmt"

	"github.com/bcfab/bcfab/fabric/throughput"
	"github.com/bcfab/bcfab/lab/workload"
)

// Permutation is the background's permutation of the servers of f under
// pairing (workload.Config.Perm), as the throughput analysis pairs ToRs
// (docs/FABRICS.md, section 7): the racks (a ToR and its servers) are
// permuted without a fixed point, and server i of a rack sends to server
// i of its rack's image.
//
//   - workload.PairingRandom: a uniform random rack permutation drawn from
//     seed (workload.RandomDerangement);
//   - workload.PairingNearWorst: the longest matching of the ToRs by hop
//     distance on the fabric (throughput.LongestMatching: the exact
//     maximum-weight assignment, the Hungarian algorithm), which does not
//     depend on seed.
//
// Uniform pairs have no permutation: nil.
func (f FabricSpec) Permutation(pairing workload.Pairing, seed uint64) ([]int, error) {
	if !pairing.IsPermutation() {
		return nil, nil
	}
	g, err := f.Graph()
	if err != nil {
		return nil, err
	}
	var tors []int
	var racks [][]int
	for _, srv := range g.Servers() {
		at, ok := g.Attachment(srv)
		if !ok {
			return nil, fmt.Errorf("%s: server %s is not single-homed: no rack to permute", f.Kind, g.Nodes[srv].Name)
		}
		r := -1
		for i, t := range tors {
			if t == at.Node {
				r = i
			}
		}
		if r < 0 {
			r = len(tors)
			tors = append(tors, at.Node)
			racks = append(racks, nil)
		}
		racks[r] = append(racks[r], srv)
	}
	if len(racks) < 2 {
		return nil, fmt.Errorf("%s: pairing %s needs two racks or more, the fabric has %d", f.Kind, pairing, len(racks))
	}
	var perm []int
	if pairing == workload.PairingRandom {
		perm = workload.RandomDerangement(len(racks), seed)
	} else {
		dist := make([][]int, len(tors))
		for i, t := range tors {
			all := g.Distances(t)
			dist[i] = make([]int, len(tors))
			for j, u := range tors {
				dist[i][j] = all[u]
			}
		}
		if perm, err = throughput.LongestMatching(dist); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Kind, err)
		}
	}
	// The servers are nodes 0..S-1, numbered as the workload's hosts.
	hosts, err := workload.RackPermutation(racks, perm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Kind, err)
	}
	return hosts, nil
}
