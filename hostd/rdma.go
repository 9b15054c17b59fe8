package hostd

// The NIC's RDMA: reliable-connected flows (one QP each) over RoCEv2
// (DESIGN §6-7), driven by the transport package's state machines. All of
// it runs on the engine goroutine.
//
//  1. StartRDMA (POST /rdma) creates flows: each gets a QP, a UDP source
//     port whose flow hash gives the level order asked for, its route and
//     queue, and a transport.Sender.
//  2. Produce, on every engine pass, asks each sender for the packets due
//     now while its egress queue is not paused and holds less than
//     RDMAQueueBytes of the flow, and builds each as a RoCEv2 SEND frame
//     (PCP 3, ECT(0), so switches can mark CE) straight into a frame of
//     the engine's memory. A paused queue means wait: the NIC never drops
//     its own traffic.
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
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/dataplane"
	"github.com/bcfab/bcfab/header"
	"github.com/bcfab/bcfab/roce"
	"github.com/bcfab/bcfab/scale"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/transport"
	"github.com/bcfab/bcfab/xdp"
)

// Limits and defaults of RDMA flows.
const (
	// RDMAQueueBytes is how much of one flow its NIC egress queue may
	// hold, as a NIC's send queue per QP: the pacer normally keeps it to
	// a packet or two; it bounds what a late engine pass may release at
	// once and what waits behind a pause.
	RDMAQueueBytes = 32 << 10
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
	blockQueue              // it holds RDMAQueueBytes in its queue
	blockFrame              // no free frame
)

type rdmaFlow struct {
	api.RDMAFlow
	s        *transport.Sender
	tmpl     roce.Flow // the data frames' addresses, class and QP
	queue    int       // -1: the scheme assigns one per packet (BFC)
	hash     uint32
	maxFrame int
	deadline int64 // engine ns; 0: none
	stopped  bool  // a timed flow was told to end
	fetched  bool  // ended, and its final report was asked for by id
	queued   int   // bytes of it in its queue
	blocked  blockReason
	blockQ   int
	blockAt  int64
	startEng int64
	endEng   int64
	firstEng int64 // the first packet's time, once s is released

	// ATE's accounting (Host.ate set): the new payload bytes sent, and
	// what of them, not yet acknowledged, the flow counts in flight in
	// the domain of its first hop (port 0: the HBD).
	ate      bool
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
}

type rdma struct {
	h      *Host
	params transport.Params
	port   []transport.Params // per fabric port (SetPortTransport); nil: params
	// flows holds the flows of ids base+1 on, by id - base - 1; the
	// records of ids up to base were all released, and the slice drops
	// them from its front, so it holds the flows since the oldest one
	// still kept, not one entry per flow ever started.
	flows  []*rdmaFlow
	base   int
	active []*rdmaFlow // running
	ended  []int       // ids of the ended flows that keep their report, oldest first
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
	pkt     roce.Packet
	spare   uint64 // a frame taken and not used
	hasSp   bool
	c       api.RDMACounters
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
			ByteCounter:    t.ByteCounter,
			F:              t.F,
			AIRateBps:      t.AIRate,
			HAIRateBps:     t.HAIRate,
			MinRateBps:     t.MinRt,
		},
		ECN: transport.ECNParams(m.ECN(rateBps)),
	}
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

// StartRDMA starts the flows of req (on the engine goroutine).
func (h *Host) StartRDMA(req api.RDMARequest) ([]api.RDMAFlow, error) {
	var out []api.RDMAFlow
	var err error
	h.e.Call(func() {
		var fs []*rdmaFlow
		fs, err = h.r.start(req)
		off := h.unixOffset()
		for _, f := range fs {
			out = append(out, f.report(off))
		}
	})
	return out, err
}

// RDMA reports the NIC's flows (those of ids, or all with the receivers
// when ids is empty).
func (h *Host) RDMA(ids []int) api.RDMAReport {
	var r api.RDMAReport
	lat := map[int][]int64{} // ended latency flows' round trips, by report index
	h.e.Call(func() {
		r = h.r.report(ids)
		for i, f := range r.Flows {
			rf := h.r.flow(f.ID)
			switch {
			case rf == nil || !rf.latency || rf.State == api.RDMARunning:
			case rf.lat == nil:
				r.Flows[i].Latency = rf.latStats
			default:
				lat[i] = rf.lat[:rf.seenMsgs] // never written again
			}
		}
	})
	if len(lat) == 0 {
		return r
	}
	// Sorted here, off the engine goroutine, once: the stats replace the
	// samples.
	for i, samples := range lat {
		r.Flows[i].Latency = latencyStats(samples)
	}
	h.e.Call(func() {
		for i := range lat {
			if rf := h.r.flow(r.Flows[i].ID); rf != nil && rf.lat != nil {
				rf.latStats, rf.lat = r.Flows[i].Latency, nil
			}
		}
	})
	return r
}

