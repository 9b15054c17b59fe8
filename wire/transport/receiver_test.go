package transport

import (
	"testing"
	"time"
)

func newRx(t *testing.T, mode Mode, p Params, start uint32) *Receiver {
	t.Helper()
	r, err := NewReceiver(mode, p, start, simMTU)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ACKs: every AckEvery packets, at once for AckReq and the last packet,
// and by the coalescing timer for a remainder.
func TestAckCoalescing(t *testing.T) {
	p := testParams()
	p.AckEvery = 4
	const start = PSNMask - 5 // wraps on the way
	r := newRx(t, GBN, p, start)
	var acks []uint32
	now := int64(0)
	for i := range int64(10) {
		now += 10
		a := r.OnData(PSNAdd(start, i), simMTU, false, false, false, now)
		if a.Reply == ReplyAck {
			acks = append(acks, a.PSN)
		}
	}
	// Packets 0-3 and 4-7 acknowledged; 8 and 9 wait for the timer.
	if len(acks) != 2 || acks[0] != PSNAdd(start, 3) || acks[1] != PSNAdd(start, 7) {
		t.Fatalf("ACKs %v", acks)
	}
	// The timer waits AckDelay, or AckEvery packet times at the line
	// rate if that is longer.
	delay := max(p.AckDelay, time.Duration(p.AckEvery)*time.Duration(int64(simMTU+p.WireOverhead)*8e9/p.LineRateBps))
	due := r.NextTimer()
	if due != 90+int64(delay) {
		t.Fatalf("timer at %d, want %d", due, 90+int64(delay))
	}
	if a := r.OnTimer(due - 1); a.Reply != ReplyNone {
		t.Fatal("ACK before the timer")
	}
	if a := r.OnTimer(due); a.Reply != ReplyAck || a.PSN != PSNAdd(start, 9) || r.NextTimer() != -1 {
		t.Fatalf("timer ACK %+v, timer now %d", a, r.NextTimer())
	}
	// AckReq is acknowledged at once, and so is the last packet.
	if a := r.OnData(PSNAdd(start, 10), simMTU, false, true, false, now); a.Reply != ReplyAck || a.PSN != PSNAdd(start, 10) {
		t.Fatalf("AckReq: %+v", a)
	}
	if a := r.OnData(PSNAdd(start, 11), 10, true, false, false, now); a.Reply != ReplyAck || !r.Done() || r.S.Bytes != 11*simMTU+10 {
		t.Fatalf("last: %+v, done %v, %d bytes", a, r.Done(), r.S.Bytes)
	}
	// A duplicate counts toward the next ACK like a new packet.
	for i := range p.AckEvery - 1 {
		if a := r.OnData(PSNAdd(start, int64(i)), simMTU, false, false, false, now); a.Reply != ReplyNone {
			t.Fatalf("duplicate %d: %+v", i, a)
		}
	}
	if a := r.OnData(start, simMTU, false, false, false, now); a.Reply != ReplyAck || a.PSN != PSNAdd(start, 11) {
		t.Fatalf("duplicates: %+v", a)
	}
	if r.S.ACKs != 6 || r.S.Duplicates != 4 || r.S.Packets != 12 {
		t.Fatalf("stats %+v", r.S)
	}
}

// CNPs: for CE-marked packets, at most one per CNPInterval.
func TestCNPPacing(t *testing.T) {
	p := testParams()
	r := newRx(t, IRN, p, 0)
	iv := int64(p.CNPInterval)
	step := iv / 7
	var at []int64
	now := int64(1000)
	for i := range int64(200) {
		now += step
		if a := r.OnData(uint32(i), simMTU, false, false, true, now); a.CNP {
			at = append(at, now)
		}
	}
	for i := 1; i < len(at); i++ {
		if at[i]-at[i-1] < iv {
			t.Fatalf("CNPs at %d and %d, interval %d", at[i-1], at[i], iv)
		}
	}
	// One at the first mark, then one at the first mark an interval or
	// more later: every k-th packet.
	k := (iv + step - 1) / step
	want := 199/k + 1
	if int64(len(at)) != want || r.S.CNPs != uint64(len(at)) || r.S.CE != 200 {
		t.Fatalf("%d CNPs (%d counted, %d CE), want %d", len(at), r.S.CNPs, r.S.CE, want)
	}
	// Unmarked packets bring none.
	if a := r.OnData(200, simMTU, false, false, false, now+10*iv); a.CNP {
		t.Fatal("CNP for an unmarked packet")
	}
	// Under DCQCN's Mellanox variant every marked packet brings one, as
	// the simulator flags every ACK of one: its sender notes them.
	p.SetCC(CCDCQCNMlx)
	r = newRx(t, IRN, p, 0)
	n := 0
	for i := range 50 {
		if a := r.OnData(uint32(i), simMTU, false, false, i%2 == 0, now+int64(i)); a.CNP {
			n++
		}
	}
	if n != 25 || r.S.CNPs != 25 {
		t.Fatalf("mlx: %d CNPs (%d counted) for 25 marked packets in a row", n, r.S.CNPs)
	}
}

// Go-Back-N drops what follows a gap and NAKs the gap once.
func TestGBNReceiverNakOnce(t *testing.T) {
	r := newRx(t, GBN, testParams(), 100)
	r.OnData(100, simMTU, false, false, false, 1)
	var naks int
	for psn := uint32(102); psn < 110; psn++ {
		a := r.OnData(psn, simMTU, false, false, false, 2)
		if a.Reply == ReplyNak {
			naks++
			if a.PSN != 101 {
				t.Fatalf("NAK expects %d", a.PSN)
			}
		}
	}
	if naks != 1 || r.S.Dropped != 8 || r.S.Packets != 1 {
		t.Fatalf("%d NAKs, %d dropped, %d taken", naks, r.S.Dropped, r.S.Packets)
	}
	// The gap filled, the next one is NAK'd again.
	r.OnData(101, simMTU, false, false, false, 3)
	if a := r.OnData(103, simMTU, false, false, false, 4); a.Reply != ReplyNak || a.PSN != 102 {
		t.Fatalf("second gap: %+v", a)
	}
}

// IRN keeps what follows a gap, NAKs each such packet selectively and
// acknowledges at once when the gap fills.
func TestIRNReceiver(t *testing.T) {
	p := testParams()
	r := newRx(t, IRN, p, 0)
	r.OnData(0, simMTU, false, false, false, 1)
	for psn := uint32(2); psn < 6; psn++ {
		a := r.OnData(psn, simMTU, psn == 5, false, false, 2)
		if a.Reply != ReplyNak || a.PSN != 1 || a.SackPSN != psn {
			t.Fatalf("packet %d: %+v", psn, a)
		}
	}
	if r.Done() {
		t.Fatal("done with a gap")
	}
	a := r.OnData(1, simMTU, false, false, false, 3)
	if a.Reply != ReplyAck || a.PSN != 5 || !r.Done() || r.S.Packets != 6 || r.S.OutOfOrder != 4 {
		t.Fatalf("gap filled: %+v, done %v, stats %+v", a, r.Done(), r.S)
	}
	// Beyond the buffer: dropped.
	r2 := newRx(t, IRN, p, 0)
	far := uint32(r2.buf.size())
	if a := r2.OnData(far, simMTU, false, false, false, 1); a.Reply != ReplyNone || r2.S.Dropped != 1 {
		t.Fatalf("beyond the buffer: %+v, %d dropped", a, r2.S.Dropped)
	}
}

func TestLosslessReceiverGap(t *testing.T) {
	r := newRx(t, Lossless, testParams(), 0)
	r.OnData(0, simMTU, false, false, false, 1)
	a := r.OnData(3, simMTU, false, false, false, 2)
	if a.Reply != ReplyNak || a.PSN != 1 || !r.Failed() || r.S.Gaps != 1 || r.S.Lost != 2 {
		t.Fatalf("gap: %+v, failed %v, stats %+v", a, r.Failed(), r.S)
	}
	// It goes on from the packet after the gap.
	if r.Expected() != 4 {
		t.Fatalf("expects %d", r.Expected())
	}
	if a := r.OnData(4, simMTU, true, false, false, 3); a.Reply != ReplyAck || !r.Done() {
		t.Fatalf("after the gap: %+v", a)
	}
}

// The coalescing timer is never shorter than AckEvery packets at the line
// rate: a lab scales the papers' half-RTT timer but not the MTU, and a
// flow at line rate must still be acknowledged every AckEvery packets,
// not by the timer after each packet.
func TestAckDelayFloor(t *testing.T) {
	p := testParams()
	if p.AckDelay != 125*time.Microsecond {
		t.Fatalf("scaled ACK delay %v, want 125µs", p.AckDelay)
	}
	const mtu = 1024
	pkt := time.Duration((mtu + p.WireOverhead) * 8 * 10) // ns at 100 Mb/s
	r, err := NewReceiver(Lossless, p, 0, mtu)
	if err != nil {
		t.Fatal(err)
	}
	acks := 0
	now := int64(0)
	for i := range int64(400) {
		now += int64(pkt) // line rate
		if a := r.OnData(uint32(i), mtu, false, false, false, now); a.Reply == ReplyAck {
			acks++
		}
		if due := r.NextTimer(); due >= 0 && due <= now+int64(pkt) {
			if a := r.OnTimer(now + int64(pkt)); a.Reply == ReplyAck {
				acks++
			}
		}
	}
	if acks != 400/p.AckEvery {
		t.Errorf("%d ACKs for 400 packets at line rate, want %d", acks, 400/p.AckEvery)
	}
	// At the papers' rate the floor is below the timer: nothing changes.
	q := testParams()
	q.LineRateBps, q.AckDelay = 100e9, time.Microsecond
	if got := q.ackDelay(mtu); got != q.AckDelay {
		t.Errorf("100 Gb/s: timer %v, want the papers' %v", got, q.AckDelay)
	}
}
