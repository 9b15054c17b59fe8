package patch

import "sync/atomic"

// ring is a single-producer single-consumer ring of T, as an AF_XDP ring
// is: the producer writes entries and then publishes prod, the consumer
// reads them and then publishes cons. Its size is a power of two.
type ring[T any] struct {
	// prod is written by the producer only, cons by the consumer only.
	prod, cons atomic.Uint32
	mask       uint32
	entries    []T
}

func newRing[T any](size int) ring[T] {
	return ring[T]{mask: uint32(size - 1), entries: make([]T, size)}
}

// free is the room the producer has.
func (r *ring[T]) free() int { return len(r.entries) - int(r.prod.Load()-r.cons.Load()) }

// used is what the consumer may take.
func (r *ring[T]) used() int { return int(r.prod.Load() - r.cons.Load()) }

// push puts as many of xs as fit and returns how many (producer).
func (r *ring[T]) push(xs []T) int {
	p := r.prod.Load()
	n := min(len(xs), len(r.entries)-int(p-r.cons.Load()))
	for i := range n {
		r.entries[(p+uint32(i))&r.mask] = xs[i]
	}
	r.prod.Store(p + uint32(n))
	return n
}

// pop takes up to len(xs) entries into xs and returns how many (consumer).
func (r *ring[T]) pop(xs []T) int {
	c := r.cons.Load()
	n := min(len(xs), int(r.prod.Load()-c))
	for i := range n {
		xs[i] = r.entries[(c+uint32(i))&r.mask]
	}
	r.cons.Store(c + uint32(n))
	return n
}
