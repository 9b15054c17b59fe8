package queues

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// DefaultQuantum is the DRR quantum of a queue when none is given: one full frame.
const DefaultQuantum = 1518

// MaxQueues bounds the queues of one egress (a uint64 bitmap).
const MaxQueues = 64

// MaxDropReasons bounds the drop reasons a caller may count per queue.
const MaxDropReasons = 16

// maxGroups bounds EgressConfig.Groups: PortFC needs one (the A queues of a
// switch port); a few more leave room for other schemes.
const maxGroups = 4

// defaultSeed seeds the ECN marking PRNG when EgressConfig.Seed is 0.
const defaultSeed = 0x9E3779B97F4A7C15

// ECNConfig is RED-like ECN marking on the length in bytes of the queue a
// packet joins, as DCQCN's switches do: no mark below KminBytes, a
// probability rising linearly from 0 at KminBytes to Pmax just below
// KmaxBytes, and always at or above KmaxBytes. KmaxBytes == 0 turns marking
// off (the zero value).
//
// AtDequeue decides on the length of the queue a packet leaves behind,
// as it leaves (MarkLeaving), instead of the length it joins: the
// reference simulator's switches mark so, and their marks tell of a
// queue sooner, by about the time the queue takes to drain.
type ECNConfig struct {
	KminBytes, KmaxBytes int
	Pmax                 float64 // 0 < Pmax <= 1
	AtDequeue            bool
}

// On reports whether c marks at all.
func (c ECNConfig) On() bool { return c.KmaxBytes != 0 }

// Validate reports a configuration that cannot mark sensibly.
func (c ECNConfig) Validate() error {
	switch {
	case c.KminBytes < 0 || c.KmaxBytes < 0:
		return fmt.Errorf("ecn: negative threshold (kmin %d, kmax %d)", c.KminBytes, c.KmaxBytes)
	case c.KminBytes > c.KmaxBytes:
		return fmt.Errorf("ecn: kmin %d above kmax %d", c.KminBytes, c.KmaxBytes)
	case c.On() && !(c.Pmax > 0 && c.Pmax <= 1):
		return fmt.Errorf("ecn: pmax %v outside (0, 1]", c.Pmax)
	}
	return nil
}

// ECNMidBuckets is the number of buckets an ECNHist spreads evenly over
// [KminBytes, KmaxBytes); one below and one at or above make ECNBuckets.
const (
	ECNMidBuckets = 10
	ECNBuckets    = ECNMidBuckets + 2
)

// ECNHist counts an egress's ECN decisions by the length in bytes of the
// queue each packet joined (or left behind, marking at dequeue), the
// length the decision was made on, so that
// marking can be checked against RED's line on real frames. Bucket 0
// holds the lengths below Edges[0] (KminBytes), bucket i in
// 1..ECNMidBuckets those in [Edges[i-1], Edges[i]), and bucket
// ECNBuckets-1 those at or above Edges[ECNMidBuckets] (KmaxBytes), where
// Edges[i] = KminBytes + ceil(i*(KmaxBytes-KminBytes)/ECNMidBuckets): the
// range split evenly, rounded up to the byte. Edges may repeat (KminBytes
// == KmaxBytes, DCTCP's step, or a range under ECNMidBuckets bytes); a
// bucket between two equal edges stays empty.
//
// Decided counts every packet Enqueue decided on (of a queue other than
// the HQ, with marking on), whether it can carry CE or not, and Marked
// those RED marked. Final counts the marks Enqueue returned: a Marker
// hook's answer where the hooks are one, RED's otherwise. The caller's CE
// marks (QueueStats.ECNMarks) are Final's on ECN-capable packets.
type ECNHist struct {
	Edges                  [ECNMidBuckets + 1]int
	Decided, Marked, Final [ECNBuckets]uint64
}

