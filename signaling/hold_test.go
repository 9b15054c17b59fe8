package signaling

import (
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
)

const msNs = int64(1_000_000)

// held reports whether queue q of eg, holding a frame, is still paused at
// now.
func held(eg *queues.Egress, q int, now int64) bool {
	if eg.QueueLen(q) == 0 {
		eg.Enqueue(q, queues.Packet{Len: 100}, now)
	}
	return !eg.Eligible(now)
}

// PortFC under overload: a server keeps a pause while the switch is late
// with its refreshes (900 ms, far beyond the old three refreshes); a
// Resume the server never hears is repaired by the switch's next
// repetition of it; and when every Resume is lost, the pause ends at the
// hold after the last signal heard, not never.
func TestPortFCHoldsWhileLate(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	senv, henv := switchEnv(t, tp), hostEnv(t, tp)
	sw := NewSwitchPortFC(tp, 0, 0, senv, th) // s0.0, congested port 1 (h1)
	h0 := NewHostPortFC(tp, 0, henv, th)      // on s0.0's port 0: its a0 is for port 1
	seg, a0 := senv.Egress(1), henv.Egress(0)
	seg.SetHooks(sw.Hooks(1))
	deliver := func(lose bool) (n int) {
		for _, s := range senv.take(t) {
			if s.Dst().String() != bcube.HostPortMAC(0, 0).String() {
				continue
			}
			n++
			if !lose {
				h0.OnSignal(0, s)
			}
		}
		return n
	}
	at := func(now int64) { senv.now, henv.now = now, now }
	for range 6 {
		seg.Enqueue(0, queues.Packet{Len: 1000}, senv.now)
	}
	if deliver(false) != 1 || !held(a0, 0, 0) {
		t.Fatal("setup: a0 not paused")
	}
	at(900 * msNs) // the switch is 900 ms late with its refresh
	if !held(a0, 0, henv.now) {
		t.Fatal("a0 resumed while the switch was late")
	}
	sw.Tick(senv.now)
	if deliver(false) != 1 {
		t.Fatal("no late refresh")
	}
	for seg.GroupBytes(0) > th.XonA {
		seg.Dequeue(senv.now)
	}
	if deliver(true) != 1 || !held(a0, 0, henv.now) {
		t.Fatal("setup: the Resume is lost, a0 should still be paused")
	}
	at(sw.NextTick())
	if at := senv.now; at != 900*msNs+th.Refresh {
		t.Fatalf("Resume repeated at %d, want a refresh after it", at)
	}
	sw.Tick(senv.now)
	if deliver(false) != 1 || held(a0, 0, henv.now) {
		t.Fatal("the repeated Resume did not resume a0")
	}
	for sw.NextTick() >= 0 {
		at(sw.NextTick())
		sw.Tick(senv.now)
		deliver(false)
	}

	// Every Resume lost: the pause lasts the hold after the Pause.
	start := senv.now
	for range 2 {
		seg.Enqueue(0, queues.Packet{Len: 1000}, senv.now)
	}
	if deliver(false) != 1 || !held(a0, 0, henv.now) {
		t.Fatal("second pause not applied")
	}
	for seg.GroupBytes(0) > th.XonA {
		seg.Dequeue(senv.now)
	}
	deliver(true)
	lost := 1
	for sw.NextTick() >= 0 {
		at(sw.NextTick())
		sw.Tick(senv.now)
		lost += deliver(true)
	}
	if lost != 1+ResumeRepeats {
		t.Fatalf("%d Resumes sent, want %d", lost, 1+ResumeRepeats)
	}
	if !held(a0, 0, start+th.HoldNs()-1) || held(a0, 0, start+th.HoldNs()) {
		t.Fatal("with every Resume lost, the pause should end exactly at the hold")
	}
}

