package signaling

// A node's BFC: the flow table and the backpressure of bfc.go tied to the
// datapath. The datapath calls Classify for every data frame it queues on
// a fabric port and keeps the returned meta with the packet; the egress
// hooks then account the packet in the flow table and, when Classify
// found its queue over Th, in the pause counter of (ingress port,
// upstream queue). The upstream queue travels in the frame's 802.1Q VID,
// 1 + queue (VID 0: none); the node rewrites it to its own queue.

import (
	"fmt"
	"slices"

	"github.com/bcfab/bcfab/queues"
)

// BFC meta bits (queues.Packet.Meta), beside the ingress port of
// IngressMeta in bits 0-7: the upstream queue, whether the packet counts
// toward its pause counter, and its flow-table entry plus one.
const (
	bfcUpShift    = 12
	bfcUpMask     = 0x3F
	bfcCounted    = 1 << 18
	bfcEntryShift = 19
	bfcEntryMask  = 1<<13 - 1
)

// Limits of BFC's configuration.
const (
	// MaxBFCQueues is the most physical queues per port (the HQ
	// included): the pause bitmap has 64 bits.
	MaxBFCQueues = 64
	// MaxBFCTable is the most flow-table entries per egress port.
	MaxBFCTable = bfcEntryMask - 1
)

// BFCConfig configures a node's BFC.
type BFCConfig struct {
	// Queues is the number of physical queues of every fabric port, the
	// HQ (the last) included; the others are assigned to flows.
	Queues int
	// TableSize is the number of flow-table entries per egress port.
	TableSize int
	// Sticky is how long a flow with no packet in the node keeps its
	// queue (ns); BFC uses two one-hop RTTs.
	Sticky int64
	// Refresh is the period of the pause bitmap (ns), sent while a port
	// holds a queue paused and ResumeRepeats times after a Resume.
	Refresh int64
	// Hold is how long a receiver keeps a pause it does not hear again
	// (ns; 0: DefaultHold).
	Hold int64
	// BDP is the one-hop bandwidth-delay product at a port's drain rate
	// (bytes): Th = BDP / active queues.
	BDP int
	// PerPortBDP, when set, holds each egress port's BDP (index: port) in
	// place of BDP: ports of one node may drain at different rates (a
	// server's levels in a Rail-only fabric). Ports past its end, and
	// zero entries, take BDP.
	PerPortBDP []int
	// Seed fixes the random queue choices.
	Seed uint64
	// Hashed replaces BFC's dynamic assignment by a fixed one: a flow's
	// queue is its hash(egress port, 5-tuple) modulo the data queues
	// (stochastic fair queueing), whether or not another flow has it.
	Hashed bool
}

// PortBDP is the BDP of egress port p.
func (c BFCConfig) PortBDP(p int) int {
	if p >= 0 && p < len(c.PerPortBDP) && c.PerPortBDP[p] > 0 {
		return c.PerPortBDP[p]
	}
	return c.BDP
}

// Validate reports whether c is usable.
func (c BFCConfig) Validate() error {
	switch {
	case c.Queues < 2 || c.Queues > MaxBFCQueues:
		return fmt.Errorf("bfc: %d queues per port: want 2..%d (the HQ included)", c.Queues, MaxBFCQueues)
	case c.TableSize < 1 || c.TableSize > MaxBFCTable:
		return fmt.Errorf("bfc: flow table of %d entries: want 1..%d", c.TableSize, MaxBFCTable)
	case c.Refresh <= 0 || c.Sticky < 0 || c.BDP <= 0:
		return fmt.Errorf("bfc: refresh %d ns, sticky %d ns, bdp %d bytes: want positive", c.Refresh, c.Sticky, c.BDP)
	case slices.ContainsFunc(c.PerPortBDP, func(b int) bool { return b < 0 }):
		return fmt.Errorf("bfc: per-port bdp %v bytes: want none negative", c.PerPortBDP)
	case c.Hold < 0 || (c.Hold > 0 && c.Hold < 3*c.Refresh):
		return fmt.Errorf("bfc: hold %d ns: want 0 (the default) or at least three refreshes (%d ns)", c.Hold, 3*c.Refresh)
	}
	return nil
}

// BFC is the BFC of one node whose ports 0..len(ports)-1 are fabric ports
// with a BFC neighbour. Ports after those (a server's application port)
// take no part.
type BFC struct {
	env  Env
	cfg  BFCConfig
	bdp  []int // per egress port, resolved from cfg
	hq   int
	T    *FlowTable
	B    *Backpressure
	hook []bfcHooks
}

