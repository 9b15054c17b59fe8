package xdp

import "sync/atomic"

// completionQueue is the completion ring: the kernel produces the addresses
// of frames it has finished sending, user space consumes them.
//
// completionQueue is not safe for concurrent use.
type completionQueue struct {
	// mem is the ring's mapping; every slice and pointer below points
	// into it.
	mem []byte
	// ring holds frame addresses; len(ring) is a power of two.
	ring []uint64
	// mask is len(ring)-1; indices grow without bound and wrap through it.
	mask uint32

	// producer is the index of the next entry the kernel will write.
	// Written by the kernel.
	producer *atomic.Uint32
	// consumer is the index of the next entry to read. Written by user
	// space (this type), read by the kernel.
	consumer *atomic.Uint32

	// cachedProducer is the last *producer we loaded.
	cachedProducer uint32
	// cachedConsumer is our copy of *consumer, published by one store per
	// batch.
	cachedConsumer uint32
}

func (q *completionQueue) init(mem []byte, off ringOffsets, n int) {
	q.mem = mem
	q.ring = ringAddrs(mem, off, n)
	q.mask = uint32(n - 1)
	q.producer, q.consumer, _ = ringWords(mem, off)
	q.cachedProducer = q.producer.Load()
	q.cachedConsumer = q.consumer.Load()
}

// available returns the number of entries ready to read, loading the
// kernel's producer index only if the cached value shows fewer than want.
func (q *completionQueue) available(want uint32) uint32 {
	if n := q.cachedProducer - q.cachedConsumer; n >= want {
		return n
	}
	// The load orders the entry reads that follow after it (acquire).
	q.cachedProducer = q.producer.Load()
	return q.cachedProducer - q.cachedConsumer
}

// consume reads up to len(addrs) entries into addrs and returns how many.
func (q *completionQueue) consume(addrs []uint64) int {
	n := min(q.available(uint32(len(addrs))), uint32(len(addrs)))
	if n == 0 {
		return 0
	}
	idx := q.cachedConsumer
	for i := range addrs[:n] {
		addrs[i] = q.ring[(idx+uint32(i))&q.mask]
	}
	q.cachedConsumer += n
	// The store hands the entries back to the kernel (release).
	q.consumer.Store(q.cachedConsumer)
	return int(n)
}
