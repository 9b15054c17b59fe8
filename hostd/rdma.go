package hostd

// The NIC's RDMA: reliable-connected flows (one QP each) over RoCEv2
// (DESIGN §6-7), driven by the transport package's state machines. All of
// it runs on the engine goroutine.
//
//  1. StartRDMA (POST /rdma, /rdma/batch) creates flows: each gets a QP, a
//     UDP source port whose flow hash gives the level order asked for, its
//     route and queue, and a transport.Sender. A request with a time
//     (RDMARequest.AtUnixNs) creates them in state scheduled, and the
//     engine's timer starts them when they are due: a start late by an
//     engine pass, not by a control round trip.
//  2. Produce, on every engine pass, asks each sender for the packets due
//     now while its egress queue is not paused and holds less than the
//     NIC queue's share of the flow (RDMAQueueBytes, or SetNICQueue's),
//     and builds each as a RoCEv2 SEND frame
//     (PCP 3, ECT(0), so switches can mark CE) straight into a frame of
//     the engine's memory. A paused queue means wait: the NIC never drops
//     its own traffic, but for the first transmissions a request told it
//     to lose (RDMARequest.Lose), counted as injected drops.
//  3. Handle passes every RoCE frame addressed to this server to receive:
//     data goes to the flow's transport.Receiver, created on the first
//     packet of an unknown (source IP, QP), and what it answers leaves as
//     ACK, NAK, selective NAK or CNP on the port's HQ (PCP 6); ACKs, NAKs
//     and CNPs go to the sender of their QP. A frame that is not a valid
//     RoCEv2 frame is dropped as malformed and counted.
//  4. NextTick and Tick run the senders' pacing, retransmission and DCQCN
//     timers and the receivers' ACK coalescing.
//
// A QP number names a flow at both ends: bits 23-22 hold the
// loss-recovery mode plus one (so no QP is 0 or 1, which InfiniBand
// reserves), bits 21-0 the sender's flow id. The receiver reads the mode
// off the QP and both ends derive the start PSN from it (rdmaStartPSN), so
// a receiver needs nothing but the frame to join a flow, even when the
// flow's first packet was lost. The receiver sizes IRN's reorder buffer
// for the smallest MTU, which covers every sender's window.
//
// Memory stays flat however many flows come and go: a flow that ends
// keeps only its final report (its transport state and message times are
// released), and only the last maxRDMARecords ended flows keep even that;
// a receiver whose flow is complete is kept rdmaRecvLinger (to answer a
// retransmission whose ACK was lost), then released, leaving a summary
// among the last maxRDMAPastReceivers.

import (
	"fmt"
	"slices"
	"time"

	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/wire/transport"
)

// Limits and defaults of RDMA flows.
const (
	// RDMAQueueBytes is how much of one flow its NIC egress queue may
	// hold by default (scale.Target.NICQueueBytes sets it), as a NIC's
	// send queue per QP: the pacer normally keeps it to a packet or two;
	// it bounds what a late engine pass may release at once and what
	// waits behind a pause. A flow at its line rate fills it, and a new
	// flow's first packets wait behind it in the port's FIFO.
	RDMAQueueBytes = scale.DefaultNICQueueBytes
	// maxRDMAFlows is the number of flow ids a QP can carry.
	maxRDMAFlows = 1<<22 - 1
	// maxRDMAReceivers bounds the receivers a NIC keeps; data for a new
	// QP beyond it is dropped and counted.
	maxRDMAReceivers = 1 << 16
	// maxRDMARecords is how many ended flows keep their report: older
	// ones are forgotten (a report asking for them leaves them out).
	maxRDMARecords = 1 << 14
	// maxRDMAFetched is how many ended flows whose final report was
	// already asked for by id keep it (for a client that asks again).
	maxRDMAFetched = 1 << 8
	// maxRDMAPastReceivers is how many released receivers' summaries a
	// report still lists.
	maxRDMAPastReceivers = 1 << 10
	// rdmaRecvLinger is how long a receiver whose flow is complete (or
	// failed) is kept: far longer than any sender retransmits its last
	// packets for (a lossless sender gives up after seven timeouts).
	rdmaRecvLinger = 5 * time.Second
	// rdmaOwner marks queue meta of RDMA frames (the generator's owner
	// bits hold small flow ids and never reach it).
	rdmaOwner = 1 << 63
	// rdmaSPortBase is the first UDP source port flows take their
	// entropy from: the dynamic range, 64 ports per flow id.
	rdmaSPortBase = 49152
	// rdmaAllocRetry is how soon a flow that found no free frame tries
	// again.
	rdmaAllocRetry = 50 * time.Microsecond
	// ecnECT0 is the ECN codepoint of data frames: ECN-capable, so
	// switches mark CE rather than drop (RFC 3168's ECT(0)).
	ecnECT0 = 2
)

