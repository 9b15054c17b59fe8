package workload

import (
	"errors"
	"fmt"
)

// Pairing is how the Poisson background pairs its hosts.
type Pairing string

// The pairings. A permutation sends every flow of a host to one other
// host, and every host receives from exactly one: each host's link
// carries the load both ways, and what differs is only the fabric
// between. The FC+ paper measures its fabrics under the two
// permutations here.
const (
	// PairingUniform: a source drawn uniformly, a destination uniformly
	// among the other hosts (the default).
	PairingUniform Pairing = "uniform"
	// PairingRandom: a random permutation of the racks without a fixed
	// point, seeded, host i of a rack sending to host i of its rack's
	// image (RackPermutation of RandomDerangement).
	PairingRandom Pairing = "random"
	// PairingNearWorst: the near-worst-case permutation of Jyothi et al.
	// (SC 2016), the rack permutation that maximises the sum of the
	// hop distances between each rack and its image, host i of a rack
	// sending to host i of the image; the fabric's layer finds it (its
	// hop distances are the fabric's).
	PairingNearWorst Pairing = "near-worst"
)

// Pairings lists the pairings, the default first.
var Pairings = []Pairing{PairingUniform, PairingRandom, PairingNearWorst}

// ParsePairing accepts the pairings' names ("" is uniform).
func ParsePairing(s string) (Pairing, error) {
	switch p := Pairing(s); p {
	case "", PairingUniform:
		return PairingUniform, nil
	case PairingRandom, PairingNearWorst:
		return p, nil
	}
	return "", fmt.Errorf("pairing %q: want uniform, random or near-worst", s)
}

// IsPermutation says p pairs hosts by a permutation (Config.Perm).
func (p Pairing) IsPermutation() bool { return p == PairingRandom || p == PairingNearWorst }

// checkPairing checks c's pairing and its permutation.
func (c *Config) checkPairing() error {
	p, err := ParsePairing(string(c.Pairing))
	if err != nil {
		return err
	}
	if !p.IsPermutation() {
		if c.Perm != nil {
			return fmt.Errorf("pairing %s: a permutation is given, but %s pairs draw their destinations", p, p)
		}
		return nil
	}
	if len(c.Perm) != c.Hosts {
		return fmt.Errorf("pairing %s: a permutation of %d hosts, want %d", p, len(c.Perm), c.Hosts)
	}
	return checkDerangement(c.Perm)
}

// checkDerangement checks perm is a permutation of 0..len-1 without a
// fixed point.
func checkDerangement(perm []int) error {
	seen := make([]bool, len(perm))
	for i, j := range perm {
		switch {
		case j < 0 || j >= len(perm):
			return fmt.Errorf("permutation: host %d sends to %d, not a host", i, j)
		case j == i:
			return fmt.Errorf("permutation: host %d sends to itself", i)
		case seen[j]:
			return fmt.Errorf("permutation: host %d receives twice", j)
		}
		seen[j] = true
	}
	return nil
}

// RandomDerangement is a uniform random permutation of 0..n-1 without a
// fixed point, n >= 2, drawn from seed on a stream of its own (a
// uniform shuffle, drawn again until no element stays: about e draws).
func RandomDerangement(n int, seed uint64) []int {
	s := newStream(seed, streamPermutation)
	p := make([]int, n)
	for {
		for i := range p {
			p[i] = i
		}
		s.choose(p, n)
		if n < 2 || checkDerangement(p) == nil {
			return p
		}
	}
}

// RackPermutation is the host permutation of a rack permutation: host i
// of rack r (racks[r][i]) sends to host i of rack perm[r]. Every rack
// must hold as many hosts, the hosts numbered 0..N-1 once each, and perm
// be a permutation of the racks without a fixed point.
func RackPermutation(racks [][]int, perm []int) ([]int, error) {
	if len(racks) < 2 || len(perm) != len(racks) {
		return nil, fmt.Errorf("rack permutation: %d racks, a permutation of %d (want 2 racks or more)", len(racks), len(perm))
	}
	if err := checkDerangement(perm); err != nil {
		return nil, fmt.Errorf("rack %w", err)
	}
	n := 0
	for r, hosts := range racks {
		if len(hosts) != len(racks[0]) {
			return nil, fmt.Errorf("rack permutation: rack %d holds %d hosts, rack 0 %d", r, len(hosts), len(racks[0]))
		}
		n += len(hosts)
	}
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	for r, hosts := range racks {
		for i, h := range hosts {
			if h < 0 || h >= n || out[h] != -1 {
				return nil, errors.New("rack permutation: the racks do not hold each host once")
			}
			out[h] = racks[perm[r]][i]
		}
	}
	return out, nil
}
