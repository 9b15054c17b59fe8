package workload

import "github.com/bcfab/bcfab/model/prng"

// stream is one component's random numbers: a stream of the run's seed
// (internal/prng), whose output is fixed by the seed alone, so a seed
// yields the same flows whatever Go release builds the binary.
type stream struct{ r *prng.Rand }

// Components draw from separate streams, so adding an incast or a pattern
// to a run leaves its Poisson flows unchanged.
const (
	streamPoisson = 1
	streamIncast  = 2
	streamPattern = 3
	streamLong    = 4
	// streamPermutation draws a random permutation pairing
	// (RandomDerangement).
	streamPermutation = 5
)

// newStream seeds the stream of a run's seed and a component.
func newStream(seed uint64, component uint64) *stream {
	return &stream{prng.New(seed, component)}
}

// float64 is uniform in [0, 1).
func (s *stream) float64() float64 { return s.r.Float64() }

// exp is exponential with mean 1.
func (s *stream) exp() float64 { return s.r.Exp() }

// intN is uniform in [0, n), n > 0.
func (s *stream) intN(n int) int { return s.r.IntN(n) }

// choose moves k elements of pool, drawn uniformly without replacement,
// to its front and returns them; pool[k:] holds the ones not chosen.
func (s *stream) choose(pool []int, k int) []int { return s.r.Choose(pool, k) }
