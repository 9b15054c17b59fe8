// Package queues is the egress of a port: queues of frames held by
// reference (UMEM descriptors, never copies), byte accounting, and the
// shaper that paces a port to its emulated link rate. Pure Go, no
// privileges, allocation-free once built. Nothing here is safe for
// concurrent use: one datapath goroutine owns an egress.
package queues

import "fmt"

// Packet is a frame held by reference.
type Packet struct {
	Addr uint64 // UMEM address of the first byte
	Len  uint32
	Meta uint64 // owner-defined (the engine keeps the ingress port here)
	// At is when the packet joined its queue on the owner's clock (ns;
	// the engine's: its arrival in the model), carried for the owner to
	// time its wait.
	At int64
}

// FIFO is a bounded ring of packets with byte accounting.
type FIFO struct {
	ring       []Packet
	mask       uint32
	head, tail uint32 // head: next to pop; tail: next free slot
	bytes      int
}

// NewFIFO returns a FIFO holding up to capacity packets (a power of two).
func NewFIFO(capacity int) (*FIFO, error) {
	if capacity <= 0 || capacity&(capacity-1) != 0 {
		return nil, fmt.Errorf("queues: fifo capacity %d is not a power of two", capacity)
	}
	return &FIFO{ring: make([]Packet, capacity), mask: uint32(capacity - 1)}, nil
}

func (q *FIFO) Len() int   { return int(q.tail - q.head) }
func (q *FIFO) Cap() int   { return len(q.ring) }
func (q *FIFO) Bytes() int { return q.bytes }
func (q *FIFO) Full() bool { return q.Len() == len(q.ring) }

// Push appends p; it reports false when the ring is full.
func (q *FIFO) Push(p Packet) bool {
	if q.Full() {
		return false
	}
	q.ring[q.tail&q.mask] = p
	q.tail++
	q.bytes += int(p.Len)
	return true
}

// Peek returns the head without removing it.
func (q *FIFO) Peek() (Packet, bool) {
	if q.head == q.tail {
		return Packet{}, false
	}
	return q.ring[q.head&q.mask], true
}

// Pop removes and returns the head.
func (q *FIFO) Pop() (Packet, bool) {
	if q.head == q.tail {
		return Packet{}, false
	}
	p := q.ring[q.head&q.mask]
	q.head++
	q.bytes -= int(p.Len)
	if q.head == q.tail {
		// Empty: the next packet takes slot 0 again, a line the CPU
		// still holds, rather than the next of a ring that a busy worker
		// turns through its caches only every capacity packets.
		q.head, q.tail = 0, 0
	}
	return p, true
}
