package signaling

import (
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
)

// The congestion isolation tests run two nodes on a fake clock: up, whose
// port 1 is cabled to root's port 0. Flows cross up from its port 0 to
// its port 1, then root from its port 0 to its port 2, root's port 2
// being the congested egress. Queues are by priority (PFC's layout).

const (
	iciFrame     = 1000
	iciDetect    = 5000
	iciResidency = 1_000_000
	iciRefresh   = 100_000
)

var (
	flowX = bcube.FiveTuple{Src: [4]byte{198, 18, 0, 1}, Dst: [4]byte{198, 18, 0, 9}, Proto: 17, SPort: 40001, DPort: 4791}
	flowY = bcube.FiveTuple{Src: [4]byte{198, 18, 0, 2}, Dst: [4]byte{198, 18, 0, 9}, Proto: 17, SPort: 40002, DPort: 4791}
	flowZ = bcube.FiveTuple{Src: [4]byte{198, 18, 0, 3}, Dst: [4]byte{198, 18, 0, 9}, Proto: 17, SPort: 40003, DPort: 4791}
	flowV = bcube.FiveTuple{Src: [4]byte{198, 18, 0, 4}, Dst: [4]byte{198, 18, 0, 8}, Proto: 17, SPort: 40004, DPort: 4791}
)

func iciConfig(table int, coordinated bool) ICIConfig {
	return ICIConfig{Table: table, Detect: iciDetect, CQKmin: 20_000, CQKmax: 20_000, Pmax: 0.2,
		Residency: iciResidency, Refresh: iciRefresh, Coordinated: coordinated,
		Normal: PCPData, Congested: 2, Seed: 1}
}

// iciNode is one node's congestion isolation on real egresses marking
// ECN at 10-40 KB.
type iciNode struct {
	env *fakeEnv
	c   *ICI
}

func newICINode(t testing.TB, cfg ICIConfig) *iciNode {
	t.Helper()
	env := &fakeEnv{}
	var ports []ICIPort
	for p := range 3 {
		eg, err := queues.NewEgress(queues.EgressConfig{Queues: 8, HQ: PCPControl, Capacity: 1024,
			ECN: queues.ECNConfig{KminBytes: 10_000, KmaxBytes: 40_000, Pmax: 0.2}})
		if err != nil {
			t.Fatal(err)
		}
		env.eg = append(env.eg, eg)
		ports = append(ports, ICIPort{Own: bcube.SwitchPortMAC(0, 0, p), Peer: bcube.HostPortMAC(p, 0)})
	}
	n := &iciNode{env: env, c: NewICI(env, ports, cfg)}
	for p := range 3 {
		env.eg[p].SetHooks(n.c.Hooks(p))
	}
	return n
}

// send classifies a frame of flow f arriving by in for egress out and
// queues it; it returns its queue and ECN mark.
func (n *iciNode) send(t testing.TB, in, out int, f *bcube.FiveTuple) (q int, mark bool) {
	t.Helper()
	pq, meta := n.c.Classify(out, in, PCPData, f, bcube.FlowHash(f), n.env.now)
	ok, mark := n.env.eg[out].Enqueue(int(pq), queues.Packet{Len: iciFrame, Meta: meta}, n.env.now)
	if !ok {
		t.Fatal("egress full")
	}
	return int(pq), mark
}

// drain sends everything port out holds.
func (n *iciNode) drain(out int) {
	for {
		if _, _, ok := n.env.eg[out].Dequeue(n.env.now); !ok {
			return
		}
	}
}

// tick advances the clock to t and runs the timer if it is due.
func (n *iciNode) tick(t int64) {
	n.env.now = t
	if nt := n.c.NextTick(); nt >= 0 && nt <= t {
		n.c.Tick(t)
	}
}

