package transport

import (
	"errors"
	"fmt"
	"math"
)

// The sending half of a reliable-connected flow (one QP), driven by its
// caller on an explicit clock:
//
//  1. Next(now) hands out the packet to transmit now, if any: in IRN a
//     lost packet first, else the next new one (in Go-Back-N, the next
//     after a rewind), within the window (IRN: one BDP) and no sooner than
//     the pacer allows at the current rate (DCQCN's, or the line rate);
//     the first transmission of a packet SetLoss named comes out marked
//     Drop, for the caller to lose (inject.go).
//  2. OnAck, OnNak and OnCNP take what came back; they may make more
//     packets sendable (call Next again) or rewind.
//  3. NextTimer is the next deadline (retransmission timeout, DCQCN's
//     increase timer); at it the caller runs OnTimer. NextSendTime is when
//     the pacer next lets a packet go, -1 while only an event can.

// Position is where a packet sits in its message (a flow is one message
// unless SetMessages splits it): it picks the BTH opcode (SEND First,
// Middle, Last or Only).
type Position uint8

const (
	Middle Position = iota
	First
	Last
	Only
)

func (p Position) String() string {
	switch p {
	case Middle:
		return "middle"
	case First:
		return "first"
	case Last:
		return "last"
	case Only:
		return "only"
	}
	return fmt.Sprintf("Position(%d)", int(p))
}

// Segment is one packet for the caller to transmit.
type Segment struct {
	PSN    uint32 // on the wire
	Seq    int64  // index in the flow, from 0
	Offset int64  // its payload's offset in the flow: Seq x MTU
	Len    int    // payload bytes
	Pos    Position
	Retx   bool // sent before
	// AckReq asks the receiver to acknowledge at once: set on the flow's
	// last packet and on one that fills the window.
	AckReq bool
	// Msg is the index of the packet's message (0 unless SetMessages).
	Msg int64
	// Drop: an injected loss (SetLoss), the packet's first transmission.
	// The sender counts it sent; the caller drops it instead of
	// transmitting it, and counts the drop.
	Drop bool
	// Slot is when the pacer had the packet go (the caller's clock): now,
	// or before it when the caller came late and the pacer kept its
	// schedule (within PacingCatchup, or a packet time without it). A
	// caller that came late only for the clock, not because the packet
	// was held, may send the packet as of then.
	Slot int64
}

// SenderStats are one flow's sending side. Times are the caller's clock,
// -1 until they happen.
type SenderStats struct {
	Packets, Bytes         uint64 // sent (payload bytes), retransmissions included
	RetxPackets, RetxBytes uint64 // retransmissions
	Timeouts               uint64 // retransmission timeouts (lossless: the no-progress timeout)
	Injected               uint64 // first transmissions handed out to be dropped (SetLoss), counted in Packets
	ACKs, NAKs, CNPs       uint64 // received
	Start                  int64  // first packet sent
	End                    int64  // every byte acknowledged
}

// FCT is the flow completion time, first byte sent to last byte
// acknowledged, or -1 before the flow completes.
func (s *SenderStats) FCT() int64 {
	if s.Start < 0 || s.End < 0 {
		return -1
	}
	return s.End - s.Start
}

// Map flattens s for stats (fct_ns is 0 until the flow completes).
func (s *SenderStats) Map() map[string]uint64 {
	return map[string]uint64{
		"packets": s.Packets, "bytes": s.Bytes,
		"retx_packets": s.RetxPackets, "retx_bytes": s.RetxBytes,
		"timeouts": s.Timeouts, "injected": s.Injected, "acks": s.ACKs, "naks": s.NAKs, "cnps": s.CNPs,
		"fct_ns": uint64(max(s.FCT(), 0)),
	}
}

