package transport

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestCheckLoss(t *testing.T) {
	many := make([]int, MaxLoss+1)
	for i := range many {
		many[i] = i
	}
	for _, c := range []struct {
		name    string
		mode    Mode
		lose    []int
		packets int64
		err     string // a part of the error; "" for none
	}{
		{"none", Lossless, nil, 10, ""},
		{"gbn", GBN, []int{9, 0, 4}, 10, ""},
		{"irn", IRN, []int{5}, 10, ""},
		{"lossless", Lossless, []int{5}, 10, "lossless"},
		{"unbounded", GBN, []int{5}, 0, "sized flow"},
		{"past the end", IRN, []int{10}, 10, "packets are 0..9"},
		{"negative", GBN, []int{-1}, 10, "packets are 0..9"},
		{"twice", IRN, []int{3, 4, 3}, 10, "packet 3 twice"},
		{"too many", GBN, many, 1000, "at most"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckLoss(c.mode, c.lose, c.packets)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("CheckLoss(%v, %v, %d) = %v, want %q", c.mode, c.lose, c.packets, err, c.err)
			}
		})
	}
	if Packets(10_240, 1024) != 10 || Packets(10_241, 1024) != 11 || Packets(0, 1024) != 0 {
		t.Error("Packets")
	}
	// The sender checks against its own packets: messages make more.
	s, _ := NewSender(GBN, testParams(), 0, 300, 64)
	if err := s.SetMessages(150, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetLoss([]int{5}); err != nil {
		t.Errorf("packet 5 of 6 (messages of 3): %v", err)
	}
	if err := s.SetMessages(100, false); err == nil {
		t.Error("messages set after the loss")
	}
	if err := s.SetLoss([]int{6}); err == nil {
		t.Error("packet 6 of 6 accepted")
	}
	s, _ = NewSender(IRN, testParams(), 0, 300, 64)
	s.Next(0)
	if err := s.SetLoss([]int{3}); err == nil {
		t.Error("loss set after the first packet")
	}
}

