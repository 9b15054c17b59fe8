package queues

import "testing"

// Strict queues go after the HQ and before every DRR queue, in their
// order; a paused strict queue waits like any other.
func TestEgressStrict(t *testing.T) {
	e, err := NewEgress(EgressConfig{Queues: 5, HQ: 4, Strict: []int{3, 2}, Capacity: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []int{0, 1, 2, 3, 4, 2, 3, 0} {
		e.Enqueue(q, Packet{Len: 100, Meta: uint64(q)}, 0)
	}
	var got []int
	for {
		_, q, ok := e.Dequeue(0)
		if !ok {
			break
		}
		got = append(got, q)
	}
	want := []int{4, 3, 3, 2, 2}
	for i, q := range want {
		if got[i] != q {
			t.Fatalf("order %v, want %v then DRR", got, want)
		}
	}
	e.Enqueue(3, Packet{Len: 100}, 0)
	e.Enqueue(0, Packet{Len: 100}, 0)
	e.Pause(3, 0, 0)
	if _, q, _ := e.Dequeue(0); q != 0 {
		t.Fatalf("paused strict queue served: %d", q)
	}
	for _, bad := range [][]int{{4}, {5}, {1, 1}, {-1}} {
		if _, err := NewEgress(EgressConfig{Queues: 5, HQ: 4, Strict: bad, Capacity: 16}); err == nil {
			t.Errorf("strict %v accepted", bad)
		}
	}
}

// MaxPauseNs is the longest single pause: a pause renewed before it
// lapses is one pause, a pause that ended and started again is two.
func TestEgressMaxPause(t *testing.T) {
	e, _ := NewEgress(EgressConfig{Queues: 2, HQ: -1, Capacity: 4})
	e.Pause(0, 0, 100)
	e.Pause(0, 50, 200) // renewed: one pause
	e.Resume(0, 150)
	e.Pause(0, 300, 0)
	e.Resume(0, 340)
	if s := e.Stats(0); s.MaxPauseNs != 150 || s.PausedNs != 190 {
		t.Fatalf("max %d total %d, want 150 and 190", s.MaxPauseNs, s.PausedNs)
	}
	e.Pause(0, 400, 0)
	e.Eligible(700)
	if s := e.Stats(0); s.MaxPauseNs != 300 {
		t.Fatalf("ongoing pause: max %d, want 300", s.MaxPauseNs)
	}
}