// Sender is the sending side of one flow. Not safe for concurrent use.
type Sender struct {
	mode   Mode
	mtu    int64
	size   int64 // bytes; 0 while unbounded
	total  int64 // packets; -1 while unbounded
	start  int64 // first PSN, as the base of extended PSNs
	window int64

	una int64 // oldest unacknowledged
	nxt int64 // next to send (Go-Back-N rewinds it; IRN: == hi)
	hi  int64 // one past the highest ever sent

	// IRN: SACKed packets in [una, hi), and loss recovery: un-SACKed
	// packets in [rtxNext, rtxEnd) are retransmitted once; recovery ends
	// when everything sent before it began is acknowledged.
	sack     ring
	sacked   int64
	recovery bool
	recEnd   int64
	rtxNext  int64
	rtxEnd   int64

	// Timers: the retransmission timeout (lossless: no progress) and
	// DCQCN's.
	rtoBase     int64 // the timeout counts from here; -1: nothing outstanding
	rto         int64 // Go-Back-N
	rtoLow      int64 // IRN, fewer than rtoN packets in flight
	rtoHigh     int64
	rtoN        int64
	lossTimeout int64 // lossless; 0: none
	ccOn        bool
	cc          DCQCN
	dctcpOn     bool
	dctcp       DCTCP
	hpccOn      bool
	hpcc        HPCC
	bdpWin      int64 // DCQCN+win: packets of one BDP; 0: no window

	// Pacing: the gap after a packet is its wire bytes at the rate.
	line     float64 // bit/s; 0: no pacing
	overhead int64
	catchup  int64 // ns of lateness made up for; 0: less than a packet time
	slot     int64 // when the last packet was nominally sent
	lastWire int64 // its bytes on the wire; 0 before the first

	failed bool

	// Messages (SetMessages): msg payload bytes each, ppm packets each;
	// msg 0: the flow is one message.
	msg int64
	ppm int64

	// Injected loss (SetLoss): the packets whose first transmission is
	// dropped, sorted; those from loseNext on are still to come.
	lose     []int64
	loseNext int

	S SenderStats

	// gapRate and gapWire are the rate and frame size gapNs was computed
	// for (gap's memo).
	gapRate        float64
	gapWire, gapNs int64
}

// NewSender returns the sender of a flow of size bytes (0: unbounded
// until Stop) in packets of at most mtu payload bytes, whose first packet
// is startPSN (the low 24 bits count).
func NewSender(mode Mode, p Params, startPSN uint32, size int64, mtu int) (*Sender, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if mode > IRN {
		return nil, fmt.Errorf("transport: invalid mode %d", int(mode))
	}
	if mtu < 1 || size < 0 {
		return nil, errors.New("transport: want mtu >= 1 and size >= 0")
	}
	s := &Sender{
		mode: mode, mtu: int64(mtu), size: size, total: -1, start: int64(startPSN & PSNMask),
		window:  p.window(mode, mtu),
		rtoBase: -1, rto: int64(p.RTO), rtoLow: int64(p.RTOLow), rtoHigh: int64(p.RTOHigh),
		lossTimeout: int64(p.LosslessTimeout), rtoN: int64(p.RTOThreshold),
		line: float64(p.LineRateBps), overhead: int64(p.WireOverhead), catchup: int64(p.PacingCatchup), ccOn: p.DCQCN.Enabled,
		S: SenderStats{Start: -1, End: -1},
	}
	if size > 0 {
		s.total = (size + s.mtu - 1) / s.mtu
	}
	if mode == IRN {
		s.sack = newRing(s.window)
	}
	if s.ccOn {
		s.cc.init(p.DCQCN, p.LineRateBps)
		if p.DCQCN.Window {
			s.bdpWin = max(1, (p.BDPBytes+s.mtu-1)/s.mtu)
		}
	}
	if p.DCTCP.Enabled {
		s.dctcpOn = true
		s.dctcp.init(p.DCTCP, mtu, p.BDPBytes)
	}
	if p.HPCC.Enabled {
		s.hpccOn = true
		s.hpcc.init(p.HPCC, mtu, p.LineRateBps)
	}
	return s, nil
}

// SetMessages splits a sized flow into messages of msg bytes each (size
// must be a multiple of msg), as a series of RDMA SENDs: every message
// starts a packet of its own and ends with a short one when msg is not a
// multiple of the MTU, and packets carry their position in their message.
// With oneAtATime a message is sent only once the one before is
// acknowledged (the window is one message), and its last packet asks for
// the ACK: a latency test's ping. Call it before the first Next.
func (s *Sender) SetMessages(msg int64, oneAtATime bool) error {
	switch {
	case msg <= 0 || s.size <= 0 || s.size%msg != 0:
		return fmt.Errorf("transport: messages of %d bytes: want a sized flow whose size (%d) they divide", msg, s.size)
	case s.hi > 0:
		return errors.New("transport: messages set after the first packet")
	case s.lose != nil:
		return errors.New("transport: messages set after the loss (SetLoss numbers the packets messages make)")
	}
	s.msg, s.ppm = msg, (msg+s.mtu-1)/s.mtu
	s.total = s.size / msg * s.ppm
	if oneAtATime {
		s.window = s.ppm
	} else {
		s.window = max(s.window, s.ppm)
	}
	return nil
}

