package xdp

import "sync/atomic"

// txQueue is the TX ring: user space produces descriptors of frames to send,
// the kernel consumes them.
//
// txQueue is not safe for concurrent use.
type txQueue struct {
	// mem is the ring's mapping; every slice and pointer below points
	// into it.
	mem []byte
	// ring holds descriptors; len(ring) is a power of two.
	ring []Desc
	// mask is len(ring)-1; indices grow without bound and wrap through it.
	mask uint32

	// producer is the index of the next entry to fill. Written by user
	// space (this type), read by the kernel.
	producer *atomic.Uint32
	// consumer is the index of the next entry the kernel will take.
	// Written by the kernel.
	consumer *atomic.Uint32
	// flags holds XDP_RING_NEED_WAKEUP. Written by the kernel.
	flags *atomic.Uint32

	// cachedProducer is our copy of *producer, published by one store per
	// batch.
	cachedProducer uint32
	// cachedConsumer is the last *consumer we loaded plus len(ring), so
	// that cachedConsumer-cachedProducer is the number of free entries.
	cachedConsumer uint32
}

func (q *txQueue) init(mem []byte, off ringOffsets, n int) {
	q.mem = mem
	q.ring = ringDescs(mem, off, n)
	q.mask = uint32(n - 1)
	q.producer, q.consumer, q.flags = ringWords(mem, off)
	q.cachedProducer = q.producer.Load()
	q.cachedConsumer = q.consumer.Load() + uint32(n)
}

// free returns the number of free entries, loading the kernel's consumer
// index only if the cached value shows fewer than want.
func (q *txQueue) free(want uint32) uint32 {
	if n := q.cachedConsumer - q.cachedProducer; n >= want {
		return n
	}
	q.cachedConsumer = q.consumer.Load() + uint32(len(q.ring))
	return q.cachedConsumer - q.cachedProducer
}

// produce posts as many of descs as fit and returns how many it posted.
func (q *txQueue) produce(descs []Desc) int {
	n := min(q.free(uint32(len(descs))), uint32(len(descs)))
	if n == 0 {
		return 0
	}
	idx := q.cachedProducer
	for i, d := range descs[:n] {
		q.ring[(idx+uint32(i))&q.mask] = d
	}
	q.cachedProducer += n
	// The store publishes the descriptors written above (release).
	q.producer.Store(q.cachedProducer)
	return int(n)
}

// unconsumed returns the number of descriptors posted that the kernel has
// not taken yet. It always loads the kernel's index.
func (q *txQueue) unconsumed() uint32 {
	c := q.consumer.Load()
	q.cachedConsumer = c + uint32(len(q.ring))
	return q.cachedProducer - c
}
