package signaling

import (
	"testing"

	"github.com/bcfab/bcfab/queues"
)

const sticky = 500_000 // 2 one-hop RTTs of 250 us

// k < Q concurrent flows — each with packets in the node — get k
// distinct queues.
func TestFlowTableDistinctQueues(t *testing.T) {
	for _, k := range []int{1, 5, 16, 31} {
		ft := NewFlowTable(2, 31, 100*32, sticky, uint64(k))
		used := map[int]int{}
		for f := range k {
			entry, q := ft.Assign(1, uint64(f*7919), int64(f))
			ft.Enqueued(1, entry, int64(f))
			if g, ok := used[q]; ok {
				t.Fatalf("k=%d: flows %d and %d share queue %d", k, g, f, q)
			}
			used[q] = f
		}
		if ft.Active(1) != k || ft.Active(0) != 0 {
			t.Errorf("k=%d: %d active queues at port 1, %d at port 0", k, ft.Active(1), ft.Active(0))
		}
	}
}

// Hashed assignment (stochastic fair queueing) fixes a flow's queue by
// its hash: the same flow always gets the same queue, idle or not, and
// two flows whose hashes agree modulo the queues share one even while
// others are empty — which the dynamic assignment never lets happen.
func TestFlowTableHashed(t *testing.T) {
	ft := NewFlowTable(1, 4, 400, sticky, 1)
	ft.hashed = true
	a, qa := ft.Assign(0, 1, 0)
	ft.Enqueued(0, a, 0)
	if qa != 1 {
		t.Fatalf("hash 1 took queue %d, want 1 (entry 1 mod 4 queues)", qa)
	}
	b, qb := ft.Assign(0, 5, 0) // entry 5: queue 1 as well
	ft.Enqueued(0, b, 0)
	if qb != qa {
		t.Errorf("hashes 1 and 5 in queues %d and %d, want both in %d", qa, qb, qa)
	}
	if ft.Active(0) != 1 {
		t.Errorf("%d active queues, want 1: the flows share", ft.Active(0))
	}
	ft.Dequeued(0, a, 1)
	ft.Dequeued(0, b, 1)
	if _, q := ft.Assign(0, 1, 100*sticky); q != qa {
		t.Errorf("idle flow moved from queue %d to %d", qa, q)
	}
	if ft.Active(0) != 0 {
		t.Errorf("%d active queues after every packet left", ft.Active(0))
	}
}

// A flow keeps its queue while it has packets in the node or left one
// less than the sticky time ago, even if that queue is busy with others;
// after that it moves to an empty queue.
func TestFlowTableSticky(t *testing.T) {
	ft := NewFlowTable(1, 4, 400, sticky, 1)
	a, qa := ft.Assign(0, 1, 0)
	ft.Enqueued(0, a, 0)
	if _, q := ft.Assign(0, 1, 10*sticky); q != qa {
		t.Fatal("a flow with packets in the node changed queues")
	}
	ft.Dequeued(0, a, 100)
	t0 := int64(100)
	// Other flows until every queue is busy, then free one that is not
	// a's: the only empty queue.
	type pk struct{ entry, q int }
	var others []pk
	for h := uint64(2); ft.Active(0) < 4; h++ {
		e, q := ft.Assign(0, h, t0)
		ft.Enqueued(0, e, t0)
		others = append(others, pk{e, q})
	}
	empty := -1
	for _, o := range others {
		if o.q != qa {
			for ft.load[0][o.q] > 0 {
				for _, o2 := range others {
					if o2.q == o.q {
						ft.Dequeued(0, o2.entry, t0)
					}
				}
			}
			empty = o.q
			break
		}
	}
	if empty < 0 || ft.Active(0) != 3 {
		t.Fatalf("setup: empty queue %d, %d active", empty, ft.Active(0))
	}
	now := t0 + sticky/2
	if _, q := ft.Assign(0, 1, now); q != qa {
		t.Fatalf("within the sticky time: queue %d, want %d", q, qa)
	}
	if _, q := ft.Assign(0, 1, now+sticky+1); q != empty {
		t.Fatalf("after the sticky time: queue %d, want the empty %d", q, empty)
	}
	// With no queue empty a flow still gets one.
	for h := uint64(100); ft.Active(0) < 4; h++ {
		e, _ := ft.Assign(0, h, now)
		ft.Enqueued(0, e, now)
	}
	if _, q := ft.Assign(0, 99999, now); q < 0 || q >= 4 {
		t.Fatalf("no empty queue: got %d", q)
	}
}