// latencyStats summarises round trips (ns); nil when there are none.
func latencyStats(samples []int64) *api.LatencyStats {
	n := len(samples)
	if n == 0 {
		return nil
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += float64(v)
	}
	avg := sum / float64(n)
	var sq float64
	for _, v := range s {
		sq += (float64(v) - avg) * (float64(v) - avg)
	}
	pct := func(p float64) int64 { // nearest rank
		i := int(math.Ceil(p*float64(n))) - 1
		return s[min(max(i, 0), n-1)]
	}
	return &api.LatencyStats{Samples: n, MinNs: s[0], MaxNs: s[n-1], AvgNs: int64(math.Round(avg)),
		StdevNs: int64(math.Round(math.Sqrt(sq / float64(n)))), P50Ns: pct(0.5), P99Ns: pct(0.99), P999Ns: pct(0.999)}
}

// StopRDMA ends the timed and until-stopped flows of ids that still run
// as their time would: the next packet is the last, and the flow is done
// once every byte is acknowledged. It reports how many it told to stop
// (sized flows run on).
func (h *Host) StopRDMA(ids []int) int {
	n := 0
	h.e.Call(func() {
		now := h.e.Now()
		for _, id := range ids {
			if f := h.r.flow(id); f != nil {
				if f.State == api.RDMARunning && f.s.Size() == 0 && !f.stopped {
					f.deadline = now
					n++
				}
			}
		}
	})
	return n
}

// AbortRDMA stops the flows of ids that still run; it reports how many it
// stopped.
func (h *Host) AbortRDMA(ids []int) int {
	n := 0
	h.e.Call(func() {
		now := h.e.Now()
		for _, id := range ids {
			if f := h.r.flow(id); f != nil {
				if f.State == api.RDMARunning {
					f.State, f.endEng = api.RDMAAborted, now
					h.r.finish(f)
					n++
				}
			}
		}
	})
	return n
}

// unixOffset converts engine time to Unix time: unix = engine + offset.
func (h *Host) unixOffset() int64 { return time.Now().UnixNano() - h.e.Now() }

