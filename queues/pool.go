package queues

import "fmt"

// Pool holds the packets the queues of a node hold, one slot per packet,
// linked into one list per queue: the queues of all the node's egresses
// share it as a switch ASIC's queues share its packet buffer, so no queue
// has a size of its own and the memory is one slot per frame the node can
// hold, not one per frame per queue. Not safe for concurrent use.
type Pool struct {
	slots []poolSlot
	free  int32 // first free slot; -1: none
	used  int
}

type poolSlot struct {
	p    Packet
	next int32 // next slot of its list (or of the free list); -1: none
}

// MaxPool bounds a pool's slots (int32 links).
const MaxPool = 1 << 30

// NewPool returns a pool of n slots.
func NewPool(n int) (*Pool, error) {
	if n <= 0 || n > MaxPool {
		return nil, fmt.Errorf("queues: pool of %d slots, want 1..%d", n, MaxPool)
	}
	p := &Pool{slots: make([]poolSlot, n)}
	for i := range p.slots {
		p.slots[i].next = int32(i + 1)
	}
	p.slots[n-1].next = -1
	return p, nil
}

// Cap is the number of slots; Len how many hold a packet.
func (p *Pool) Cap() int { return len(p.slots) }
func (p *Pool) Len() int { return p.used }

// list is a FIFO of packets in a pool's slots.
type list struct {
	pool       *Pool
	head, tail int32 // -1 when empty
	n, bytes   int
}

func newList(p *Pool) list { return list{pool: p, head: -1, tail: -1} }

func (l *list) Len() int   { return l.n }
func (l *list) Bytes() int { return l.bytes }

// push appends p; it reports false when the pool has no free slot.
func (l *list) push(p Packet) bool {
	pl := l.pool
	i := pl.free
	if i < 0 {
		return false
	}
	s := &pl.slots[i]
	pl.free = s.next
	pl.used++
	s.p, s.next = p, -1
	if l.tail >= 0 {
		pl.slots[l.tail].next = i
	} else {
		l.head = i
	}
	l.tail = i
	l.n++
	l.bytes += int(p.Len)
	return true
}

// pop removes and returns the head; ok is false when l is empty.
func (l *list) pop() (p Packet, ok bool) {
	i := l.head
	if i < 0 {
		return Packet{}, false
	}
	pl := l.pool
	s := &pl.slots[i]
	p = s.p
	l.head = s.next
	if l.head < 0 {
		l.tail = -1
	}
	s.next = pl.free
	pl.free = i
	pl.used--
	l.n--
	l.bytes -= int(p.Len)
	return p, true
}

// peek returns the head without removing it.
func (l *list) peek() (Packet, bool) {
	if l.head < 0 {
		return Packet{}, false
	}
	return l.pool.slots[l.head].p, true
}