func bfcEnv(t *testing.T) *fakeEnv {
	f := &fakeEnv{}
	for range 2 {
		eg, err := queues.NewEgress(queues.EgressConfig{Queues: 8, HQ: 7, Capacity: 64})
		if err != nil {
			t.Fatal(err)
		}
		f.eg = append(f.eg, eg)
	}
	return f
}

func bfcSent(t *testing.T, env *fakeEnv) []Signal {
	t.Helper()
	out := env.take(t)
	for _, s := range out {
		if s.Scheme() != SchemeBFC {
			t.Fatalf("scheme %d", s.Scheme())
		}
	}
	return out
}

var bfcPorts = []BFCPort{{Own: macA, Peer: macB}, {Own: macB, Peer: macA}}

// Pause goes out on 0 -> 1 of a (port, upstream queue) counter only, and
// Resume on 1 -> 0 only; frames below the threshold do not count.
func TestBackpressureCounters(t *testing.T) {
	env := bfcEnv(t)
	b := NewBackpressure(env, bfcPorts, 8, 1_000_000, 0)
	if b.Arrived(0, 3, 1000, 1000) || len(env.sent) != 0 {
		t.Fatal("a frame at the threshold counted")
	}
	for i := range 3 {
		if !b.Arrived(0, 3, 2000+i, 1000) {
			t.Fatal("a frame above the threshold did not count")
		}
	}
	s := bfcSent(t, env)
	if len(s) != 1 || s[0].Type() != TypePause || s[0].UpstreamQ() != 3 || env.sent != nil {
		t.Fatalf("after 3 counted frames: %v", s)
	}
	b.Arrived(1, 3, 2000, 1000) // another port's counter
	b.Arrived(0, 4, 2000, 1000) // another upstream queue
	if s := bfcSent(t, env); len(s) != 2 || b.Held(0) != 1<<3|1<<4 || b.Held(1) != 1<<3 {
		t.Fatalf("independent counters: %d frames, held %b %b", len(s), b.Held(0), b.Held(1))
	}
	b.Left(0, 3)
	b.Left(0, 3)
	if len(env.sent) != 0 {
		t.Fatal("resume before the counter reached 0")
	}
	b.Left(0, 3)
	s = bfcSent(t, env)
	if len(s) != 1 || s[0].Type() != TypeResume || s[0].UpstreamQ() != 3 || b.Held(0) != 1<<4 {
		t.Fatalf("at 1 -> 0: %v, held %b", s, b.Held(0))
	}
	if c := b.C[0]; c.TxPause != 2 || c.TxResume != 1 {
		t.Errorf("counters %+v", c)
	}
	if Threshold(31250, 4) != 7812 || Threshold(31250, 0) != 31250 {
		t.Error("Th = one-hop BDP / active queues")
	}
}