// PFC under overload: at 500 Mb/s 0xFFFF quanta are 67 ms, but a
// receiver holds the pause for DefaultHold, so a sender 500 ms late with
// its refresh keeps its neighbour paused; a lost X_on is repaired by its
// repetition a Repeat later.
func TestPFCHoldsWhileLate(t *testing.T) {
	fast := []PFCPort{{MAC: macA, RateBps: 500_000_000}, {MAC: macB, RateBps: 500_000_000}}
	down, up := pfcEnv(t), pfcEnv(t) // down's port 1 faces up's port 1
	fd := NewPFC(down, fast, PFCThresholds{Xoff: 2000, Xon: 1000, Lossless: 1 << 3})
	fu := NewPFC(up, fast, PFCThresholds{Xoff: 2000, Xon: 1000, Lossless: 1 << 3})
	down.eg[2].SetHooks(fd.Hooks())
	deliver := func(lose bool) int {
		fr := pfcFrames(t, down)
		for _, f := range fr {
			if !lose && f.port == 1 {
				fu.OnPFC(1, f.f)
			}
		}
		return len(fr)
	}
	at := func(now int64) { down.now, up.now = now, now }
	down.eg[2].Enqueue(3, queues.Packet{Len: 2000, Meta: IngressMeta(1, 3)}, 0)
	if deliver(false) != 1 || !held(up.eg[1], 3, 0) {
		t.Fatal("setup: X_off did not pause priority 3")
	}
	if quanta := PauseNs(MaxQuanta, 500_000_000); quanta > 100*msNs {
		t.Fatalf("setup: 0xFFFF quanta last %d ns at 500 Mb/s", quanta)
	}
	at(500 * msNs) // refresh due at 33 ms; the sender runs 467 ms late
	if !held(up.eg[1], 3, up.now) {
		t.Fatal("priority 3 resumed after its quanta while the sender was late")
	}
	fd.Tick(down.now)
	if deliver(false) != 1 {
		t.Fatal("no late refresh")
	}
	down.eg[2].Discard(3)
	if deliver(true) != 1 || !held(up.eg[1], 3, up.now) {
		t.Fatal("setup: X_on lost, priority 3 should still be paused")
	}
	at(fd.NextTick())
	fd.Tick(down.now)
	if deliver(false) != 1 || held(up.eg[1], 3, up.now) {
		t.Fatal("the repeated X_on did not resume priority 3")
	}
	if down.now != 500*msNs+DefaultPFCRepeat || fu.C[1].RxXon[3] != 1 || fd.C[1].TxXon[3] != 2 {
		t.Errorf("repeat at %d; rx %+v; tx %+v", down.now, fu.C[1], fd.C[1])
	}
}

// BFC under overload: an upstream queue stays paused while the
// downstream node sends no bitmap for 900 ms; a lost Resume and a lost
// first bitmap are repaired by the second bitmap.
func TestBFCHoldsWhileLate(t *testing.T) {
	down, up := bfcEnv(t), bfcEnv(t)
	bd := NewBackpressure(down, bfcPorts, 8, msNs, 0)
	bu := NewBackpressure(up, bfcPorts, 8, msNs, 0)
	deliver := func(lose bool) int {
		s := bfcSent(t, down)
		for _, sig := range s {
			if !lose {
				bu.OnSignal(0, sig)
			}
		}
		return len(s)
	}
	at := func(now int64) { down.now, up.now = now, now }
	bd.Arrived(0, 5, 5000, 1000)
	if deliver(false) != 1 || !held(up.eg[0], 5, 0) {
		t.Fatal("setup: queue 5 not paused")
	}
	at(900 * msNs)
	if !held(up.eg[0], 5, up.now) {
		t.Fatal("queue 5 resumed while the downstream node was late")
	}
	bd.Tick(down.now)
	deliver(false)
	bd.Left(0, 5)
	deliver(true) // the Resume
	for i := range 2 {
		at(bd.NextTick())
		bd.Tick(down.now)
		if deliver(i == 0) != 1 {
			t.Fatalf("bitmap %d not sent", i)
		}
	}
	if held(up.eg[0], 5, up.now) {
		t.Fatal("the second bitmap after the Resume did not resume queue 5")
	}
}
