package transport

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// A sender's pacing follows its DCQCN rate.
func TestSenderPacing(t *testing.T) {
	p := testParams()
	s, err := NewSender(GBN, p, 0, 0, simMTU)
	if err != nil {
		t.Fatal(err)
	}
	wire := float64(simMTU + p.WireOverhead)
	now := int64(0)
	for range 10 {
		if _, ok := s.Next(now); !ok {
			t.Fatal("no packet at its time")
		}
		if _, ok := s.Next(now); ok {
			t.Fatal("two packets at once")
		}
		next := s.NextSendTime()
		if gap := float64(next - now); math.Abs(gap-wire*8e9/simRate) > 1 {
			t.Fatalf("gap %v at line rate", gap)
		}
		now = next
	}
	// A cut stretches the gap after the last packet too.
	last := now - int64(math.Round(wire*8e9/simRate))
	s.OnCNP(now)
	if _, ok := s.Next(now); ok {
		t.Fatal("a packet at the old rate after a cut")
	}
	now = s.NextSendTime()
	if gap := float64(now - last); math.Abs(gap-2*wire*8e9/simRate) > 1 {
		t.Fatalf("gap %v after the cut", gap)
	}
	if _, ok := s.Next(now); !ok {
		t.Fatal("no packet at its time")
	}
	if gap := float64(s.NextSendTime() - now); math.Abs(gap-2*wire*8e9/simRate) > 1 {
		t.Fatalf("gap %v at half rate", gap)
	}
	if s.S.CNPs != 1 || s.DCQCN().C.Cuts != 1 {
		t.Fatal("CNP not counted")
	}
	// Late by less than a packet time keeps the schedule; after an idle
	// spell the next packet is a full gap later, not a burst.
	g := s.NextSendTime() - now
	due := s.NextSendTime()
	s.Next(due + g/2)
	if got := s.NextSendTime(); got != due+g {
		t.Fatalf("late by half a gap: next at %d, want %d", got, due+g)
	}
	idle := s.NextSendTime() + 10*g
	s.Next(idle)
	if got := s.NextSendTime(); got != idle+g {
		t.Fatalf("after idling: next at %d, want %d", got, idle+g)
	}
}

// With PacingCatchup a sender served late makes up for up to that much
// of its schedule, back to back, and loses the rest; on average it keeps
// its rate when every pass comes several packet times late.
func TestPacingCatchup(t *testing.T) {
	p := testParams()
	p.DCQCN.Enabled = false
	gap := int64(math.Round(float64(simMTU+p.WireOverhead) * 8e9 / simRate))
	p.PacingCatchup = time.Duration(5 * gap)
	s, err := NewSender(GBN, p, 0, 0, simMTU)
	if err != nil {
		t.Fatal(err)
	}
	if seg, _ := s.Next(0); seg.Slot != 0 {
		t.Fatalf("the first packet's slot %d, want 0", seg.Slot)
	}
	// Late by three gaps: four packets go at once, each with the slot it
	// had in the schedule, then the schedule goes on from where it was.
	now := 4 * gap
	n := 0
	for {
		seg, ok := s.Next(now)
		if !ok {
			break
		}
		n++
		if want := int64(n) * gap; seg.Slot != want {
			t.Errorf("late by 3 gaps: packet %d's slot %d, want %d", n, seg.Slot, want)
		}
	}
	if n != 4 || s.NextSendTime() != 5*gap {
		t.Fatalf("late by 3 gaps: %d packets, next at %d (want 4, %d)", n, s.NextSendTime(), 5*gap)
	}
	// Late by twenty: five gaps' worth are made up for, the rest lost;
	// the first packet's slot is the catch-up bound before now.
	now = 25 * gap
	n = 0
	for {
		seg, ok := s.Next(now)
		if !ok {
			break
		}
		if want := now - 5*gap + int64(n)*gap; seg.Slot != want {
			t.Errorf("late by 20 gaps: packet %d's slot %d, want %d", n, seg.Slot, want)
		}
		n++
	}
	if n != 6 || s.NextSendTime() != now+gap {
		t.Fatalf("late by 20 gaps: %d packets, next at %d (want 6, %d)", n, s.NextSendTime(), now+gap)
	}
	// Served only every 3.5 gaps, it still sends one packet per gap.
	sent := 0
	start := now
	for now < start+1000*gap {
		now += 7 * gap / 2
		for {
			if _, ok := s.Next(now); !ok {
				break
			}
			sent++
		}
	}
	if want := int((now - start) / gap); sent < want-1 || sent > want+1 {
		t.Fatalf("served every 3.5 gaps: %d packets in %d gaps", sent, want)
	}
}

