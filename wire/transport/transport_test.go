package transport

import (
	"fmt"
	"testing"
	"time"
)

const sec = int64(time.Second)

// checkComplete fails t unless f completed with every byte delivered once.
func checkComplete(t *testing.T, name string, f *simFlow, size int64) {
	t.Helper()
	if !f.s.Done() || f.s.Failed() {
		t.Fatalf("%s: sender done %v, failed %v, acked %d of %d", name, f.s.Done(), f.s.Failed(), f.s.Acked(), size)
	}
	if !f.r.Done() || f.r.Failed() {
		t.Fatalf("%s: receiver done %v, failed %v", name, f.r.Done(), f.r.Failed())
	}
	if int64(f.r.S.Bytes) != size || f.s.Acked() != size {
		t.Fatalf("%s: delivered %d bytes, acked %d, want %d", name, f.r.S.Bytes, f.s.Acked(), size)
	}
	if f.s.S.FCT() <= 0 {
		t.Fatalf("%s: FCT %d", name, f.s.S.FCT())
	}
}

func TestNoLossEveryMode(t *testing.T) {
	const size = 1_000_000
	for _, m := range []Mode{Lossless, GBN, IRN} {
		t.Run(m.String(), func(t *testing.T) {
			w := &world{t: t}
			f := w.newPair(m, testParams(), 12345, size)
			w.run(10 * sec)
			checkComplete(t, m.String(), f, size)
			if f.s.S.RetxPackets != 0 || f.s.S.Timeouts != 0 || f.s.S.NAKs != 0 {
				t.Errorf("retransmissions %d, timeouts %d, NAKs %d on a clean link", f.s.S.RetxPackets, f.s.S.Timeouts, f.s.S.NAKs)
			}
			// The pacer at line rate, counting the same wire bytes as
			// the link: the FCT is the serialization of the flow plus
			// a round trip, give or take ACK coalescing.
			pkts := int64(size / simMTU)
			ideal := pkts * (simMTU + DefaultWireOverhead) * 8e9 / simRate
			if fct := f.s.S.FCT(); fct < ideal || fct > ideal+2*simDelay+int64(testParams().AckDelay)+200_000 {
				t.Errorf("FCT %v, ideal %v", time.Duration(fct), time.Duration(ideal))
			}
			if m == IRN && f.maxOut > f.s.Window() {
				t.Errorf("IRN had %d packets outstanding, cap %d", f.maxOut, f.s.Window())
			}
		})
	}
}

func TestLosslessGapFails(t *testing.T) {
	w := &world{t: t}
	f := w.newPair(Lossless, testParams(), 7, 200_000)
	f.fwd.drop = dropFirst(50)
	w.run(10 * sec)
	if !f.s.Failed() || f.s.Done() {
		t.Fatalf("sender failed %v, done %v", f.s.Failed(), f.s.Done())
	}
	if !f.r.Failed() || f.r.S.Gaps != 1 || f.r.S.Lost != 1 || f.r.S.NAKs != 1 {
		t.Fatalf("receiver failed %v, gaps %d, lost %d, NAKs %d", f.r.Failed(), f.r.S.Gaps, f.r.S.Lost, f.r.S.NAKs)
	}
	if f.s.S.RetxPackets != 0 {
		t.Fatalf("lossless retransmitted %d packets", f.s.S.RetxPackets)
	}
	// Nothing goes out after the failure.
	n := f.s.S.Packets
	if _, ok := f.s.Next(w.now + sec); ok || f.s.NextTimer() != -1 || f.s.NextSendTime() != -1 {
		t.Fatal("a failed sender still has something to do")
	}
	if f.s.S.Packets != n {
		t.Fatal("packets counted after failure")
	}
}

// A lost tail leaves no gap; the no-progress timeout, when set, fails
// the flow.
func TestLosslessTailTimeout(t *testing.T) {
	w := &world{t: t}
	p := testParams()
	p.LosslessTimeout = 7 * p.RTO // off by default
	f := w.newPair(Lossless, p, 7, 20_000)
	f.fwd.drop = dropFirst(19)
	w.run(10 * sec)
	if !f.s.Failed() || f.s.S.Timeouts != 1 || f.r.Failed() {
		t.Fatalf("sender failed %v after %d timeouts; receiver failed %v", f.s.Failed(), f.s.S.Timeouts, f.r.Failed())
	}
	if w.now < int64(p.LosslessTimeout) {
		t.Fatalf("failed at %v, before the timeout %v", time.Duration(w.now), p.LosslessTimeout)
	}
}

