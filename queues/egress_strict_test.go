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
		e.Enqueue(q, Packet{Len: 100, Meta: uint32(q)}, 0)
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