// injectedFCT is the flow completion time of a flow of n packets of
// simMTU bytes whose packet k loses its first transmission (SetLoss),
// on the simulation's path: one link each way (newPair), store and
// forward at the line rate, delay d = simDelay. The closed forms, in the
// transport's terms:
//
//	P = (MTU + WireOverhead) x 8 / LineRate: a data packet's time, the
//	    pacer's gap and the link's serialization alike;
//	F = P + d: a data packet sent to received;
//	B = a + d, a = ackWire x 8 / LineRate: an ACK or NAK sent to received;
//	D = max(AckDelay, AckEvery x P): the receiver's coalescing timer
//	    (Params.ackDelay);
//	T = RTO for Go-Back-N; for IRN RTO_low when one packet in flight is
//	    below RTOThreshold, else RTO_high.
//
// The pacer keeps its schedule, so packet i first leaves at iP (times
// from the first packet, FCT's origin) and arrives at iP + F. Without a
// loss the last packet, which asks for an ACK, is answered at once:
// FCT0 = (n-1)P + F + B.
//
// The last packet lost (k = n-1): nothing follows to show a gap, so
// the timer recovers it. The receiver acknowledges packets 0..n-2 every
// AckEvery packets at once and the rest when the coalescing timer,
// started by the first of them, fires (D >= AckEvery x P, so they all
// arrive before it). The ACK of packet n-2 reaches the sender at
//
//	tA = (n-2)P + F + B       when r = (n-1) mod AckEvery is 0,
//	tA = (n-1-r)P + F + D + B  otherwise (tA = 0 when n = 1: the timer
//	                           counts from the first packet sent),
//
// and restarts the timer (every ACK that advances does), with one packet
// in flight: for IRN that is RTO_low. At tA + T the timer fires, the
// packet goes out at once (the pacer has long been idle) and, the last,
// is answered at once:
//
//	FCT = tA + T + F + B,  FCT - FCT0 = T + F + B - P        (r = 0)
//	                                  = T + F + B + D - rP   (r > 0).
//
// A packet in the middle lost (k < n-1): packet k+1 arrives at
// (k+1)P + F behind a gap, and the receiver NAKs at once (Go-Back-N once
// per gap, dropping the packet; IRN keeps it and NAKs with its PSN as
// the SACK). The NAK reaches the sender at
//
//	τ = (k+1)P + F + B,
//
// which retransmits k at the first pacing slot at or after it:
//
//	h = min(n, ceil(τ/P)): the first transmissions sent before it,
//	R = max(τ, hP)         (hP while the sender was still sending; τ
//	                        when it had sent everything by then).
//
// Go-Back-N rewinds and sends k..n-1 back to back from R, the last
// answered at once (h-k retransmissions: k and the h-k-1 packets after
// it, which the receiver dropped; packets h.. go out for the first time):
//
//	FCT = R + (n-k-1)P + F + B;  busy (R = hP): FCT - FCT0 = P + ceil((F+B)/P)P,
//
// one round trip rounded up to whole packet slots plus a packet. IRN
// resends k alone at R (the later NAKs SACK what follows) and goes on
// with new packets h..n-1 from R + P; the retransmission fills the gap
// and is acknowledged at once, the last new packet too:
//
//	FCT = R + (n-h)P + F + B;    busy: FCT - FCT0 = P (its one slot);
//	                             all sent by τ: FCT = τ + F + B.
//
// The forms hold while no timer fires first (every timeout here is far
// longer than the flow) and IRN's window W = ceil(BDP/MTU) never binds:
// not without the loss, (F+B)/P + AckEvery < W, nor while k holds the
// window's left edge until the ACK of its retransmission returns at
// R + F + B, h - k + floor((F+B)/P) <= W (here 3.4 + 4 and 8, against
// W = 13). Go-Back-N has no window (Params.Window 0).
func injectedFCT(mode Mode, p Params, n, k int64) int64 {
	P, F, B := simTimes(p)
	if k == n-1 {
		T := int64(p.RTO)
		if mode == IRN {
			T = int64(p.RTOHigh)
			if 1 < p.RTOThreshold {
				T = int64(p.RTOLow)
			}
		}
		var tA int64
		switch r := (n - 1) % int64(p.AckEvery); {
		case n == 1:
		case r == 0:
			tA = (n-2)*P + F + B
		default:
			tA = (n-1-r)*P + F + int64(p.ackDelay(simMTU)) + B
		}
		return tA + T + F + B
	}
	h, R := nakSlot(p, n, k)
	if mode == GBN {
		return R + (n-k-1)*P + F + B
	}
	return R + (n-h)*P + F + B
}

// nakSlot is h and R of injectedFCT: the first transmissions before the
// retransmission of k, a packet in the middle, and when it leaves.
func nakSlot(p Params, n, k int64) (h, R int64) {
	P, F, B := simTimes(p)
	tau := (k+1)*P + F + B
	h = min(n, (tau+P-1)/P)
	return h, max(tau, h*P)
}

// simTimes are P, F and B of injectedFCT.
func simTimes(p Params) (P, F, B int64) {
	P = int64(simMTU+p.WireOverhead) * 8 * int64(time.Second) / p.LineRateBps
	return P, P + simDelay, int64(ackWire)*8*int64(time.Second)/simRate + simDelay
}

// cleanFCT is FCT0 of injectedFCT: n packets, none lost.
func cleanFCT(p Params, n int64) int64 {
	P, F, B := simTimes(p)
	return (n-1)*P + F + B
}

