package workload

import (
	"math"
	"slices"
	"testing"
)

// A run's flows are reproducible by its seed: the first numbers of every
// component's stream, for two seeds, are pinned here. A change here
// changes every workload generated so far.
func TestStreamsPinned(t *testing.T) {
	for _, c := range []struct {
		seed, component uint64
		word            uint64  // the first raw word
		uniform, exp    float64 // then float64 and exp
		ints            []int   // then intN(10), intN(1000), intN(1<<40)
		pool            []int   // then choose(0..7, 3): pool[:3] is the choice
	}{
		{1, streamPoisson, 0x7dba82207fe0b61a, 0.4799585348510439, 1.7460236993398992, []int{2, 548, 311649406206}, []int{5, 1, 6, 3, 4, 0, 2, 7}},
		{1, streamIncast, 0xf82fa5908034b7cc, 0.5518398017667397, 0.3797255102644691, []int{4, 266, 27534977028}, []int{1, 6, 0, 3, 4, 5, 2, 7}},
		{1, streamPattern, 0xc344d2263ea11f18, 0.5985381820877459, 0.8016024732092476, []int{7, 339, 747917669388}, []int{5, 6, 3, 2, 4, 0, 1, 7}},
		{1, streamLong, 0xaaa790a574f08af6, 0.24420375015279472, 0.36063885728375233, []int{2, 274, 446579963970}, []int{0, 1, 4, 3, 2, 5, 6, 7}},
		{1, streamPermutation, 0x644b7f25e898f57f, 0.6278011180297799, 1.0077123347054346, []int{5, 152, 971704237765}, []int{7, 5, 4, 3, 2, 1, 6, 0}},
		{42, streamPoisson, 0xfaf4c10ceb4a035b, 0.8067086734758261, 1.191890270423945, []int{4, 907, 498581566197}, []int{1, 4, 7, 3, 0, 5, 6, 2}},
		{42, streamIncast, 0xc08ad5a367f8f46b, 0.07612455979151445, 1.0736041364006899, []int{6, 478, 724213590332}, []int{1, 5, 4, 3, 2, 0, 6, 7}},
		{42, streamPattern, 0xb73ea17aa8f127aa, 0.8400815221138447, 2.2946352461176467, []int{5, 502, 84346225489}, []int{4, 7, 0, 3, 2, 5, 6, 1}},
		{42, streamLong, 0x7701e12d67ae0096, 0.882142109232148, 1.038898492557303, []int{0, 220, 667554230208}, []int{4, 7, 0, 3, 2, 5, 6, 1}},
		{42, streamPermutation, 0x7b0f3e6658c88eed, 0.17920668103469228, 1.8987406325941973, []int{7, 523, 487809508902}, []int{7, 4, 2, 3, 1, 5, 6, 0}},
	} {
		s := newStream(c.seed, c.component)
		if w := s.r.Uint64(); w != c.word {
			t.Errorf("seed %d component %d: first word %#x, want %#x", c.seed, c.component, w, c.word)
		}
		if u := s.float64(); u != c.uniform {
			t.Errorf("seed %d component %d: float64 %v, want %v", c.seed, c.component, u, c.uniform)
		}
		// math.Log may differ in the last bit between architectures.
		if e := s.exp(); math.Abs(e-c.exp) > 1e-15*c.exp {
			t.Errorf("seed %d component %d: exp %v, want %v", c.seed, c.component, e, c.exp)
		}
		if ints := []int{s.intN(10), s.intN(1000), s.intN(1 << 40)}; !slices.Equal(ints, c.ints) {
			t.Errorf("seed %d component %d: intN %v, want %v", c.seed, c.component, ints, c.ints)
		}
		pool := []int{0, 1, 2, 3, 4, 5, 6, 7}
		if got := s.choose(pool, 3); !slices.Equal(got, c.pool[:3]) || !slices.Equal(pool, c.pool) {
			t.Errorf("seed %d component %d: choose %v leaves %v, want %v", c.seed, c.component, got, pool, c.pool)
		}
	}
}