// congest fills root's port 2 with flow f until its normal queue reaches
// the detection threshold.
func (n *iciNode) congest(t testing.TB, f *bcube.FiveTuple) {
	for n.env.eg[2].QueueBytes(PCPData) < iciDetect {
		if q, _ := n.send(t, 0, 2, f); q != PCPData {
			t.Fatalf("flow queued in %d before the threshold", q)
		}
	}
}

// A flow whose frame finds the normal queue at the detection threshold is
// isolated at that port, as the root: the neighbour it came from is told,
// and its frames go to the congested queue from then on, which is shut
// while the flow's earlier frames are in the normal queue.
func TestICIDetectIsolates(t *testing.T) {
	root := newICINode(t, iciConfig(8, true))
	root.congest(t, &flowX)
	if root.c.Entries(2) != 0 || len(root.env.sent) != 0 {
		t.Fatal("isolated below the threshold")
	}
	eg := root.env.eg[2]
	if q, _ := root.send(t, 0, 2, &flowX); q != 2 {
		t.Errorf("the frame that isolates the flow went to queue %d, want the congested queue 2", q)
	}
	if !root.c.Isolated(2, &flowX) || !eg.Gated(2) {
		t.Errorf("isolated %v, congested queue shut %v: want both while X's frames are in the normal queue", root.c.Isolated(2, &flowX), eg.Gated(2))
	}
	k := root.c.C[2]
	if k.Isolated != 1 || k.Entries != 1 || k.BySignal != 0 {
		t.Errorf("counters %+v", k)
	}
	sigs := root.env.take(t)
	if len(sigs) != 1 {
		t.Fatalf("%d signals, want 1", len(sigs))
	}
	if s := sigs[0]; s.Scheme() != SchemeICI || s.Flow() != flowX || s.Hops() != 0 || s.FlowPCP() != PCPData ||
		!bytesEq(s.Dst(), bcube.HostPortMAC(0, 0)) || !bytesEq(s.Src(), bcube.SwitchPortMAC(0, 0, 0)) {
		t.Errorf("signal %s, want an isolation of flow X from port 0 to its neighbour", Describe(s))
	}
	if root.c.C[0].TxIsolate != 1 {
		t.Errorf("port 0 counted %d signals sent", root.c.C[0].TxIsolate)
	}
	// Another flow meeting the congested port is isolated too, and told
	// to its own neighbour.
	if q, _ := root.send(t, 1, 2, &flowY); q != 2 {
		t.Errorf("flow Y went to queue %d", q)
	}
	if root.c.Entries(2) != 2 || root.c.C[1].TxIsolate != 1 {
		t.Errorf("%d entries, %d signals to Y's neighbour", root.c.Entries(2), root.c.C[1].TxIsolate)
	}
	root.env.sent = nil
	// The port sends X's earlier frames first (the normal queue), then
	// the congested queue's, once no frame of X is left before them.
	var order []int
	for {
		_, q, ok := eg.Dequeue(0)
		if !ok {
			break
		}
		order = append(order, q)
		if q == PCPData && eg.QueueLen(PCPData) > 0 && !eg.Gated(2) {
			t.Fatal("congested queue opened while X still had frames in the normal queue")
		}
	}
	if n := len(order); n < 3 || order[n-1] != 2 || order[n-2] != 2 || order[n-3] != PCPData {
		t.Errorf("queues in the order sent: %v; want the normal queue's, then the congested queue's two", order)
	}
	if eg.Gated(2) {
		t.Error("congested queue still shut, empty")
	}
}

