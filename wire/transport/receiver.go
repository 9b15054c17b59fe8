package transport

import (
	"errors"
	"fmt"
)

// The receiving half of a flow. For each data packet OnData says what to
// send back:
//
//  1. CNP: the packet arrived marked CE and the flow has sent no CNP for
//     CNPInterval (DCQCN's notification point; under its Mellanox
//     variant every marked packet).
//  2. In order: the packet is taken (IRN: with the packets buffered behind
//     it) and acknowledged once AckEvery packets wait, at once when it
//     asks (AckReq), ends the flow or fills a gap, else by the coalescing
//     timer AckDelay later (NextTimer, OnTimer).
//  3. Duplicate: counted toward the next ACK, so a sender whose ACK was
//     lost learns where the receiver is.
//  4. After a gap: lossless counts the gap, NAKs it (so the sender fails)
//     and goes on from the packet; Go-Back-N drops the packet and NAKs the
//     gap once; IRN keeps the packet and answers with a selective NAK
//     (expected PSN, this PSN), again for a copy of a packet it holds (the
//     first NAK may have been lost).

// Reply is the acknowledgement a receiver sends back.
type Reply uint8

const (
	ReplyNone Reply = iota
	// ReplyAck acknowledges every packet up to and including PSN.
	ReplyAck
	// ReplyNak is a NAK (sequence error) expecting PSN: everything before
	// it is acknowledged; in IRN SackPSN is a packet the receiver holds.
	ReplyNak
)

func (r Reply) String() string {
	switch r {
	case ReplyNone:
		return "none"
	case ReplyAck:
		return "ack"
	case ReplyNak:
		return "nak"
	}
	return fmt.Sprintf("Reply(%d)", int(r))
}

// RxAction is what the caller sends back for one received packet: an
// acknowledgement and, independently, a CNP.
type RxAction struct {
	Reply   Reply
	PSN     uint32
	SackPSN uint32 // ReplyNak: IRN's selective PSN; otherwise PSN
	CNP     bool
	// ECE echoes CE marks (a window congestion control, DCTCP): the
	// packets the acknowledgement covers arrived marked.
	ECE bool
}

// ReceiverStats are one flow's receiving side. Times are the caller's
// clock, -1 until they happen.
type ReceiverStats struct {
	// Packets and Bytes (payload) are the distinct packets taken: in
	// order, and in IRN also ahead of a gap.
	Packets, Bytes uint64
	Duplicates     uint64 // taken before
	OutOfOrder     uint64 // arrived behind a gap
	Dropped        uint64 // discarded: Go-Back-N's out of order, IRN's beyond its buffer
	Gaps, Lost     uint64 // lossless: gaps seen, packets missing in them
	ACKs, NAKs     uint64 // sent
	CNPs           uint64 // sent
	CE             uint64 // packets that arrived marked
	First          int64  // first packet
	Complete       int64  // the flow's last byte taken in order
}

// Map flattens s for stats.
func (s *ReceiverStats) Map() map[string]uint64 {
	return map[string]uint64{
		"packets": s.Packets, "bytes": s.Bytes, "duplicates": s.Duplicates,
		"out_of_order": s.OutOfOrder, "dropped": s.Dropped, "gaps": s.Gaps, "lost": s.Lost,
		"acks": s.ACKs, "naks": s.NAKs, "cnps": s.CNPs, "ce": s.CE,
	}
}

// Receiver is the receiving side of one flow. Not safe for concurrent
// use.
type Receiver struct {
	mode   Mode
	start  int64
	exp    int64 // next in-order packet
	last   int64 // the flow's last packet, -1 until seen
	buf    ring  // IRN: packets held ahead of exp
	nakFor int64 // Go-Back-N: the exp a NAK was sent for, -1

	ackEvery           int
	pending            int   // packets taken or duplicated since the last acknowledgement
	ackDue             int64 // coalescing timer, -1
	ackDelay, cnpEvery int64
	lastCNP            int64
	cnpSent            bool
	failed             bool
	// echo: marks go back as ECE in acknowledgements, not as CNPs;
	// ceState is the mark of the last packet taken.
	echo, ceState bool

	S ReceiverStats
}

// NewReceiver returns the receiver of a flow whose first packet is
// startPSN, sent in packets of at most mtu payload bytes (IRN sizes its
// buffer from it: the sender's window).
func NewReceiver(mode Mode, p Params, startPSN uint32, mtu int) (*Receiver, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if mode > IRN {
		return nil, fmt.Errorf("transport: invalid mode %d", int(mode))
	}
	if mtu < 1 {
		return nil, errors.New("transport: want mtu >= 1")
	}
	r := &Receiver{
		mode: mode, start: int64(startPSN & PSNMask), last: -1, nakFor: -1,
		ackEvery: p.AckEvery, ackDue: -1, ackDelay: int64(p.ackDelay(mtu)), cnpEvery: int64(p.CNPEvery()),
		echo: p.echoesCE(),
		S:    ReceiverStats{First: -1, Complete: -1},
	}
	if mode == IRN {
		r.buf = newRing(p.window(mode, mtu) + 1)
	}
	return r, nil
}

