package signaling

// BFC (DESIGN §5), the two halves a node runs on its datapath goroutine:
//
//   - FlowTable: dynamic queue assignment. Each egress port has a table of
//     entries indexed by a hash of (egress port, 5-tuple); an entry holds
//     the physical queue its flow uses, the flow's packets now in the node
//     and when one last arrived or left. A flow with packets in the node,
//     or seen within the sticky time (2 one-hop RTTs), keeps its queue, so
//     it is never reordered; otherwise it takes an empty queue (one with no
//     packet of any flow in it), or a random one when none is empty.
//   - Backpressure: a pause counter per (ingress port, upstream queue) —
//     the queue of the neighbour that sent the frame, carried in the frame.
//     A frame joining a queue longer than Th (one-hop BDP / active queues)
//     counts toward its counter, and the neighbour is told Pause(upstreamQ)
//     when the counter goes 0 -> 1; when that frame leaves, Resume at
//     1 -> 0. Every Refresh each port sends the bitmap of upstream queues
//     it holds paused, and for ResumeRepeats refreshes after a Resume
//     (hold.go); a receiver applies it with a hold of Hold (default 1 s),
//     so a pause holds while its sender is late, a lost Pause is
//     repaired within a refresh and a lost Resume by the next bitmap.

import (
	"math/bits"
	"net"
)

// flowEntry is one slot of a port's flow table.
type flowEntry struct {
	queue    int16
	assigned bool
	packets  int32
	last     int64 // last arrival or departure of one of its packets
}

// FlowTable assigns flows to the data queues of each egress port of a node.
type FlowTable struct {
	queues  int   // data queues per port (the HQ is not assigned)
	size    int   // entries per port
	sticky  int64 // ns
	entries [][]flowEntry
	load    [][]int32 // packets in the node per (port, queue)
	empty   []uint64  // per port: bit q set when queue q holds no packet
	rng     uint64
	hashed  bool // queue = hash mod queues, fixed (BFCConfig.Hashed)
}

// NewFlowTable returns the table of a node with ports egress ports of
// queues data queues each (at most 64), size entries per port, and the
// sticky time in ns; seed fixes the random choices.
func NewFlowTable(ports, queues, size int, sticky int64, seed uint64) *FlowTable {
	t := &FlowTable{queues: queues, size: size, sticky: sticky, rng: seed,
		entries: make([][]flowEntry, ports), load: make([][]int32, ports), empty: make([]uint64, ports)}
	all := uint64(1)<<queues - 1
	if queues == 64 {
		all = ^uint64(0)
	}
	for p := range t.entries {
		t.entries[p] = make([]flowEntry, size)
		t.load[p] = make([]int32, queues)
		t.empty[p] = all
	}
	return t
}

// NewHashedFlowTable returns the table of NewFlowTable whose flows keep
// the queue their entry gives them, entry modulo queues, whether or not
// another flow has it (BFCConfig.Hashed): stochastic fair queueing. It
// needs no sticky time or random choice, and Enqueued and Dequeued only
// count.
func NewHashedFlowTable(ports, queues, size int) *FlowTable {
	t := NewFlowTable(ports, queues, size, 0, 0)
	t.hashed = true
	return t
}

// Assign returns the table entry of the flow whose (egress port, 5-tuple)
// hash is hash at port, and the queue its next packet joins at now.
func (t *FlowTable) Assign(port int, hash uint64, now int64) (entry, queue int) {
	entry = int(hash % uint64(t.size))
	e := &t.entries[port][entry]
	switch {
	case t.hashed:
		// By the entry, so flows sharing an entry share a queue as
		// they share its packet count.
		e.queue = int16(entry % t.queues)
		e.assigned = true
	case !e.assigned || (e.packets == 0 && now-e.last > t.sticky):
		e.queue = int16(t.pick(port))
		e.assigned = true
	}
	e.last = now
	return entry, int(e.queue)
}

// pick is an empty queue of port, the first after a random point, or a
// random queue when none is empty.
func (t *FlowTable) pick(port int) int {
	r := int(t.rand() % uint64(t.queues))
	if m := t.empty[port]; m != 0 {
		return nextAfter(m, r-1)
	}
	return r
}