// NewBFC returns the BFC of a node; cfg must be valid.
func NewBFC(env Env, ports []BFCPort, cfg BFCConfig) *BFC {
	b := &BFC{env: env, cfg: cfg, hq: cfg.Queues - 1,
		T: NewFlowTable(len(ports), cfg.Queues-1, cfg.TableSize, cfg.Sticky, cfg.Seed),
		B: NewBackpressure(env, ports, cfg.Queues, cfg.Refresh, cfg.Hold)}
	b.T.hashed = cfg.Hashed
	for p := range ports {
		b.hook = append(b.hook, bfcHooks{b, p})
		b.bdp = append(b.bdp, cfg.PortBDP(p))
	}
	return b
}

// HQ is the queue of control frames.
func (b *BFC) HQ() int { return b.hq }

// UpstreamQ decodes a frame's VID: the sender's queue, or -1.
func UpstreamQ(vid uint16) int { return int(vid) - 1 }

// VID is the 802.1Q VID that tells the receiver a frame left by queue q.
func VID(q int) uint16 { return uint16(q + 1) }

// Classify assigns the data frame of the flow with hash flowHash leaving
// fabric port out to a queue, and returns that queue and the meta to
// queue the frame with. in is the fabric port the frame came in by (-1:
// the node's own frame) and vid its VID. The caller rewrites the VID to
// VID(q).
func (b *BFC) Classify(out int, flowHash uint32, in int, vid uint16, now int64) (q int, meta uint64) {
	entry, q := b.T.Assign(out, portHash(flowHash, out), now)
	meta = uint64(entry+1) << bfcEntryShift
	if in < 0 || in >= len(b.B.ports) {
		return q, meta
	}
	meta |= uint64(in + 1)
	up := UpstreamQ(vid)
	if up < 0 || up >= b.hq {
		return q, meta // untagged, or from the neighbour's HQ: never paused
	}
	th := Threshold(b.bdp[out], b.T.Active(out))
	if b.env.Egress(out).QueueBytes(q) > th {
		meta |= uint64(up)<<bfcUpShift | bfcCounted
	}
	return q, meta
}

// portHash mixes the egress port into a flow hash: BFC's table is indexed
// by hash(egress port, 5-tuple).
func portHash(h uint32, port int) uint64 { return PortHash(h, port) }

// PortHash is hash(egress port, 5-tuple) of the flow whose 5-tuple hash
// is h, as BFC's flow table and stochastic fair queueing index flows.
func PortHash(h uint32, port int) uint64 {
	z := uint64(h)<<8 | uint64(port&0xFF)
	z = (z ^ z>>33) * 0xFF51AFD7ED558CCD
	z = (z ^ z>>33) * 0xC4CEB9FE1A85EC53
	return z ^ z>>33
}

// Hooks are the queue hooks of fabric port p's egress.
func (b *BFC) Hooks(p int) queues.Hooks { return &b.hook[p] }

type bfcHooks struct {
	b    *BFC
	port int
}

func (h *bfcHooks) Enqueued(_ int, p queues.Packet) {
	e := int(p.Meta>>bfcEntryShift&bfcEntryMask) - 1
	if e < 0 {
		return // control, or not classified
	}
	h.b.T.Enqueued(h.port, e, h.b.env.Now())
	if p.Meta&bfcCounted != 0 {
		h.b.B.hold(int(p.Meta&metaPortMask)-1, int(p.Meta>>bfcUpShift&bfcUpMask))
	}
}

func (h *bfcHooks) Dequeued(_ int, p queues.Packet) {
	e := int(p.Meta>>bfcEntryShift&bfcEntryMask) - 1
	if e < 0 {
		return
	}
	h.b.T.Dequeued(h.port, e, h.b.env.Now())
	if p.Meta&bfcCounted != 0 {
		h.b.B.Left(int(p.Meta&metaPortMask)-1, int(p.Meta>>bfcUpShift&bfcUpMask))
	}
}

// NextTick implements the datapath's timer: the next pause bitmap.
func (b *BFC) NextTick() int64 { return b.B.NextTick() }

// Tick sends the pause bitmaps that are due.
func (b *BFC) Tick(now int64) { b.B.Tick(now) }

// OnSignal applies a BFC frame received on fabric port in.
func (b *BFC) OnSignal(in int, sig Signal) { b.B.OnSignal(in, sig) }
