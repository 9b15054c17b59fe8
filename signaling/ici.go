package signaling

// Congestion isolation as a node runs it, switch or relaying server alike
// (docs/SCHEMES.md, "Congestion isolation"): RECN's and IEEE 802.1Qcz's
// mechanism, with ICI's coordination of DCQCN's marking.
//
//  1. Detection: a data frame that finds its egress port's normal data
//     queue at or over Detect bytes makes the port a congestion root, and
//     its flow a congesting flow: the flow is entered in the port's
//     congested-flow table (Table entries), and a signal naming it goes
//     to the neighbour the frame came from.
//  2. Isolation: a flow in the table of its egress port leaves by the
//     congested-flow queue (the Congested priority, lossless under PFC as
//     the normal one is, so a pause of it holds no victim), from its next
//     frame on. The congested queue is shut (queues.Egress.Gate) while
//     the flow of the frame at its head still has frames in the normal
//     queue (counted per flow slot), RECN's in-order rule, so no flow is
//     ever reordered.
//  3. Propagation: a neighbour receiving the signal on port p isolates
//     the flow at its egress p (the port the flow leaves it by toward
//     the root), and, while its own congested queue is over Detect,
//     passes the signal on to the neighbour upstream of it. A node
//     repeats the signal for an entry at most every Refresh while the
//     flow is congested, which keeps the upstream entries alive.
//  4. Release: an entry is released when none of its flow's frames is
//     left in the congested queue and it has not been refreshed (by
//     detection, by its own congested queue over Detect, or by a signal)
//     for Residency; its flow goes back to the normal queue.
//  5. Marking (the egress asks, queues.Marker): under ICI (Coordinated)
//     frames in the normal queue, the victims, are not marked while the
//     table has room; isolated flows are marked RED between CQKmin and
//     CQKmax on the congested queue's own length; and once a detection
//     has found the table full, the port marks by DCQCN's RED again,
//     until an entry is released. Plain CI (not Coordinated) leaves
//     DCQCN's marking as it is on every queue.
//
// Every event is counted per port (ICICounters). Nothing here allocates
// once built.

import (
	"net"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
)

// ICISlots is the number of flow slots per port in which congestion
// isolation counts a flow's frames in the normal and congested queues (a
// flow's slot is its hash modulo ICISlots; flows sharing a slot only wait
// for each other's frames, which keeps order all the same).
const ICISlots = 1024

// MaxICITable bounds the congested-flow table of a port.
const MaxICITable = 256

// Meta bits of a frame congestion isolation counts (queues.Packet.Meta):
// its flow slot, and a flag. PFC's bits are 0-11; BFC's 12-31 are unused
// under congestion isolation, which runs over PFC.
const (
	metaICISlotShift = 12
	metaICI          = 1 << 22
)

// ICIConfig is a node's congestion isolation.
type ICIConfig struct {
	// Table is the congested-flow table's entries per egress port.
	Table int
	// Detect is the normal queue's length in bytes at which a port is a
	// congestion root, and the congested queue's at which a node passes
	// an isolation upstream.
	Detect int
	// CQKmin, CQKmax and Pmax mark isolated flows RED on the congested
	// queue's length (ICI).
	CQKmin, CQKmax int
	Pmax           float64
	// Residency is how long an entry outlives its last refresh (ns);
	// Refresh the least time between two signals of one entry (ns).
	Residency, Refresh int64
	// Coordinated is ICI: marking follows isolation. False is plain CI,
	// whose DCQCN marking knows nothing of it.
	Coordinated bool
	// Normal and Congested are the priorities, and queues, of the data
	// and of the isolated flows.
	Normal, Congested uint8
	// Server and Own: the node is the server of address Own, whose own
	// flows it never isolates (a NIC's DCQCN answers for them).
	Server bool
	Own    [4]byte
	// Seed seeds the congested queue's RED.
	Seed uint64
}

// ICIPort is a fabric port: its MAC and its neighbour's.
type ICIPort struct {
	Own, Peer net.HardwareAddr
}

// ICICounters are one port's congestion isolation events.
type ICICounters struct {
	// Isolated: flows this port isolated as a congestion root; BySignal:
	// flows isolated at this egress on a signal received on it; Released:
	// entries released.
	Isolated, BySignal, Released uint64
	// TxIsolate and RxIsolate: signals sent and received on the port;
	// RxOwn: received naming the server's own flow (not isolated).
	TxIsolate, RxIsolate, RxOwn uint64
	// TableFull: isolations refused for lack of an entry; Fallbacks: the
	// times the port went back to DCQCN's marking for it.
	TableFull, Fallbacks uint64
	// Lost: signals the node had no frame for.
	Lost uint64
	// Entries is the entries in use now.
	Entries uint64
}

// Fill sets c's counters in m.
func (c *ICICounters) Fill(m map[string]uint64) {
	m["ici_isolated"], m["ici_isolated_by_signal"], m["ici_released"] = c.Isolated, c.BySignal, c.Released
	m["tx_isolate"], m["rx_isolate"], m["rx_isolate_own"] = c.TxIsolate, c.RxIsolate, c.RxOwn
	m["ici_table_full"], m["ici_fallback"], m["ici_lost"], m["ici_entries"] = c.TableFull, c.Fallbacks, c.Lost, c.Entries
}