// EgressConfig describes the queues of one egress port.
type EgressConfig struct {
	Queues int // 1..MaxQueues
	HQ     int // index of the strict-priority queue, or -1 for none
	// Strict lists queues served by strict priority after the HQ and
	// before DRR, highest first (a server's relay queue). Unlike the HQ
	// they can be paused.
	Strict  []int
	Quantum []int // per-queue DRR quantum in bytes (len Queues), nil: DefaultQuantum for all (Weighted sets them from weights)
	// Pool, if set, holds the packets of every queue (shared with other
	// egresses of the node); otherwise each queue holds up to Capacity
	// packets of its own (a power of two).
	Pool     *Pool
	Capacity int
	Groups   []uint64 // up to 4 bitmasks of queues whose byte sums are kept (PortFC: the A queues)
	ECN      ECNConfig
	Names    []string // optional per-queue names for stats (len Queues); "" or nil: "q<i>"
	Seed     uint64   // seed of the ECN marking PRNG (0: a fixed default); same seed, same marks
}

// Validate reports the first thing wrong with c.
func (c EgressConfig) Validate() error {
	if c.Queues < 1 || c.Queues > MaxQueues {
		return fmt.Errorf("queues: egress: %d queues, want 1..%d", c.Queues, MaxQueues)
	}
	var seen uint64
	for _, q := range c.Strict {
		if q < 0 || q >= c.Queues || q == c.HQ || seen&(1<<uint(q)) != 0 {
			return fmt.Errorf("queues: egress: strict queue %d: want distinct queues of 0..%d other than the HQ", q, c.Queues-1)
		}
		seen |= 1 << uint(q)
	}
	if c.HQ < -1 || c.HQ >= c.Queues {
		return fmt.Errorf("queues: egress: high-priority queue %d, want -1 or 0..%d", c.HQ, c.Queues-1)
	}
	if c.Pool == nil && (c.Capacity <= 0 || c.Capacity&(c.Capacity-1) != 0 || c.Capacity > MaxPool) {
		return fmt.Errorf("queues: egress: capacity %d is not a power of two up to 2^30", c.Capacity)
	}
	if c.Quantum != nil {
		if len(c.Quantum) != c.Queues {
			return fmt.Errorf("queues: egress: %d quanta for %d queues", len(c.Quantum), c.Queues)
		}
		for i, q := range c.Quantum {
			if q <= 0 {
				return fmt.Errorf("queues: egress: quantum of queue %d is %d, want > 0", i, q)
			}
		}
	}
	if len(c.Groups) > maxGroups {
		return fmt.Errorf("queues: egress: %d groups, at most %d", len(c.Groups), maxGroups)
	}
	all := allQueues(c.Queues)
	for g, m := range c.Groups {
		if m&^all != 0 {
			return fmt.Errorf("queues: egress: group %d (%#x) names queues beyond %d", g, m, c.Queues-1)
		}
	}
	if err := c.ECN.Validate(); err != nil {
		return fmt.Errorf("queues: egress: %w", err)
	}
	if c.Names != nil && len(c.Names) != c.Queues {
		return fmt.Errorf("queues: egress: %d names for %d queues", len(c.Names), c.Queues)
	}
	return nil
}

// MaxWeight is the largest DRR weight (Weighted): a queue of weight w
// sends up to w full frames a visit. Past 1000:1 the round is strict
// priority in all but name, and the quanta stay far from any overflow.
const MaxWeight = 1000

// DataQueues are the queues DRR weights name (Weighted), in index order:
// every queue but the HQ.
func (c EgressConfig) DataQueues() []int {
	var out []int
	for q := range c.Queues {
		if q != c.HQ {
			out = append(out, q)
		}
	}
	return out
}

// Weighted is c with the DRR quanta of weights, one per data queue
// (DataQueues) in order: a queue's quantum is its weight x
// DefaultQuantum, a full frame per unit, so weight 1 is the default and
// the queues' byte shares of a backlogged round are the weights'. A data
// queue past the list has weight 1, as a band of tc's ets without a
// quantum gets one MTU. It refuses more weights than data queues (a
// weight for a queue that is not there), a weight outside 1..MaxWeight,
// and a weight other than 1 on a strict queue, which is served before
// the round and has no share to weigh; its errors say what, for the
// caller to say where. It replaces c's quanta; no weights leave c as it
// is.
func (c EgressConfig) Weighted(weights []int) (EgressConfig, error) {
	if len(weights) == 0 {
		return c, nil
	}
	data := c.DataQueues()
	if len(weights) > len(data) {
		return c, fmt.Errorf("%d weights for %d data queues", len(weights), len(data))
	}
	quanta := make([]int, c.Queues)
	for q := range quanta {
		quanta[q] = DefaultQuantum
	}
	for i, w := range weights {
		q := data[i]
		switch {
		case w < 1 || w > MaxWeight:
			return c, fmt.Errorf("weight %d of queue %s: want 1..%d", w, c.QueueName(q), MaxWeight)
		case w != 1 && slices.Contains(c.Strict, q):
			return c, fmt.Errorf("weight %d of queue %s: a strict queue, served before the round robin, takes no weight but 1", w, c.QueueName(q))
		}
		quanta[q] = w * DefaultQuantum
	}
	c.Quantum = quanta
	return c, nil
}

