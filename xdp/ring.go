package xdp

import "sync/atomic"

// ring is one of a socket's four rings, shared with the kernel: user space
// produces into the fill ring (addresses of free frames the kernel may
// receive into) and the TX ring (descriptors of frames to send), and
// consumes from the completion ring (addresses of frames the kernel has
// finished sending) and the RX ring (descriptors of received frames). T is
// the entry: a frame address (uint64) or a descriptor (Desc).
//
// Both ends keep a private copy of the index they write and publish it
// with one store per batch, and load the other end's index only when the
// cached copy shows too few entries. A producing ring uses free, produce
// and unconsumed; a consuming ring available and consume.
//
// ring is not safe for concurrent use.
type ring[T uint64 | Desc] struct {
	// mem is the ring's mapping; every slice and pointer below points
	// into it.
	mem []byte
	// entries is the ring's array; its length is a power of two.
	entries []T
	// mask is len(entries)-1; indices grow without bound and wrap through it.
	mask uint32

	// producer is the index of the next entry to write, consumer the
	// index of the next entry to read. User space writes the one of its
	// end, the kernel the other.
	producer *atomic.Uint32
	consumer *atomic.Uint32
	// flags holds XDP_RING_NEED_WAKEUP (fill and TX rings). Written by
	// the kernel.
	flags *atomic.Uint32

	// On a producing ring, cachedProducer is our copy of *producer,
	// published by one store per batch, and cachedConsumer the last
	// *consumer we loaded plus len(entries), so that
	// cachedConsumer-cachedProducer is the number of free entries.
	//
	// On a consuming ring, cachedProducer is the last *producer we
	// loaded, and cachedConsumer our copy of *consumer, published by one
	// store per batch.
	cachedProducer uint32
	cachedConsumer uint32
}

// ringEnd says which end of a ring user space is.
type ringEnd bool

const (
	produces ringEnd = true  // fill and TX rings
	consumes ringEnd = false // completion and RX rings
)

// init points q at the ring of n entries mapped at mem, whose producing
// or consuming end user space is.
func (q *ring[T]) init(mem []byte, off ringOffsets, n int, end ringEnd) {
	q.mem = mem
	q.entries = ringEntries[T](mem, off, n)
	q.mask = uint32(n - 1)
	q.producer, q.consumer, q.flags = ringWords(mem, off)
	q.cachedProducer = q.producer.Load()
	q.cachedConsumer = q.consumer.Load()
	if end == produces {
		q.cachedConsumer += uint32(n)
	}
}

// free returns the number of free entries of a producing ring, loading
// the kernel's consumer index only if the cached value shows fewer than
// want.
func (q *ring[T]) free(want uint32) uint32 {
	if n := q.cachedConsumer - q.cachedProducer; n >= want {
		return n
	}
	q.cachedConsumer = q.consumer.Load() + uint32(len(q.entries))
	return q.cachedConsumer - q.cachedProducer
}

// produce posts as many of batch as fit and returns how many it posted.
func (q *ring[T]) produce(batch []T) int {
	n := min(q.free(uint32(len(batch))), uint32(len(batch)))
	if n == 0 {
		return 0
	}
	idx := q.cachedProducer
	for i, e := range batch[:n] {
		q.entries[(idx+uint32(i))&q.mask] = e
	}
	q.cachedProducer += n
	// The store publishes the entries written above (release).
	q.producer.Store(q.cachedProducer)
	return int(n)
}

// unconsumed returns the number of entries posted to a producing ring
// that the kernel has not taken yet. It always loads the kernel's index.
func (q *ring[T]) unconsumed() uint32 {
	c := q.consumer.Load()
	q.cachedConsumer = c + uint32(len(q.entries))
	return q.cachedProducer - c
}

// available returns the number of entries of a consuming ring ready to
// read, loading the kernel's producer index only if the cached value
// shows fewer than want.
func (q *ring[T]) available(want uint32) uint32 {
	if n := q.cachedProducer - q.cachedConsumer; n >= want {
		return n
	}
	// The load orders the entry reads that follow after it (acquire).
	q.cachedProducer = q.producer.Load()
	return q.cachedProducer - q.cachedConsumer
}

// consume reads up to len(batch) entries into batch and returns how many.
func (q *ring[T]) consume(batch []T) int {
	n := min(q.available(uint32(len(batch))), uint32(len(batch)))
	if n == 0 {
		return 0
	}
	idx := q.cachedConsumer
	for i := range batch[:n] {
		batch[i] = q.entries[(idx+uint32(i))&q.mask]
	}
	q.cachedConsumer += n
	// The store hands the entries back to the kernel (release).
	q.consumer.Store(q.cachedConsumer)
	return int(n)
}