// Every flow of a set completes under 1% random loss in both lossy
// modes, and IRN retransmits less than Go-Back-N on the same losses.
func TestLossyModesComplete(t *testing.T) {
	sizes := []int64{1, 999, 1000, 1001, 15_000, 64_000, 300_000, 1_000_000, 2_500_000}
	retx := map[Mode]uint64{}
	for _, m := range []Mode{GBN, IRN} {
		for i, size := range sizes {
			name := fmt.Sprintf("%v/%d", m, size)
			w := &world{t: t}
			f := w.newPair(m, testParams(), uint32(i*977), size)
			f.fwd.drop = lossy(uint64(i+1), 0.01)
			f.rev.drop = lossy(uint64(i+100), 0.01)
			w.run(300 * sec)
			checkComplete(t, name, f, size)
			retx[m] += f.s.S.RetxBytes
			if m == IRN && f.maxOut > f.s.Window() {
				t.Errorf("%s: %d packets outstanding, cap %d", name, f.maxOut, f.s.Window())
			}
		}
	}
	t.Logf("retransmitted bytes: GBN %d, IRN %d", retx[GBN], retx[IRN])
	if retx[IRN] == 0 || retx[IRN] >= retx[GBN] {
		t.Fatalf("retransmitted bytes: IRN %d, GBN %d", retx[IRN], retx[GBN])
	}
}

// One loss in the middle: Go-Back-N resends everything after it, IRN
// only the lost packet, and neither waits for a timeout.
func TestSingleLossRecovery(t *testing.T) {
	for _, m := range []Mode{GBN, IRN} {
		w := &world{t: t}
		f := w.newPair(m, testParams(), 1, 100_000)
		f.fwd.drop = dropFirst(40)
		w.run(10 * sec)
		checkComplete(t, m.String(), f, 100_000)
		if f.s.S.Timeouts != 0 || f.s.S.NAKs == 0 {
			t.Errorf("%v: %d timeouts, %d NAKs", m, f.s.S.Timeouts, f.s.S.NAKs)
		}
		switch m {
		case GBN:
			if f.s.S.RetxPackets < 2 || f.r.S.Dropped == 0 || f.r.S.NAKs != 1 {
				t.Errorf("GBN: %d retransmitted, %d dropped, %d NAKs", f.s.S.RetxPackets, f.r.S.Dropped, f.r.S.NAKs)
			}
		case IRN:
			if f.s.S.RetxPackets != 1 || f.r.S.Dropped != 0 || f.r.S.OutOfOrder == 0 {
				t.Errorf("IRN: %d retransmitted, %d dropped, %d out of order", f.s.S.RetxPackets, f.r.S.Dropped, f.r.S.OutOfOrder)
			}
		}
	}
}

// The retransmission timer recovers a lost last packet and a lost last
// ACK; IRN with few packets in flight uses RTO_low.
func TestRTOTail(t *testing.T) {
	p := testParams()
	for _, m := range []Mode{GBN, IRN} {
		for _, what := range []string{"data", "ack"} {
			name := m.String() + "/" + what
			w := &world{t: t}
			const size = 30_000
			f := w.newPair(m, p, 99, size)
			if what == "data" {
				f.fwd.drop = dropFirst(size/simMTU - 1)
			} else {
				done := false
				f.rev.drop = func(k *pkt) bool {
					if k.kind == pAck && f.r.Done() && !done {
						done = true
						return true
					}
					return false
				}
			}
			w.run(10 * sec)
			checkComplete(t, name, f, size)
			if f.s.S.Timeouts != 1 {
				t.Fatalf("%s: %d timeouts", name, f.s.S.Timeouts)
			}
			rto := p.RTO
			if m == IRN {
				rto = p.RTOLow
			}
			if fct := time.Duration(f.s.S.FCT()); fct < rto || fct > rto+20*time.Millisecond {
				t.Errorf("%s: FCT %v with RTO %v", name, fct, rto)
			}
			if what == "ack" && f.r.S.Duplicates == 0 {
				t.Errorf("%s: the retransmission was no duplicate", name)
			}
		}
	}
}