// Expected is the PSN the receiver expects next.
func (r *Receiver) Expected() uint32 { return r.psn(r.exp) }

// Done reports that the flow's last packet was taken in order.
func (r *Receiver) Done() bool { return r.S.Complete >= 0 }

// Failed reports a lossless flow that saw a gap.
func (r *Receiver) Failed() bool { return r.failed }

func (r *Receiver) psn(seq int64) uint32 { return uint32((r.start + seq) & PSNMask) }

// OnData takes a data packet that arrived at now: its PSN, payload bytes,
// whether it is the flow's last (BTH opcode Last or Only), asks for an
// ACK (BTH AckReq) and was marked CE; it says what to send back.
func (r *Receiver) OnData(psn uint32, payload int, last, ackReq, ce bool, now int64) RxAction {
	var a RxAction
	st := &r.S
	if st.First < 0 {
		st.First = now
	}
	if ce {
		st.CE++
		if !r.echo && (!r.cnpSent || now-r.lastCNP >= r.cnpEvery) {
			a.CNP = true
			r.cnpSent, r.lastCNP = true, now
			st.CNPs++
		}
	}
	seq := Unwrap(psn, r.start+r.exp) - r.start
	switch {
	case seq < r.exp:
		st.Duplicates++
		r.pending++
		return r.ackOrWait(a, ackReq, now)
	case seq == r.exp:
		if r.echo && ce != r.ceState {
			// DCTCP's receiver: when the mark changes, what waits is
			// acknowledged at once with the mark it arrived with, so an
			// ACK's echo covers packets of one mark.
			if r.pending > 0 {
				a = r.ack(a)
			}
			r.ceState = ce
		}
		r.take(seq, payload, last)
		urgent := ackReq
		if r.mode == IRN && r.buf.test(r.exp) {
			for r.buf.test(r.exp) {
				r.buf.clear(r.exp)
				r.exp++
			}
			urgent = true
		}
		urgent = r.complete(now) || urgent
		r.pending++
		if a.Reply == ReplyAck && !urgent {
			// Acknowledged the packets before this one: it waits.
			r.ackDue = now + r.ackDelay
			return a
		}
		return r.ackOrWait(a, urgent, now)
	}
	st.OutOfOrder++
	switch r.mode {
	case Lossless:
		st.Gaps++
		st.Lost += uint64(seq - r.exp)
		r.failed = true
		a = r.nak(a, r.exp, r.psn(r.exp))
		r.take(seq, payload, last)
		r.complete(now)
		r.pending++
		if r.ackDue < 0 {
			r.ackDue = now + r.ackDelay
		}
	case GBN:
		st.Dropped++
		if r.nakFor != r.exp {
			r.nakFor = r.exp
			a = r.nak(a, r.exp, r.psn(r.exp))
		}
	case IRN:
		switch {
		case seq-r.exp >= r.buf.size():
			st.Dropped++
		case r.buf.test(seq):
			st.Duplicates++
			a = r.nak(a, r.exp, psn)
		default:
			r.buf.set(seq)
			st.Packets++
			st.Bytes += uint64(payload)
			if last {
				r.last = seq
			}
			a = r.nak(a, r.exp, psn)
		}
	}
	return a
}

// take delivers packet seq in order: the receiver expects seq + 1 next.
func (r *Receiver) take(seq int64, payload int, last bool) {
	r.S.Packets++
	r.S.Bytes += uint64(payload)
	if last {
		r.last = seq
	}
	r.exp = seq + 1
}

// complete records the flow's completion when its last packet is in; it
// reports whether that happened now.
func (r *Receiver) complete(now int64) bool {
	if r.S.Complete >= 0 || r.last < 0 || r.exp <= r.last {
		return false
	}
	r.S.Complete = now
	return true
}

func (r *Receiver) ackOrWait(a RxAction, urgent bool, now int64) RxAction {
	if urgent || r.pending >= r.ackEvery {
		return r.ack(a)
	}
	if r.ackDue < 0 {
		r.ackDue = now + r.ackDelay
	}
	return a
}

func (r *Receiver) ack(a RxAction) RxAction {
	r.pending, r.ackDue = 0, -1
	if r.exp == 0 {
		return a // nothing in order yet: nothing to acknowledge
	}
	a.Reply, a.PSN, a.SackPSN = ReplyAck, r.psn(r.exp-1), r.psn(r.exp-1)
	a.ECE = r.echo && r.ceState
	r.S.ACKs++
	return a
}

func (r *Receiver) nak(a RxAction, exp int64, sack uint32) RxAction {
	r.pending, r.ackDue = 0, -1
	a.Reply, a.PSN, a.SackPSN = ReplyNak, r.psn(exp), sack
	a.ECE = r.echo && r.ceState
	r.S.NAKs++
	return a
}

// NextTimer is when the coalescing timer fires, or -1.
func (r *Receiver) NextTimer() int64 { return r.ackDue }

// OnTimer sends the ACK the coalescing timer holds, if due at now.
func (r *Receiver) OnTimer(now int64) RxAction {
	if r.ackDue < 0 || now < r.ackDue {
		return RxAction{}
	}
	if r.pending == 0 {
		r.ackDue = -1
		return RxAction{}
	}
	return r.ack(RxAction{})
}
