// Package transport is the reliable-connected RDMA transport that hostd,
// each server's "RDMA NIC", runs per flow (one QP), and DCQCN, its
// congestion control (DESIGN §7). Everything here is a state machine on
// an explicit clock: nanoseconds passed in by the caller, no goroutines,
// no timers of its own, no I/O. The hot paths (Sender.Next, OnAck, OnNak,
// OnCNP, Receiver.OnData, the DCQCN updates) do not allocate.
//
// # Driving it
//
// A Sender and a Receiver are created with the same mode, Params and
// start PSN. On every pass of its engine the caller
//
//  1. loops seg, ok := s.Next(now) until !ok, building a RoCEv2 data
//     packet per Segment (PSN, payload length, SEND First/Middle/Last/
//     Only from Pos, BTH AckReq) and marking it ECN-capable, except that
//     a Segment marked Drop (an injected loss, SetLoss) is counted
//     dropped and not sent;
//  2. on a data packet received, calls r.OnData(psn, len, last, ackReq,
//     ce, now) and sends back what the RxAction says: an ACK of PSN
//     (everything up to it), a NAK expecting PSN (IRN: carrying SackPSN
//     too), and/or a CNP;
//  3. on an ACK, NAK or CNP received, calls s.OnAck, s.OnNak or s.OnCNP;
//  4. arms one timer for the earliest of s.NextTimer(), r.NextTimer() and
//     s.NextSendTime() (each -1 when there is none), and at it calls
//     s.OnTimer, r.OnTimer (sending the ACK it may return) and step 1.
//
// s.Done (every byte acknowledged) and s.Failed (lossless: a gap or no
// progress) end a flow; s.S and r.S count what happened, s.S.FCT() is
// first byte sent to last byte acknowledged.
//
// # Sequence numbers
//
// PSNs on the wire are 24 bits and wrap; a Sender and Receiver number
// packets from 0 in 64 bits and unwrap what they read (Unwrap) against
// the oldest unacknowledged or next expected packet. Outstanding packets
// are capped at MaxWindow (2^22), well inside the 2^23 that keeps
// unwrapping unambiguous. The start PSN is the caller's (random or fixed).
//
// # Loss recovery
//
//   - Lossless: no retransmission. A gap at the receiver is counted (Gaps,
//     Lost), NAK'd and skipped; the sender fails the flow on the NAK. A
//     lost tail leaves no gap; it shows in the fabric's drop counters.
//     A flow without acknowledgements is held, not failed, unless
//     LosslessTimeout is set (off by default): then no acknowledgement
//     for that long since its frames last left the NIC (Departed: frames
//     still queued in the NIC have not been sent, as a real NIC's ACK
//     timer starts at transmission) fails it, as an RDMA QP gives up
//     after its retry count. In this emulator a flow held for seconds is
//     paused, queued behind thousands of others, deadlocked (PFC) or
//     carried by a daemon that fell behind; the watchdog and emulation
//     health tell which, and none of them is a loss.
//   - GBN: the receiver drops out-of-order packets and NAKs each gap once
//     (the expected PSN); the sender rewinds to it, or on RTO to the oldest
//     unacknowledged packet. No backoff: every timeout is RTO.
//   - IRN: the receiver keeps out-of-order packets in a bitmap as large as
//     the sender's window and answers each with a NAK carrying the
//     cumulative PSN and its own (a SACK). The sender records SACKs in its
//     own bitmap; on the first NAK it enters loss recovery and retransmits,
//     once each, the packets not SACKed below the highest SACKed one
//     (in-order paths make those lost); recovery ends when everything sent
//     before it is acknowledged. On a timeout every packet not SACKed is
//     resent. The timeout is RTO_low while fewer than N = 3 packets are in
//     flight (sent, neither acknowledged nor SACKed), else RTO_high, and new
//     packets stay within ceil(BDP/MTU) of the oldest unacknowledged one
//     (IRN's BDP flow control).
//   - Injected loss (GBN and IRN, sized flows): SetLoss names packets
//     whose first transmission the caller drops (Segment.Drop), so a
//     check meets one loss it placed, recovered as any other.
//
// ACKs are coalesced: one per AckEvery packets taken (duplicates count, so
// a sender whose ACK was lost hears again), at once for a packet with
// AckReq (the sender sets it on the flow's last packet and on one that
// fills its window), the flow's last packet and a filled IRN gap, and
// otherwise when the coalescing timer AckDelay after the oldest
// unacknowledged packet fires. A NAK acknowledges too.
//
// # DCQCN
//
// The notification point (Receiver) answers a CE-marked packet with a CNP
// unless it sent one within CNPInterval. The reaction point (DCQCN, one
// per Sender) is described on its type: cut on CNP (Rt = Rc, Rc =
// Rc(1-alpha/2), alpha = (1-g)alpha + g), alpha decay every K, increase
// events from the timer T and the byte counter B: fast recovery for F
// events, then additive (R_AI), then hyper (R_HAI). The sender paces every
// packet, headers included (WireOverhead), at Rc: the gap after a packet
// is its wire bytes at the current rate, so a cut or an increase applies
// to the gap in progress. A sender late by less than a packet time keeps
// its schedule; later, the time is lost (no bursts after idle), unless
// PacingCatchup lets it make up for that much of it (a caller woken
// coarsely, like an emulated NIC on a loaded machine).
//
// # DCTCP
//
// With DCTCP (dctcp.go) a sender's window, not its pacer, reacts: it
// paces at the line rate and keeps at most W bytes outstanding. The
// receiver echoes CE marks in its ACKs (RxAction.ECE; no CNPs) and
// acknowledges at once when the mark changes, so an ACK's echo covers
// packets of one mark; the sender (OnAckEcho) cuts W by alpha/2 at most
// once per window of data, updates alpha once per window and adds one
// MTU per window in which no cut waits (marks or not). Switches mark at
// one threshold K.
//
// # HPCC
//
// With HPCC (hpcc.go) data packets carry an INT shim that every egress
// on the path stamps (queue length, bytes sent, time, link rate; package
// roce), the receiver's caller copies it into each ACK, and the sender
// (OnAckEcho with Echo.Hop) runs the paper's Algorithm 1: U from the
// most loaded hop, W = Wc/(U/eta) + W_AI or Wc + W_AI, Wc once per RTT;
// it keeps W bytes outstanding and paces at W/T. HPCC's eta and maxStage
// are the paper's; T is the longest path's base RTT (the BDP cap's) and
// W_AI = W_init (1 - eta) / N with N = 100 (package scale).
//
// # Parameters
//
// Params holds a run's constants as the lab uses them; this package
// derives none of them. Package scale derives every one from the target
// network and the lab's dilation D (times x D, rates / D, data in the
// same bytes) and lists each with its target value; hostd builds Params
// from it (hostd.TransportParams). Where the target's values come from:
// RTO_low, RTO_high, N and the BDP cap are IRN's (SIGCOMM 2018) as the
// PortFC evaluation uses them, with the BDP of the longest BCube(n,1)
// path (four links); GBN's 10 ms RTO and K_min, K_max, P_max are the
// PortFC evaluation's; g, K, T, B, F, the 50 µs CNP interval and the
// alpha and timer rules are the DCQCN paper's (SIGCOMM 2015), whose R_AI
// of 40 Mb/s at 40 Gb/s gives the 0.1%; R_HAI = 10 R_AI is QCN's ratio
// (5 and 50 Mb/s), and the hyper step is a constant R_HAI per event as in
// common implementations (ns-3's rdma-hw); the minimum rate is that
// implementation's 100 Mb/s at 100 Gb/s. The ACK coalescing and delay
// are this project's: each ACK frees at most 4 packets of the IRN window,
// and no ACK waits longer than half a one-hop RTT or, where that is
// shorter than 4 packets at the line rate, than 4 packet times (ackDelay).
// The wire overhead is Ethernet, 802.1Q, IPv4, UDP, BTH and ICRC (62 B)
// plus the preamble, FCS and inter-frame gap the lab's shaper counts (24
// B).
//
// ECNParams are the switch side's numbers; they convert to
// queues.ECNConfig as they are.
package transport