// Messages is the number of messages acknowledged whole (0 unless
// SetMessages).
func (s *Sender) Messages() int64 {
	if s.ppm == 0 {
		return 0
	}
	return s.una / s.ppm
}

// Mode is the sender's loss recovery.
func (s *Sender) Mode() Mode { return s.mode }

// CC is the sender's congestion control.
func (s *Sender) CC() CC {
	switch {
	case s.ccOn && s.bdpWin > 0:
		return CCDCQCNWin
	case s.ccOn && s.cc.mlx:
		return CCDCQCNMlx
	case s.ccOn:
		return CCDCQCN
	case s.dctcpOn:
		return CCDCTCP
	case s.hpccOn:
		return CCHPCC
	}
	return CCNone
}

// StartPSN is the PSN of the flow's first packet.
func (s *Sender) StartPSN() uint32 { return uint32(s.start) }

// Size is the flow's size in bytes; 0 while unbounded.
func (s *Sender) Size() int64 { return s.size }

// Acked is the bytes acknowledged (cumulatively).
func (s *Sender) Acked() int64 {
	if s.total >= 0 && s.una >= s.total {
		return s.size
	}
	if s.ppm > 0 {
		// Whole messages, then whole packets of the next.
		return s.una/s.ppm*s.msg + s.una%s.ppm*s.mtu
	}
	return s.una * s.mtu
}

// Outstanding is the packets sent and not yet acknowledged cumulatively.
func (s *Sender) Outstanding() int64 { return s.hi - s.una }

// Window is the most packets the sender has outstanding now: its cap,
// or less when a window congestion control (DCTCP, HPCC) holds it lower.
func (s *Sender) Window() int64 { return s.win() }

func (s *Sender) win() int64 {
	switch {
	case s.dctcpOn:
		return min(s.window, s.dctcp.Packets())
	case s.hpccOn:
		return min(s.window, s.hpcc.Packets())
	case s.bdpWin > 0:
		return min(s.window, s.bdpWin)
	}
	return s.window
}

// Done reports that every byte of the flow is acknowledged.
func (s *Sender) Done() bool { return s.total >= 0 && s.una >= s.total }

// Failed reports that the flow gave up: in lossless mode, the receiver
// saw a gap or nothing was acknowledged for LosslessTimeout.
func (s *Sender) Failed() bool { return s.failed }

// Rate is the rate the sender paces at now, bit/s (0: unpaced).
func (s *Sender) Rate() float64 {
	switch {
	case s.ccOn:
		return s.cc.Rate()
	case s.hpccOn:
		return s.hpcc.Rate()
	case s.dctcpOn && s.line > 0:
		return s.dctcp.Rate(s.line)
	}
	return s.line
}

// HPCC is the sender's HPCC machine, nil when HPCC is off.
func (s *Sender) HPCC() *HPCC {
	if !s.hpccOn {
		return nil
	}
	return &s.hpcc
}

// DCTCP is the sender's window machine, nil when DCTCP is off.
func (s *Sender) DCTCP() *DCTCP {
	if !s.dctcpOn {
		return nil
	}
	return &s.dctcp
}

// DCQCN is the sender's rate machine, nil when DCQCN is off.
func (s *Sender) DCQCN() *DCQCN {
	if !s.ccOn {
		return nil
	}
	return &s.cc
}

// Stop ends an unbounded flow: the next new packet is its last (a full
// one), and the flow is done once that is acknowledged. A sized flow
// ignores it.
func (s *Sender) Stop() {
	if s.total >= 0 {
		return
	}
	s.total = s.hi + 1
	s.size = s.total * s.mtu
}

// gap is how long wire bytes take at the current rate, ns.
func (s *Sender) gap(wire int64) int64 {
	r := s.Rate()
	if r <= 0 {
		return 0
	}
	// The engine asks for the next send time of every running flow at
	// every step; the rate changes only on DCQCN's events.
	if r == s.gapRate && wire == s.gapWire {
		return s.gapNs
	}
	s.gapRate, s.gapWire = r, wire
	s.gapNs = int64(math.Round(float64(wire) * 8e9 / r))
	return s.gapNs
}

// nextRtx is the next packet IRN retransmits, or -1.
func (s *Sender) nextRtx() int64 {
	s.rtxNext = max(s.rtxNext, s.una)
	for s.rtxNext < s.rtxEnd && s.sack.test(s.rtxNext) {
		s.rtxNext++
	}
	if s.rtxNext < s.rtxEnd {
		return s.rtxNext
	}
	return -1
}