// iciEntry is one isolated flow at an egress port.
type iciEntry struct {
	used      bool
	root      bool  // detected here; else isolated by a signal
	hops      uint8 // from the root
	flow      bcube.FiveTuple
	hash      uint32
	refreshed int64 // last detection, congested queue over Detect, or signal
	signalled int64 // last signal sent upstream for it (-1: never)
}

// iciPort is the isolation state of one egress port.
type iciPort struct {
	entries []iciEntry
	used    int
	full    bool // a detection found no room: DCQCN marks until a release
	// Frames of each flow slot in the normal and the congested queue.
	normal, cq [ICISlots]uint16
}

// ICI is the congestion isolation of one node.
type ICI struct {
	env   Env
	cfg   ICIConfig
	ports []ICIPort
	st    []iciPort
	seq   []uint32
	buf   [FrameLen]byte
	rng   uint64
	slope float64 // CQ marking probability per byte over CQKmin, in 2^-53
	next  int64   // the timer's next run, -1: none
	// C are the counters, per port.
	C []ICICounters
}

// NewICI returns the congestion isolation of a node with ports, sending
// its signals through env.
func NewICI(env Env, ports []ICIPort, cfg ICIConfig) *ICI {
	c := &ICI{env: env, cfg: cfg, ports: ports, st: make([]iciPort, len(ports)), seq: make([]uint32, len(ports)),
		C: make([]ICICounters, len(ports)), rng: cfg.Seed, next: -1}
	if c.rng == 0 {
		c.rng = 0x9E3779B97F4A7C15
	}
	for p := range c.st {
		c.st[p].entries = make([]iciEntry, cfg.Table)
	}
	if cfg.CQKmax > cfg.CQKmin {
		c.slope = cfg.Pmax * (1 << 53) / float64(cfg.CQKmax-cfg.CQKmin)
	}
	return c
}

// Config is the node's configuration.
func (c *ICI) Config() ICIConfig { return c.cfg }

// Classify is the queue of a data frame of flow f (hash h), of priority
// pcp, leaving by port out, which came in by port in (-1: the node's
// own), at now, and the meta bits to add to its meta. The queue is the
// priority the frame leaves with (Normal or Congested). It detects a
// congestion root, isolates the flow and signals upstream as the steps
// at the top of the file say.
func (c *ICI) Classify(out, in int, pcp uint8, f *bcube.FiveTuple, h uint32, now int64) (q uint8, meta uint64) {
	st := &c.st[out]
	slot := h % ICISlots
	meta = uint64(slot)<<metaICISlotShift | metaICI
	eg := c.env.Egress(out)
	rooted := eg.QueueBytes(int(c.cfg.Normal)) >= c.cfg.Detect
	e := st.find(f, h)
	if e == nil {
		if !rooted {
			return c.cfg.Normal, meta
		}
		if e = c.isolate(out, f, h, true, 0, now); e == nil {
			return c.cfg.Normal, meta
		}
	}
	if rooted || eg.QueueBytes(int(c.cfg.Congested)) >= c.cfg.Detect {
		e.refreshed = now
		if in >= 0 && (e.signalled < 0 || now-e.signalled >= c.cfg.Refresh) {
			e.signalled = now
			c.signal(in, e, pcp)
		}
	}
	return c.cfg.Congested, meta
}

// find is the entry of flow f (hash h), or nil.
func (st *iciPort) find(f *bcube.FiveTuple, h uint32) *iciEntry {
	if st.used == 0 {
		return nil
	}
	for i := range st.entries {
		if e := &st.entries[i]; e.used && e.hash == h && e.flow == *f {
			return e
		}
	}
	return nil
}

// isolate enters flow f at port out, or counts the table full and
// returns nil.
func (c *ICI) isolate(out int, f *bcube.FiveTuple, h uint32, root bool, hops uint8, now int64) *iciEntry {
	st, k := &c.st[out], &c.C[out]
	if st.used == len(st.entries) {
		k.TableFull++
		if !st.full {
			st.full = true
			k.Fallbacks++
		}
		return nil
	}
	var e *iciEntry
	for i := range st.entries {
		if !st.entries[i].used {
			e = &st.entries[i]
			break
		}
	}
	*e = iciEntry{used: true, root: root, hops: hops, flow: *f, hash: h, refreshed: now, signalled: -1}
	st.used++
	k.Entries++
	if root {
		k.Isolated++
	} else {
		k.BySignal++
	}
	c.arm(now + c.cfg.Residency)
	return e
}

// signal sends the isolation of e's flow out of port in, to the
// neighbour its frames come from.
func (c *ICI) signal(in int, e *iciEntry, pcp uint8) {
	p := &c.ports[in]
	c.seq[in]++
	n := PutICI(c.buf[:], p.Peer, p.Own, c.seq[in], &e.flow, pcp, e.hops)
	if !c.env.Emit(in, c.buf[:n]) {
		c.C[in].Lost++
		return
	}
	c.C[in].TxIsolate++
}

