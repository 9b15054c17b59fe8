package api

import (
	"math"
	"testing"
)

func TestRTTBuckets(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 63, 64, 65, 127, 128, 1000, 250_000, 10_000_000, 1 << 39, 1 << 45} {
		i := RTTBucketOf(v)
		if i < prev || i >= RTTBuckets {
			t.Fatalf("bucket of %d = %d (previous %d)", v, i, prev)
		}
		prev = i
		if v >= 64 && v < 1<<40 {
			if got := RTTBucketValue(i); math.Abs(float64(got-v))/float64(v) > 1.0/64 {
				t.Errorf("%d: bucket %d stands for %d", v, i, got)
			}
		}
	}
}

func hist(vals ...int64) RTT {
	var r RTT
	counts := map[int]uint64{}
	for _, v := range vals {
		counts[RTTBucketOf(v)]++
		r.Count++
		r.SumNs += uint64(v)
	}
	for i := 0; i < RTTBuckets; i++ {
		if counts[i] > 0 {
			r.Buckets = append(r.Buckets, RTTBucket{i, counts[i]})
		}
	}
	return r
}

func TestRTTQuantileSub(t *testing.T) {
	old := hist(1e6, 1e6, 1e6)
	now := hist(1e6, 1e6, 1e6, 10e6, 10e6, 10e6, 10e6, 20e6)
	d := now.Sub(old)
	if d.Count != 5 {
		t.Fatalf("count %d", d.Count)
	}
	if p50 := d.Quantile(0.5); math.Abs(float64(p50)-10e6)/10e6 > 0.02 {
		t.Errorf("p50 %d, want 10 ms", p50)
	}
	if p99 := d.Quantile(0.99); math.Abs(float64(p99)-20e6)/20e6 > 0.02 {
		t.Errorf("p99 %d, want 20 ms", p99)
	}
	var sum RTT
	sum.Add(old)
	sum.Add(d)
	if sum.Count != now.Count || sum.Quantile(0.5) != now.Quantile(0.5) {
		t.Errorf("old + diff = %+v, want %+v", sum, now)
	}
	if (RTT{}).Quantile(0.5) != 0 {
		t.Error("empty histogram has a quantile")
	}
}
