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

// ecnBucket is the ECNHist bucket of a queue of qbytes by the documented
// rule: the number of edges at or below it.
func ecnBucket(h ECNHist, qbytes int) int {
	b := 0
	for _, edge := range h.Edges {
		if edge <= qbytes {
			b++
		}
	}
	return b
}

// The histogram's edges split [kmin, kmax) evenly to the byte, and a
// decision lands in the bucket the edges say, at every edge and either
// side of it.
func TestEgressECNHistEdges(t *testing.T) {
	for _, c := range []ECNConfig{
		{KminBytes: 10_000, KmaxBytes: 50_000, Pmax: 0.2},
		{KminBytes: 1000, KmaxBytes: 1237, Pmax: 1}, // not a multiple of 10 wide
		{KminBytes: 1000, KmaxBytes: 1005, Pmax: 1}, // narrower than 10 buckets
		{KminBytes: 20_000, KmaxBytes: 20_000, Pmax: 1},
		{KminBytes: 0, KmaxBytes: 3000, Pmax: 0.5},
	} {
		t.Run(fmt.Sprintf("%d-%d", c.KminBytes, c.KmaxBytes), func(t *testing.T) {
			e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 4, ECN: c})
			h, ok := e.ECNHist()
			if !ok {
				t.Fatal("marking on, no histogram")
			}
			w := c.KmaxBytes - c.KminBytes
			if h.Edges[0] != c.KminBytes || h.Edges[ECNMidBuckets] != c.KmaxBytes {
				t.Fatalf("edges %v, want %d to %d", h.Edges, c.KminBytes, c.KmaxBytes)
			}
			for i := 1; i <= ECNMidBuckets; i++ {
				if d := h.Edges[i] - h.Edges[i-1]; d < w/ECNMidBuckets || d > w/ECNMidBuckets+1 {
					t.Fatalf("edges %v: bucket %d is %d bytes wide of %d", h.Edges, i, d, w)
				}
			}
			lens := []int{0, c.KmaxBytes + 1000}
			for _, edge := range h.Edges {
				lens = append(lens, max(edge-1, 0), edge, edge+1)
			}
			if w < 2000 {
				for l := range c.KmaxBytes + 3 {
					lens = append(lens, l)
				}
			}
			for _, l := range lens {
				// A packet of l bytes makes the queue l long (its own
				// decision is at 0 bytes); the next is decided at l.
				if l > 0 {
					e.Enqueue(0, Packet{Len: uint32(l)}, 0)
				}
				before, _ := e.ECNHist()
				e.Enqueue(0, Packet{Len: 100}, 0)
				after, _ := e.ECNHist()
				var got, want [ECNBuckets]uint64
				for b := range got {
					got[b] = after.Decided[b] - before.Decided[b]
				}
				want[ecnBucket(h, l)] = 1
				if got != want {
					t.Fatalf("a decision at %d bytes counted in buckets %v, want %v (edges %v)", l, got, want, h.Edges)
				}
				for e.Len() > 0 {
					e.Dequeue(0)
				}
			}
		})
	}
}

// The histogram counts every decision in the bucket of its own queue's
// length, nothing below kmin marked and everything at or above kmax, and
// each middle bucket's marked share within five standard deviations of
// RED's probability at the bucket's middle.
func TestEgressECNHistRED(t *testing.T) {
	const (
		kmin = 10_000
		kmax = 20_000
		pmax = 0.2
		top  = 25_000 // each queue grows to this before it drains
		reps = 2000
	)
	ecn := ECNConfig{KminBytes: kmin, KmaxBytes: kmax, Pmax: pmax}
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 512, ECN: ecn, Seed: 3})
	h0, _ := e.ECNHist()
	var decided, marked [ECNBuckets]uint64 // the test's own tally
	enqueue := func(q int, n uint32) {
		before := e.QueueBytes(q)
		ok, mark := e.Enqueue(q, Packet{Len: n}, 0)
		if !ok {
			t.Fatalf("queue %d full", q)
		}
		b := ecnBucket(h0, before)
		decided[b]++
		marked[b] += b2u(mark)
	}
	for range reps {
		// A first packet of 50 bytes, then 100: the lengths decided on
		// in a middle bucket (1000 bytes wide) are its low edge + 50,
		// 150, ..., 950, whose mean is its middle, and RED's
		// probability is linear in between, so the expected share is
		// RED's at the middle. Queue 1 grows while queue 0 drains: each
		// is bucketed by its own length, not the egress's.
		for _, q := range []int{0, 1} {
			enqueue(q, 50)
			for e.QueueBytes(q) < top {
				enqueue(q, 100)
				if q == 1 && e.QueueLen(0) > 0 {
					e.Discard(0)
				}
				e.Enqueue(2, Packet{Len: 100}, 0) // the HQ: never decided
				e.Discard(2)
			}
		}
		for e.Len() > 0 {
			e.Dequeue(0)
		}
	}
	h, _ := e.ECNHist()
	if h.Decided != decided || h.Marked != marked || h.Final != marked {
		t.Fatalf("histogram\n decided %v\n marked  %v\n final   %v\nwant (Enqueue's decisions by queue length)\n decided %v\n marked  %v",
			h.Decided, h.Marked, h.Final, decided, marked)
	}
	var total uint64
	for _, n := range h.Decided {
		total += n
	}
	if want := uint64(reps * 2 * 251); total != want { // at 0, 50, 150, ..., 24_950 bytes
		t.Fatalf("%d decisions, want %d", total, want)
	}
	if h.Decided[0] == 0 || h.Marked[0] != 0 {
		t.Errorf("below kmin: %d of %d marked", h.Marked[0], h.Decided[0])
	}
	if last := ECNBuckets - 1; h.Decided[last] == 0 || h.Marked[last] != h.Decided[last] {
		t.Errorf("at or above kmax: %d of %d marked", h.Marked[last], h.Decided[last])
	}
	for b := 1; b <= ECNMidBuckets; b++ {
		n := float64(h.Decided[b])
		mid := float64(h.Edges[b-1]+h.Edges[b]) / 2
		p := pmax * (mid - kmin) / (kmax - kmin)
		sd := math.Sqrt(n * p * (1 - p))
		if got := float64(h.Marked[b]); n == 0 || math.Abs(got-n*p) > 5*sd {
			t.Errorf("bucket %d [%d, %d): %v of %v marked (%.4f), want %.4f ± %.4f",
				b, h.Edges[b-1], h.Edges[b], got, n, got/n, p, 5*sd/n)
		}
	}
}