type blockReason uint8

const (
	blockNone   blockReason = iota
	blockPaused             // its queue is paused
	blockQueue              // it holds its NIC queue's share (rdma.queueBytes) in its queue
	blockFrame              // no free frame
)

type rdmaFlow struct {
	api.RDMAFlow
	s        *transport.Sender
	tmpl     roce.Flow // the data frames' addresses, class and QP
	queue    int       // -1: the scheme assigns one per packet (BFC)
	hash     uint32
	maxFrame int
	intSlots int   // INT records its data packets reserve (HPCC)
	deadline int64 // engine ns; 0: none
	stopped  bool  // a timed flow was told to end
	fetched  bool  // ended, and its final report was asked for by id
	queued   int   // bytes of it in its queue
	blocked  blockReason
	blockQ   int
	blockAt  int64
	// paced: its last produce stopped for its pacer alone, so its next
	// packet is due at its slot, which a late engine pass makes up.
	// waitAck: it stopped for want of an ACK (its window, or loss
	// recovery), and ackAt is when its last ACK or NAK since arrived in
	// the model (0: none): what it sends next goes from then.
	paced    bool
	waitAck  bool
	ackAt    int64
	startEng int64 // when it started; scheduled, when it is due
	atUnix   int64 // the time its request asked for (Unix ns; 0: none)
	endEng   int64
	firstEng int64 // the first packet's time, once s is released

	// ATE's accounting (Host.ate set): the new payload bytes sent, and
	// what of them, not yet acknowledged, the flow counts in flight in
	// the domain of its first hop (port 0: the HBD).
	ate      bool
	placed   bool // ATE chose its order
	fixed    bool // its request fixed its order
	sent     int64
	inflight int64

	// Messages (RDMARequest.MsgBytes): the engine time each was posted
	// (its first packet sent) and acknowledged whole, how many are
	// recorded; latency flows also each round trip.
	msgSent  []int64
	msgDone  []int64
	seenMsgs int64
	latency  bool
	lat      []int64
	latStats *api.LatencyStats // replaces lat once computed, after the flow ended
}

type recvKey struct {
	src [4]byte
	qp  uint32
}

type rdmaRecv struct {
	key   recvKey
	src   int
	mode  transport.Mode
	r     *transport.Receiver
	reply roce.Flow // ACK, NAK and CNP frames to the sender
	port  int
	hq    int
	armed bool  // in rdma.armed
	endAt int64 // when its flow was seen complete or failed; 0: not yet
	// echo is the INT shim of the last data packet (HPCC), which ACKs
	// carry back; echoLen 0: the packets carry none.
	echo    [roce.INTLen]byte
	echoLen int
}

type rdma struct {
	h      *Host
	params transport.Params
	// queueBytes is how much of one flow the NIC's egress queue may hold
	// (RDMAQueueBytes unless SetNICQueue set it); a flow always may
	// queue one packet.
	queueBytes int
	port       []transport.Params // per fabric port (SetPortTransport); nil: params
	// flows holds the flows of ids base+1 on, by id - base - 1; the
	// records of ids up to base were all released, and the slice drops
	// them from its front, so it holds the flows since the oldest one
	// still kept, not one entry per flow ever started.
	flows  []*rdmaFlow
	base   int
	active []*rdmaFlow // running
	// due are the scheduled requests (RDMARequest.AtUnixNs), in order of
	// their time; scheduled counts their flows not yet started.
	due       []*rdmaPending
	scheduled int
	ended     []int // ids of the ended flows that keep their report, oldest first
	// fetched are the ended flows whose final report a client asked for
	// by id (a workload or rperf polling its flows), oldest first: past
	// maxRDMAFetched they are forgotten, so a NIC that runs flows for
	// hours holds the reports nobody has read yet, not every one.
	fetched []int
	recvs   map[recvKey]*rdmaRecv
	rlist   []*rdmaRecv // in arrival order, for reports
	armed   []*rdmaRecv // with an ACK coalescing timer pending
	over    []*rdmaRecv // complete or failed, in that order: released after linger
	past    pastRing
	linger  int64 // rdmaRecvLinger (tests shorten it)
	// releaseAt is when release next has receivers to let go: 0 when
	// none has ended.
	releaseAt int64
	pkt       roce.Packet
	echo      transport.Echo // what an ACK echoes, for the sender
	spare     uint64         // a frame taken and not used
	hasSp     bool
	c         api.RDMACounters
}

