package transport

// ring is a bitmap over a sliding window of sequence numbers: bit s is
// bit s mod size, so the window [base, base+size) needs no shifting as
// base advances, only the bits it leaves behind cleared.
type ring struct {
	w    []uint64
	mask int64 // size - 1; size is a power of two, at least 64
}

func newRing(n int64) ring {
	size := int64(64)
	for size < n {
		size <<= 1
	}
	return ring{w: make([]uint64, size/64), mask: size - 1}
}

func (r *ring) size() int64 { return r.mask + 1 }

func (r *ring) test(s int64) bool {
	i := s & r.mask
	return r.w[i>>6]&(1<<(i&63)) != 0
}

func (r *ring) set(s int64) {
	i := s & r.mask
	r.w[i>>6] |= 1 << (i & 63)
}

func (r *ring) clear(s int64) {
	i := s & r.mask
	r.w[i>>6] &^= 1 << (i & 63)
}