func (r *rdma) init(h *Host) {
	r.h = h
	if r.params.AckEvery == 0 {
		r.params = TransportParams(scale.Model{Target: scale.Papers(), D: 1}, 0)
	}
	if r.linger == 0 {
		r.linger = int64(rdmaRecvLinger)
	}
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

// start validates req and creates its flows.
func (r *rdma) start(req api.RDMARequest) ([]*rdmaFlow, error) {
	h := r.h
	t := h.t
	if req.Dst < 0 || req.Dst >= t.Servers() || req.Dst == h.self {
		return nil, fmt.Errorf("rdma: destination h%d: want another server of %v", req.Dst, t)
	}
	ways := 0
	for _, b := range []bool{req.Bytes > 0, req.Duration > 0, req.UntilStopped} {
		if b {
			ways++
		}
	}
	if ways != 1 || req.Bytes < 0 || req.Duration < 0 {
		return nil, errors.New("rdma: give bytes, a duration or until_stopped (one of them)")
	}
	msgs := int64(0)
	switch {
	case req.MsgBytes < 0 || req.RateBps < 0:
		return nil, errors.New("rdma: negative msg_bytes or rate_bps")
	case req.MsgBytes > 0:
		if req.Bytes <= 0 || req.Bytes%req.MsgBytes != 0 || req.Bytes/req.MsgBytes > api.MaxRDMAMessages {
			return nil, fmt.Errorf("rdma: messages of %d bytes: want bytes a multiple of them, at most %d messages", req.MsgBytes, api.MaxRDMAMessages)
		}
		msgs = req.Bytes / req.MsgBytes
	case req.Latency:
		return nil, errors.New("rdma: a latency flow needs msg_bytes")
	}
	mode := transport.Lossless
	if req.Mode != "" {
		m, err := transport.ParseMode(req.Mode)
		if err != nil {
			return nil, fmt.Errorf("rdma: %w", err)
		}
		mode = m
	}
	if req.MTU == 0 {
		req.MTU = api.DefaultRDMAMTU
	}
	if req.MTU < api.MinRDMAMTU || req.MTU > api.MaxRDMAMTU {
		return nil, fmt.Errorf("rdma: mtu %d: want %d..%d payload bytes", req.MTU, api.MinRDMAMTU, api.MaxRDMAMTU)
	}
	if req.Flows == 0 {
		req.Flows = 1
	}
	if req.Flows < 1 || req.Flows > api.MaxRDMAParallel {
		return nil, fmt.Errorf("rdma: %d flows: want 1..%d", req.Flows, api.MaxRDMAParallel)
	}
	if r.base+len(r.flows)+req.Flows > maxRDMAFlows {
		return nil, errors.New("rdma: out of QP numbers")
	}
	dcqcn := req.DCQCN == nil || *req.DCQCN
	var want *bcube.Order
	if req.Order != "" {
		pol, err := t.ParsePolicy(req.Order)
		if err != nil || pol.Fixed == nil {
			return nil, fmt.Errorf("rdma: order %q: want a permutation such as 0,1", req.Order)
		}
		want = pol.Fixed
		if h.policy.Fixed != nil && *h.policy.Fixed != *want {
			return nil, fmt.Errorf("rdma: order %s, but the lab routes every flow %s", want, h.policy.Fixed)
		}
	}
	// ATE places the flows of a request whose destination gives it a
	// choice all in one domain: nothing is sent while they are created,
	// so the in-flight bytes it decides by do not change.
	ateHBD := h.ate != nil && h.ate.HBD()
	// Check everything before creating anything: a request starts all
	// its flows or none.
	type plan struct {
		id     int
		sport  uint16
		s      *transport.Sender
		o      bcube.Order
		port   int
		path   int64 // the path's slowest rate
		placed bool  // ATE chose its order
	}
	src, dst := bcube.ServerIP(h.self).As4(), bcube.ServerIP(req.Dst).As4()
	plans := make([]plan, req.Flows)
	for i := range plans {
		id := r.base + len(r.flows) + 1 + i
		w, placed := want, false
		if h.ate != nil && want == nil {
			if o, ok := h.ateOrder(req.Dst, id, ateHBD); ok {
				w, placed = &o, true
			}
		}
		sport, err := r.sourcePort(req.Dst, id, w)
		if err != nil {
			return nil, err
		}
		tuple := bcube.FiveTuple{Src: src, Dst: dst, Proto: header.ProtoUDP, SPort: sport, DPort: roce.UDPPort}
		o := t.FlowOrder(&h.policy, &tuple)
		port := t.NextLevel(h.self, req.Dst, &o)
		p := r.pathParams(port, req.Dst)
		path := r.pathRate(req.Dst, p.LineRateBps)
		p.DCQCN.Enabled = dcqcn
		if req.RateBps > 0 && (p.LineRateBps == 0 || req.RateBps < p.LineRateBps) {
			// The flow's own line: it is paced at most at the cap, and
			// DCQCN moves below it.
			p.LineRateBps = req.RateBps
		}
		if p.DCQCN.Enabled && p.LineRateBps <= 0 {
			return nil, errors.New("rdma: DCQCN needs a line rate")
		}
		qp := rdmaQP(mode, id)
		s, err := transport.NewSender(mode, p, rdmaStartPSN(qp), req.Bytes, req.MTU)
		if err != nil {
			return nil, fmt.Errorf("rdma: %w", err)
		}
		if msgs > 0 {
			if err := s.SetMessages(req.MsgBytes, req.Latency); err != nil {
				return nil, fmt.Errorf("rdma: %w", err)
			}
		}
		plans[i] = plan{id, sport, s, o, port, path, placed}
	}
	now := h.e.Now()
	var out []*rdmaFlow
	for _, pl := range plans {
		qp := rdmaQP(mode, pl.id)
		tuple := bcube.FiveTuple{Src: src, Dst: dst, Proto: header.ProtoUDP, SPort: pl.sport, DPort: roce.UDPPort}
		o, port := pl.o, pl.port
		f := &rdmaFlow{
			RDMAFlow: api.RDMAFlow{ID: pl.id, QP: qp, Dst: req.Dst, Mode: mode, DCQCN: dcqcn, MTU: req.MTU,
				Size: req.Bytes, DurationNs: req.Duration, SPort: pl.sport, Port: port, PathRateBps: pl.path, Order: o.String(),
				StartPSN: pl.s.StartPSN(), State: api.RDMARunning, RateLimitBps: req.RateBps, MsgBytes: req.MsgBytes},
			s:        pl.s,
			hash:     bcube.FlowHash(&tuple),
			maxFrame: roce.DataFrameLen(roce.OpSendMiddle, req.MTU),
			startEng: now,
			queue:    -1,
			tmpl: roce.Flow{SrcMAC: [6]byte(h.own[port]), DstMAC: [6]byte(h.sw[port]), PCP: signaling.PCPData,
				SrcIP: src, DstIP: dst, ECN: ecnECT0, SrcPort: pl.sport, DestQP: qp},
		}
		if req.Duration > 0 {
			f.deadline = now + req.Duration
		}
		if msgs > 0 {
			// Sized at the start, so the per-packet paths allocate
			// nothing.
			f.msgSent, f.msgDone = make([]int64, msgs), make([]int64, msgs)
			if req.Latency {
				f.latency, f.lat = true, make([]int64, msgs)
			}
		}
		if f.queue = h.fc.FlowQueue(port, req.Dst); f.queue < 0 {
			f.Queue = h.fc.Name() // assigned per packet
		} else {
			f.Queue = h.e.Egress(port).Name(f.queue)
		}
		if h.ate != nil {
			f.ate = true
			if pl.placed {
				h.ate.Chose(port == 0)
			} else {
				h.ate.NoChoice(want != nil)
			}
		}
		r.flows = append(r.flows, f)
		r.active = append(r.active, f)
		out = append(out, f)
	}
	return out, nil
}

// sourcePort picks flow id's UDP source port, its entropy: from the
// flow's block of 64, the first whose flow hash gives the level order
// want (nil: any).
func (r *rdma) sourcePort(dst, id int, want *bcube.Order) (uint16, error) {
	h := r.h
	base := rdmaSPortBase + (id*64)%(65536-rdmaSPortBase)
	if want == nil || h.policy.Fixed != nil {
		return uint16(base), nil
	}
	src, d := bcube.ServerIP(h.self).As4(), bcube.ServerIP(dst).As4()
	for sp := base; sp < base+64; sp++ {
		tuple := bcube.FiveTuple{Src: src, Dst: d, Proto: header.ProtoUDP, SPort: uint16(sp), DPort: roce.UDPPort}
		if o := h.t.FlowOrder(&h.policy, &tuple); o == *want {
			return uint16(sp), nil
		}
	}
	return 0, fmt.Errorf("rdma: no source port in %d..%d gives order %s", base, base+63, want)
}

// alloc takes a frame of the engine's memory, the spare first.
func (r *rdma) alloc() (uint64, bool) {
	if r.hasSp {
		r.hasSp = false
		return r.spare, true
	}
	return r.h.e.Alloc()
}

// Produce queues the data packets every running flow may send now.
func (r *rdma) Produce(now int64) int {
	made := 0
	for i := 0; i < len(r.active); {
		f := r.active[i]
		if f.State == api.RDMARunning {
			made += r.produce(f, now)
		}
		if f.State != api.RDMARunning {
			r.active = slices.Delete(r.active, i, i+1)
			continue
		}
		i++
	}
	return made
}

func (r *rdma) produce(f *rdmaFlow, now int64) int {
	e := r.h.e
	eg := e.Egress(f.Port)
	r.deadline(f, now)
	f.blocked = blockNone
	made := 0
	for {
		if t := f.s.NextSendTime(); t < 0 || t > now {
			break
		}
		q, meta := f.queue, rdmaOwner|uint64(f.ID)<<signaling.MetaOwnerShift
		if q < 0 {
			var m uint64
			q, m = r.h.fc.OwnFrame(f.Port, f.hash, now)
			meta |= m
		}
		if eg.PausedAt(q, now) {
			f.blocked, f.blockQ = blockPaused, q
			break
		}
		if f.queued+f.maxFrame > RDMAQueueBytes {
			f.blocked = blockQueue
			break
		}
		// The NIC's own packet waits for room in its half of the
		// node's buffer rather than being made and refused (a loss the
		// NIC would inflict on itself); the other half is the relay's.
		if !e.AdmitsOwn(f.Port, q, f.maxFrame) {
			f.NoFrame++
			f.blocked, f.blockAt = blockFrame, now
			break
		}
		addr, ok := r.alloc()
		if !ok {
			f.NoFrame++
			f.blocked, f.blockAt = blockFrame, now
			break
		}
		seg, ok := f.s.Next(now)
		if !ok {
			r.spare, r.hasSp = addr, true
			break
		}
		if f.msgSent != nil && !seg.Retx && (seg.Pos == transport.First || seg.Pos == transport.Only) {
			f.msgSent[seg.Msg] = now // a message posted: its round trip starts
		}
		op := sendOpcode(seg.Pos)
		d := xdp.Desc{Addr: addr, Len: uint32(roce.DataFrameLen(op, seg.Len))}
		b := e.Frame(&d)
		off := roce.PayloadOffset(op)
		clear(b[off : off+seg.Len])
		if f.queue < 0 {
			f.tmpl.VID = signaling.VID(q)
		}
		roce.PutData(b, &f.tmpl, &roce.Data{Opcode: op, PSN: seg.PSN, AckReq: seg.AckReq, Payload: seg.Len})
		if !e.Send(f.Port, q, &d, roce.EthLen+roce.VLANLen, meta) {
			// Refused by the shared buffer (counted there): the packet
			// is lost, and the transport deals with it as with any loss.
			f.NoFrame++
			f.blocked, f.blockAt = blockFrame, now
			break
		}
		f.queued += int(d.Len)
		if f.ate && !seg.Retx {
			f.sent += int64(seg.Len)
			r.ateSync(f)
		}
		made++
	}
	return made
}

// ateSync brings the in-flight bytes f counts in ATE's domain of its
// first hop up to date: new bytes sent less bytes acknowledged.
func (r *rdma) ateSync(f *rdmaFlow) {
	x := max(f.sent-f.s.Acked(), 0)
	r.h.ate.Add(f.Port == 0, x-f.inflight)
	f.inflight = x
}

func sendOpcode(p transport.Position) roce.Opcode {
	switch p {
	case transport.First:
		return roce.OpSendFirst
	case transport.Last:
		return roce.OpSendLast
	case transport.Only:
		return roce.OpSendOnly
	}
	return roce.OpSendMiddle
}

// deadline tells a timed flow whose time is up that its next packet is
// its last.
func (r *rdma) deadline(f *rdmaFlow, now int64) {
	if f.deadline > 0 && !f.stopped && now >= f.deadline {
		f.s.Stop()
		f.stopped = true
	}
}

// settle records the end of a flow the transport finished or gave up.
func (r *rdma) settle(f *rdmaFlow, now int64) {
	if f.State != api.RDMARunning {
		return
	}
	switch {
	case f.s.Done():
		f.State, f.endEng = api.RDMADone, f.s.S.End
		if f.msgDone != nil {
			f.PeakBps = f.peak()
		}
	case f.s.Failed():
		f.State, f.endEng = api.RDMAFailed, now
		if f.s.S.Timeouts > 0 {
			f.Failure = fmt.Sprintf("lossless: nothing acknowledged for %v with data outstanding", time.Duration(r.params.LosslessTimeout))
		} else {
			f.Failure = "lossless: the receiver saw a PSN gap (packets lost)"
		}
	default:
		return
	}
	r.finish(f)
}

// dequeued returns a frame's bytes to its flow's queue allowance; the
// frame has left the NIC, which restarts a lossless sender's
// no-progress clock.
func (r *rdma) dequeued(meta uint64, n int) {
	if f := r.flow(int(meta >> signaling.MetaOwnerShift & (1<<31 - 1))); f != nil {
		f.queued -= n
		if f.s != nil && f.s.CountsDepartures() {
			f.s.Departed(r.h.e.Now())
		}
	}
}

// NextTick implements dataplane.Timer: the earliest of the senders'
// timers and pacing (of the flows not waiting on their queue) and the
// receivers' ACK coalescing.
func (r *rdma) NextTick() int64 {
	next := int64(-1)
	consider := func(t int64) {
		if t >= 0 && (next < 0 || t < next) {
			next = t
		}
	}
	for _, f := range r.active {
		if f.State != api.RDMARunning {
			continue
		}
		consider(f.s.NextTimer())
		if f.deadline > 0 && !f.stopped {
			consider(f.deadline)
		}
		st := f.s.NextSendTime()
		if st < 0 {
			continue
		}
		switch f.blocked {
		case blockNone:
			consider(st)
		case blockPaused:
			// A resume arrives as a frame, which wakes the engine; a
			// pause that lapses does not.
			eg := r.h.e.Egress(f.Port)
			if !eg.Paused(f.blockQ) {
				consider(st)
			} else if x, ok := eg.NextExpiry(); ok {
				consider(x)
			}
		case blockQueue:
			// Its frames leaving wake the engine.
			if f.queued+f.maxFrame <= RDMAQueueBytes {
				consider(st)
			}
		case blockFrame:
			consider(max(st, f.blockAt+int64(rdmaAllocRetry)))
		}
	}
	for _, rc := range r.armed {
		consider(rc.r.NextTimer())
	}
	return next
}

// Tick implements dataplane.Timer: the senders' and receivers' timers
// due at now. Produce, which runs in the same pass, sends what pacing
// allows.
func (r *rdma) Tick(now int64) {
	for _, f := range r.active {
		if f.State != api.RDMARunning {
			continue
		}
		r.deadline(f, now)
		if t := f.s.NextTimer(); t >= 0 && t <= now {
			f.s.OnTimer(now)
			r.settle(f, now)
		}
	}
	for i := 0; i < len(r.armed); {
		rc := r.armed[i]
		if t := rc.r.NextTimer(); t >= 0 && t <= now {
			r.reply(rc, rc.r.OnTimer(now))
		}
		if rc.r.NextTimer() < 0 {
			rc.armed = false
			r.armed = slices.Delete(r.armed, i, i+1)
			continue
		}
		i++
	}
}

// receive takes a RoCE frame b addressed to this server, whose Ethernet,
// 802.1Q and IPv4 headers Handle parsed into f, and settles v: it
// is consumed, or dropped as malformed.
func (r *rdma) receive(b []byte, f *header.Frame, now int64, v *dataplane.Verdict) {
	v.Port = -1
	p := &r.pkt
	if err := roce.ParseFrame(b, f, p); err != nil {
		if err == roce.ErrBadICRC {
			r.c.BadICRC++
		} else {
			r.c.Malformed++
		}
		v.Drop = dataplane.DropMalformed
		return
	}
	switch op := p.Opcode(); {
	case op == roce.OpAck:
		r.onAck(p, now, v)
	case op == roce.OpCNP:
		f, ok := r.sender(p)
		switch {
		case !ok:
			v.Drop = dataplane.DropUnsupported
		case f != nil:
			f.s.OnCNP(now)
		}
	case op.IsData():
		r.onData(p, now, v)
	default:
		r.c.Unsupported++
		v.Drop = dataplane.DropUnsupported
	}
}

// sender is the running flow an ACK, NAK or CNP is for; nil with ok
// for a flow that has ended (the frame is late and simply consumed);
// ok false, counted, when the QP names no flow of this NIC.
func (r *rdma) sender(p *roce.Packet) (f *rdmaFlow, ok bool) {
	qp := p.DestQP()
	id := int(qp & (1<<22 - 1))
	if id < 1 || id > r.base+len(r.flows) {
		r.c.UnknownQP++
		return nil, false
	}
	f = r.flow(id)
	if f == nil {
		return nil, true // ended long ago, its record released
	}
	if f.QP != qp || f.tmpl.DstIP != p.SrcIP {
		r.c.UnknownQP++
		return nil, false
	}
	if f.State != api.RDMARunning {
		return nil, true
	}
	return f, true
}

func (r *rdma) onAck(p *roce.Packet, now int64, v *dataplane.Verdict) {
	s := p.AETH.Syndrome()
	if s.Kind() != roce.KindACK && s != roce.SyndromePSNSeq {
		r.c.Unsupported++
		v.Drop = dataplane.DropUnsupported
		return
	}
	f, ok := r.sender(p)
	if !ok {
		v.Drop = dataplane.DropUnsupported
		return
	}
	if f == nil {
		return
	}
	if expected, got, ok := p.SelectiveNAK(); ok {
		f.s.OnNak(expected, got, now)
	} else {
		f.s.OnAck(p.PSN(), now)
	}
	if f.ate {
		r.ateSync(f)
	}
	f.messagesDone(now)
	r.settle(f, now)
}

// messagesDone records the messages acknowledged whole by now.
func (f *rdmaFlow) messagesDone(now int64) {
	for n := min(f.s.Messages(), int64(len(f.msgDone))); f.seenMsgs < n; f.seenMsgs++ {
		f.msgDone[f.seenMsgs] = now
		if f.latency {
			f.lat[f.seenMsgs] = now - f.msgSent[f.seenMsgs]
		}
	}
}

// peakMinWindow is the shortest window peak measures over: longer than
// the scheduling jitter of daemons on a loaded machine, which delays and
// bunches ACKs by up to a millisecond or two and would otherwise show as
// rates above the link's.
const peakMinWindow = 10 * time.Millisecond

// peak is a message flow's payload rate over the best tenth of its time
// (first message posted to last acknowledged): the best rate over a span
// that opens at a completion (or at the first posting) and closes at the
// first completion at least that long after, counting the messages
// completed within it (those completed at its opening were delivered
// before). A span closes at a completion, not at a fixed time, so a
// message that straddles a window's end does not go missing from it (with
// large messages that made peak read below the average); it is no
// shorter than peakMinWindow, so an ACK that completes many small
// messages at once counts as the burst it is, not as an infinite rate.
// The whole flow is one of the spans: peak is never below the average.
func (f *rdmaFlow) peak() float64 {
	n := int(f.seenMsgs)
	if n == 0 {
		return 0
	}
	d := f.msgDone
	dur := d[n-1] - f.msgSent[0]
	x := min(dur, max(dur/10, int64(peakMinWindow)))
	if x <= 0 {
		return 0
	}
	best := 0.0
	// rate of the span (open, d[j]] holding messages k..j.
	rate := func(open int64, k, j int) {
		if span := d[j] - open; span > 0 {
			best = max(best, float64(int64(j-k+1)*f.MsgBytes*8)*1e9/float64(span))
		}
	}
	rate(f.msgSent[0], 0, n-1) // the whole flow
	j := 0
	for j < n && d[j]-f.msgSent[0] < x {
		j++
	}
	if j < n {
		rate(f.msgSent[0], 0, j)
	}
	k := 0 // the first message completed after d[i]
	for i := 0; i < n; i++ {
		for j < n && d[j]-d[i] < x {
			j++
		}
		if j == n {
			break
		}
		for k < n && d[k] <= d[i] {
			k++
		}
		rate(d[i], k, j)
	}
	return best
}

func (r *rdma) onData(p *roce.Packet, now int64, v *dataplane.Verdict) {
	key := recvKey{src: p.SrcIP, qp: p.DestQP()}
	rc := r.recvs[key]
	if rc == nil {
		rc = r.newReceiver(key, p.SrcPort)
		if rc == nil {
			v.Drop = dataplane.DropUnsupported
			return
		}
	}
	op := p.Opcode()
	a := rc.r.OnData(p.PSN(), len(p.Payload), op.Last(), p.BTH.AckReq(), p.ECN == header.ECNCE, now)
	r.reply(rc, a)
	if !rc.armed && rc.r.NextTimer() >= 0 {
		rc.armed = true
		r.armed = append(r.armed, rc)
	}
	if rc.endAt == 0 && (rc.r.Done() || rc.r.Failed()) {
		rc.endAt = max(now, 1)
		r.over = append(r.over, rc)
	}
}

// release lets go of the receivers whose flows ended linger ago and whose
// ACK timers are done, keeping a summary of each among the last
// maxRDMAPastReceivers. It runs when a receiver is created and for a
// report, so the receivers kept are bounded by the flows of the last
// linger.
func (r *rdma) release(now int64) {
	kept, gone := r.over[:0], 0
	for _, rc := range r.over {
		if rc.armed || now-rc.endAt < r.linger {
			kept = append(kept, rc)
			continue
		}
		delete(r.recvs, rc.key)
		r.past.add(pastRecv{src: rc.src, qp: rc.key.qp, mode: rc.mode, done: rc.r.Done(), gap: rc.r.Failed(), s: rc.r.S})
		rc.r = nil
		gone++
	}
	clear(r.over[len(kept):])
	r.over = kept
	if gone == 0 {
		return
	}
	live := r.rlist[:0]
	for _, rc := range r.rlist {
		if rc.r != nil {
			live = append(live, rc)
		}
	}
	clear(r.rlist[len(live):])
	r.rlist = live
}

// summary is what a report says of rc, with engine times made Unix
// times by off.
func (rc *rdmaRecv) summary(off int64) api.RDMAReceiver {
	return receiverSummary(rc.src, rc.key.qp, rc.mode, rc.r.Done(), rc.r.Failed(), &rc.r.S, off)
}

// receiverSummary is a receiver's report, with engine times made Unix
// times by off.
func receiverSummary(src int, qp uint32, mode transport.Mode, done, gap bool, st *transport.ReceiverStats, off int64) api.RDMAReceiver {
	x := api.RDMAReceiver{Src: src, QP: qp, Mode: mode, Done: done, Gap: gap, Stats: st.Map()}
	if st.First >= 0 {
		x.FirstNs = st.First + off
	}
	if st.Complete >= 0 {
		x.CompleteNs = st.Complete + off
	}
	return x
}

// newReceiver creates the receiver of a flow whose first packet (to
// arrive) came from key.src with UDP source port sport; nil, counted,
// when it cannot.
func (r *rdma) newReceiver(key recvKey, sport uint16) *rdmaRecv {
	h := r.h
	r.release(h.e.Now())
	mode, ok := rdmaQPMode(key.qp)
	src := h.t.ServerIndex(key.src)
	switch {
	case !ok || src < 0:
		r.c.UnknownQP++
		return nil
	case len(r.recvs) >= maxRDMAReceivers:
		r.c.ReceiverLimit++
		return nil
	}
	tr, err := transport.NewReceiver(mode, r.params, rdmaStartPSN(key.qp), api.MinRDMAMTU)
	if err != nil {
		r.c.Unsupported++
		return nil
	}
	self := bcube.ServerIP(h.self).As4()
	// Replies take the data's entropy: one flow hash for both directions
	// is as good as any, and they ride the HQ anyway.
	tuple := bcube.FiveTuple{Src: self, Dst: key.src, Proto: header.ProtoUDP, SPort: sport, DPort: roce.UDPPort}
	o := h.t.FlowOrder(&h.policy, &tuple)
	port := h.t.NextLevel(h.self, src, &o)
	rc := &rdmaRecv{key: key, src: src, mode: mode, r: tr, port: port, hq: h.controlQueue(port),
		reply: roce.Flow{SrcMAC: [6]byte(h.own[port]), DstMAC: [6]byte(h.sw[port]), PCP: signaling.PCPControl,
			SrcIP: self, DstIP: key.src, SrcPort: sport, DestQP: key.qp}}
	if r.recvs == nil {
		r.recvs = map[recvKey]*rdmaRecv{}
	}
	r.recvs[key] = rc
	r.rlist = append(r.rlist, rc)
	return rc
}

// controlQueue is the queue of control frames at fabric port l.
func (h *Host) controlQueue(l int) int { return h.fc.ControlQueue(l) }

// reply sends what a receiver answered: a CNP, then the ACK or NAK.
func (r *rdma) reply(rc *rdmaRecv, a transport.RxAction) {
	if a.CNP {
		if b, d, ok := r.ctlFrame(roce.CNPLen); ok {
			roce.PutCNP(b, &rc.reply)
			r.sendCtl(rc, d)
		}
	}
	switch a.Reply {
	case transport.ReplyAck:
		if b, d, ok := r.ctlFrame(roce.AckLen); ok {
			roce.PutAck(b, &rc.reply, roce.SyndromeACK, a.PSN, 0)
			r.sendCtl(rc, d)
		}
	case transport.ReplyNak:
		if b, d, ok := r.ctlFrame(roce.AckLen); ok {
			roce.PutSelectiveNAK(b, &rc.reply, a.PSN, a.SackPSN)
			r.sendCtl(rc, d)
		}
	}
}

func (r *rdma) ctlFrame(n int) ([]byte, xdp.Desc, bool) {
	addr, ok := r.h.e.AllocControl()
	if !ok {
		r.c.NoFrame++
		return nil, xdp.Desc{}, false
	}
	d := xdp.Desc{Addr: addr, Len: uint32(n)}
	return r.h.e.Frame(&d), d, true
}

func (r *rdma) sendCtl(rc *rdmaRecv, d xdp.Desc) {
	if !r.h.e.Send(rc.port, rc.hq, &d, 0, 0) {
		r.c.NoFrame++
	}
}

// report copies the flows of ids (all, with the receivers, when empty).
func (r *rdma) report(ids []int) api.RDMAReport {
	off := r.h.unixOffset()
	rep := api.RDMAReport{NowNs: r.h.e.Now() + off, Params: r.params, Counters: r.c, Flows: []api.RDMAFlow{}}
	if len(ids) > 0 {
		for _, id := range ids {
			if f := r.flow(id); f != nil {
				rep.Flows = append(rep.Flows, f.report(off))
				if f.State != api.RDMARunning && f.s == nil && !f.fetched {
					f.fetched = true
					r.fetched = append(r.fetched, f.ID)
				}
			}
		}
		for len(r.fetched) > maxRDMAFetched {
			r.forget(r.fetched[0])
			r.fetched = r.fetched[1:]
		}
		return rep
	}
	for _, f := range r.flows {
		if f != nil {
			rep.Flows = append(rep.Flows, f.report(off))
		}
	}
	r.release(r.h.e.Now())
	r.past.each(func(p *pastRecv) {
		rep.Receivers = append(rep.Receivers, receiverSummary(p.src, p.qp, p.mode, p.done, p.gap, &p.s, off))
	})
	for _, rc := range r.rlist {
		rep.Receivers = append(rep.Receivers, rc.summary(off))
	}
	return rep
}

// report is the flow's state with engine times made Unix times by off.
func (f *rdmaFlow) report(off int64) api.RDMAFlow {
	out := f.RDMAFlow
	first := f.firstEng
	if f.s != nil {
		f.counters(&out)
		first = f.s.S.Start
	}
	out.StartNs = f.startEng + off
	if first >= 0 {
		out.FirstNs = first + off
	}
	if f.State != api.RDMARunning {
		out.EndNs = f.endEng + off
	}
	return out
}

// counters sets out's counters from the flow's sender.
func (f *rdmaFlow) counters(out *api.RDMAFlow) {
	st := &f.s.S
	if fct := st.FCT(); fct >= 0 {
		out.FCTNs = fct
	}
	out.Size = f.s.Size()
	out.Packets, out.Bytes = st.Packets, st.Bytes
	out.RetxPackets, out.RetxBytes = st.RetxPackets, st.RetxBytes
	out.Timeouts, out.ACKs, out.NAKs, out.CNPs = st.Timeouts, st.ACKs, st.NAKs, st.CNPs
	out.AckedBytes = f.s.Acked()
	out.RateBps = f.s.Rate()
	out.Messages = f.s.Messages()
}

// parseIDs reads a list of flow ids, "1,2,3" ("" : none).
func parseIDs(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var ids []int
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || id < 1 {
			return nil, fmt.Errorf("rdma: flow id %q: want a positive number", f)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// pastRecv is what stays of a released receiver: its final state and
// counters, a value of fixed size (a report makes it an api.RDMAReceiver,
// whose counters are a map, only when asked).
type pastRecv struct {
	src       int
	qp        uint32
	mode      transport.Mode
	done, gap bool
	s         transport.ReceiverStats
}

// pastRing keeps the last maxRDMAPastReceivers released receivers,
// oldest first; it allocates once, when it is first full.
type pastRing struct {
	buf  []pastRecv
	head int // the oldest, once buf is full
}

func (p *pastRing) add(x pastRecv) {
	if len(p.buf) < maxRDMAPastReceivers {
		p.buf = append(p.buf, x)
		return
	}
	p.buf[p.head] = x
	p.head = (p.head + 1) % len(p.buf)
}

// each calls fn for every kept receiver, oldest first.
func (p *pastRing) each(fn func(*pastRecv)) {
	for i := range p.buf {
		fn(&p.buf[(p.head+i)%len(p.buf)])
	}
}

// len is the number of receivers kept.
func (p *pastRing) len() int { return len(p.buf) }