// The periodic bitmap repairs a lost Resume: the upstream queue paused by
// the Pause is resumed by the next bitmap, which no longer has it.
func TestBackpressureBitmapRepairsLostResume(t *testing.T) {
	down := bfcEnv(t) // the congested node
	up := bfcEnv(t)   // its upstream neighbour, on port 0 of each
	bd := NewBackpressure(down, bfcPorts, 8, 1_000_000, 0)
	bu := NewBackpressure(up, bfcPorts, 8, 1_000_000, 0)
	up.eg[0].Enqueue(5, queues.Packet{Len: 100}, 0)
	deliver := func() int {
		n := 0
		for _, s := range bfcSent(t, down) {
			bu.OnSignal(0, s)
			n++
		}
		return n
	}
	bd.Arrived(0, 5, 5000, 1000)
	deliver()
	if !up.eg[0].Paused(5) {
		t.Fatal("Pause did not pause upstream queue 5")
	}
	bd.Left(0, 5)
	bfcSent(t, down) // the Resume is lost
	if !up.eg[0].Paused(5) {
		t.Fatal("setup: queue resumed without the Resume")
	}
	down.now = bd.NextTick()
	up.now = down.now
	bd.Tick(down.now)
	if n := deliver(); n != 1 || up.eg[0].Paused(5) {
		t.Fatalf("bitmap (%d frames) did not resume queue 5", n)
	}
	for range ResumeRepeats - 1 { // the bitmaps still owed after the Resume
		down.now = bd.NextTick()
		bd.Tick(down.now)
		if n := deliver(); n != 1 {
			t.Fatalf("%d bitmaps after the Resume", n)
		}
	}
	if bd.NextTick() != -1 {
		t.Error("bitmaps keep going with nothing held")
	}
	// A held queue's bitmap keeps the pause alive past its hold.
	bd.Arrived(0, 2, 5000, 1000)
	deliver()
	for range 5 {
		down.now = bd.NextTick()
		up.now = down.now
		bd.Tick(down.now)
		deliver()
	}
	up.eg[0].Enqueue(2, queues.Packet{Len: 100}, up.now)
	if up.eg[0].Eligible(up.now); !up.eg[0].Paused(2) {
		t.Error("queue 2 resumed while held: bitmaps did not renew the pause")
	}
	if bu.C[0].RxState < 5 || bu.C[0].RxPause != 2 {
		t.Errorf("receiver counters %+v", bu.C[0])
	}
}

func TestBFCZeroAllocs(t *testing.T) {
	ft := NewFlowTable(2, 31, 3200, sticky, 1)
	env := bfcEnv(t)
	b := NewBackpressure(&countEnv{env}, bfcPorts, 8, 1_000_000, 0)
	var now int64
	n := testing.AllocsPerRun(1000, func() {
		now++
		e, q := ft.Assign(1, uint64(now), now)
		ft.Enqueued(1, e, now)
		if b.Arrived(0, q%8, 5000, 1000) {
			b.Left(0, q%8)
		}
		ft.Dequeued(1, e, now)
	})
	if n != 0 {
		t.Errorf("%v allocations per frame, want 0", n)
	}
}