// The upstream neighbour isolates the flow at the port the signal came
// in by, and its frames go to its congested queue from there on.
func TestICIUpstreamIsolates(t *testing.T) {
	root, up := newICINode(t, iciConfig(8, true)), newICINode(t, iciConfig(8, true))
	if q, _ := up.send(t, 0, 1, &flowX); q != PCPData {
		t.Fatalf("before any signal, queue %d", q)
	}
	up.drain(1)
	root.congest(t, &flowX)
	root.send(t, 0, 2, &flowX)
	sigs := root.env.take(t)
	if len(sigs) != 1 {
		t.Fatalf("root sent %d signals", len(sigs))
	}
	if !up.c.OnSignal(1, sigs[0]) {
		t.Fatal("signal not taken")
	}
	if !up.c.Isolated(1, &flowX) {
		t.Fatal("upstream did not isolate the flow")
	}
	if k := up.c.C[1]; k.RxIsolate != 1 || k.BySignal != 1 || k.Isolated != 0 || k.Entries != 1 {
		t.Errorf("upstream counters %+v", k)
	}
	if q, _ := up.send(t, 0, 1, &flowX); q != 2 {
		t.Errorf("upstream queued the isolated flow in %d, want its congested queue 2", q)
	}
	if q, _ := up.send(t, 0, 1, &flowV); q != PCPData {
		t.Errorf("a victim went to queue %d", q)
	}
	if up.c.Isolated(0, &flowX) {
		t.Error("isolated at another port than the one the signal came by")
	}
	// Upstream passes the isolation on while its own congested queue is
	// over the threshold, one hop further from the root.
	for up.env.eg[1].QueueBytes(2) < iciDetect {
		up.send(t, 0, 1, &flowX)
	}
	up.send(t, 0, 1, &flowX)
	sigs = up.env.take(t)
	if len(sigs) != 1 || sigs[0].Hops() != 1 || sigs[0].Flow() != flowX {
		t.Fatalf("upstream sent %d signals (%v), want one with hops 1", len(sigs), sigs)
	}
	// Within a refresh it does not repeat it; after one it does.
	up.send(t, 0, 1, &flowX)
	if len(up.env.sent) != 0 {
		t.Error("repeated within the refresh")
	}
	up.env.now += iciRefresh
	up.send(t, 0, 1, &flowX)
	if len(up.env.take(t)) != 1 {
		t.Error("not repeated after the refresh")
	}
	// Another scheme's frame is not congestion isolation's.
	b := make([]byte, FrameLen)
	PutBFC(b, macA, macB, TypePause, 1, 0, 0, 0)
	if s, _ := ParseSignal(b); up.c.OnSignal(1, s) {
		t.Error("took a BFC frame")
	}
}

// An entry is released once its flow has no frame in the congested queue
// and it has gone Residency without a refresh; not before either.
func TestICIRelease(t *testing.T) {
	root := newICINode(t, iciConfig(8, true))
	root.congest(t, &flowX)
	root.send(t, 0, 2, &flowX)
	root.drain(2)
	root.send(t, 0, 2, &flowX) // in the congested queue, below the threshold: no refresh
	isolatedAt := int64(0)
	root.tick(isolatedAt + iciResidency - 1)
	if root.c.Entries(2) != 1 {
		t.Fatal("released before the residency")
	}
	root.tick(isolatedAt + iciResidency)
	if root.c.Entries(2) != 1 {
		t.Fatal("released with its frame still in the congested queue")
	}
	root.drain(2)
	root.tick(isolatedAt + iciResidency + iciRefresh - 1)
	if root.c.Entries(2) != 1 {
		t.Fatal("released before the next look")
	}
	root.tick(isolatedAt + iciResidency + iciRefresh)
	if root.c.Entries(2) != 0 {
		t.Fatal("not released after drain and residency")
	}
	if k := root.c.C[2]; k.Released != 1 || k.Entries != 0 {
		t.Errorf("counters %+v", k)
	}
	if root.c.NextTick() != -1 {
		t.Errorf("timer still armed at %d with no entry", root.c.NextTick())
	}
	if q, _ := root.send(t, 0, 2, &flowX); q != PCPData {
		t.Errorf("released flow went to queue %d", q)
	}

	// A signal refreshes an upstream entry: it lives Residency past the
	// last one.
	up := newICINode(t, iciConfig(8, true))
	sig := make([]byte, FrameLen)
	PutICI(sig, macA, macB, 1, &flowX, PCPData, 0)
	s, _ := ParseSignal(sig)
	up.c.OnSignal(1, s)
	up.tick(iciResidency / 2)
	up.c.OnSignal(1, s)
	up.tick(iciResidency)
	if up.c.Entries(1) != 1 {
		t.Fatal("released though refreshed")
	}
	up.tick(iciResidency/2 + iciResidency)
	if up.c.Entries(1) != 0 || up.c.C[1].Released != 1 || up.c.C[1].RxIsolate != 2 {
		t.Fatalf("entries %d, counters %+v", up.c.Entries(1), up.c.C[1])
	}
}