// IRN's timeout is RTO_high while RTOThreshold or more packets are in
// flight, RTO_low below.
func TestIRNTimeoutChoice(t *testing.T) {
	p := testParams()
	s, err := NewSender(IRN, p, 0, 100*simMTU, simMTU)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, ok := s.Next(int64(i) * sec); !ok {
			t.Fatal("no packet")
		}
	}
	if got := s.NextTimer(); got != int64(p.RTOLow) {
		t.Fatalf("2 in flight: timer at %d, want RTO_low %d", got, int64(p.RTOLow))
	}
	s.Next(2 * sec)
	if got := s.NextTimer(); got != int64(p.RTOHigh) {
		t.Fatalf("3 in flight: timer at %d, want RTO_high %d", got, int64(p.RTOHigh))
	}
	// Two of them SACKed: one in flight again.
	s.OnNak(0, 1, 3*sec)
	s.OnNak(0, 2, 3*sec)
	if got := s.NextTimer(); got != int64(p.RTOLow) {
		t.Fatalf("1 in flight: timer at %d, want RTO_low %d", got, int64(p.RTOLow))
	}
	s.OnTimer(int64(p.RTOLow))
	seg, ok := s.Next(4 * sec)
	if s.S.Timeouts != 1 || !ok || seg.Seq != 0 || !seg.Retx {
		t.Fatalf("after the timeout: %d timeouts, next %+v %v", s.S.Timeouts, seg, ok)
	}
	if seg, ok := s.Next(5 * sec); !ok || seg.Seq != 3 || seg.Retx {
		t.Fatalf("SACKed packets were retransmitted: %+v %v", seg, ok)
	}
}

// Flows across the PSN wrap, with losses on both sides of it.
func TestPSNWrap(t *testing.T) {
	const size = 100 * simMTU
	start := uint32(PSNMask - 40)
	for _, m := range []Mode{Lossless, GBN, IRN} {
		w := &world{t: t}
		f := w.newPair(m, testParams(), start, size)
		f.rec = true
		if m != Lossless {
			f.fwd.drop = dropFirst(30, 41, 42, 60)
			f.rev.drop = lossy(3, 0.05)
		}
		w.run(100 * sec)
		checkComplete(t, m.String(), f, size)
		wrapped := false
		for _, seg := range f.sent {
			if seg.PSN != PSNAdd(start, seg.Seq) {
				t.Fatalf("%v: packet %d has PSN %d", m, seg.Seq, seg.PSN)
			}
			wrapped = wrapped || seg.PSN < start
		}
		if !wrapped || f.r.Expected() != PSNAdd(start, 100) {
			t.Fatalf("%v: wrapped %v, receiver expects %d", m, wrapped, f.r.Expected())
		}
	}
}

func TestStopUnbounded(t *testing.T) {
	w := &world{t: t}
	f := w.newPair(IRN, testParams(), 5, 0)
	w.run(50 * int64(time.Millisecond))
	if f.s.Done() || f.s.S.Packets == 0 {
		t.Fatalf("unbounded flow: done %v after %d packets", f.s.Done(), f.s.S.Packets)
	}
	f.s.Stop()
	want := (f.s.hi + 1) * simMTU
	w.run(10 * sec)
	checkComplete(t, "stopped", f, want)
}

