package workload

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// stream is one component's random numbers. It draws only raw 64-bit words
// from a math/rand/v2 PCG, whose output is fixed by its definition, and
// derives uniforms, exponentials and bounded integers here, so a seed
// yields the same flows whatever Go release builds the binary (rand.Rand's
// derived methods carry no such promise).
type stream struct{ pcg *rand.PCG }

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

// newStream seeds a PCG from the run's seed and a component number. The
// two PCG seed words go through a mixing function so that neighbouring
// seeds and components start far apart in the generator's sequence.
func newStream(seed uint64, component uint64) *stream {
	return &stream{pcg: rand.NewPCG(mix(seed^component*0x9e3779b97f4a7c15), mix(seed+component))}
}

// mix is the SplitMix64 finaliser: a bijection of 64-bit words that
// spreads every input bit over the output.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// float64 is uniform in [0, 1), a multiple of 2^-53.
func (s *stream) float64() float64 { return float64(s.pcg.Uint64()>>11) * 0x1p-53 }

// exp is exponential with mean 1, by inverse transform of a uniform in
// (0, 1].
func (s *stream) exp() float64 { return -math.Log(1 - s.float64()) }

// intN is uniform in [0, n), n > 0, without bias (Lemire's multiply and
// reject).
func (s *stream) intN(n int) int {
	un := uint64(n)
	hi, lo := bits.Mul64(s.pcg.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(s.pcg.Uint64(), un)
		}
	}
	return int(hi)
}

// choose moves k elements of pool, drawn uniformly without replacement,
// to its front (a partial Fisher-Yates shuffle) and returns them; the
// rest of pool, pool[k:], holds the ones not chosen.
func (s *stream) choose(pool []int, k int) []int {
	for i := range k {
		j := i + s.intN(len(pool)-i)
		pool[i], pool[j] = pool[j], pool[i]
	}
	return pool[:k]
}
