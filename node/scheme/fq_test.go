package scheme

import (
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
)

// fqNode is scheme fc bound to a datapath of a switch of BCube(4,1),
// with its hooks on every egress.
func fqNode(t *testing.T, fc string) (*FQ, *datapath) {
	t.Helper()
	c, p := node(t, "s0.1", fc)
	s, err := New(c, p)
	if err != nil {
		t.Fatal(err)
	}
	d := newDatapath(t, s, p.FabricPorts(), nil)
	s.Bind(d, make([]Port, p.FabricPorts()))
	for i, eg := range d.eg {
		eg.SetHooks(s.Hooks(i))
	}
	return s.(*FQ), d
}

// flowFrame is a data frame of flow i (its source port), from server 2
// to server 1 in by port 3, out by port 0.
func flowFrame(i int) *Frame {
	f := dataFrame(2, 1, 3)
	f.H.SPort, f.H.DPort = uint16(10000+i), 4791
	return f
}

// Ideal-FQ gives every flow with frames queued a queue of its own, keeps
// it while any of its frames is queued, takes the queue back when the
// last leaves, shares only when all 63 are busy (counted), and leaves
// control frames in the HQ.
func TestIdealFQQueues(t *testing.T) {
	s, d := fqNode(t, NameIdealFQ)
	if c := s.Egress(); c.Queues != queues.MaxQueues || c.HQ != queues.MaxQueues-1 {
		t.Fatalf("layout %+v", c)
	}
	eg := d.eg[0]
	enqueue := func(i int) int {
		f := flowFrame(i)
		q, meta := s.Classify(f)
		if ok, _ := eg.Enqueue(q, queues.Packet{Len: 1000, Meta: meta}, 0); !ok {
			t.Fatal("refused")
		}
		return q
	}
	seen := map[int]int{}
	for i := range 63 {
		q := enqueue(i)
		if q < 0 || q >= 63 {
			t.Fatalf("flow %d: queue %d", i, q)
		}
		if j, ok := seen[q]; ok {
			t.Fatalf("flows %d and %d share queue %d", j, i, q)
		}
		seen[q] = i
		if again := enqueue(i); again != q {
			t.Fatalf("flow %d moved from %d to %d with frames queued", i, q, again)
		}
	}
	if c := s.Port(0); c.Flows != 63 || c.Shared != 0 || c.TableFull != 0 {
		t.Errorf("counters %+v", c)
	}
	// The 64th flow finds every queue busy: it shares, and says so.
	q := enqueue(63)
	if c := s.Port(0); c.Shared != 1 || q >= 63 {
		t.Errorf("64th flow: queue %d, counters %+v", q, c)
	}
	// Empty one flow's queue: the next new flow gets it for itself.
	victim := enqueue(5)
	for eg.QueueLen(victim) > 0 {
		eg.Discard(victim)
	}
	if q := enqueue(100); q != victim {
		t.Errorf("a new flow took queue %d, not the empty %d", q, victim)
	}
	// Control rides the HQ.
	f := flowFrame(1)
	f.PCP = signaling.PCPControl
	if q, _ := s.Classify(f); q != s.Egress().HQ {
		t.Errorf("control in queue %d", q)
	}
	// A server's own flow is classified per frame, the same way.
	if s.FlowQueue(0, 1) != -1 {
		t.Error("a fixed queue for own flows")
	}
	m := map[string]uint64{}
	s.PortCounters(0, m)
	if m["fq_flows"] != 65 || m["fq_shared"] != 1 {
		t.Errorf("port counters %v", m)
	}
}

// A flow that leaves and comes back takes whichever queue is empty, and
// never one holding another flow's frames; round robin over the queues
// then serves the flows byte-fair.
func TestIdealFQFair(t *testing.T) {
	s, d := fqNode(t, NameIdealFQ)
	eg := d.eg[0]
	// Three flows of frames of 1000, 400 and 64 bytes, backlogged.
	sizes := []uint32{1000, 400, 64}
	for range 1000 {
		for i, n := range sizes {
			q, meta := s.Classify(flowFrame(i))
			eg.Enqueue(q, queues.Packet{Len: n, Meta: meta}, 0)
		}
	}
	served := make([]int, 3)
	byQueue := map[int]int{}
	for i := range sizes {
		q, _ := s.Classify(flowFrame(i))
		byQueue[q] = i
	}
	for total := 0; total < 150_000; {
		p, q, ok := eg.Dequeue(0)
		if !ok {
			t.Fatal("ran dry")
		}
		served[byQueue[q]] += int(p.Len)
		total += int(p.Len)
	}
	for i := range served {
		if d := served[i] - served[0]; d > 3*1518 || d < -3*1518 {
			t.Errorf("flow %d served %d bytes, flow 0 %d", i, served[i], served[0])
		}
	}
}

// SFQ is BFC's hashed assignment without its pauses: a flow's queue is
// bfc:hash's, fixed whatever else is queued.
func TestSFQQueues(t *testing.T) {
	s, d := fqNode(t, NameSFQ)
	if c := s.Egress(); c.Queues != DefaultSFQQueues {
		t.Fatalf("layout %+v", c)
	}
	c, p := node(t, "s0.1", NameBFC)
	c.BFCAssign = BFCAssignHash
	b, err := New(c, p)
	if err != nil {
		t.Fatal(err)
	}
	bd := newDatapath(t, b, p.FabricPorts(), nil)
	b.Bind(bd, make([]Port, p.FabricPorts()))
	for i := range 200 {
		q, _ := s.Classify(flowFrame(i))
		d.eg[0].Enqueue(q, queues.Packet{Len: 100}, 0)
		bq, _ := b.Classify(flowFrame(i))
		if q != bq {
			t.Fatalf("flow %d: sfq queue %d, bfc:hash %d", i, q, bq)
		}
		tu := flowFrame(i).tuple()
		if own, _ := s.OwnFrame(0, bcube.FlowHash(&tu), 0); own != q {
			t.Fatalf("flow %d: own frame in %d, forwarded in %d", i, own, q)
		}
	}
	if s.Hooks(0) != nil || s.NextTick() >= 0 {
		t.Error("sfq has hooks or a timer")
	}
	if !Unbounded(NameSFQ) || !Unbounded(NameIdealFQ) || Unbounded(NameBFC) || Pauses(NameIdealFQ) {
		t.Error("Unbounded, Pauses")
	}
}

// Classifying a frame and its hooks allocate nothing.
func TestFQZeroAllocs(t *testing.T) {
	for _, fc := range []string{NameIdealFQ, NameSFQ} {
		s, d := fqNode(t, fc)
		eg := d.eg[0]
		fs := []*Frame{flowFrame(0), flowFrame(1), flowFrame(2)}
		n := testing.AllocsPerRun(1000, func() {
			for _, f := range fs {
				q, meta := s.Classify(f)
				eg.Enqueue(q, queues.Packet{Len: 1000, Meta: meta}, 0)
				q, meta = s.OwnFrame(0, 7, 0)
				eg.Enqueue(q, queues.Packet{Len: 1000, Meta: meta}, 0)
			}
			for eg.Len() > 0 {
				eg.Dequeue(0)
			}
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per run", fc, n)
		}
	}
}
