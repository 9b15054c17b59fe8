package queues

import (
	"reflect"
	"testing"
)

func TestEgressPause(t *testing.T) {
	// backlog fills queues qs of e with 100-byte packets.
	backlog := func(e *Egress, qs ...int) {
		for _, q := range qs {
			for e.QueueLen(q) < 8 {
				e.Enqueue(q, Packet{Len: 100}, 0)
			}
		}
	}
	// serve dequeues from t0 to t1 (exclusive), refilling, and counts the
	// packets of each queue.
	serve := func(t *testing.T, e *Egress, t0, t1 int64) []int {
		t.Helper()
		n := make([]int, e.Queues())
		for now := t0; now < t1; now++ {
			_, q, ok := e.Dequeue(now)
			if !ok {
				continue
			}
			n[q]++
			e.Enqueue(q, Packet{Len: 100}, now)
		}
		return n
	}
	cfg := EgressConfig{Queues: 4, HQ: 3, Capacity: 8}
	tests := []struct {
		name string
		run  func(t *testing.T, e *Egress)
	}{
		{"until Resume, others served", func(t *testing.T, e *Egress) {
			backlog(e, 0, 1, 2)
			e.Pause(1, 0, 0)
			if !e.Paused(1) {
				t.Fatal("not paused")
			}
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("pause without expiry has one")
			}
			n := serve(t, e, 0, 1000)
			if n[1] != 0 || n[0] < 400 || n[2] < 400 {
				t.Fatalf("served %v while queue 1 paused", n)
			}
			if s := e.Stats(1); !s.Paused || s.PausedNs != 999 {
				t.Fatalf("paused %v for %d ns, want 999", s.Paused, s.PausedNs)
			}
			e.Resume(1, 2000)
			if e.Paused(1) || e.Stats(1).PausedNs != 2000 {
				t.Fatalf("after resume: paused %v, %d ns", e.Paused(1), e.Stats(1).PausedNs)
			}
			n = serve(t, e, 2000, 2300)
			if n[1] < 90 {
				t.Fatalf("served %v after resume", n)
			}
			e.Resume(1, 3000) // not paused: nothing
			if e.Stats(1).PausedNs != 2000 {
				t.Fatal("resume of a running queue counted time")
			}
		}},
		{"expiry of an empty queue, read by PausedAt", func(t *testing.T, e *Egress) {
			e.Pause(2, 100, 500)
			if !e.PausedAt(2, 499) {
				t.Fatal("not paused at 499")
			}
			// Nothing dequeues an empty queue: Paused keeps the lapsed
			// pause until a call that takes the time lifts it.
			if !e.Paused(2) {
				t.Fatal("Paused lifted a pause without a clock")
			}
			if e.PausedAt(2, 500) || e.Paused(2) {
				t.Fatal("paused at its expiry")
			}
			if s := e.Stats(2); s.PausedNs != 400 {
				t.Fatalf("paused %d ns, want 400", s.PausedNs)
			}
		}},
		{"expiry, alone", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 100, 500)
			if at, ok := e.NextExpiry(); !ok || at != 500 {
				t.Fatalf("next expiry %d %v", at, ok)
			}
			if e.Eligible(499) {
				t.Fatal("eligible at 499")
			}
			if _, _, ok := e.Dequeue(499); ok {
				t.Fatal("dequeued at 499")
			}
			if !e.Eligible(500) {
				t.Fatal("not eligible at 500")
			}
			if _, q, ok := e.Dequeue(500); !ok || q != 0 {
				t.Fatalf("dequeue at 500: %d %v", q, ok)
			}
			if e.Paused(0) || e.Stats(0).PausedNs != 400 {
				t.Fatalf("paused %v for %d ns, want 400", e.Paused(0), e.Stats(0).PausedNs)
			}
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("expiry left after lifting")
			}
		}},
		{"expiry, others served", func(t *testing.T, e *Egress) {
			backlog(e, 0, 1, 2)
			e.Pause(1, 0, 500)
			n := serve(t, e, 0, 500)
			if n[1] != 0 || n[0] < 200 || n[2] < 200 {
				t.Fatalf("served %v before expiry", n)
			}
			n = serve(t, e, 500, 600)
			if n[1] < 30 {
				t.Fatalf("served %v after expiry", n)
			}
			if e.Stats(1).PausedNs != 500 {
				t.Fatalf("paused %d ns", e.Stats(1).PausedNs)
			}
		}},
		{"late dequeue counts until the expiry", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 0, 500)
			if _, q, ok := e.Dequeue(800); !ok || q != 0 {
				t.Fatal("not served after expiry")
			}
			if e.Stats(0).PausedNs != 500 {
				t.Fatalf("paused %d ns", e.Stats(0).PausedNs)
			}
		}},
		{"re-pause extends and shortens", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 0, 500)
			e.Pause(0, 100, 1000)
			if at, _ := e.NextExpiry(); at != 1000 {
				t.Fatalf("extended expiry %d", at)
			}
			if _, _, ok := e.Dequeue(600); ok {
				t.Fatal("served before the extended expiry")
			}
			e.Pause(0, 700, 800)
			if _, _, ok := e.Dequeue(799); ok {
				t.Fatal("served before the shortened expiry")
			}
			if _, _, ok := e.Dequeue(800); !ok {
				t.Fatal("not served at the shortened expiry")
			}
			if e.Stats(0).PausedNs != 800 {
				t.Fatalf("paused %d ns", e.Stats(0).PausedNs)
			}
		}},
		{"re-pause without expiry clears it", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 0, 500)
			e.Pause(0, 10, 0)
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("expiry kept")
			}
			if _, _, ok := e.Dequeue(10_000); ok {
				t.Fatal("served")
			}
			e.Resume(0, 20_000)
			if _, _, ok := e.Dequeue(20_000); !ok || e.Stats(0).PausedNs != 20_000 {
				t.Fatalf("after resume: %d ns", e.Stats(0).PausedNs)
			}
		}},
		{"expiry in the past resumes", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 100, 100)
			if e.Paused(0) {
				t.Fatal("paused by an expired pause")
			}
			e.Pause(0, 200, 0)
			e.Pause(0, 300, 250)
			if e.Paused(0) || e.Stats(0).PausedNs != 100 {
				t.Fatalf("paused %v for %d ns", e.Paused(0), e.Stats(0).PausedNs)
			}
		}},
		{"earliest expiry", func(t *testing.T, e *Egress) {
			backlog(e, 0, 1, 2)
			e.Pause(0, 0, 900)
			e.Pause(1, 0, 300)
			e.Pause(2, 0, 600)
			for _, want := range []int64{300, 600, 900} {
				at, ok := e.NextExpiry()
				if !ok || at != want {
					t.Fatalf("next expiry %d %v, want %d", at, ok, want)
				}
				e.Eligible(at)
			}
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("expiry left")
			}
			e.Pause(0, 1000, 2000)
			e.Pause(1, 1000, 1500)
			e.Resume(1, 1100)
			if at, _ := e.NextExpiry(); at != 2000 {
				t.Fatalf("next expiry %d after resume", at)
			}
		}},
		{"HQ cannot be paused", func(t *testing.T, e *Egress) {
			e.Enqueue(3, Packet{Len: 64}, 0)
			e.Pause(3, 0, 1000)
			if e.Paused(3) {
				t.Fatal("HQ paused")
			}
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("HQ pause has an expiry")
			}
			if _, q, ok := e.Dequeue(1); !ok || q != 3 {
				t.Fatal("HQ not served")
			}
		}},
		{"paused mid-visit loses its deficit", func(t *testing.T, e *Egress) {
			backlog(e, 0, 1)
			if _, q, _ := e.Dequeue(0); q != 0 {
				t.Fatalf("first visit to %d", q)
			}
			e.Pause(0, 1, 0)
			if e.q[0].deficit != 0 {
				t.Fatalf("deficit %d kept", e.q[0].deficit)
			}
			if _, q, _ := e.Dequeue(2); q != 1 {
				t.Fatalf("served %d", q)
			}
			e.Resume(0, 3)
			// Queue 1 finishes its visit (1518 bytes: 15 packets of 100).
			for i := range 14 {
				if _, q, _ := e.Dequeue(4); q != 1 {
					t.Fatalf("packet %d of the visit from %d", i, q)
				}
				e.Enqueue(1, Packet{Len: 100}, 4)
			}
			if _, q, _ := e.Dequeue(5); q != 0 {
				t.Fatalf("after queue 1's visit: %d", q)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newEgress(t, cfg)) })
	}
}

