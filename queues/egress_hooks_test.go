package queues

import (
	"math/rand/v2"
	"testing"
)

type event struct {
	deq    bool
	q      int
	p      Packet
	qbytes int // QueueBytes(q) when the hook ran
}

type recorder struct {
	e      *Egress
	events []event
}

func (r *recorder) Enqueued(q int, p Packet) { r.add(false, q, p) }

func (r *recorder) Dequeued(q int, p Packet) { r.add(true, q, p) }

func (r *recorder) add(deq bool, q int, p Packet) {
	b := 0
	if r.e != nil {
		b = r.e.QueueBytes(q)
	}
	r.events = append(r.events, event{deq, q, p, b})
}

// Hooks run once per packet, in order, with the packet's queue, after the
// queue has changed.
func TestEgressHooks(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 4, HQ: 3, Capacity: 4})
	h := &recorder{e: e}
	e.SetHooks(h)
	r := rand.New(rand.NewPCG(9, 9))
	var want []event
	for i := range 2000 {
		if r.IntN(2) == 0 {
			q := r.IntN(4)
			p := Packet{Addr: uint64(i), Len: mixedSize(r), Meta: uint64(q)}
			if ok, _ := e.Enqueue(q, p, int64(i)); ok {
				want = append(want, event{false, q, p, e.QueueBytes(q)})
			}
		} else if p, q, ok := e.Dequeue(int64(i)); ok {
			want = append(want, event{true, q, p, e.QueueBytes(q)})
			if p.Meta != uint64(q) {
				t.Fatalf("packet of queue %d dequeued from %d", p.Meta, q)
			}
		}
	}
	if len(h.events) != len(want) {
		t.Fatalf("%d hook calls for %d packets moved", len(h.events), len(want))
	}
	for i := range want {
		if h.events[i] != want[i] {
			t.Fatalf("call %d: %+v, want %+v", i, h.events[i], want[i])
		}
	}
	e.SetHooks(nil)
	e.Enqueue(0, Packet{Len: 1}, 0)
	e.Dequeue(0)
	if len(h.events) != len(want) {
		t.Fatal("hooks called after SetHooks(nil)")
	}
}

// flowControl pauses a queue when it holds more than xoff bytes and
// resumes it at xon or less, from the hooks, as PortFC does on a switch.
type flowControl struct {
	e         *Egress
	now       *int64
	xoff, xon int
}

func (f *flowControl) Enqueued(q int, p Packet) {
	if f.e.QueueBytes(q) > f.xoff {
		f.e.Pause(q, *f.now, 0)
	}
}

func (f *flowControl) Dequeued(q int, p Packet) {
	if f.e.QueueBytes(q) <= f.xon {
		f.e.Resume(q, *f.now)
	}
	// A dequeue may also pause the queue it came from.
	if p.Meta == 1 {
		f.e.Pause(q, *f.now, *f.now+5)
	}
}

// Hooks that pause and resume queues never get a paused queue served.
func TestEgressHooksPause(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 4, HQ: -1, Capacity: 64, Quantum: []int{3000, 500, 1500, 64}})
	var now int64
	e.SetHooks(&flowControl{e: e, now: &now, xoff: 20_000, xon: 10_000})
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 100_000 {
		now = int64(i)
		if r.IntN(3) != 0 {
			e.Enqueue(r.IntN(4), Packet{Len: mixedSize(r), Meta: uint64(r.IntN(20))}, now)
			continue
		}
		e.setNow(now) // lift the pauses Dequeue would lift
		paused := make([]bool, 4)
		for q := range paused {
			paused[q] = e.Paused(q)
		}
		if _, q, ok := e.Dequeue(now); ok && paused[q] {
			t.Fatalf("step %d: paused queue %d served", i, q)
		}
	}
	for q := range 4 {
		if s := e.Stats(q); s.PausedNs == 0 || s.DeqPackets == 0 {
			t.Errorf("queue %d: paused %d ns, sent %d packets: the test did not exercise it", q, s.PausedNs, s.DeqPackets)
		}
	}
}