// A flow split into messages: every message starts a packet of its own,
// ends with a short one, and its packets carry their positions; acked
// bytes count whole messages.
func TestSenderMessages(t *testing.T) {
	for _, c := range []struct {
		name       string
		size, msg  int64
		mtu        int
		oneAtATime bool
		lens       []int
		pos        []Position
	}{
		{"short messages", 6, 2, 64, false, []int{2, 2, 2}, []Position{Only, Only, Only}},
		{"one packet each", 256, 64, 64, false, []int{64, 64, 64, 64}, []Position{Only, Only, Only, Only}},
		{"long messages", 200, 100, 64, false, []int{64, 36, 64, 36}, []Position{First, Last, First, Last}},
		{"three packets", 300, 150, 64, false, []int{64, 64, 22, 64, 64, 22}, []Position{First, Middle, Last, First, Middle, Last}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewSender(GBN, testParams(), 0, c.size, c.mtu)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SetMessages(c.msg, c.oneAtATime); err != nil {
				t.Fatal(err)
			}
			now := int64(0)
			for i := range c.lens {
				var seg Segment
				var ok bool
				for seg, ok = s.Next(now); !ok; seg, ok = s.Next(now) {
					now += 1000
				}
				if seg.Len != c.lens[i] || seg.Pos != c.pos[i] || seg.Msg != int64(i)/((c.msg+int64(c.mtu)-1)/int64(c.mtu)) {
					t.Errorf("packet %d: %d bytes, %v, message %d; want %d, %v", i, seg.Len, seg.Pos, seg.Msg, c.lens[i], c.pos[i])
				}
				s.OnAck(seg.PSN, now)
			}
			if !s.Done() || s.Acked() != c.size || s.Messages() != c.size/c.msg {
				t.Errorf("done %v, acked %d, messages %d", s.Done(), s.Acked(), s.Messages())
			}
		})
	}
	// One message at a time: the next waits for the ACK of the last,
	// whose last packet asks for it.
	s, _ := NewSender(GBN, testParams(), 0, 400, 64)
	if err := s.SetMessages(100, true); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Next(0)
	b, ok := s.Next(1e6)
	if !ok || a.AckReq || !b.AckReq {
		t.Fatalf("first message: %+v %+v", a, b)
	}
	if _, ok := s.Next(2e6); ok {
		t.Fatal("second message sent before the first was acknowledged")
	}
	s.OnAck(b.PSN, 3e6)
	if _, ok := s.Next(4e6); !ok || s.Messages() != 1 || s.Acked() != 100 {
		t.Fatalf("after the ACK: messages %d, acked %d", s.Messages(), s.Acked())
	}
	for _, c := range []struct{ size, msg int64 }{{100, 0}, {100, 30}, {0, 10}} {
		s, _ := NewSender(GBN, testParams(), 0, c.size, 64)
		if err := s.SetMessages(c.msg, false); err == nil {
			t.Errorf("messages of %d in %d bytes accepted", c.msg, c.size)
		}
	}
}

// The no-progress timeout of a lossless flow counts from its frames' last
// departure from the NIC: frames that wait in the NIC's own queue (paused
// or behind other flows) have not been sent, and the flow is slow, not
// failed.
func TestLosslessTimeoutFromDeparture(t *testing.T) {
	p := testParams()
	p.LosslessTimeout = 7 * p.RTO
	p.DCQCN.Enabled = false
	s, err := NewSender(Lossless, p, 0, 10*simMTU, simMTU)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, ok := s.Next(0); !ok {
			break
		}
	}
	timeout := int64(p.LosslessTimeout)
	if got := s.NextTimer(); got != timeout {
		t.Fatalf("timer at %d, want %d", got, timeout)
	}
	// The NIC sends the last of them much later.
	late := timeout - 1
	s.Departed(late)
	if got := s.NextTimer(); got != late+timeout {
		t.Fatalf("after a departure at %d: timer at %d, want %d", late, got, late+timeout)
	}
	s.OnTimer(timeout)
	if s.Failed() {
		t.Fatal("failed while its frames had just left the NIC")
	}
	s.OnTimer(late + timeout)
	if !s.Failed() {
		t.Fatal("not failed a timeout after the last departure")
	}
	// Departures mean nothing to the other modes.
	g, err := NewSender(GBN, p, 0, 10*simMTU, simMTU)
	if err != nil {
		t.Fatal(err)
	}
	g.Next(0)
	before := g.NextTimer()
	g.Departed(late)
	if g.NextTimer() != before {
		t.Error("Go-Back-N's RTO moved with a departure")
	}
}

// By default a lossless flow never gives up: held without
// acknowledgements, it waits.
func TestLosslessWaitsByDefault(t *testing.T) {
	p := testParams()
	s, err := NewSender(Lossless, p, 0, 10*simMTU, simMTU)
	if err != nil {
		t.Fatal(err)
	}
	s.Next(0)
	if p.LosslessTimeout != 0 || s.NextTimer() != -1 {
		t.Fatalf("lossless timeout %v, timer %d", p.LosslessTimeout, s.NextTimer())
	}
	s.OnTimer(int64(time.Hour))
	if s.Failed() {
		t.Fatal("a held lossless flow failed")
	}
}