// The node glue: Classify marks a frame to count only when its queue is
// over Th and it came from a neighbour's data queue; the egress hooks then
// pause that upstream queue on enqueue and resume it when the last
// counted frame leaves. Owner bits of the meta are left alone.
func TestBFCNodeClassify(t *testing.T) {
	env := bfcEnv(t)
	cfg := BFCConfig{Queues: 8, TableSize: 800, Sticky: sticky, Refresh: 1_000_000, BDP: 3000}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	b := NewBFC(env, bfcPorts, cfg)
	for p := range env.eg {
		env.eg[p].SetHooks(b.Hooks(p))
	}
	const owner = uint64(7) << MetaOwnerShift
	enqueue := func(in int, vid uint16) (int, uint64) {
		q, meta := b.Classify(1, 42, in, vid, env.now)
		if ok, _ := env.eg[1].Enqueue(q, queues.Packet{Len: 1000, Meta: meta | owner}, env.now); !ok {
			t.Fatal("enqueue refused")
		}
		return q, meta
	}
	var q0 int
	for i := range 4 { // 0, 1000, 2000, 3000 bytes queued before: none over Th = 3000
		q, meta := enqueue(0, VID(2))
		if i == 0 {
			q0 = q
		}
		if q != q0 || meta&bfcCounted != 0 {
			t.Fatalf("frame %d: queue %d (first %d), counted %v", i, q, q0, meta&bfcCounted != 0)
		}
	}
	if len(env.sent) != 0 {
		t.Fatal("a signal before the queue passed Th")
	}
	for _, c := range []struct {
		in  int
		vid uint16
	}{{-1, 0}, {0, 0}, {0, VID(b.HQ())}} {
		if _, meta := enqueue(c.in, c.vid); meta&bfcCounted != 0 {
			t.Errorf("in %d vid %d counted: own, untagged and HQ frames are never paused", c.in, c.vid)
		}
	}
	if _, meta := enqueue(0, VID(2)); meta&bfcCounted == 0 {
		t.Fatal("a frame joining a queue over Th did not count")
	}
	enqueue(0, VID(2))
	s := bfcSent(t, env)
	if len(s) != 1 || s[0].Type() != TypePause || s[0].UpstreamQ() != 2 || b.B.Held(0) != 1<<2 {
		t.Fatalf("after two counted frames: %d signals, held %b", len(s), b.B.Held(0))
	}
	for env.eg[1].Len() > 0 {
		env.now += 1000
		if _, _, ok := env.eg[1].Dequeue(env.now); !ok {
			t.Fatal("dequeue failed")
		}
	}
	s = bfcSent(t, env)
	if len(s) != 1 || s[0].Type() != TypeResume || s[0].UpstreamQ() != 2 || b.B.Held(0) != 0 {
		t.Fatalf("after draining: %d signals, held %b", len(s), b.B.Held(0))
	}
	if b.T.Active(1) != 0 {
		t.Errorf("%d queues still active in the flow table", b.T.Active(1))
	}
	for _, bad := range []BFCConfig{{Queues: 1, TableSize: 1, Refresh: 1, BDP: 1}, {Queues: 65, TableSize: 1, Refresh: 1, BDP: 1},
		{Queues: 8, TableSize: MaxBFCTable + 1, Refresh: 1, BDP: 1}, {Queues: 8, TableSize: 8, BDP: 1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

// Classifying, queueing and dequeueing a frame under BFC allocates
// nothing, pauses and resumes included.
func TestBFCNodeAllocs(t *testing.T) {
	env := bfcEnv(t)
	env.quiet = true
	b := NewBFC(env, bfcPorts, BFCConfig{Queues: 8, TableSize: 800, Sticky: sticky, Refresh: 1_000_000, BDP: 1})
	for p := range env.eg {
		env.eg[p].SetHooks(b.Hooks(p))
	}
	h := uint32(0)
	allocs := testing.AllocsPerRun(1000, func() {
		h++
		for range 3 {
			q, meta := b.Classify(1, h%5, 0, VID(int(h%7)), env.now)
			env.eg[1].Enqueue(q, queues.Packet{Len: 1000, Meta: meta}, env.now)
		}
		for env.eg[1].Len() > 0 {
			env.now += 1000
			env.eg[1].Dequeue(env.now)
		}
		b.Tick(env.now)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
	if b.B.C[0].TxPause == 0 {
		t.Error("the run never paused: it did not exercise the signal path")
	}
}

// Hashed against dynamic, over the same six flows: hashed, each keeps
// the queue its table entry names (hash mod entries, mod queues) however
// long it was idle, and two may share one; dynamically, no two of six
// share one of eight queues.
func TestFlowTableHashedAgainstDynamic(t *testing.T) {
	const queues = 8
	ft := NewFlowTable(1, queues, 100*queues, sticky, 1)
	ft.hashed = true
	first := map[uint64]int{}
	shared := false
	byQueue := map[int]bool{}
	for f := uint64(1); f <= 6; f++ {
		h := f * 0x9E3779B97F4A7C15
		e, q := ft.Assign(0, h, 0)
		ft.Enqueued(0, e, 0)
		if want := int(h % (100 * queues) % queues); q != want {
			t.Errorf("flow %d: queue %d, want %d (its hash's)", f, q, want)
		}
		shared = shared || byQueue[q]
		byQueue[q] = true
		first[h] = q
	}
	for h, q := range first {
		if _, q2 := ft.Assign(0, h, 100*sticky); q2 != q {
			t.Errorf("hash %x: queue %d, then %d after an idle time", h, q, q2)
		}
	}
	dyn := NewFlowTable(1, queues, 100*queues, sticky, 1)
	used := map[int]bool{}
	for f := uint64(1); f <= 6; f++ {
		e, q := dyn.Assign(0, f*0x9E3779B97F4A7C15, 0)
		dyn.Enqueued(0, e, 0)
		if used[q] {
			t.Errorf("dynamic assignment put two of six flows in queue %d of %d", q, queues)
		}
		used[q] = true
	}
	t.Logf("hashed: six flows in %d queues of %d (shared: %v)", len(byQueue), queues, shared)
}
