package transport

import "testing"

// loop joins a sender to its receiver with no link between them: every
// packet arrives at once, the first transmission of every 50th is lost,
// and of those the sender marks Drop (SetLoss), every 16th is marked CE.
type loop struct {
	s   *Sender
	r   *Receiver
	now int64
}

func newLoop(tb testing.TB, mode Mode) *loop { return newLoopWith(tb, mode, testParams()) }

func newLoopWith(tb testing.TB, mode Mode, p Params) *loop {
	s, err := NewSender(mode, p, PSNMask-1000, 0, simMTU)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := NewReceiver(mode, p, PSNMask-1000, simMTU)
	if err != nil {
		tb.Fatal(err)
	}
	return &loop{s: s, r: r}
}

func (l *loop) reply(a RxAction) {
	switch a.Reply {
	case ReplyAck:
		e := Echo{ECE: a.ECE}
		l.s.OnAckEcho(a.PSN, &e, l.now)
	case ReplyNak:
		l.s.OnNak(a.PSN, a.SackPSN, l.now)
	}
	if a.CNP {
		l.s.OnCNP(l.now)
	}
}

// step sends one packet, or runs the timer that lets one go.
func (l *loop) step(tb testing.TB) {
	if t := l.s.NextSendTime(); t >= 0 {
		l.now = max(l.now, t)
		if seg, ok := l.s.Next(l.now); ok {
			if seg.Drop || l.s.mode != Lossless && !seg.Retx && seg.Seq%50 == 7 {
				return
			}
			last := seg.Pos == Last || seg.Pos == Only
			l.reply(l.r.OnData(seg.PSN, seg.Len, last, seg.AckReq, seg.Seq%16 == 0, l.now))
			return
		}
	}
	t, rt := l.s.NextTimer(), l.r.NextTimer()
	if rt >= 0 && (t < 0 || rt <= t) {
		l.now = max(l.now, rt)
		l.reply(l.r.OnTimer(l.now))
		return
	}
	if t < 0 {
		tb.Fatalf("%v: stalled with nothing to wait for (outstanding %d)", l.s.mode, l.s.Outstanding())
	}
	l.now = max(l.now, t)
	l.s.OnTimer(l.now)
}

func TestAllocs(t *testing.T) {
	for _, m := range []Mode{Lossless, GBN, IRN} {
		l := newLoop(t, m)
		for range 1000 {
			l.step(t)
		}
		if n := testing.AllocsPerRun(5000, func() { l.step(t) }); n != 0 {
			t.Errorf("%v: %v allocations per packet", m, n)
		}
		if l.s.S.Packets < 5000 || (m != Lossless && l.s.S.RetxPackets == 0) || l.s.S.CNPs == 0 {
			t.Errorf("%v: the loop did not exercise it: %+v", m, l.s.S)
		}
	}
	// Injected loss: a sized flow whose sender marks MaxLoss packets
	// Drop, spread over the packets the measured steps send.
	for _, m := range []Mode{GBN, IRN} {
		l := newLoop(t, m)
		s, err := NewSender(m, testParams(), PSNMask-1000, 20_000*simMTU, simMTU)
		if err != nil {
			t.Fatal(err)
		}
		lose := make([]int, MaxLoss)
		for i := range lose {
			lose[i] = 1000 + 15*i
		}
		if err := s.SetLoss(lose); err != nil {
			t.Fatal(err)
		}
		l.s = s
		for range 1000 {
			l.step(t)
		}
		if n := testing.AllocsPerRun(5000, func() { l.step(t) }); n != 0 {
			t.Errorf("%v, injected loss: %v allocations per packet", m, n)
		}
		if l.s.S.Injected != MaxLoss || l.s.Done() {
			t.Errorf("%v, injected loss: the loop did not exercise it: %+v", m, l.s.S)
		}
	}
	l := newLoopWith(t, IRN, dctcpParams())
	for range 1000 {
		l.step(t)
	}
	if n := testing.AllocsPerRun(5000, func() { l.step(t) }); n != 0 {
		t.Errorf("DCTCP: %v allocations per packet", n)
	}
	if c := l.s.DCTCP().C; c.Cuts == 0 || c.Windows == 0 {
		t.Errorf("DCTCP: the loop did not exercise it: %+v", c)
	}
	hp := testParams()
	hp.DCQCN.Enabled, hp.LineRateBps, hp.HPCC = false, hpccLine, hpccTest
	hs, err := NewSender(IRN, hp, 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var e Echo
	e.Hops = 3
	hnow := int64(0)
	if n := testing.AllocsPerRun(5000, func() {
		hnow = max(hnow, hs.NextSendTime())
		seg, ok := hs.Next(hnow)
		if !ok {
			t.Fatal("HPCC: the sender stalled")
		}
		for i := range e.Hops {
			e.Hop[i] = hop(uint32(hnow), uint32(seg.Offset), uint32(i)*1000)
		}
		hs.OnAckEcho(seg.PSN, &e, hnow)
	}); n != 0 {
		t.Errorf("HPCC: %v allocations per ACK", n)
	}
	if hs.HPCC().C.Updates == 0 {
		t.Errorf("HPCC: the loop did not exercise it: %+v", hs.HPCC().C)
	}
	d := NewDCQCN(testParams().DCQCN, simRate)
	now := int64(0)
	if n := testing.AllocsPerRun(1000, func() {
		now += 1_000_000
		d.OnCNP(now)
		d.OnSent(1086, now)
		d.OnTimer(now + 50_000_000)
	}); n != 0 {
		t.Errorf("DCQCN: %v allocations", n)
	}
}

func BenchmarkTransport(b *testing.B) {
	for _, m := range []Mode{Lossless, GBN, IRN} {
		b.Run(m.String(), func(b *testing.B) {
			l := newLoop(b, m)
			b.ReportAllocs()
			for b.Loop() {
				l.step(b)
			}
		})
	}
}

func BenchmarkReceiverOnData(b *testing.B) {
	r, err := NewReceiver(IRN, testParams(), 0, simMTU)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	psn := uint32(0)
	for b.Loop() {
		r.OnData(psn, simMTU, false, false, psn%64 == 0, int64(psn)*1000)
		psn = PSNAdd(psn, 1)
	}
}

func BenchmarkDCQCN(b *testing.B) {
	d := NewDCQCN(testParams().DCQCN, simRate)
	b.ReportAllocs()
	now := int64(0)
	for i := 0; b.Loop(); i++ {
		now += 80_000
		if i%100 == 0 {
			d.OnCNP(now)
		}
		d.OnSent(1086, now)
	}
}