// pick is the packet to send next regardless of pacing.
func (s *Sender) pick() (seq int64, ok bool) {
	if s.failed || s.Done() {
		return 0, false
	}
	if s.mode == IRN {
		if r := s.nextRtx(); r >= 0 {
			return r, true
		}
	}
	if (s.total < 0 || s.nxt < s.total) && s.nxt-s.una < s.win() {
		return s.nxt, true
	}
	return 0, false
}

// NextSendTime is the earliest time Next returns a packet (possibly
// already past), or -1 when none can go before an ACK, NAK or timer.
func (s *Sender) NextSendTime() int64 {
	if _, ok := s.pick(); !ok {
		return -1
	}
	if s.lastWire == 0 {
		return 0
	}
	return s.slot + s.gap(s.lastWire)
}

// Next returns the packet to transmit at now, if the window and the pacer
// allow one.
func (s *Sender) Next(now int64) (Segment, bool) {
	if s.ccOn {
		s.cc.OnTimer(now)
	}
	seq, ok := s.pick()
	if !ok {
		return Segment{}, false
	}
	last := s.total >= 0 && seq == s.total-1
	length := s.mtu
	first, end := seq == 0, last // of the packet's message
	var msg int64
	switch {
	case s.ppm > 0:
		msg = seq / s.ppm
		i := seq % s.ppm
		first, end = i == 0, i == s.ppm-1
		if end {
			length = s.msg - i*s.mtu
		}
	case last:
		length = s.size - seq*s.mtu
	}
	wire := length + s.overhead
	slot := now
	if s.lastWire > 0 {
		due := s.slot + s.gap(s.lastWire)
		if now < due {
			return Segment{}, false
		}
		// Late by less than a packet time keeps the schedule; later
		// than that (idle, blocked), the time is lost rather than made
		// up in a burst, except for up to PacingCatchup of it.
		switch {
		case s.catchup > 0:
			slot = max(due, now-s.catchup)
		case now-due < s.gap(wire):
			slot = due
		}
	}
	retx := seq < s.hi
	if s.mode == IRN && retx {
		s.rtxNext = seq + 1
	} else {
		s.nxt = seq + 1
		s.hi = max(s.hi, s.nxt)
	}
	seg := Segment{
		PSN: uint32((s.start + seq) & PSNMask), Seq: seq, Offset: seq * s.mtu, Len: int(length), Msg: msg,
		Retx: retx, AckReq: last || (!retx && s.nxt-s.una >= s.win()), Slot: slot,
	}
	if !retx && s.lose != nil {
		seg.Drop = s.dropFirst(seq)
	}
	switch {
	case first && end:
		seg.Pos = Only
	case first:
		seg.Pos = First
	case end:
		seg.Pos = Last
	}
	s.slot, s.lastWire = slot, wire
	if s.ccOn {
		s.cc.OnSent(int(wire), now)
	}
	st := &s.S
	st.Packets++
	st.Bytes += uint64(length)
	if retx {
		st.RetxPackets++
		st.RetxBytes += uint64(length)
	}
	if seg.Drop {
		st.Injected++
	}
	if st.Start < 0 {
		st.Start = now
	}
	if s.rtoBase < 0 {
		s.rtoBase = now
	}
	return seg, true
}

// Echo is what an ACK carries back besides its PSN, for the sender's
// congestion control.
type Echo struct {
	// ECE: the packets the ACK acknowledges arrived marked CE (DCTCP's
	// ECN echo; on the wire the BTH's BECN bit of the ACK).
	ECE bool
	// Hops INT records (HPCC), in the order the hops stamped them.
	Hops int
	Hop  [MaxINTHops]INTHop
}

// OnAck takes an ACK of psn: every packet up to and including it is
// acknowledged.
func (s *Sender) OnAck(psn uint32, now int64) {
	var e Echo
	s.OnAckEcho(psn, &e, now)
}

// OnAckEcho takes an ACK of psn that echoes e.
func (s *Sender) OnAckEcho(psn uint32, e *Echo, now int64) {
	s.S.ACKs++
	before := s.Acked()
	s.ackTo(Unwrap(psn, s.start+s.una)-s.start+1, now)
	if s.dctcpOn {
		s.dctcp.OnAck(s.Acked()-before, e.ECE, s.una, s.hi)
	}
	if s.hpccOn {
		s.hpcc.OnAck(e.Hop[:min(e.Hops, MaxINTHops)], s.una, s.hi)
	}
}