// rdmaQP is the QP of flow id in mode.
func rdmaQP(mode transport.Mode, id int) uint32 { return uint32(mode+1)<<22 | uint32(id) }

// rdmaQPMode is the mode a QP carries; ok is false when it names none.
func rdmaQPMode(qp uint32) (transport.Mode, bool) {
	m := qp >> 22 & 3
	if m == 0 {
		return 0, false
	}
	return transport.Mode(m - 1), true
}

// rdmaStartPSN is the first PSN of the flow of qp: a hash of it, so that
// PSNs start anywhere in their 24 bits (and wrap in long flows) yet both
// ends know them.
func rdmaStartPSN(qp uint32) uint32 {
	h := qp*0x9E3779B1 ^ 0x5bd1e995
	h ^= h >> 15
	h *= 0x2c1b3c6d
	h ^= h >> 12
	return h & roce.PSNMask
}

// TransportParams are the NIC's transport parameters on a port of
// rateBps (0: a target link's lab rate) under model m: every constant the
// model's (scale.Model.Transport), DCQCN on, each flow paced with the
// emulator's catch-up (scale.Catchup), since a node sharing few cores
// with many others is often woken later than a packet time.
func TransportParams(m scale.Model, rateBps uint64) transport.Params {
	t := m.Transport(rateBps)
	return transport.Params{
		LineRateBps:   t.LineRateBps,
		WireOverhead:  transport.DefaultWireOverhead,
		PacingCatchup: t.PacingCatchup,
		RTO:           t.RTO,
		RTOLow:        t.RTOLow,
		RTOHigh:       t.RTOHigh,
		RTOThreshold:  t.RTOThreshold,
		BDPBytes:      t.BDPBytes,
		AckEvery:      t.AckEvery,
		AckDelay:      t.AckDelay,
		CNPInterval:   t.CNPInterval,
		DCQCN: transport.DCQCNParams{
			Enabled:        true,
			G:              t.G,
			AlphaPeriod:    t.AlphaPeriod,
			IncreasePeriod: t.Increase,
			DecreasePeriod: t.Decrease,
			ByteCounter:    t.ByteCounter,
			F:              t.F,
			AIRateBps:      t.AIRate,
			HAIRateBps:     t.HAIRate,
			MinRateBps:     t.MinRt,
		},
		DCTCP: transport.DCTCPParams{G: t.DCTCPG},
		HPCC: transport.HPCCParams{Eta: t.HPCCEta, MaxStage: t.HPCCMaxStage,
			BaseRTT: t.HPCCBaseRTT, WAIBytes: t.HPCCWAI},
		ECN: ecnParams(m.ECN(rateBps)),
	}
}

// ecnParams are the marking thresholds of e (where the egresses decide
// is theirs alone).
func ecnParams(e scale.ECN) transport.ECNParams {
	return transport.ECNParams{KminBytes: e.KminBytes, KmaxBytes: e.KmaxBytes, Pmax: e.Pmax}
}

// SetTransport sets the parameters of the flows started from now on and
// of the receivers created from now on (DESIGN §7: the scale model's). It drops those SetPortTransport set.
func (h *Host) SetTransport(p transport.Params) error {
	if err := p.Validate(); err != nil {
		return err
	}
	h.setParams(func() { h.r.params, h.r.port = p, nil })
	return nil
}

// SetPortTransport sets per-port parameters for the flows started from
// now on, ps[l] for fabric port l (TransportParams at each port's rate),
// where a server's ports differ in rate (a Rail-only fabric): a flow is
// paced at, and its DCQCN runs from, the line rate of the port it leaves
// by, and IRN's in-flight cap is the smallest BDP of the levels its path
// crosses, its bottleneck's. Receivers keep SetTransport's.
func (h *Host) SetPortTransport(ps []transport.Params) error {
	if len(ps) != h.t.Levels() {
		return fmt.Errorf("transport for %d ports, the server has %d", len(ps), h.t.Levels())
	}
	for l, p := range ps {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("transport of port %d: %w", l, err)
		}
	}
	ps = slices.Clone(ps)
	h.setParams(func() { h.r.port = ps })
	return nil
}