// Discard takes frames out of every sum and through the Dequeued hook
// without counting them as sent.
func TestEgressDiscard(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 8, Groups: []uint64{0b011}})
	h := &recorder{e: e}
	e.SetHooks(h)
	for i := range 3 {
		e.Enqueue(1, Packet{Addr: uint64(i), Len: 100}, 0)
	}
	e.Pause(1, 0, 0)
	p, ok := e.Discard(1)
	if !ok || p.Addr != 0 {
		t.Fatalf("Discard: %+v %v, want the head", p, ok)
	}
	if e.QueueBytes(1) != 200 || e.Bytes() != 200 || e.Len() != 2 || e.GroupBytes(0) != 200 {
		t.Errorf("after discard: queue %d, egress %d/%d, group %d", e.QueueBytes(1), e.Bytes(), e.Len(), e.GroupBytes(0))
	}
	if last := h.events[len(h.events)-1]; !last.deq || last.p.Addr != 0 {
		t.Errorf("hook saw %+v, want the discarded packet's dequeue", last)
	}
	e.Discard(1)
	e.Discard(1)
	if _, ok := e.Discard(1); ok || e.Len() != 0 {
		t.Error("Discard of an empty queue reported a packet")
	}
	if s := e.Stats(1); s.DeqPackets != 0 || s.EnqPackets != 3 {
		t.Errorf("stats %+v: a discard is not a dequeue", s)
	}
	e.Resume(1, 1)
	if _, _, ok := e.Dequeue(2); ok {
		t.Error("discarded packets dequeued")
	}
}