// bottleneck builds n flows from senders on their own links into one
// shared link with RED marking (ecn, zero: none), starting at the given
// times.
func bottleneck(t *testing.T, mode Mode, p Params, ecn ECNParams, starts ...int64) *world {
	w := &world{t: t}
	shared := w.addLink(&link{rate: simRate, delay: simDelay, ecn: ecn, rng: rand.New(rand.NewPCG(1, 2))})
	for i, at := range starts {
		access := w.addLink(&link{rate: simRate, delay: simDelay, next: shared})
		rev := w.addLink(&link{rate: simRate, delay: 2 * simDelay})
		w.newFlow(mode, p, uint32(i*1000), 0, access, rev, at)
	}
	return w
}

// rates are each flow's goodput, bit/s, between from and to.
func rates(w *world, from, to int64) []float64 {
	w.run(from)
	start := make([]uint64, len(w.flows))
	for i, f := range w.flows {
		start[i] = f.r.S.Bytes
	}
	w.run(to)
	out := make([]float64, len(w.flows))
	for i, f := range w.flows {
		out[i] = float64(f.r.S.Bytes-start[i]) * 8e9 / float64(to-from)
	}
	return out
}

// Two DCQCN senders through one RED-marking bottleneck converge to
// within 20% of their fair share, the second starting long after the
// first had the link to itself; the queue stays near the thresholds.
func TestDCQCNFairness(t *testing.T) {
	p := testParams()
	for _, mode := range []Mode{Lossless, GBN, IRN} {
		w := bottleneck(t, mode, p, p.ECN, 0, sec/2)
		r := rates(w, 4*sec, 8*sec)
		fair := float64(simRate) / 2
		shared := w.links[0]
		t.Logf("%v: rates %.1f, %.1f Mb/s; CNPs %d, %d; marks %d; max queue %d B (kmax %d)", mode, r[0]/1e6, r[1]/1e6,
			w.flows[0].s.S.CNPs, w.flows[1].s.S.CNPs, shared.marks, shared.maxQueue, p.ECN.KmaxBytes)
		for i, x := range r {
			// Goodput lacks the headers the link carries.
			x *= float64(simMTU+DefaultWireOverhead) / simMTU
			if math.Abs(x-fair) > 0.2*fair {
				t.Errorf("%v: flow %d at %.1f Mb/s, fair share %.1f", mode, i, x/1e6, fair/1e6)
			}
		}
		for i, f := range w.flows {
			if f.s.S.CNPs == 0 || f.r.S.CNPs != f.s.S.CNPs {
				t.Errorf("%v: flow %d: %d CNPs sent, %d received", mode, i, f.r.S.CNPs, f.s.S.CNPs)
			}
		}
	}
}

// Without marking there is no CNP, and the senders run at the line rate.
func TestNoMarkingNoCNP(t *testing.T) {
	p := testParams()
	w := bottleneck(t, GBN, p, ECNParams{}, 0, 0)
	rates(w, sec/10, sec/2)
	for i, f := range w.flows {
		if f.s.S.CNPs != 0 || f.r.S.CNPs != 0 || f.r.S.CE != 0 || f.s.Rate() != simRate {
			t.Errorf("flow %d: %d CNPs, %d CE, rate %v", i, f.s.S.CNPs, f.r.S.CE, f.s.Rate())
		}
	}
}

// An 8-to-1 incast of 1 MB flows into a shallow drop-tail buffer: the
// lossy modes complete every flow, with and without DCQCN.
func TestIncastDropTail(t *testing.T) {
	const (
		n    = 8
		size = 1_000_000
	)
	for _, cc := range []bool{true, false} {
		for _, mode := range []Mode{GBN, IRN} {
			p := testParams()
			p.DCQCN.Enabled = cc
			starts := make([]int64, n)
			w := bottleneck(t, mode, p, p.ECN, starts...)
			shared := w.links[0]
			shared.limit = 2 * p.ECN.KmaxBytes
			for _, f := range w.flows {
				f.s, _ = NewSender(mode, p, f.s.StartPSN(), size, simMTU)
			}
			w.run(600 * sec)
			var worst int64
			var retx uint64
			for i, f := range w.flows {
				checkComplete(t, fmt.Sprintf("%v dcqcn=%v flow %d", mode, cc, i), f, size)
				worst = max(worst, f.s.S.FCT())
				retx += f.s.S.RetxPackets
			}
			ideal := n * size * (simMTU + DefaultWireOverhead) / simMTU * 8e9 / simRate
			t.Logf("%v dcqcn=%v: last FCT %v (ideal %v), drops %d, retransmitted %d packets", mode, cc,
				time.Duration(worst), time.Duration(ideal), shared.drops, retx)
		}
	}
}