// setParams runs set on the engine goroutine, or now before the engine
// runs.
func (h *Host) setParams(set func()) {
	if h.e == nil {
		set()
		return
	}
	h.e.Call(set)
}

// pathRate is the rate of the slowest link on the way to dst: the
// slowest of the ports of the levels it crosses, with per-port
// parameters, else line.
func (r *rdma) pathRate(dst int, line int64) int64 {
	if len(r.port) == 0 {
		return line
	}
	rate := int64(0)
	for l := range r.h.t.Levels() {
		if lr := r.port[l].LineRateBps; r.h.t.Digit(r.h.self, l) != r.h.t.Digit(dst, l) && (rate == 0 || lr < rate) {
			rate = lr
		}
	}
	return rate
}

// pathParams are the parameters of a flow to dst that leaves by port:
// params, or with per-port parameters port's, with IRN's cap the
// smallest BDP of the levels the path crosses.
func (r *rdma) pathParams(port, dst int) transport.Params {
	if len(r.port) == 0 {
		return r.params
	}
	p := r.port[port]
	for l := range r.h.t.Levels() {
		if r.h.t.Digit(r.h.self, l) != r.h.t.Digit(dst, l) {
			p.BDPBytes = min(p.BDPBytes, r.port[l].BDPBytes)
		}
	}
	return p
}

func (r *rdma) init(h *Host) {
	r.h = h
	if r.params.AckEvery == 0 {
		r.params = TransportParams(scale.Model{Target: scale.Papers(), D: 1}, 0)
	}
	if r.linger == 0 {
		r.linger = int64(rdmaRecvLinger)
	}
	if r.queueBytes == 0 {
		r.queueBytes = RDMAQueueBytes
	}
}

// SetNICQueue sets how many bytes of one flow the NIC's egress queue may
// hold (0: RDMAQueueBytes), for the flows' packets made from now on. A
// flow may always queue one packet, so a bound below a packet means one
// packet of each flow at a time: the NIC then serves its flows a packet
// each in turn, as the HPCC ns-3 simulator's NIC serves its QPs.
func (h *Host) SetNICQueue(n int) error {
	if n < 0 {
		return fmt.Errorf("rdma: NIC queue of %d bytes per flow, want >= 0", n)
	}
	if n == 0 {
		n = RDMAQueueBytes
	}
	h.setParams(func() { h.r.queueBytes = n })
	return nil
}

// queueFull says whether f may not queue another packet.
func (r *rdma) queueFull(f *rdmaFlow) bool {
	return f.queued > 0 && f.queued+f.maxFrame > r.queueBytes
}

// flow is the flow of id, nil when there is none or its record was
// released.
func (r *rdma) flow(id int) *rdmaFlow {
	if id <= r.base || id > r.base+len(r.flows) {
		return nil
	}
	return r.flows[id-r.base-1]
}

// forget releases the record of flow id, and drops the released records
// at the front of r.flows.
func (r *rdma) forget(id int) {
	if id <= r.base || id > r.base+len(r.flows) {
		return
	}
	r.flows[id-r.base-1] = nil
	n := 0
	for n < len(r.flows) && r.flows[n] == nil {
		n++
	}
	r.flows, r.base = r.flows[n:], r.base+n
}

// finish releases what the ended flow f no longer needs, its transport
// state and message times, keeping its final report; past maxRDMARecords
// ended flows, the oldest record goes too.
func (r *rdma) finish(f *rdmaFlow) {
	if f.s == nil {
		return
	}
	f.counters(&f.RDMAFlow)
	f.firstEng = f.s.S.Start
	if f.ate {
		// Ended, it has nothing in flight any more.
		r.h.ate.Add(f.Port == 0, -f.inflight)
		f.inflight = 0
	}
	f.s = nil
	f.msgSent, f.msgDone = nil, nil
	r.ended = append(r.ended, f.ID)
	if len(r.ended) > maxRDMARecords {
		r.forget(r.ended[0])
		r.ended = r.ended[1:]
	}
}
