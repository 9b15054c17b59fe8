package queues

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

func TestEgressECN(t *testing.T) {
	const (
		kmin = 10_000
		kmax = 50_000
		pmax = 0.2
		size = 1000
	)
	ecn := ECNConfig{KminBytes: kmin, KmaxBytes: kmax, Pmax: pmax}
	// fraction enqueues packets into queue q holding qbytes and reports
	// the fraction marked.
	fraction := func(e *Egress, q, qbytes, trials int) float64 {
		for e.QueueBytes(q) < qbytes {
			e.Enqueue(q, Packet{Len: size}, 0)
		}
		marks := 0
		for range trials {
			ok, mark := e.Enqueue(q, Packet{Len: size}, 0)
			if !ok {
				panic("ring full")
			}
			if mark {
				marks++
			}
			e.Dequeue(0)
		}
		return float64(marks) / float64(trials)
	}
	for _, tt := range []struct {
		qbytes int
		want   float64
	}{
		{0, 0}, {5000, 0}, {9000, 0}, {kmin, 0},
		{20_000, 0.05}, {30_000, 0.1}, {40_000, 0.15}, {49_000, 0.195},
		{kmax, 1}, {60_000, 1}, {200_000, 1},
	} {
		t.Run(fmt.Sprintf("%06d bytes", tt.qbytes), func(t *testing.T) {
			e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 256, ECN: ecn, Seed: 42})
			got := fraction(e, 0, tt.qbytes, 200_000)
			switch tt.want {
			case 0, 1:
				if got != tt.want {
					t.Fatalf("marked %.5f, want %v", got, tt.want)
				}
			default:
				if math.Abs(got-tt.want)/tt.want > 0.03 {
					t.Fatalf("marked %.5f, want %.5f", got, tt.want)
				}
			}
		})
	}
	t.Run("never the HQ", func(t *testing.T) {
		e := newEgress(t, EgressConfig{Queues: 2, HQ: 1, Capacity: 256, ECN: ecn})
		if got := fraction(e, 1, 100_000, 1000); got != 0 {
			t.Fatalf("HQ marked %.3f", got)
		}
	})
	t.Run("marking off", func(t *testing.T) {
		e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 256})
		if got := fraction(e, 0, 100_000, 1000); got != 0 {
			t.Fatalf("marked %.3f", got)
		}
	})
	t.Run("kmin == kmax is a step", func(t *testing.T) {
		step := ECNConfig{KminBytes: 20_000, KmaxBytes: 20_000, Pmax: 0.5}
		e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 256, ECN: step})
		if got := fraction(e, 0, 19_000, 1000); got != 0 {
			t.Fatalf("below: marked %.3f", got)
		}
		if got := fraction(e, 0, 20_000, 1000); got != 1 {
			t.Fatalf("at: marked %.3f", got)
		}
	})
	t.Run("deterministic for a seed", func(t *testing.T) {
		marks := func(seed uint64) []bool {
			e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 256, ECN: ecn, Seed: seed})
			for e.QueueBytes(0) < 30_000 {
				e.Enqueue(0, Packet{Len: size}, 0)
			}
			m := make([]bool, 10_000)
			for i := range m {
				_, m[i] = e.Enqueue(0, Packet{Len: size}, 0)
				e.Dequeue(0)
			}
			return m
		}
		same := func(a, b []bool) bool {
			for i := range a {
				if a[i] != b[i] {
					return false
				}
			}
			return true
		}
		if !same(marks(7), marks(7)) || !same(marks(0), marks(0)) {
			t.Fatal("same seed, different marks")
		}
		if same(marks(7), marks(8)) || same(marks(0), marks(7)) {
			t.Fatal("different seeds, same marks")
		}
	})
}

// markerHooks marks what queue 1 would not, and never queue 0, and
// records what it was asked.
type markerHooks struct {
	asked []int // qbytes per call
	reds  []bool
}

func (*markerHooks) Enqueued(int, Packet) {}

func (*markerHooks) Dequeued(int, Packet) {}

func (m *markerHooks) Mark(q, qbytes int, red bool) bool {
	m.asked = append(m.asked, qbytes)
	m.reds = append(m.reds, red)
	return q == 1 && !red
}

// Hooks that implement Marker decide the marks: asked with the queue's
// length before the packet and RED's decision, never for the HQ, and not
// at all with marking off.
func TestEgressMarker(t *testing.T) {
	ecn := ECNConfig{KminBytes: 1000, KmaxBytes: 1000, Pmax: 1} // a step at 1000 B
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 256, ECN: ecn})
	m := &markerHooks{}
	e.SetHooks(m)
	var got []bool
	for _, q := range []int{0, 0, 1, 1, 2} {
		_, mark := e.Enqueue(q, Packet{Len: 1000}, 0)
		got = append(got, mark)
	}
	if want := []bool{false, false, true, false, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("marks %v, want %v", got, want)
	}
	if want := []int{0, 1000, 0, 1000}; !reflect.DeepEqual(m.asked, want) {
		t.Errorf("asked with %v bytes, want %v (the HQ never)", m.asked, want)
	}
	if want := []bool{false, true, false, true}; !reflect.DeepEqual(m.reds, want) {
		t.Errorf("RED said %v, want %v", m.reds, want)
	}
	off := newEgress(t, EgressConfig{Queues: 2, HQ: 1, Capacity: 256})
	m2 := &markerHooks{}
	off.SetHooks(m2)
	if _, mark := off.Enqueue(1, Packet{Len: 1000}, 0); mark || len(m2.asked) != 0 {
		t.Errorf("marking off: mark %v, asked %d times", mark, len(m2.asked))
	}
	e.SetHooks(nil)
	if _, mark := e.Enqueue(1, Packet{Len: 1000}, 0); !mark {
		t.Error("hooks removed: RED's mark not kept")
	}
}

// DCTCP's marking: one threshold K (K_min = K_max, P_max 1) marks every
// packet that joins a queue of K bytes or more, and none below.
func TestEgressECNSingleThreshold(t *testing.T) {
	const k = 20_000
	e, err := NewEgress(EgressConfig{Queues: 1, HQ: -1, Capacity: 64, ECN: ECNConfig{KminBytes: k, KmaxBytes: k, Pmax: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		before := e.QueueBytes(0)
		_, mark := e.Enqueue(0, Packet{Len: 1000}, 0)
		if mark != (before >= k) {
			t.Fatalf("packet %d joining %d bytes: mark %v", i, before, mark)
		}
	}
}
