package api

import (
	"math"
	"math/bits"
	"slices"
)

// RTT is a histogram of one-hop round trips a port measured with timing
// probes (the fidelity monitor), in nanoseconds. Buckets are log-linear:
// 64 per power of two, so a value is known within 1.6%. It is cumulative
// since the node started (or since its delay compensation was last set);
// a run takes the difference of two snapshots (Sub).
type RTT struct {
	Count   uint64      `json:"count"`
	SumNs   uint64      `json:"sum_ns"`
	MinNs   int64       `json:"min_ns,omitempty"`
	MaxNs   int64       `json:"max_ns,omitempty"`
	Buckets []RTTBucket `json:"buckets,omitempty"`
}

// RTTBucket is one nonempty bucket: its index (RTTBucketOf) and count.
type RTTBucket struct {
	Index int    `json:"i"`
	Count uint64 `json:"n"`
}

// RTTBuckets is the number of buckets: values up to 2^40 ns (18
// minutes); larger ones land in the last.
const (
	rttSub     = 6 // log2 of the buckets per power of two
	RTTBuckets = (40 - rttSub + 1) << rttSub
)

// RTTBucketOf is the bucket of a value in ns (negative counts as 0).
func RTTBucketOf(ns int64) int {
	if ns < 1<<rttSub {
		return int(max(ns, 0))
	}
	v := uint64(ns)
	exp := bits.Len64(v) - 1 // >= rttSub
	i := (exp-rttSub+1)<<rttSub + int(v>>(exp-rttSub)&(1<<rttSub-1))
	return min(i, RTTBuckets-1)
}

// RTTBucketValue is the middle of bucket i, in ns.
func RTTBucketValue(i int) int64 {
	lo, w := rttBucket(i)
	return lo + w/2
}

// rttBucket is bucket i's lowest value and width, in ns.
func rttBucket(i int) (lo, width int64) {
	if i < 1<<rttSub {
		return int64(i), 1
	}
	exp := i>>rttSub + rttSub - 1
	width = int64(1) << (exp - rttSub)
	return int64(1)<<exp + int64(i&(1<<rttSub-1))*width, width
}

// Sub is r less an earlier snapshot of the same histogram: what was
// measured between the two. Min and Max are r's (a histogram does not
// know the window's).
func (r RTT) Sub(old RTT) RTT {
	out := RTT{Count: r.Count - old.Count, SumNs: r.SumNs - old.SumNs, MinNs: r.MinNs, MaxNs: r.MaxNs}
	if r.Count < old.Count { // the node restarted or reset: all of r is new
		return r
	}
	prev := map[int]uint64{}
	for _, b := range old.Buckets {
		prev[b.Index] = b.Count
	}
	for _, b := range r.Buckets {
		if n := b.Count - min(prev[b.Index], b.Count); n > 0 {
			out.Buckets = append(out.Buckets, RTTBucket{b.Index, n})
		}
	}
	return out
}

// Add merges o into r.
func (r *RTT) Add(o RTT) {
	if o.Count == 0 {
		return
	}
	if r.Count == 0 || o.MinNs < r.MinNs {
		r.MinNs = o.MinNs
	}
	r.MaxNs = max(r.MaxNs, o.MaxNs)
	r.Count += o.Count
	r.SumNs += o.SumNs
	m := map[int]uint64{}
	for _, b := range r.Buckets {
		m[b.Index] += b.Count
	}
	for _, b := range o.Buckets {
		m[b.Index] += b.Count
	}
	r.Buckets = r.Buckets[:0]
	for i, n := range m {
		r.Buckets = append(r.Buckets, RTTBucket{i, n})
	}
	slices.SortFunc(r.Buckets, func(a, b RTTBucket) int { return a.Index - b.Index })
}

// Quantile is the value (ns) below which a share q of the samples lie;
// 0 without samples. Within its bucket the value is interpolated as if
// the bucket's samples were spread evenly over it.
func (r RTT) Quantile(q float64) int64 {
	var total uint64
	for _, b := range r.Buckets {
		total += b.Count
	}
	if total == 0 {
		return 0
	}
	rank := max(1, uint64(math.Ceil(q*float64(total)))) // nearest rank
	var seen uint64
	for _, b := range r.Buckets {
		if seen+b.Count >= rank {
			lo, w := rttBucket(b.Index)
			return lo + int64(float64(w)*(float64(rank-seen)-0.5)/float64(b.Count))
		}
		seen += b.Count
	}
	return RTTBucketValue(r.Buckets[len(r.Buckets)-1].Index)
}

// MeanNs is the samples' mean in ns; 0 without samples.
func (r RTT) MeanNs() int64 {
	if r.Count == 0 {
		return 0
	}
	return int64(r.SumNs / r.Count)
}