// nextAfter is the first set bit of m after bit i, cyclically; m != 0.
func nextAfter(m uint64, i int) int {
	if i >= 0 && i < 63 {
		if hi := m >> uint(i+1) << uint(i+1); hi != 0 {
			return bits.TrailingZeros64(hi)
		}
	}
	return bits.TrailingZeros64(m)
}

func (t *FlowTable) rand() uint64 {
	t.rng += 0x9E3779B97F4A7C15
	z := t.rng
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// Enqueued records that a packet of entry joined its queue at port.
func (t *FlowTable) Enqueued(port, entry int, now int64) {
	e := &t.entries[port][entry]
	e.packets++
	e.last = now
	q := int(e.queue)
	t.load[port][q]++
	t.empty[port] &^= 1 << q
}

// Dequeued records that a packet of entry left port (sent or dropped).
func (t *FlowTable) Dequeued(port, entry int, now int64) {
	e := &t.entries[port][entry]
	e.packets--
	e.last = now
	q := int(e.queue)
	if t.load[port][q]--; t.load[port][q] == 0 {
		t.empty[port] |= 1 << q
	}
}

// Active is the number of port's queues holding packets.
func (t *FlowTable) Active(port int) int {
	return t.queues - bits.OnesCount64(t.empty[port])
}

// BFCPort is a port that runs BFC backpressure with its neighbour.
type BFCPort struct {
	Own, Peer net.HardwareAddr // this port's MAC and the neighbour's
}

// BFCCounters are one port's BFC frames.
type BFCCounters struct {
	TxPause, TxResume, TxState uint64
	RxPause, RxResume, RxState uint64
	Lost, Ignored              uint64
}

// Map flattens c for stats.
func (c *BFCCounters) Map() map[string]uint64 {
	m := make(map[string]uint64, 8)
	c.Fill(m)
	return m
}

// Fill sets Map's names in m. Once m holds them it allocates nothing.
func (c *BFCCounters) Fill(m map[string]uint64) {
	m["tx_pause"], m["tx_resume"], m["tx_state"] = c.TxPause, c.TxResume, c.TxState
	m["rx_pause"], m["rx_resume"], m["rx_state"] = c.RxPause, c.RxResume, c.RxState
	m["lost"], m["ignored"] = c.Lost, c.Ignored
}

// Backpressure is BFC's per-upstream-queue pausing for one node.
type Backpressure struct {
	env     Env
	ports   []BFCPort
	queues  int   // physical queues of a neighbour's port that can be paused
	refresh int64 // ns between bitmaps
	count   [][]int32
	held    []uint64 // per ingress port: upstream queues held paused
	repair  []uint8  // per ingress port: bitmaps still owed after its last Resume
	holdNs  int64    // how long a receiver keeps a pause it does not hear again
	next    int64
	seq     []uint32
	C       []BFCCounters
	buf     [FrameLen]byte
}

// NewBackpressure returns the backpressure logic of a node whose ports
// 0..len(ports)-1 run BFC with neighbours of queues queues each (at most
// 64), repeating its bitmaps every refresh ns; as a receiver it holds a
// pause for hold ns (0: DefaultHold) unless renewed or resumed.
func NewBackpressure(env Env, ports []BFCPort, queues int, refresh, hold int64) *Backpressure {
	n := len(ports)
	b := &Backpressure{env: env, ports: ports, queues: queues, refresh: refresh, holdNs: holdOr(hold),
		count: make([][]int32, n), held: make([]uint64, n), repair: make([]uint8, n), seq: make([]uint32, n), C: make([]BFCCounters, n)}
	for i := range b.count {
		b.count[i] = make([]int32, queues)
	}
	return b
}

// Threshold is BFC's Th for an egress whose one-hop BDP is bdp bytes and
// which has active queues holding packets.
func Threshold(bdp, active int) int { return bdp / max(active, 1) }

// Arrived runs when a frame from upstream queue up of the neighbour on
// port in joins a queue holding qbytes (before it) against threshold th.
// It reports whether the frame counts toward the pause: the caller keeps
// that with the frame and passes it to Left.
func (b *Backpressure) Arrived(in, up, qbytes, th int) (counted bool) {
	if in >= len(b.ports) || up >= b.queues || qbytes <= th {
		return false
	}
	b.hold(in, up)
	return true
}

// hold counts a frame of (in, up) and pauses up at 0 -> 1.
func (b *Backpressure) hold(in, up int) {
	if b.count[in][up]++; b.count[in][up] == 1 {
		b.held[in] |= 1 << up
		b.send(in, TypePause, uint16(up), 0)
		b.C[in].TxPause++
		b.arm()
	}
}

// arm starts the bitmap timer if it is not running.
func (b *Backpressure) arm() {
	if b.next == 0 {
		b.next = b.env.Now() + b.refresh
	}
}

// Left runs when a frame Arrived counted leaves the node (sent or dropped).
func (b *Backpressure) Left(in, up int) {
	if b.count[in][up]--; b.count[in][up] == 0 {
		b.held[in] &^= 1 << up
		b.send(in, TypeResume, uint16(up), 0)
		b.C[in].TxResume++
		b.repair[in] = ResumeRepeats
		b.arm()
	}
}

// Held is the bitmap of upstream queues port in holds paused.
func (b *Backpressure) Held(in int) uint64 { return b.held[in] }

func (b *Backpressure) send(in int, typ uint8, up uint16, bitmap uint64) {
	b.seq[in]++
	p := b.ports[in]
	PutBFC(b.buf[:], p.Peer, p.Own, typ, b.seq[in], up, bitmap, uint16(b.queues))
	if !b.env.Emit(in, b.buf[:]) {
		b.C[in].Lost++
	}
}

// NextTick is when the bitmaps are due, or -1 when no port holds
// anything or owes bitmaps after a Resume.
func (b *Backpressure) NextTick() int64 {
	if b.next == 0 {
		return -1
	}
	return b.next
}

// Tick sends the bitmap of every port that holds a queue paused or has
// sent a Resume in the last ResumeRepeats refreshes (so a lost Resume is
// repaired by a bitmap that no longer has it).
func (b *Backpressure) Tick(now int64) {
	if b.next == 0 || now < b.next {
		return
	}
	any := false
	for in := range b.ports {
		if b.held[in] == 0 && b.repair[in] == 0 {
			continue
		}
		b.send(in, TypeState, 0, b.held[in])
		b.C[in].TxState++
		if b.repair[in] > 0 {
			b.repair[in]--
		}
		any = any || b.held[in] != 0 || b.repair[in] > 0
	}
	if any {
		b.next = now + b.refresh
	} else {
		b.next = 0
	}
}

// OnSignal applies a BFC frame that arrived on port in to that port's
// egress: Pause and a set bitmap bit pause the queue for the hold
// (renewed by every bitmap), Resume and a clear bit resume it.
func (b *Backpressure) OnSignal(in int, sig Signal) {
	if in >= len(b.ports) || sig.Scheme() != SchemeBFC {
		if in < len(b.C) {
			b.C[in].Ignored++
		}
		return
	}
	eg := b.env.Egress(in)
	now := b.env.Now()
	hold := now + b.holdNs
	c := &b.C[in]
	switch sig.Type() {
	case TypePause, TypeResume:
		q := int(sig.UpstreamQ())
		if q >= eg.Queues() || q == eg.HQ() {
			c.Ignored++
			return
		}
		if sig.Type() == TypePause {
			c.RxPause++
			eg.Pause(q, now, hold)
		} else {
			c.RxResume++
			eg.Resume(q, now)
		}
	case TypeState:
		c.RxState++
		m := sig.Bitmap()
		for q := 0; q < eg.Queues() && q < 64; q++ {
			switch {
			case q == eg.HQ():
			case m&(1<<q) != 0:
				eg.Pause(q, now, hold)
			case eg.Paused(q):
				eg.Resume(q, now)
			}
		}
	}
}
