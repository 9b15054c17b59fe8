package throughput

import (
	"fmt"
	"math"

	"github.com/bcfab/bcfab/model/prng"
)

// Demand is traffic from end Src to end Dst (indices into a list of
// ends: the ToRs of a fabric).
type Demand struct {
	Src, Dst int
	Amount   float64
}

// AllToAll is every end sending amount to every other.
func AllToAll(n int, amount float64) []Demand {
	var d []Demand
	for i := range n {
		for j := range n {
			if i != j {
				d = append(d, Demand{i, j, amount})
			}
		}
	}
	return d
}

// Permutation is end i sending amount to perm[i] (nothing where perm[i]
// is i).
func Permutation(perm []int, amount float64) []Demand {
	var d []Demand
	for i, j := range perm {
		if i != j {
			d = append(d, Demand{i, j, amount})
		}
	}
	return d
}

// RandomDerangement is a uniform permutation of 0..n-1 with no fixed
// point (drawn until it has none, about e draws), seeded.
func RandomDerangement(n int, seed uint64) []int {
	r := prng.New(seed, 3)
	for {
		p := r.Perm(n)
		ok := true
		for i, j := range p {
			if i == j {
				ok = false
				break
			}
		}
		if ok || n < 2 {
			return p
		}
	}
}

// LongestMatching is the near-worst-case permutation of Jyothi et al.
// ("Measuring and understanding throughput of network topologies", SC
// 2016): every end sends to one other, and the pairing maximises the sum
// of their distances, so flows cross as many cables as any permutation
// can make them. It is a maximum-weight perfect matching of the complete
// bipartite graph ends × ends with weight dist[i][j] and i = j excluded,
// solved exactly as an assignment problem (Hungarian algorithm, O(n³)).
// dist[i][j] < 0 (unreachable) is refused.
func LongestMatching(dist [][]int) ([]int, error) {
	n := len(dist)
	if n < 2 {
		return nil, fmt.Errorf("longest matching: %d ends, need 2", n)
	}
	big := 0
	for i := range dist {
		for j, x := range dist[i] {
			if i != j && x < 0 {
				return nil, fmt.Errorf("longest matching: end %d cannot reach end %d", i, j)
			}
			big = max(big, x)
		}
	}
	// Minimise cost = -dist, with the diagonal priced out of reach.
	forbid := float64(big+1) * float64(n+1)
	cost := func(i, j int) float64 {
		if i == j {
			return forbid
		}
		return -float64(dist[i][j])
	}
	return assign(n, cost), nil
}

// assign solves the n × n assignment problem min Σ cost(i, p[i]) by the
// Hungarian algorithm with potentials (rows added one at a time, each by
// a shortest augmenting path over reduced costs).
func assign(n int, cost func(i, j int) float64) []int {
	inf := math.Inf(1)
	u := make([]float64, n+1) // row potentials, 1-based
	v := make([]float64, n+1) // column potentials
	p := make([]int, n+1)     // p[j]: row matched to column j, 0 = none
	way := make([]int, n+1)   // previous column on the augmenting path
	minv := make([]float64, n+1)
	used := make([]bool, n+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = inf
			used[j] = false
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], inf, 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if cur := cost(i0-1, j-1) - u[i0] - v[j]; cur < minv[j] {
					minv[j] = cur
					way[j] = j0
				}
				if minv[j] < delta {
					delta = minv[j]
					j1 = j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	perm := make([]int, n)
	for j := 1; j <= n; j++ {
		perm[p[j]-1] = j - 1
	}
	return perm
}
