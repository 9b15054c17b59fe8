package queues

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Every bucket's range holds exactly the values DelayBucket puts in it,
// and the ranges tile the line without gaps.
func TestDelayBucketRanges(t *testing.T) {
	var next int64
	for i := 0; i < DelayBuckets; i++ {
		lo, hi := DelayBucketRange(i)
		if lo != next || hi <= lo {
			t.Fatalf("bucket %d: [%d, %d), want it to start at %d", i, lo, hi, next)
		}
		for _, v := range []int64{lo, (lo + hi) / 2, hi - 1} {
			if b := DelayBucket(v); b != i {
				t.Fatalf("DelayBucket(%d) = %d, want %d ([%d, %d))", v, b, i, lo, hi)
			}
		}
		if lo >= 2*delaySub && float64(hi-lo) > float64(lo)/delaySub {
			t.Fatalf("bucket %d [%d, %d) wider than 1/%d of its edge", i, lo, hi, delaySub)
		}
		next = hi
	}
	if next != 1<<40 {
		t.Errorf("the buckets end at %d, want 2^40", next)
	}
	if b := DelayBucket(math.MaxInt64); b != DelayBuckets-1 {
		t.Errorf("DelayBucket(MaxInt64) = %d, want the last", b)
	}
	if b := DelayBucket(-5); b != 0 {
		t.Errorf("DelayBucket(-5) = %d, want 0", b)
	}
}

// Quantiles of a histogram are within a bucket's width of the exact
// ones; Sub and Merge are the counts' difference and sum.
func TestDelayHistQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h DelayHist
	vals := make([]float64, 0, 100000)
	var sum int64
	for range 100000 {
		v := int64(r.ExpFloat64() * 40000) // a queue's waits, ns
		h.Add(v)
		vals = append(vals, float64(v))
		sum += v
	}
	slices.Sort(vals)
	for _, p := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := vals[int(p*float64(len(vals)))-1]
		got := h.Quantile(p)
		if math.Abs(got-exact) > exact/delaySub+1 {
			t.Errorf("p%g: %.0f ns, exact %.0f", p*100, got, exact)
		}
	}
	if h.N() != 100000 || h.SumNs != sum {
		t.Errorf("N %d, sum %d; want 100000, %d", h.N(), h.SumNs, sum)
	}
	if m := h.MaxBound(); float64(m) <= vals[len(vals)-1] || float64(m) > vals[len(vals)-1]*(1+1.0/delaySub)+1 {
		t.Errorf("MaxBound %d for a largest value of %.0f", m, vals[len(vals)-1])
	}

	before := h
	for range 1000 {
		h.Add(5_000_000)
	}
	h.Add(-3)
	d := h
	if !d.Sub(&before) {
		t.Fatal("Sub refused a later histogram of the same counter")
	}
	if d.N() != 1001 || d.SumNs != 5_000_000_000 || d.Counts[0] != 1 || d.Early != 1 || d.EarlyNs != 3 {
		t.Errorf("the difference: N %d, sum %d, bucket 0 %d", d.N(), d.SumNs, d.Counts[0])
	}
	if q := d.Quantile(0.5); math.Abs(q-5e6) > 5e6/delaySub {
		t.Errorf("the difference's median %.0f, want about 5 ms", q)
	}
	if before.Sub(&h) {
		t.Error("Sub took a later histogram off an earlier one")
	}
	var m DelayHist
	m.Merge(&before)
	m.Merge(&d)
	if m != h {
		t.Error("Merge of the parts is not the whole")
	}
	var empty DelayHist
	if empty.Quantile(0.99) != 0 || empty.Mean() != 0 || empty.MaxBound() != 0 {
		t.Error("an empty histogram's figures are not 0")
	}
}

func TestDelayHistAddAllocs(t *testing.T) {
	var h DelayHist
	if n := testing.AllocsPerRun(1000, func() { h.Add(123456) }); n != 0 {
		t.Errorf("Add allocates %v times", n)
	}
}

func BenchmarkDelayHistAdd(b *testing.B) {
	var h DelayHist
	v := int64(1)
	for b.Loop() {
		h.Add(v)
		v = (v*2654435761 + 1) & (1<<36 - 1)
	}
}