// OnSignal takes an isolation received on port in: the flow leaves this
// node by in, toward the root, so it is isolated at egress in. It reports
// false for a frame of another scheme.
func (c *ICI) OnSignal(in int, sig Signal) bool {
	if sig.Scheme() != SchemeICI {
		return false
	}
	k := &c.C[in]
	k.RxIsolate++
	f := sig.Flow()
	if c.cfg.Server && f.Src == c.cfg.Own {
		k.RxOwn++
		return true
	}
	now := c.env.Now()
	h := bcube.FlowHash(&f)
	hops := sig.Hops()
	if hops < 255 {
		hops++
	}
	if e := c.st[in].find(&f, h); e != nil {
		e.refreshed = now
		e.hops = min(e.hops, hops)
		return true
	}
	c.isolate(in, &f, h, false, hops, now)
	return true
}

// Isolated reports whether flow f is in port out's table.
func (c *ICI) Isolated(out int, f *bcube.FiveTuple) bool {
	return c.st[out].find(f, bcube.FlowHash(f)) != nil
}

// Entries is the number of entries in use at port out.
func (c *ICI) Entries(out int) int { return c.st[out].used }

// Full reports whether port out marks by DCQCN because its table was
// found full.
func (c *ICI) Full(out int) bool { return c.st[out].full }

// arm makes the timer run at t at the latest.
func (c *ICI) arm(t int64) {
	if c.next < 0 || t < c.next {
		c.next = t
	}
}

// NextTick is when Tick wants to run (-1: no entry to release).
func (c *ICI) NextTick() int64 { return c.next }

// Tick releases the entries whose residency has passed and whose flow
// has no frame left in the congested queue; one whose frames are still
// there is looked at again a Refresh later.
func (c *ICI) Tick(now int64) {
	c.next = -1
	for p := range c.st {
		st := &c.st[p]
		if st.used == 0 {
			continue
		}
		for i := range st.entries {
			e := &st.entries[i]
			if !e.used {
				continue
			}
			due := e.refreshed + c.cfg.Residency
			switch {
			case now < due:
				c.arm(due)
			case st.cq[e.hash%ICISlots] != 0:
				c.arm(now + c.cfg.Refresh)
			default:
				e.used = false
				st.used--
				st.full = false
				c.C[p].Released++
				c.C[p].Entries--
			}
		}
	}
}

// Hooks are port p's egress hooks: they count each flow slot's frames
// in the normal and congested queues, shut the congested queue while its
// head's flow has frames in the normal queue, and decide ECN marks
// (queues.Marker).
func (c *ICI) Hooks(p int) *ICIHooks { return &ICIHooks{c: c, p: p} }

// ICIHooks are one egress port's hooks (ICI.Hooks).
type ICIHooks struct {
	c *ICI
	p int
}

func (h *ICIHooks) Enqueued(q int, p queues.Packet) { h.count(q, p, 1) }
func (h *ICIHooks) Dequeued(q int, p queues.Packet) { h.count(q, p, -1) }

func (h *ICIHooks) count(q int, p queues.Packet, d int) {
	if p.Meta&metaICI == 0 {
		return
	}
	st := &h.c.st[h.p]
	slot := (p.Meta >> metaICISlotShift) % ICISlots
	var n *uint16
	switch uint8(q) {
	case h.c.cfg.Normal:
		n = &st.normal[slot]
	case h.c.cfg.Congested:
		n = &st.cq[slot]
	default:
		return
	}
	if d > 0 {
		*n++
	} else if *n > 0 {
		*n--
	}
	h.c.gate(h.p)
}

// gate shuts port p's congested queue while the flow of the frame at its
// head has frames in the normal queue, and opens it once they have left:
// a flow's frames leave in order across its isolation.
func (c *ICI) gate(p int) {
	eg := c.env.Egress(p)
	cq := int(c.cfg.Congested)
	shut := false
	if head, ok := eg.Head(cq); ok && head.Meta&metaICI != 0 {
		shut = c.st[p].normal[(head.Meta>>metaICISlotShift)%ICISlots] != 0
	}
	if shut != eg.Gated(cq) {
		eg.Gate(cq, shut)
	}
}

// Mark is the ECN decision for a frame joining queue q of qbytes, RED
// having said red (queues.Marker).
func (h *ICIHooks) Mark(q, qbytes int, red bool) bool {
	c := h.c
	switch {
	case !c.cfg.Coordinated:
		return red
	case uint8(q) == c.cfg.Congested:
		return c.markCQ(qbytes)
	case uint8(q) == c.cfg.Normal && !c.st[h.p].full:
		return false // a victim, while the table has room
	}
	return red
}

// markCQ is RED on the congested queue's length.
func (c *ICI) markCQ(qbytes int) bool {
	switch {
	case qbytes < c.cfg.CQKmin:
		return false
	case qbytes >= c.cfg.CQKmax:
		return true
	}
	c.rng += 0x9E3779B97F4A7C15
	z := c.rng
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	return float64(z>>11) < float64(qbytes-c.cfg.CQKmin)*c.slope
}