// Victims in the normal queue are never marked while the table has room,
// however long the queue; isolated flows are marked on the congested
// queue's own length; a full table hands marking back to DCQCN until an
// entry is released. Detection is set above K_max here, so the normal
// queue passes DCQCN's thresholds before anything is isolated.
func TestICIMarking(t *testing.T) {
	cfg := iciConfig(2, true)
	cfg.Detect = 50_000
	root := newICINode(t, cfg)
	fill := func(n *iciNode) (marks int) {
		for i := 0; n.env.eg[2].QueueBytes(PCPData) < cfg.Detect; i++ {
			f := &flowV
			if i%2 == 0 {
				f = &flowX
			}
			q, mark := n.send(t, 1, 2, f)
			if q != PCPData {
				t.Fatalf("queue %d below the detection threshold", q)
			}
			if mark {
				marks++
			}
		}
		return marks
	}
	if m := fill(root); m != 0 {
		t.Fatalf("%d frames marked in the normal queue up to %d bytes (K_max 40 KB) with the table's room", m, cfg.Detect)
	}
	// Plain CI: DCQCN marks them as it always does.
	ci := newICINode(t, func() ICIConfig { c := cfg; c.Coordinated = false; return c }())
	if m := fill(ci); m == 0 {
		t.Error("plain CI: nothing marked in the normal queue past K_max")
	}

	// X and V meet the threshold and take both entries: their frames go
	// to the congested queue, short, so unmarked.
	for _, f := range []*bcube.FiveTuple{&flowX, &flowV} {
		if q, mark := root.send(t, 1, 2, f); q != 2 || mark {
			t.Fatalf("queue %d mark %v", q, mark)
		}
	}
	if root.c.Entries(2) != 2 || root.c.Full(2) {
		t.Fatalf("%d entries, full %v", root.c.Entries(2), root.c.Full(2))
	}
	// Isolated frames: marked from the congested queue's own K_min (20
	// KB here), not before.
	root.drain(2)
	for root.env.eg[2].QueueBytes(2) < cfg.CQKmin {
		if q, mark := root.send(t, 0, 2, &flowX); q != 2 || mark {
			t.Fatalf("isolated frame: queue %d mark %v below the congested queue's threshold", q, mark)
		}
	}
	if q, mark := root.send(t, 0, 2, &flowX); q != 2 || !mark {
		t.Errorf("isolated frame over the congested queue's threshold: queue %d mark %v", q, mark)
	}
	root.drain(2)
	// The table (two entries) is full: a third congesting flow is not
	// isolated, and the normal queue marks as DCQCN does.
	for root.env.eg[2].QueueBytes(PCPData) < cfg.Detect {
		root.send(t, 0, 2, &flowZ)
	}
	if q, _ := root.send(t, 0, 2, &flowZ); q != PCPData || !root.c.Full(2) {
		t.Fatalf("queue %d full %v", q, root.c.Full(2))
	}
	if k := root.c.C[2]; k.TableFull != 1 || k.Fallbacks != 1 {
		t.Errorf("counters %+v", k)
	}
	marked := false
	for range 20 {
		_, mark := root.send(t, 0, 2, &flowZ)
		marked = marked || mark
	}
	if !marked {
		t.Error("no DCQCN mark with the table full and the normal queue past K_max")
	}
	if k := root.c.C[2]; k.Fallbacks != 1 || k.TableFull < 2 {
		t.Errorf("want every refusal counted and one fallback: %+v", k)
	}
	// A release gives the table room, and the victims their immunity.
	root.drain(2)
	root.tick(10 * iciResidency)
	if root.c.Full(2) || root.c.Entries(2) != 0 {
		t.Fatalf("full %v with %d entries after the releases", root.c.Full(2), root.c.Entries(2))
	}
	if m := fill(root); m != 0 {
		t.Errorf("%d victims marked after the release", m)
	}
}

