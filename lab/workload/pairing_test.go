package workload

import (
	"slices"
	"strings"
	"testing"
)

// TestPermutationPairing checks a permutation changes only the
// background's destinations: the arrivals, sources and sizes are those
// of uniform pairs with the same seed, and every flow goes to its
// source's image.
func TestPermutationPairing(t *testing.T) {
	c := bcube41(t)
	uniform := generate(t, c)
	c.Pairing, c.Perm = PairingRandom, RandomDerangement(c.Hosts, 7)
	perm := generate(t, c)
	checkSchedule(t, c, perm)
	if len(perm) != len(uniform) {
		t.Fatalf("%d flows, %d under uniform pairs", len(perm), len(uniform))
	}
	for i, f := range perm {
		u := uniform[i]
		if f.Src != u.Src || f.Size != u.Size || f.Start != u.Start || f.Dst != c.Perm[f.Src] {
			t.Fatalf("flow %d: %+v, uniform %+v, perm %v", i, f, u, c.Perm)
		}
	}
}

func TestRandomDerangement(t *testing.T) {
	for n := 2; n <= 40; n++ {
		p := RandomDerangement(n, uint64(n))
		if err := checkDerangement(p); err != nil {
			t.Fatalf("n = %d: %v: %v", n, p, err)
		}
		if q := RandomDerangement(n, uint64(n)); !slices.Equal(p, q) {
			t.Fatalf("n = %d: not the same from one seed: %v, %v", n, p, q)
		}
	}
	// A seed names the same permutation on every Go release (the
	// stream's guarantee).
	if got, want := RandomDerangement(8, 1), RandomDerangement(8, 1); !slices.Equal(got, want) {
		t.Errorf("RandomDerangement(8, 1) = %v then %v", got, want)
	}
	if slices.Equal(RandomDerangement(16, 1), RandomDerangement(16, 2)) {
		t.Error("seeds 1 and 2 drew the same permutation of 16")
	}
}

func TestRackPermutation(t *testing.T) {
	racks := [][]int{{0, 1}, {2, 3}, {4, 5}}
	got, err := RackPermutation(racks, []int{2, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{4, 5, 0, 1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("RackPermutation = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		racks [][]int
		perm  []int
		want  string
	}{
		{racks, []int{0, 2, 1}, "sends to itself"},
		{racks, []int{1, 0}, "3 racks"},
		{[][]int{{0, 1}, {2}}, []int{1, 0}, "holds 1 hosts"},
		{[][]int{{0, 1}, {1, 3}}, []int{1, 0}, "each host once"},
	} {
		if _, err := RackPermutation(tc.racks, tc.perm); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RackPermutation(%v, %v) = %v, want %q", tc.racks, tc.perm, err, tc.want)
		}
	}
}

func TestValidatePairing(t *testing.T) {
	for _, tc := range []struct {
		pairing Pairing
		perm    []int
		want    string
	}{
		{"", nil, ""},
		{PairingUniform, nil, ""},
		{PairingNearWorst, RandomDerangement(16, 1), ""},
		{"worst", nil, "want uniform, random or near-worst"},
		{PairingUniform, RandomDerangement(16, 1), "draw their destinations"},
		{PairingRandom, nil, "a permutation of 0 hosts, want 16"},
		{PairingRandom, []int{1, 0}, "want 16"},
		{PairingRandom, append([]int{0}, RandomDerangement(15, 1)...), "sends to itself"},
	} {
		c := bcube41(t)
		c.Pairing, c.Perm = tc.pairing, tc.perm
		err := c.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("pairing %q, perm %v: %v, want %q", tc.pairing, tc.perm, err, tc.want)
		}
	}
}
