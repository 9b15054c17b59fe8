package queues

import "math/bits"

// The layout of a DelayHist: values below 2*delaySub each have a bucket
// of their own; above, every power of two is split into delaySub
// buckets of equal width, so a bucket is at most 1/delaySub of its lower
// edge wide (6.25%).
const (
	delaySubBits = 4
	delaySub     = 1 << delaySubBits
	// DelayBuckets covers every duration below 2^40 ns (about 18 minutes
	// of a lab's time); a longer one is counted in the last bucket.
	DelayBuckets = (41 - delaySubBits) << delaySubBits
)

// DelayHist counts durations in nanoseconds in log-linear buckets (a few
// significant bits of each value, as HDR histograms keep them): what an
// egress's packets waited between joining their queue and starting onto
// the link. Adding one is a few instructions and allocates nothing; two
// histograms of one port taken at two instants subtract (Sub) into what
// happened between them, and histograms of many ports add (Merge).
type DelayHist struct {
	Counts [DelayBuckets]uint64
	SumNs  int64 // every value added, negative ones as 0
	// Early counts the negative values added (in bucket 0 as 0), and
	// EarlyNs sums them (as positive ns): a packet its link started
	// before it joined the queue, which a port catching up on lost time
	// can do to a packet that arrived meanwhile.
	Early   uint64
	EarlyNs int64
}

// DelayBucket is the bucket of ns: its own below 2*delaySub, else
// delaySub per power of two.
func DelayBucket(ns int64) int {
	if ns < 2*delaySub {
		return int(max(ns, 0))
	}
	e := bits.Len64(uint64(ns)) - delaySubBits - 1
	return min(e<<delaySubBits+int(uint64(ns)>>uint(e)), DelayBuckets-1)
}

// DelayBucketRange is the values [lo, hi) bucket i counts; the last
// bucket counts every larger value too.
func DelayBucketRange(i int) (lo, hi int64) {
	if i < 2*delaySub {
		return int64(i), int64(i) + 1
	}
	e := uint(i>>delaySubBits - 1)
	m := int64(i&(delaySub-1) + delaySub)
	return m << e, (m + 1) << e
}

// Add counts one duration of ns; a negative one counts as 0, and in
// Early.
func (h *DelayHist) Add(ns int64) {
	if ns < 0 {
		h.Early++
		h.EarlyNs -= ns
		ns = 0
	}
	h.Counts[DelayBucket(ns)]++
	h.SumNs += ns
}

// N is the number of durations counted.
func (h *DelayHist) N() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Merge adds o's counts to h's.
func (h *DelayHist) Merge(o *DelayHist) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.SumNs += o.SumNs
	h.Early += o.Early
	h.EarlyNs += o.EarlyNs
}

// Sub takes an earlier histogram of the same counter off h, leaving what
// was counted between the two. A bucket that went down (the counter was
// reset in between: its node restarted) makes ok false and leaves h
// as it was.
func (h *DelayHist) Sub(earlier *DelayHist) (ok bool) {
	if h.Early < earlier.Early {
		return false
	}
	for i, c := range earlier.Counts {
		if h.Counts[i] < c {
			return false
		}
	}
	for i, c := range earlier.Counts {
		h.Counts[i] -= c
	}
	h.SumNs -= earlier.SumNs
	h.Early -= earlier.Early
	h.EarlyNs -= earlier.EarlyNs
	return true
}

// Mean is the mean duration in ns (0 when empty).
func (h *DelayHist) Mean() float64 {
	n := h.N()
	if n == 0 {
		return 0
	}
	return float64(h.SumNs) / float64(n)
}

// Quantile is the duration in ns below which a share p (0..1) of the
// counted ones fall, taken linearly inside the bucket that holds it: off
// by less than a bucket's width (6.25% of the value). 0 when empty.
func (h *DelayHist) Quantile(p float64) float64 {
	n := h.N()
	if n == 0 {
		return 0
	}
	p = min(max(p, 0), 1)
	rank := p * float64(n)
	var below uint64
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		if float64(below+c) >= rank {
			lo, hi := DelayBucketRange(i)
			f := (rank - float64(below)) / float64(c)
			return float64(lo) + max(f, 0)*float64(hi-lo)
		}
		below += c
	}
	return float64(h.MaxBound()) // not reached: rank <= n
}

// MaxBound is the upper edge of the highest bucket anything was counted
// in: no duration counted was as long (0 when empty).
func (h *DelayHist) MaxBound() int64 {
	for i := DelayBuckets - 1; i >= 0; i-- {
		if h.Counts[i] != 0 {
			_, hi := DelayBucketRange(i)
			return hi
		}
	}
	return 0
}