// QueueName is queue q's name as its egress's stats give it (Names, or
// "q<i>").
func (c EgressConfig) QueueName(q int) string {
	if q < len(c.Names) && c.Names[q] != "" {
		return c.Names[q]
	}
	return fmt.Sprintf("q%d", q)
}

func allQueues(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// QueueStats are the counters of one queue.
type QueueStats struct {
	EnqPackets, EnqBytes, DeqPackets, DeqBytes uint64
	Packets, Bytes, MaxBytes                   int // now queued; MaxBytes: the most ever queued
	Paused                                     bool
	PausedNs                                   int64 // total time paused, including the current pause up to the last Dequeue/Eligible/Pause/Resume call's now
	// MaxPauseNs is the longest single pause, the current one included: a
	// pause extended again and again (PFC refreshes, PortFC states) counts
	// as one. A deadlock watchdog looks at this.
	MaxPauseNs int64
	ECNMarks   uint64
	// IgnoredPauses counts pauses that arrived while the queue was told
	// to ignore them (Override).
	IgnoredPauses uint64
	Overridden    bool
	Drops         [MaxDropReasons]uint64
}

// Hooks let flow control act on queue occupancy. They are called
// synchronously from Enqueue, after the packet joined its queue, and from
// Dequeue, after it left, so QueueBytes and GroupBytes already count the
// change. A hook may pause and resume queues of the egress calling it.
type Hooks interface {
	Enqueued(q int, p Packet)
	Dequeued(q int, p Packet)
}

// Marker is a Hooks value that decides ECN marks itself: when the hooks
// set on an egress implement it, Enqueue (MarkLeaving, marking at
// dequeue) asks it for every packet it would mark or not (a queue other
// than the HQ, marking on), with the length in bytes of queue q before
// the packet joins (after it leaves) and red, the RED
// decision on that length, and marks as it answers. Congestion isolation
// uses it to mark by what it isolated rather than by queue length alone.
type Marker interface {
	Mark(q, qbytes int, red bool) bool
}

// queue is the state of one queue of an egress.
type queue struct {
	fifo     list
	quantum  int
	deficit  int
	groups   uint8 // bit g: the queue belongs to Groups[g]
	until    int64 // pause expiry; meaningful when the queue's bit is set in Egress.timed
	since    int64 // start of the current pause
	pausedNs int64 // time paused in finished pauses
	maxPause int64 // longest finished pause
	lifted   int64 // end of the last pause; 0: never paused
	stats    QueueStats
}

// Egress is the multi-queue egress of a port: one FIFO of descriptors per
// queue, a strict high-priority queue (HQ) served first, deficit round robin
// over the other queues, per-queue pause with optional expiry, byte sums per
// group of queues and ECN marking. Enqueue and Dequeue allocate nothing.
// Times are nanoseconds of a monotonic clock. Not safe for concurrent use:
// one datapath goroutine owns an egress.
type Egress struct {
	q          []queue
	hq         int
	hqBit      uint64 // 0 without an HQ
	lastAt     int64  // the latest Packet.At enqueued (DequeueBy)
	strict     []int  // served in this order after the HQ
	strictMask uint64 // their bits
	groups     [maxGroups]int

	// Bitmaps of queues, bit i for queue i.
	nonEmpty uint64
	paused   uint64
	gated    uint64 // shut by the owner's hooks (Gate), apart from pauses
	timed    uint64 // paused with an expiry
	override uint64 // ignore pauses (a watchdog's recovery)

	expiry   int64 // earliest until among timed; math.MaxInt64 when none
	lastNow  int64 // of the last Dequeue, Eligible, Pause or Resume
	lastLift int64 // when a pause was last lifted

	// DRR: cur is the queue being visited (its quantum already added), or
	// -1 between visits; the next visit goes to the first eligible queue
	// after last, cyclically.
	cur, last int

	packets, bytes int

	ecn      bool
	ecnDeq   bool // decide at dequeue (ECNConfig.AtDequeue)
	kmin     int
	kmax     int
	ecnSlope float64 // marking probability per byte above kmin, in units of 2^-53
	rng      uint64
	hist     ECNHist

	hooks  Hooks
	marker Marker // hooks as a Marker, or nil
	names  []string
}

// NewEgress builds the egress cfg describes, all queues empty and running.
func NewEgress(cfg EgressConfig) (*Egress, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Egress{
		q:      make([]queue, cfg.Queues),
		hq:     cfg.HQ,
		expiry: math.MaxInt64,
		cur:    -1,
		last:   cfg.Queues - 1,
		names:  make([]string, cfg.Queues),
		rng:    cfg.Seed,
	}
	if e.rng == 0 {
		e.rng = defaultSeed
	}
	if cfg.HQ >= 0 {
		e.hqBit = 1 << cfg.HQ
	}
	e.strict = append([]int(nil), cfg.Strict...)
	for _, q := range cfg.Strict {
		e.strictMask |= 1 << uint(q)
	}
	for i := range e.q {
		pool := cfg.Pool
		if pool == nil {
			var err error
			if pool, err = NewPool(cfg.Capacity); err != nil {
				return nil, err
			}
		}
		qu := &e.q[i]
		qu.fifo = newList(pool)
		qu.quantum = DefaultQuantum
		if cfg.Quantum != nil {
			qu.quantum = cfg.Quantum[i]
		}
		for g, m := range cfg.Groups {
			if m&(1<<i) != 0 {
				qu.groups |= 1 << g
			}
		}
		e.names[i] = cfg.QueueName(i)
	}
	if c := cfg.ECN; c.On() {
		e.ecn, e.ecnDeq = true, c.AtDequeue
		e.kmin, e.kmax = c.KminBytes, c.KmaxBytes
		w := c.KmaxBytes - c.KminBytes
		if w > 0 {
			e.ecnSlope = c.Pmax * (1 << 53) / float64(w)
		}
		for i := range e.hist.Edges {
			e.hist.Edges[i] = c.KminBytes + (i*w+ECNMidBuckets-1)/ECNMidBuckets
		}
	}
	return e, nil
}

// Enqueue appends p to queue q at time now (ns). ok is false when q is
// full (no free slot in its pool): then nothing is queued or counted (the caller counts the drop
// with CountDrop). mark is the ECN decision for this packet from the length
// of queue q before it joins (never for the HQ, never when marking is off
// or decided at dequeue);
// the caller sets CE if the packet is ECN-capable and then calls
// CountMark(q). The decision is counted in the egress's ECNHist.
func (e *Egress) Enqueue(q int, p Packet, now int64) (ok, mark bool) {
	qu := &e.q[q]
	before := qu.fifo.bytes
	if !qu.fifo.push(p) {
		return false, false
	}
	if e.ecn && !e.ecnDeq && q != e.hq {
		mark = e.decide(q, before)
	}
	n := int(p.Len)
	e.nonEmpty |= 1 << q
	e.lastAt = max(e.lastAt, p.At)
	e.packets++
	e.bytes += n
	for m := qu.groups; m != 0; m &= m - 1 {
		e.groups[bits.TrailingZeros8(m)] += n
	}
	s := &qu.stats
	s.EnqPackets++
	s.EnqBytes += uint64(n)
	if qu.fifo.bytes > s.MaxBytes {
		s.MaxBytes = qu.fifo.bytes
	}
	if e.hooks != nil {
		e.hooks.Enqueued(q, p)
	}
	return true, mark
}

// MarksAtDequeue says whether the egress decides its ECN marks as packets
// leave (ECNConfig.AtDequeue), by MarkLeaving.
func (e *Egress) MarksAtDequeue() bool { return e.ecnDeq }

// MarkLeaving is the ECN decision for the packet Dequeue just took from
// queue q, on an egress that marks at dequeue: RED (and a Marker hook) on
// the length in bytes q leaves behind, never for the HQ. The caller sets
// CE if the packet is ECN-capable and then calls CountMark(q); the
// decision is counted in the egress's ECNHist by that length.
func (e *Egress) MarkLeaving(q int) bool {
	if !e.ecnDeq || q == e.hq {
		return false
	}
	return e.decide(q, e.q[q].fifo.bytes)
}

// decide is the ECN decision on a queue q of qbytes, counted in the
// ECNHist.
func (e *Egress) decide(q, qbytes int) bool {
	red, b := e.mark(qbytes)
	mark := red
	if e.marker != nil {
		mark = e.marker.Mark(q, qbytes, red)
	}
	h := &e.hist
	h.Decided[b]++
	h.Marked[b] += b2u(red)
	h.Final[b] += b2u(mark)
	return mark
}

// mark is the RED decision for a queue of qbytes, and the ECNHist bucket
// of qbytes.
func (e *Egress) mark(qbytes int) (red bool, bucket int) {
	switch {
	case qbytes < e.kmin:
		return false, 0
	case qbytes >= e.kmax:
		return true, ECNBuckets - 1
	}
	// 0 <= qbytes-kmin < kmax-kmin here: a middle bucket. (The division
	// measured no slower than a multiply by a reciprocal would be.)
	bucket = 1 + (qbytes-e.kmin)*ECNMidBuckets/(e.kmax-e.kmin)
	// splitmix64: a full-period 64-bit generator, good enough for marking
	// and cheap enough for every packet.
	e.rng += 0x9E3779B97F4A7C15
	z := e.rng
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	return float64(z>>11) < float64(qbytes-e.kmin)*e.ecnSlope, bucket
}

// b2u is 1 for true: counters add it without a branch the marks' coin
// flips would mispredict.
func b2u(b bool) uint64 {
	var u uint64
	if b {
		u = 1
	}
	return u
}

// Dequeue removes the next packet to send at now: the HQ first whenever it
// is non-empty (the HQ cannot be paused), else deficit round robin over the
// non-empty, non-paused queues (Shreedhar & Varghese): each visit adds the
// queue's quantum to its deficit and sends head packets while they fit; a
// queue that empties or is paused loses its deficit. A round visits the
// queues in index order, so a queue that becomes eligible is visited when
// the round reaches it rather than at the end of an active list; shares
// are the same. Pauses whose expiry has passed are lifted first. ok is
// false (and q is -1) when no queue is eligible.
func (e *Egress) Dequeue(now int64) (p Packet, q int, ok bool) {
	e.setNow(now)
	return e.dequeue(e.nonEmpty)
}

// DequeueBy is Dequeue of a port whose next frame starts at by in the
// model (its link's schedule, behind now when a late worker catches up,
// or ahead of it): only the queues whose head had arrived by then
// (Packet.At, 0 counting as arrived) compete, as they would have on
// time, and when none had, those whose head arrives first (the link is
// idle until then in the model). A frame that came later never goes
// ahead of one that was waiting when the link got free. When every
// frame queued had arrived by then, it is Dequeue.
func (e *Egress) DequeueBy(now, by int64) (p Packet, q int, ok bool) {
	e.setNow(now)
	if e.lastAt <= by {
		return e.dequeue(e.nonEmpty)
	}
	ready := e.nonEmpty &^ e.paused &^ e.gated
	if e.nonEmpty&e.hqBit != 0 {
		ready |= e.hqBit // never paused
	}
	arrived, first := uint64(0), int64(math.MaxInt64)
	for m := ready; m != 0; m &= m - 1 {
		q := bits.TrailingZeros64(m)
		f := &e.q[q].fifo
		switch at := f.pool.slots[f.head].p.At; {
		case at <= by:
			arrived |= 1 << uint(q)
		case at < first:
			first = at
		}
	}
	if arrived == 0 && ready != 0 {
		for m := ready; m != 0; m &= m - 1 {
			q := bits.TrailingZeros64(m)
			f := &e.q[q].fifo
			if f.pool.slots[f.head].p.At <= first {
				arrived |= 1 << uint(q)
			}
		}
	}
	return e.dequeue(e.nonEmpty & (arrived | ^ready))
}

// dequeue is Dequeue among the non-empty queues of nonEmpty.
func (e *Egress) dequeue(nonEmpty uint64) (p Packet, q int, ok bool) {
	if nonEmpty&e.hqBit != 0 {
		return e.take(e.hq), e.hq, true
	}
	if s := nonEmpty &^ e.paused &^ e.gated & e.strictMask; s != 0 {
		for _, q := range e.strict {
			if s&(1<<uint(q)) != 0 {
				return e.take(q), q, true
			}
		}
	}
	elig := nonEmpty &^ e.paused &^ e.gated &^ e.hqBit &^ e.strictMask
	if elig == 0 {
		return Packet{}, -1, false
	}
	if c := e.cur; c >= 0 && elig&(1<<uint(c)) == 0 {
		// Its head had not arrived (DequeueBy): its turn passes, and its
		// deficit stays for its next.
		e.cur, e.last = -1, c
	}
	credited, n := 0, 0
	for {
		if c := e.cur; c >= 0 {
			qu := &e.q[c]
			f := &qu.fifo
			if l := int(f.pool.slots[f.head].p.Len); l <= qu.deficit {
				qu.deficit -= l
				if f.Len() == 1 {
					qu.deficit = 0
					e.cur, e.last = -1, c
				}
				return e.take(c), c, true
			}
			e.cur, e.last = -1, c
		}
		if n == 0 {
			n = bits.OnesCount64(elig)
		}
		if credited == n {
			// A whole round sent nothing: every eligible head is larger
			// than its queue's deficit (small quanta, large frames). Skip
			// the rounds that would send nothing either.
			e.skipRounds(elig)
			credited = 0
		}
		c := nextAfter(elig, e.last)
		e.cur = c
		e.q[c].deficit += e.q[c].quantum
		credited++
	}
}

// skipRounds adds to every queue of elig the quanta of the DRR rounds that
// would pass before any of their heads fits.
func (e *Egress) skipRounds(elig uint64) {
	r := math.MaxInt
	for m := elig; m != 0; m &= m - 1 {
		qu := &e.q[bits.TrailingZeros64(m)]
		f := &qu.fifo
		need := int(f.pool.slots[f.head].p.Len) - qu.deficit
		if k := (need + qu.quantum - 1) / qu.quantum; k < r {
			r = k
		}
	}
	if r--; r <= 0 {
		return
	}
	for m := elig; m != 0; m &= m - 1 {
		qu := &e.q[bits.TrailingZeros64(m)]
		qu.deficit += r * qu.quantum
	}
}

// nextAfter is the first queue of m after queue i, cyclically; m != 0.
func nextAfter(m uint64, i int) int {
	// Shifts by 64 give 0 in Go, so i == 63 wraps.
	if hi := m >> uint(i+1) << uint(i+1); hi != 0 {
		return bits.TrailingZeros64(hi)
	}
	return bits.TrailingZeros64(m)
}

// take pops the head of non-empty queue q and accounts for it as sent.
func (e *Egress) take(q int) Packet {
	qu := &e.q[q]
	p := e.pop(q)
	qu.stats.DeqPackets++
	qu.stats.DeqBytes += uint64(p.Len)
	if e.hooks != nil {
		e.hooks.Dequeued(q, p)
	}
	return p
}

// Discard removes the head of queue q without sending it, for a caller
// that drops it (and counts the drop with CountDrop). The Dequeued hook
// runs: the packet no longer occupies the buffer. ok is false when q is
// empty.
func (e *Egress) Discard(q int) (p Packet, ok bool) {
	if e.q[q].fifo.Len() == 0 {
		return Packet{}, false
	}
	p = e.pop(q)
	if e.hooks != nil {
		e.hooks.Dequeued(q, p)
	}
	return p, true
}

// pop takes the head of non-empty queue q out of every sum.
func (e *Egress) pop(q int) Packet {
	qu := &e.q[q]
	p, _ := qu.fifo.pop()
	n := int(p.Len)
	if qu.fifo.Len() == 0 {
		e.nonEmpty &^= 1 << q
	}
	e.packets--
	e.bytes -= n
	for m := qu.groups; m != 0; m &= m - 1 {
		e.groups[bits.TrailingZeros8(m)] -= n
	}
	return p
}

// Eligible reports whether Dequeue(now) would return a packet. Like
// Dequeue it lifts the pauses that have expired by now.
func (e *Egress) Eligible(now int64) bool {
	e.setNow(now)
	return e.nonEmpty&^e.paused&^e.gated != 0
}

// setNow advances the egress's clock to now, lifting the pauses that have
// expired by then, so paused state and PausedNs are those at now.
func (e *Egress) setNow(now int64) {
	e.lastNow = now
	if now >= e.expiry {
		e.expire()
	}
}

// expire lifts the pauses whose expiry is at or before lastNow.
func (e *Egress) expire() {
	for m := e.timed; m != 0; m &= m - 1 {
		q := bits.TrailingZeros64(m)
		if u := e.q[q].until; u <= e.lastNow {
			e.lift(q, u)
		}
	}
	e.nextExpiry()
}

// lift ends q's pause at t.
func (e *Egress) lift(q int, t int64) {
	qu := &e.q[q]
	if t > qu.since {
		qu.pausedNs += t - qu.since
		qu.maxPause = max(qu.maxPause, t-qu.since)
	}
	e.paused &^= 1 << q
	e.timed &^= 1 << q
	e.lastLift = max(e.lastLift, t)
	qu.lifted = t
}

// LastLift is when a pause was last lifted (resumed or expired), in ns; 0
// if never.
func (e *Egress) LastLift() int64 { return e.lastLift }

// LiftedAt is when queue q's last pause was lifted, in ns; 0 if it was
// never paused. No packet Dequeue takes from q can start on its link
// earlier: it either waited through that pause or joined q after it.
func (e *Egress) LiftedAt(q int) int64 { return e.q[q].lifted }

// nextExpiry recomputes the cached earliest expiry.
func (e *Egress) nextExpiry() {
	e.expiry = math.MaxInt64
	for m := e.timed; m != 0; m &= m - 1 {
		if u := e.q[bits.TrailingZeros64(m)].until; u < e.expiry {
			e.expiry = u
		}
	}
}

// Pause stops queue q from being dequeued from now until `until` (ns), or
// until Resume when until is 0. Pausing a paused queue updates its expiry;
// an expiry at or before now resumes it. Pausing the HQ is ignored. A
// paused queue loses its DRR deficit, as one that empties does, so pauses
// cannot let it save up credit.
func (e *Egress) Pause(q int, now, until int64) {
	e.setNow(now)
	if q == e.hq {
		return
	}
	bit := uint64(1) << q
	if e.override&bit != 0 {
		e.q[q].stats.IgnoredPauses++
		return
	}
	if until != 0 && until <= now {
		if e.paused&bit != 0 {
			e.resume(q, now)
		}
		return
	}
	qu := &e.q[q]
	if e.paused&bit == 0 {
		e.paused |= bit
		qu.since = now
		qu.deficit = 0
		if e.cur == q {
			e.cur, e.last = -1, q
		}
	}
	if until == 0 {
		e.timed &^= bit
	} else {
		e.timed |= bit
		qu.until = until
	}
	e.nextExpiry()
}

// Resume lifts q's pause at now; it does nothing to a queue that is not
// paused.
func (e *Egress) Resume(q int, now int64) {
	e.setNow(now)
	if e.paused&(1<<q) != 0 {
		e.resume(q, now)
	}
}

func (e *Egress) resume(q int, now int64) {
	timed := e.timed&(1<<q) != 0
	e.lift(q, now)
	if timed {
		e.nextExpiry()
	}
}

// Override makes q ignore pauses (on), resuming it at now, or obey them
// again (off): a watchdog's way to break a pause storm or deadlock.
func (e *Egress) Override(q int, now int64, on bool) {
	bit := uint64(1) << q
	if !on {
		e.override &^= bit
		return
	}
	e.Resume(q, now)
	e.override |= bit
}

// Gate shuts queue q (shut), so that it is not dequeued, or opens it
// again, apart from its pauses: the egress owner's gate, which neither a
// Resume nor a pause's expiry opens, and which counts as no pause time.
// Congestion isolation shuts its congested queue while the flow at its
// head still has frames in the normal queue, so that no flow is
// reordered. A shut queue loses its DRR deficit, as a paused one does.
// The HQ is never shut.
func (e *Egress) Gate(q int, shut bool) {
	bit := uint64(1) << q
	switch {
	case q == e.hq:
	case !shut:
		e.gated &^= bit
	case e.gated&bit == 0:
		e.gated |= bit
		e.q[q].deficit = 0
		if e.cur == q {
			e.cur, e.last = -1, q
		}
	}
}

// Gated reports whether q is shut by its gate (Gate).
func (e *Egress) Gated(q int) bool { return e.gated&(1<<q) != 0 }

// Head is the packet at the head of queue q; ok is false when q is
// empty.
func (e *Egress) Head(q int) (p Packet, ok bool) {
	f := &e.q[q].fifo
	if f.Len() == 0 {
		return Packet{}, false
	}
	return f.pool.slots[f.head].p, true
}

// Overridden reports whether q ignores pauses.
func (e *Egress) Overridden(q int) bool { return e.override&(1<<q) != 0 }

// Paused reports whether q is paused as of the last Dequeue, Eligible,
// Pause or Resume call: those lift the pauses that have expired.
func (e *Egress) Paused(q int) bool { return e.paused&(1<<q) != 0 }

// PausedAt reports whether q is paused at now, lifting first the pauses
// that have expired by then, as Eligible does. A producer that holds
// back from a paused queue asks this: an empty queue is never dequeued,
// so Paused would keep a lapsed pause (one whose Resume was lost) forever.
func (e *Egress) PausedAt(q int, now int64) bool {
	e.setNow(now)
	return e.paused&(1<<q) != 0
}

// NextExpiry is the earliest pause expiry among paused queues with an
// expiry; ok is false when there is none.
func (e *Egress) NextExpiry() (t int64, ok bool) {
	if e.timed == 0 {
		return 0, false
	}
	return e.expiry, true
}

// Queues is the number of queues.
func (e *Egress) Queues() int { return len(e.q) }

// HQ is the index of the strict-priority queue, or -1.
func (e *Egress) HQ() int { return e.hq }

// Len is the number of packets queued in all queues.
func (e *Egress) Len() int { return e.packets }

// Bytes is the number of bytes queued in all queues.
func (e *Egress) Bytes() int { return e.bytes }

// QueueLen is the number of packets in queue q.
func (e *Egress) QueueLen(q int) int { return e.q[q].fifo.Len() }

// QueueBytes is the number of bytes in queue q.
func (e *Egress) QueueBytes(q int) int { return e.q[q].fifo.bytes }

// GroupBytes is the number of bytes queued in the queues of Groups[g]
// (0 for a group not configured), kept incrementally.
func (e *Egress) GroupBytes(g int) int { return e.groups[g] }

// CountDrop counts a packet meant for q that the caller dropped, for
// reason in [0, MaxDropReasons).
func (e *Egress) CountDrop(q int, reason int) { e.q[q].stats.Drops[reason]++ }

// CountMark counts a packet of q that the caller marked CE.
func (e *Egress) CountMark(q int) { e.q[q].stats.ECNMarks++ }

// ECNHist returns a copy of the egress's ECN decisions by queue length;
// ok is false when marking is off (and the histogram empty).
func (e *Egress) ECNHist() (h ECNHist, ok bool) { return e.hist, e.ecn }

// SetHooks sets the hooks called on every enqueue and dequeue; nil: none.
// Hooks that implement Marker decide the egress's ECN marks too.
func (e *Egress) SetHooks(h Hooks) {
	e.hooks = h
	e.marker, _ = h.(Marker)
}

// Stats returns a copy of q's counters.
func (e *Egress) Stats(q int) QueueStats {
	qu := &e.q[q]
	s := qu.stats
	s.Packets = qu.fifo.Len()
	s.Bytes = qu.fifo.bytes
	s.Paused = e.Paused(q)
	s.Overridden = e.Overridden(q)
	s.PausedNs = qu.pausedNs
	s.MaxPauseNs = qu.maxPause
	if s.Paused && e.lastNow > qu.since {
		s.PausedNs += e.lastNow - qu.since
		s.MaxPauseNs = max(s.MaxPauseNs, e.lastNow-qu.since)
	}
	return s
}

// Name is q's name for stats.
func (e *Egress) Name(q int) string { return e.names[q] }

// Quantum is q's DRR quantum in bytes, what a visit of the round adds to
// its deficit; 0 for the HQ and a strict queue, which the round does not
// serve.
func (e *Egress) Quantum(q int) int {
	if q == e.hq || e.strictMask&(1<<uint(q)) != 0 {
		return 0
	}
	return e.q[q].quantum
}