// One injected loss in Go-Back-N and IRN, in the middle of a flow and of
// its last packet, with and without ACKs pending when it happens: every
// byte is delivered once and in order, Go-Back-N resends from the lost
// packet on and IRN only it, and the flow completes exactly when
// injectedFCT says.
func TestInjectedLoss(t *testing.T) {
	slowAck := testParams()
	slowAck.AckDelay = 600 * time.Microsecond // above its floor, AckEvery packet times
	for _, c := range []struct {
		name string
		p    Params
		n, k int64
	}{
		{"middle", testParams(), 40, 20},
		{"early", testParams(), 40, 1},
		{"middle, sent everything by the NAK", testParams(), 40, 38},
		{"last, ACKs pending", testParams(), 40, 39},
		{"last, none pending", testParams(), 41, 40},
		{"last, ack delay", slowAck, 40, 39},
		{"only", testParams(), 1, 0},
	} {
		for _, m := range []Mode{GBN, IRN} {
			t.Run(fmt.Sprintf("%v/%s", m, c.name), func(t *testing.T) {
				size := c.n * simMTU
				w := &world{t: t}
				f := w.newPair(m, c.p, 1, size)
				if err := f.s.SetLoss([]int{int(c.k)}); err != nil {
					t.Fatal(err)
				}
				// In order: the receiver's next expected PSN never goes
				// back.
				exp := f.r.Expected()
				w.onStep = func() {
					if e := f.r.Expected(); PSNDiff(e, exp) < 0 {
						t.Fatalf("the receiver went back from %d to %d", exp, e)
					} else {
						exp = e
					}
				}
				w.run(10 * sec)
				checkComplete(t, c.name, f, size)
				s, r := &f.s.S, &f.r.S
				// The same flow without the loss: FCT0.
				w0 := &world{t: t}
				f0 := w0.newPair(m, c.p, 1, size)
				w0.run(10 * sec)
				if got := f0.s.S.FCT(); got != cleanFCT(c.p, c.n) {
					t.Errorf("without the loss: FCT %v, want %v", time.Duration(got), time.Duration(cleanFCT(c.p, c.n)))
				}
				if r.Packets != uint64(c.n) || r.Duplicates != 0 || f.r.Expected() != PSNAdd(1, c.n) {
					t.Errorf("receiver took %d packets of %d, %d duplicates, expects %d", r.Packets, c.n, r.Duplicates, f.r.Expected())
				}
				if s.Injected != 1 || f.injected != 1 || uint64(f.wired) != s.Packets-1 || f.fwd.drops != 0 {
					t.Errorf("injected %d (the world dropped %d), %d of %d packets on the wire", s.Injected, f.injected, f.wired, s.Packets)
				}
				// Behind the gap: the packets sent after k before its
				// retransmission (none when k is the last).
				last, behind := c.k == c.n-1, uint64(0)
				if !last {
					h, _ := nakSlot(c.p, c.n, c.k)
					behind = uint64(h - c.k - 1)
				}
				retx, dropped := uint64(1), uint64(0)
				if m == GBN {
					retx, dropped = 1+behind, behind
				}
				switch {
				case s.RetxPackets != retx || r.OutOfOrder != behind || r.Dropped != dropped:
					t.Errorf("retransmitted %d packets, %d arrived out of order, %d dropped; want %d, %d, %d",
						s.RetxPackets, r.OutOfOrder, r.Dropped, retx, behind, dropped)
				case last && (s.Timeouts != 1 || s.NAKs != 0):
					t.Errorf("last packet lost: %d timeouts, %d NAKs; want the timeout alone", s.Timeouts, s.NAKs)
				case !last && (s.Timeouts != 0 || r.NAKs != map[Mode]uint64{GBN: 1, IRN: behind}[m]):
					t.Errorf("middle packet lost: %d timeouts, %d NAKs sent", s.Timeouts, r.NAKs)
				}
				if want := injectedFCT(m, c.p, c.n, c.k); s.FCT() != want {
					clean := cleanFCT(c.p, c.n)
					t.Errorf("FCT %v, want %v (%v over the %v without loss)", time.Duration(s.FCT()), time.Duration(want),
						time.Duration(want-clean), time.Duration(clean))
				}
			})
		}
	}
}