// A server never isolates its own flows: their NIC's DCQCN answers.
func TestICIServerOwnFlow(t *testing.T) {
	cfg := iciConfig(8, true)
	cfg.Server, cfg.Own = true, flowX.Src
	h := newICINode(t, cfg)
	for _, f := range []bcube.FiveTuple{flowX, flowY} {
		b := make([]byte, FrameLen)
		PutICI(b, macA, macB, 1, &f, PCPData, 0)
		s, _ := ParseSignal(b)
		if !h.c.OnSignal(0, s) {
			t.Fatal("not taken")
		}
	}
	if k := h.c.C[0]; k.RxIsolate != 2 || k.RxOwn != 1 || k.BySignal != 1 || h.c.Entries(0) != 1 {
		t.Errorf("counters %+v, %d entries", k, h.c.Entries(0))
	}
}

// Frames of one flow leave in order across its isolation and release.
func TestICIOrder(t *testing.T) {
	root := newICINode(t, iciConfig(8, true))
	var order []int // the sequence numbers of flow X's frames as they leave
	seq := 0
	send := func(f *bcube.FiveTuple) {
		q, meta := root.c.Classify(2, 0, PCPData, f, bcube.FlowHash(f), root.env.now)
		id := uint64(0)
		if *f == flowX {
			seq++
			id = uint64(seq)
		}
		root.env.eg[2].Enqueue(int(q), queues.Packet{Len: iciFrame, Meta: meta, Addr: id}, root.env.now)
	}
	take := func(n int) {
		for range n {
			p, _, ok := root.env.eg[2].Dequeue(root.env.now)
			if !ok {
				return
			}
			if p.Addr != 0 {
				order = append(order, int(p.Addr))
			}
		}
	}
	for i := range 400 {
		send(&flowX)
		if i%3 == 0 {
			send(&flowV)
		}
		take(1)
		if i == 200 {
			take(1000)
			root.tick(root.env.now + 10*iciResidency)
		}
		root.env.now += 1000
	}
	take(1000)
	if root.c.C[2].Isolated == 0 || root.env.eg[2].Stats(2).EnqPackets == 0 {
		t.Fatal("flow X never isolated, or never sent by the congested queue")
	}
	for i, s := range order {
		if s != i+1 {
			t.Fatalf("frame %d of flow X left %d-th", s, i+1)
		}
	}
}

// Classifying, the hooks, marking and taking a signal allocate nothing.
func TestICIZeroAllocs(t *testing.T) {
	root := newICINode(t, iciConfig(8, true))
	root.env.quiet = true
	root.congest(t, &flowX)
	b := make([]byte, FrameLen)
	PutICI(b, macA, macB, 1, &flowY, PCPData, 0)
	s, _ := ParseSignal(b)
	if n := testing.AllocsPerRun(200, func() {
		root.send(t, 0, 2, &flowX)
		root.send(t, 1, 2, &flowV)
		root.drain(2)
		root.env.now += iciRefresh
		root.c.OnSignal(1, s)
		root.tick(root.env.now)
	}); n != 0 {
		t.Errorf("%v allocations per round", n)
	}
}

func bytesEq(a, b []byte) bool { return string(a) == string(b) }

func BenchmarkICIClassify(b *testing.B) {
	root := newICINode(b, iciConfig(8, true))
	root.env.quiet = true
	root.congest(b, &flowX)
	h := bcube.FlowHash(&flowX)
	b.ReportAllocs()
	for b.Loop() {
		root.c.Classify(2, 0, PCPData, &flowX, h, root.env.now)
	}
}