// With a Marker hook, Marked counts RED's decisions and Final the hook's.
func TestEgressECNHistMarker(t *testing.T) {
	ecn := ECNConfig{KminBytes: 1000, KmaxBytes: 1000, Pmax: 1} // a step at 1000 B
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 256, ECN: ecn})
	e.SetHooks(&markerHooks{}) // never marks queue 0; queue 1 where RED would not
	for _, q := range []int{0, 0, 1, 1, 2, 2} {
		e.Enqueue(q, Packet{Len: 1000}, 0)
	}
	h, _ := e.ECNHist()
	last := ECNBuckets - 1
	var decided, marked, final [ECNBuckets]uint64
	decided[0], decided[last] = 2, 2 // at 0 and 1000 bytes, twice; the HQ never
	marked[last] = 2
	final[0] = 1
	if h.Decided != decided || h.Marked != marked || h.Final != final {
		t.Errorf("decided %v marked %v final %v, want %v %v %v", h.Decided, h.Marked, h.Final, decided, marked, final)
	}
}

// With marking off there is no histogram and nothing is counted.
func TestEgressECNHistOff(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 256})
	for range 100 {
		e.Enqueue(0, Packet{Len: 1000}, 0)
	}
	if h, ok := e.ECNHist(); ok || h != (ECNHist{}) {
		t.Errorf("marking off: histogram %+v, ok %v", h, ok)
	}
}

// Marking at dequeue decides on the queue a packet leaves behind, never
// at enqueue, never for the HQ, and counts each decision in the ECNHist
// by that length.
func TestEgressECNAtDequeue(t *testing.T) {
	const k = 20_000
	e, err := NewEgress(EgressConfig{Queues: 2, HQ: 1, Capacity: 64, ECN: ECNConfig{KminBytes: k, KmaxBytes: k, Pmax: 1, AtDequeue: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !e.MarksAtDequeue() {
		t.Fatal("MarksAtDequeue false")
	}
	for i := range 40 {
		if _, mark := e.Enqueue(0, Packet{Len: 1000}, 0); mark {
			t.Fatalf("packet %d marked at enqueue", i)
		}
	}
	if _, mark := e.Enqueue(1, Packet{Len: 1000}, 0); mark {
		t.Fatal("HQ packet marked at enqueue")
	}
	if p, q, ok := e.Dequeue(0); !ok || q != 1 || e.MarkLeaving(q) {
		t.Fatalf("HQ packet (%v, %d, %v): marked, or not first", p, q, ok)
	}
	marks := 0
	for i := range 40 {
		_, q, ok := e.Dequeue(0)
		if !ok || q != 0 {
			t.Fatalf("dequeue %d: queue %d, ok %v", i, q, ok)
		}
		left := e.QueueBytes(0)
		if mark := e.MarkLeaving(q); mark != (left >= k) {
			t.Fatalf("packet %d leaving %d bytes: mark %v", i, left, mark)
		}
		if left >= k {
			marks++
		}
	}
	h, _ := e.ECNHist()
	if got := h.Decided[ECNBuckets-1]; got != uint64(marks) || h.Final[ECNBuckets-1] != uint64(marks) {
		t.Fatalf("ECNHist top bucket: decided %d, final %d, want %d", got, h.Final[ECNBuckets-1], marks)
	}
	var decided uint64
	for _, n := range h.Decided {
		decided += n
	}
	if decided != 40 {
		t.Fatalf("ECNHist decided %d, want 40 (one per data packet leaving)", decided)
	}

	enq, err := NewEgress(EgressConfig{Queues: 1, HQ: -1, Capacity: 64, ECN: ECNConfig{KminBytes: k, KmaxBytes: k, Pmax: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		enq.Enqueue(0, Packet{Len: 1000}, 0)
	}
	enq.Dequeue(0)
	if enq.MarksAtDequeue() || enq.MarkLeaving(0) {
		t.Fatal("an egress marking at enqueue decided at dequeue")
	}
}