// ackTo acknowledges every packet before n.
func (s *Sender) ackTo(n, now int64) {
	if n <= s.una || n > s.hi {
		return
	}
	if s.mode == IRN {
		for q := s.una; q < n && s.sacked > 0; q++ {
			if s.sack.test(q) {
				s.sack.clear(q)
				s.sacked--
			}
		}
	}
	s.una = n
	s.nxt = max(s.nxt, n)
	if s.recovery && n >= s.recEnd {
		s.recovery, s.rtxEnd = false, 0
	}
	if s.una < s.hi {
		s.rtoBase = now
	} else {
		s.rtoBase = -1
	}
	if s.Done() && s.S.End < 0 {
		s.S.End = now
	}
}

// OnNak takes a NAK (sequence error): the receiver expects expected, so
// everything before it is acknowledged. In IRN sackPSN is the packet that
// triggered it, which the receiver holds; other modes ignore it. Lossless
// fails the flow; Go-Back-N rewinds to expected; IRN enters loss recovery
// and retransmits what is not SACKed below the highest SACKed packet.
func (s *Sender) OnNak(expected, sackPSN uint32, now int64) {
	s.S.NAKs++
	if s.failed {
		return
	}
	n := Unwrap(expected, s.start+s.una) - s.start
	switch s.mode {
	case Lossless:
		s.failed = true
	case GBN:
		s.ackTo(n, now)
		if n >= s.una && n < s.nxt {
			s.nxt = n
			s.rtoBase = now
		}
	case IRN:
		s.ackTo(n, now)
		q := Unwrap(sackPSN, s.start+s.una) - s.start
		if q <= n || q < s.una || q >= s.hi {
			return
		}
		if !s.sack.test(q) {
			s.sack.set(q)
			s.sacked++
		}
		if !s.recovery {
			s.recovery, s.recEnd = true, s.hi
			s.rtxNext, s.rtxEnd = s.una, s.una
		}
		s.rtxEnd = max(s.rtxEnd, q)
	}
}

// OnCNP takes a congestion notification.
func (s *Sender) OnCNP(now int64) {
	s.S.CNPs++
	if s.ccOn {
		s.cc.OnCNP(now)
	}
}

// rtoDeadline is when the retransmission (lossless: no-progress) timer
// fires, or -1.
func (s *Sender) rtoDeadline() int64 {
	if s.rtoBase < 0 || s.failed {
		return -1
	}
	switch s.mode {
	case Lossless:
		if s.lossTimeout == 0 {
			return -1
		}
		return s.rtoBase + s.lossTimeout
	case GBN:
		return s.rtoBase + s.rto
	}
	if s.hi-s.una-s.sacked < s.rtoN {
		return s.rtoBase + s.rtoLow
	}
	return s.rtoBase + s.rtoHigh
}

// Departed tells a lossless sender that one of its frames left the NIC
// at now: the no-progress timeout counts from the last departure, as a
// real NIC's ACK timer starts when it transmits. A NIC that queues a
// flow's frames behind a paused or congested port has not sent them,
// and a flow held there is slow, not failed. Other modes ignore it.
func (s *Sender) Departed(now int64) {
	if s.CountsDepartures() && s.rtoBase >= 0 && now > s.rtoBase {
		s.rtoBase = now
	}
}

// CountsDepartures reports whether Departed means anything to s (a
// lossless sender with a no-progress timeout), so that a NIC need not
// read its clock for every frame that leaves when it does not.
func (s *Sender) CountsDepartures() bool { return s.mode == Lossless && s.lossTimeout > 0 }

// NextTimer is the sender's next deadline for OnTimer, or -1.
func (s *Sender) NextTimer() int64 {
	if s.failed || s.Done() {
		return -1
	}
	t := s.rtoDeadline()
	if s.ccOn {
		if c := s.cc.NextTimer(); c >= 0 && (t < 0 || c < t) {
			t = c
		}
	}
	return t
}

// OnTimer runs what is due at now: DCQCN's rate increases and the
// retransmission timeout.
func (s *Sender) OnTimer(now int64) {
	if s.ccOn {
		s.cc.OnTimer(now)
	}
	d := s.rtoDeadline()
	if d < 0 || now < d {
		return
	}
	s.S.Timeouts++
	s.rtoBase = now
	switch s.mode {
	case Lossless:
		s.failed = true
	case GBN:
		s.nxt = s.una
	case IRN:
		s.recovery, s.recEnd = true, s.hi
		s.rtxNext, s.rtxEnd = s.una, s.hi
	}
}
