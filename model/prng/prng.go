// Package prng is a seeded source of random numbers whose output is fixed
// by the seed alone: it draws raw 64-bit words from math/rand/v2's PCG
// (whose output its definition fixes) and derives uniforms, exponentials,
// bounded integers, choices and shuffles here, so a seed builds the same
// random topology, traffic matrix or workload whatever Go release builds
// the binary (rand.Rand's derived methods carry no such promise).
package prng

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// Rand is a seeded stream. It is not safe for concurrent use.
type Rand struct{ pcg *rand.PCG }

// New seeds a stream from a seed and a stream number: streams of one seed
// are independent, so a construction that draws from several of them
// (wiring, tie-breaking; a workload's components) keeps each one's
// numbers when another changes. The two PCG seed words go through Mix so
// that neighbouring seeds and streams start far apart in the generator's
// sequence.
func New(seed, stream uint64) *Rand {
	return &Rand{pcg: rand.NewPCG(Mix(seed^stream*0x9e3779b97f4a7c15), Mix(seed+stream))}
}

// Mix is the SplitMix64 finaliser: a bijection of 64-bit words that
// spreads every input bit over the output. Callers use it to derive
// per-item seeds (a seed and a pair of node indices, say).
func Mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Uint64 is a raw word.
func (r *Rand) Uint64() uint64 { return r.pcg.Uint64() }

// Float64 is uniform in [0, 1), a multiple of 2^-53.
func (r *Rand) Float64() float64 { return float64(r.pcg.Uint64()>>11) * 0x1p-53 }

// Exp is exponential with mean 1, by inverse transform of a uniform in
// (0, 1].
func (r *Rand) Exp() float64 { return -math.Log(1 - r.Float64()) }

// IntN is uniform in [0, n), n > 0, without bias (Lemire's multiply and
// reject).
func (r *Rand) IntN(n int) int {
	un := uint64(n)
	hi, lo := bits.Mul64(r.pcg.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(r.pcg.Uint64(), un)
		}
	}
	return int(hi)
}

// Shuffle permutes n elements uniformly (Fisher-Yates), calling swap to
// exchange two of them.
func (r *Rand) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, r.IntN(i+1))
	}
}

// Choose moves k elements of pool, drawn uniformly without replacement,
// to its front (a partial Fisher-Yates shuffle) and returns them; the
// rest of pool, pool[k:], holds the ones not chosen.
func (r *Rand) Choose(pool []int, k int) []int {
	for i := range k {
		j := i + r.IntN(len(pool)-i)
		pool[i], pool[j] = pool[j], pool[i]
	}
	return pool[:k]
}

// Perm is a uniform permutation of 0..n-1.
func (r *Rand) Perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}
