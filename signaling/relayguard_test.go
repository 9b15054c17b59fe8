package signaling

import (
	"bytes"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
)

// Server h5 of BCube(4,1), its rail (eth1) guarded: its relay queue at
// X̂_off sends a relayed Pause{B, p} for every other port p of its level-1
// switch to its level-0 switch s0.1, which pauses all three A queues of
// its port toward h5 (what h5 will relay) and nothing else; the state is
// refreshed, X̂_on resumes them, and the Resume is repeated.
func TestRelayGuard(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	const self = 5 // digits (1, 1): s0.1 port 1, s1.1 port 1
	henv, senv := hostEnv(t, tp), switchEnv(t, tp)
	h := NewHostPortFC(tp, self, henv, th)
	sw := NewSwitchPortFC(tp, 0, 1, senv, th)
	if h.RelayHooks(1) != nil {
		t.Fatal("hooks on a port not guarded")
	}
	h.GuardRelay(1)
	eg := henv.Egress(1)
	eg.SetHooks(h.RelayHooks(1))
	deliver := func() []Signal {
		t.Helper()
		sigs := henv.take(t)
		for _, s := range sigs {
			sw.OnSignal(1, s)
		}
		return sigs
	}
	rq, pk := tp.ServerRQ(), queues.Packet{Len: 1000}
	for range th.XoffB/1000 - 1 {
		eg.Enqueue(rq, pk, 0)
		eg.Enqueue(0, pk, 0) // own traffic never counts
	}
	if len(henv.sent) != 0 || h.RelaySignalled(1) {
		t.Fatalf("below X_off: %d frames", len(henv.sent))
	}
	eg.Enqueue(rq, pk, 0)
	sigs := deliver()
	if len(sigs) != 3 || !h.RelaySignalled(1) {
		t.Fatalf("at X_off: %d frames, want 3 (ports 0, 2, 3 of s1.1)", len(sigs))
	}
	for i, s := range sigs {
		if s.Type() != TypePause || s.Class() != ClassB || !s.Relayed() || s.OriginLevel() != 1 || s.OriginIndex() != 1 ||
			int(s.Port()) != []int{0, 2, 3}[i] || !bytes.Equal(s.Dst(), bcube.SwitchPortMAC(0, 1, 1)) {
			t.Errorf("frame %d: %s", i, Describe(s))
		}
	}
	if h.C[0].Sent[ClassB-1][TypePause-1] != 3 {
		t.Errorf("counters %+v", h.C[0])
	}
	paused := func() (n int) {
		for q := range tp.SwitchQueues() {
			if senv.Egress(1).Paused(q) {
				if q >= tp.N()-1 {
					t.Errorf("switch queue %d paused: only A queues hold relayed traffic", q)
				}
				n++
			}
		}
		return n
	}
	if n := paused(); n != 3 {
		t.Fatalf("%d A queues of s0.1 p1 paused, want all 3", n)
	}
	// Refreshed while signalled.
	henv.now = h.NextTick()
	h.Tick(henv.now)
	if sigs := deliver(); len(sigs) != 3 || sigs[0].Type() != TypeState {
		t.Fatalf("refresh: %d frames", len(sigs))
	}
	for eg.QueueBytes(rq) > th.XonB {
		if len(henv.sent) != 0 {
			t.Fatalf("resumed above X_on at %d", eg.QueueBytes(rq))
		}
		eg.Dequeue(henv.now)
	}
	if sigs := deliver(); len(sigs) != 3 || sigs[0].Type() != TypeResume || h.RelaySignalled(1) || paused() != 0 {
		t.Fatalf("at X_on: %d frames, %d queues still paused", len(sigs), paused())
	}
	for i := range ResumeRepeats {
		henv.now = h.NextTick()
		if henv.now < 0 {
			t.Fatalf("resume repeated %d times, want %d", i, ResumeRepeats)
		}
		h.Tick(henv.now)
		if sigs := deliver(); len(sigs) != 3 || sigs[0].Type() != TypeResume {
			t.Fatalf("repeat %d: %d frames", i, len(sigs))
		}
	}
	if h.NextTick() != -1 {
		t.Error("a timer with nothing signalled or owed")
	}
}