// An overridden queue ignores pauses (and counts them) until the
// override ends.
func TestEgressOverride(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 8})
	e.Enqueue(0, Packet{Len: 100}, 0)
	e.Enqueue(0, Packet{Len: 100}, 0)
	e.Pause(0, 0, 1000)
	if e.Eligible(1) {
		t.Fatal("paused queue eligible")
	}
	e.Override(0, 10, true)
	if e.Paused(0) || !e.Overridden(0) || !e.Eligible(10) {
		t.Fatal("override did not resume the queue")
	}
	e.Pause(0, 20, 0)
	e.Pause(0, 21, 5000)
	if e.Paused(0) {
		t.Fatal("overridden queue paused")
	}
	if s := e.Stats(0); s.IgnoredPauses != 2 || !s.Overridden || s.PausedNs != 10 {
		t.Errorf("stats %+v: want 2 ignored pauses, overridden, 10 ns paused", s)
	}
	if _, q, ok := e.Dequeue(30); !ok || q != 0 {
		t.Fatal("overridden queue not served")
	}
	e.Override(0, 40, false)
	e.Pause(0, 50, 0)
	if !e.Paused(0) || e.Overridden(0) {
		t.Fatal("queue ignores pauses after the override ended")
	}
	if _, _, ok := e.Dequeue(60); ok {
		t.Fatal("paused queue served")
	}
}

// A queue shut by its gate is not dequeued, apart from its pauses: a
// Resume does not open the gate, nor an opened gate lift a pause; it counts no pause time. Head
// shows the next packet of a queue without taking it.
func TestEgressGate(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 16})
	for i := range 2 {
		e.Enqueue(0, Packet{Addr: uint64(10 + i), Len: 100}, 0)
		e.Enqueue(1, Packet{Addr: uint64(20 + i), Len: 100}, 0)
	}
	if p, ok := e.Head(1); !ok || p.Addr != 20 {
		t.Fatalf("head of queue 1: %+v %v", p, ok)
	}
	if _, ok := e.Head(2); ok {
		t.Fatal("head of the empty HQ")
	}
	e.Gate(1, true)
	e.Gate(2, true) // the HQ: ignored
	if !e.Gated(1) || e.Gated(2) || e.Paused(1) {
		t.Fatalf("gated %v %v, paused %v", e.Gated(1), e.Gated(2), e.Paused(1))
	}
	e.Resume(1, 0)
	var got []uint64
	for {
		p, _, ok := e.Dequeue(0)
		if !ok {
			break
		}
		got = append(got, p.Addr)
	}
	if !reflect.DeepEqual(got, []uint64{10, 11}) {
		t.Fatalf("while queue 1 is shut: sent %v", got)
	}
	if e.Eligible(0) {
		t.Fatal("eligible with only a shut queue")
	}
	e.Pause(1, 0, 0)
	e.Gate(1, false)
	if e.Eligible(0) {
		t.Fatal("an opened gate lifted the pause")
	}
	e.Resume(1, 5)
	if p, q, ok := e.Dequeue(5); !ok || q != 1 || p.Addr != 20 {
		t.Fatalf("after the gate and the pause: %+v %d %v", p, q, ok)
	}
	if s := e.Stats(1); s.PausedNs != 5 {
		t.Errorf("paused %d ns, want only the pause's 5", s.PausedNs)
	}
}
